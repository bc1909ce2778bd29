"""A real small model with constrained output: every reply is a call of an offered tool or an
answer, never garbage shown as the answer.

Not in the default run: it needs llama-cpp-python's server with a small model (Gemma 3 270M
Q4_K_M, see benchmarks/bench_small_model.py for the install), started by hand, e.g.::

    python -m llama_cpp.server --model gemma-3-270m-q4_k_m.gguf --model_alias gemma-3-270m \\
        --chat_format gemma --host 127.0.0.1 --port 8089
    CLAWSEED_SMALL_MODEL_URL=http://127.0.0.1:8089/v1 pytest -m small_model -n 0
"""

from __future__ import annotations

import os

import pytest

from clawseed_edge.api import ChatMessage, ChatRequest, ProviderBadResponse, ToolSpec
from clawseed_edge.providers import OpenAICompatProvider, ProviderConfig

pytestmark = pytest.mark.small_model

URL = os.environ.get("CLAWSEED_SMALL_MODEL_URL", "")
DEVICES = ["red_led", "lamp", "fan"]
TOOLS = (
    ToolSpec(
        "gpio_switch",
        "Switch a device on (true) or off (false).",
        {
            "type": "object",
            "properties": {
                "device": {"type": "string", "enum": DEVICES},
                "on": {"type": "boolean"},
            },
            "required": ["device", "on"],
            "additionalProperties": False,
        },
    ),
)


@pytest.mark.skipif(not URL, reason="set CLAWSEED_SMALL_MODEL_URL to a running small-model server")
@pytest.mark.parametrize(
    "text", ["turn on the red led", "fan off please", "switch the lamp on", "hello, who are you?"]
)
async def test_every_reply_is_a_call_of_an_offered_tool_or_an_answer(text: str) -> None:
    config = ProviderConfig(
        name="llamacpp",
        model=os.environ.get("CLAWSEED_SMALL_MODEL", "gemma-3-270m"),
        base_url=URL,
        constrained="on",
        max_tokens=96,
        temperature=0,
        timeout_s=300,
    )
    provider = OpenAICompatProvider(config)
    request = ChatRequest(
        (ChatMessage.system("You switch devices."), ChatMessage.user(text)), TOOLS
    )
    try:
        response = await provider.chat(request)
    except ProviderBadResponse as exc:
        assert "the model did not answer" in str(exc)  # said so, never shown as the answer
        return
    finally:
        await provider.aclose()
    for call in response.tool_calls:
        assert call.name == "gpio_switch"
        assert call.arguments["device"] in DEVICES and isinstance(call.arguments["on"], bool)
    if not response.tool_calls:
        assert response.text and not response.text.lstrip().startswith("{")
