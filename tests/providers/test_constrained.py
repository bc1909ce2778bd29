"""Constrained output on the wire: the schema sent, narrowed by the policy, and the fallbacks.

Each test assembles the embedded default's simulated board against a fake Ollama or
OpenAI-compatible server on 127.0.0.1, runs a real turn that the local stage leaves to the model,
and reads the request the server recorded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.agent import StaticApprover
from clawseed_edge.api import ErrorEvent, ToolCallEvent
from clawseed_edge.config import assemble_agent
from clawseed_edge.providers.constrained import (
    ReplyInvalid,
    constrained_for,
    is_small_model,
    parse_reply,
)
from clawseed_edge.testing.fake_servers import FakeOllama, FakeOpenAI, Reply

DEFAULT = Path(__file__).parents[2] / "clawseed_edge" / "config" / "default.toml"
ASK = "make the lamp cosy"  # nothing the local stage understands: it goes to the model
RED_ON = json.dumps({"tool": "gpio_switch", "arguments": {"device": "red_led", "on": True}})
ANSWER = json.dumps({"answer": "The red LED is on."})


def config(tmp_path: Path, provider: str, autonomy: str = "full") -> Path:
    text = DEFAULT.read_text().replace('[provider]\nname = "demo"', provider)
    text = text.replace('level = "full"', f'level = "{autonomy}"')
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def ollama_provider(server: FakeOllama) -> str:
    return (
        f'[provider]\nname = "ollama"\nmodel = "qwen2.5:0.5b"\nbase_url = "{server.url}"\n'
        'constrained = "on"\nmax_retries = 0'
    )


def openai_provider(server: FakeOpenAI) -> str:
    return (
        f'[provider]\nname = "llamacpp"\nmodel = "gemma-3-270m"\nbase_url = "{server.url}/v1"\n'
        'api_key = "sk-openai"\nconstrained = "auto"\nmax_retries = 0'
    )


def call_branches(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Tool name -> its argument schema, from a reply schema."""
    branches = {}
    for branch in schema["anyOf"]:
        tool = branch["properties"].get("tool")
        if tool is not None:
            branches[tool["enum"][0]] = branch["properties"]["arguments"]
    return branches


async def run(path: Path, approver: Any, text: str = ASK) -> tuple[list[Any], dict[str, Any]]:
    agent = await assemble_agent(path, sim=True, approver=approver)
    async with agent:
        events = [e async for e in agent.turn(text)]
        states = agent.peripherals[0].pin_states()  # type: ignore[attr-defined]
    return events, {pin: s["value"] for pin, s in states.items()}


async def test_ollama_gets_one_schema_in_format_and_the_call_switches_the_pin(
    ollama: FakeOllama, tmp_path: Path
) -> None:
    ollama.models["qwen2.5:0.5b"] = ["completion", "tools"]
    ollama.queue(Reply.text(RED_ON), Reply.text(ANSWER))
    events, pins = await run(config(tmp_path, ollama_provider(ollama)), StaticApprover(True))
    body = ollama.requests_to("/api/chat")[0].json
    assert "tools" not in body  # the schema says what may be called
    # the format line goes with the user's message: some chat templates drop the system one
    assert body["messages"][-1]["content"].startswith("Reply with JSON only")
    branches = call_branches(body["format"])
    assert branches["gpio_switch"]["properties"]["device"]["enum"] == ["red_led", "lamp", "fan"]
    assert branches["gpio_set_level"]["properties"]["level"]["maximum"] == 1.0
    assert len(branches) <= 8  # a small local model is offered at most 8 tools
    assert {"answer"} == set(body["format"]["anyOf"][0]["properties"])
    assert pins["GPIO17"] == 1
    assert events[-1].text == "The red LED is on."


async def test_an_approval_only_device_leaves_the_enum_when_no_one_can_approve(
    ollama: FakeOllama, tmp_path: Path
) -> None:
    ollama.models["qwen2.5:0.5b"] = ["completion", "tools"]
    ollama.queue(Reply.text(ANSWER))
    await run(config(tmp_path, ollama_provider(ollama)), None)
    branches = call_branches(ollama.requests_to("/api/chat")[0].json["format"])
    # the fan has approval = true and there is no approver: the model cannot name it
    assert branches["gpio_switch"]["properties"]["device"]["enum"] == ["red_led", "lamp"]


async def test_read_only_offers_only_reads(ollama: FakeOllama, tmp_path: Path) -> None:
    ollama.models["qwen2.5:0.5b"] = ["completion", "tools"]
    ollama.queue(Reply.text(ANSWER))
    await run(config(tmp_path, ollama_provider(ollama), "read_only"), StaticApprover(True))
    branches = call_branches(ollama.requests_to("/api/chat")[0].json["format"])
    assert "gpio_switch" not in branches and "gpio_set_level" not in branches
    assert branches["gpio_read"]["properties"]["device"]["enum"] == [
        "red_led",
        "lamp",
        "fan",
        "door",
        "doorbell",
    ]


async def test_garbage_twice_is_the_model_did_not_answer_never_the_answer(
    ollama: FakeOllama, tmp_path: Path
) -> None:
    ollama.models["qwen2.5:0.5b"] = ["completion", "tools"]
    ollama.queue(Reply.text("Sure! I will turn it on."), Reply.text("{not json"))
    events, pins = await run(config(tmp_path, ollama_provider(ollama)), StaticApprover(True))
    assert len(ollama.requests_to("/api/chat")) == 2  # asked once more, then gave up
    assert isinstance(events[-1], ErrorEvent)
    assert "the model did not answer" in events[-1].message
    assert not any("Sure!" in str(getattr(e, "text", "")) for e in events)
    assert pins["GPIO17"] == 0


async def test_ollama_refusing_format_falls_back_to_native_tools(
    ollama: FakeOllama, tmp_path: Path
) -> None:
    ollama.models["qwen2.5:0.5b"] = ["completion", "tools"]
    ollama.queue(Reply.error(400, "invalid format: json schema not supported"), Reply.text("hi"))
    events, _ = await run(config(tmp_path, ollama_provider(ollama)), StaticApprover(True))
    first, second = (r.json for r in ollama.requests_to("/api/chat"))
    assert "format" in first and "format" not in second and "tools" in second
    assert events[-1].text == "hi"


async def test_openai_compatible_json_schema_then_llama_cpp_form_then_plain(
    openai_server: FakeOpenAI, tmp_path: Path
) -> None:
    path = config(tmp_path, openai_provider(openai_server))
    openai_server.queue(
        # llama-cpp-python's own server: a 500 carrying its validation error
        Reply.error(
            500,
            "1 validation error: ('body', 'response_format', 'type'): Input should be 'text' "
            "or 'json_object'",
        ),
        Reply.text(RED_ON),
        Reply.text(ANSWER),
    )
    events, pins = await run(path, StaticApprover(True))
    bodies = [r.json for r in openai_server.requests_to("/v1/chat/completions")]
    assert bodies[0]["response_format"]["type"] == "json_schema"
    assert bodies[1]["response_format"]["type"] == "json_object"  # llama.cpp's own form
    assert (
        bodies[1]["response_format"]["schema"]
        == bodies[0]["response_format"]["json_schema"]["schema"]
    )
    assert bodies[2]["response_format"]["type"] == "json_object"  # found once, kept
    assert [e.call.name for e in events if isinstance(e, ToolCallEvent)] == ["gpio_switch"]
    assert pins["GPIO17"] == 1


async def test_a_server_refusing_every_form_gets_the_plain_request(
    openai_server: FakeOpenAI, tmp_path: Path
) -> None:
    openai_server.queue(
        Reply.error(400, "unknown field response_format"),
        Reply.error(400, "unknown field response_format"),
        Reply.text("plain answer"),
    )
    events, _ = await run(config(tmp_path, openai_provider(openai_server)), StaticApprover(True))
    last = openai_server.requests_to("/v1/chat/completions")[-1].json
    assert "response_format" not in last and "tools" in last
    assert events[-1].text == "plain answer"


@pytest.mark.parametrize(
    ("model", "small"),
    [("qwen2.5:0.5b", True), ("gemma-3-270m", True), ("llama3.2:1b", True), ("qwen2.5:3b", False)],
)
def test_model_size_from_its_name(model: str, small: bool) -> None:
    assert is_small_model(model) is small


def test_auto_is_on_only_for_a_local_server() -> None:
    local, remote = "http://127.0.0.1:11434", "https://models.example.com/v1"
    assert constrained_for("auto", base_url=local, model="qwen2.5:0.5b", native_tools=True)
    assert not constrained_for("auto", base_url=remote, model="qwen2.5:0.5b", native_tools=True)
    assert not constrained_for("auto", base_url=local, model="qwen2.5:14b", native_tools=True)
    assert constrained_for("auto", base_url=local, model="mystery", native_tools=False)


def test_a_call_of_a_tool_not_offered_is_invalid() -> None:
    with pytest.raises(ReplyInvalid):
        parse_reply('{"tool": "shell", "arguments": {}}', ())


def test_an_answer_cut_by_max_tokens_is_an_answer_cut_short() -> None:
    # the grammar held the answer branch; the token limit ended it inside the string
    assert parse_reply('{ "answer": "It is 21 \\u00b0C and', ()) == ("It is 21 °C and ...", ())
    with pytest.raises(ReplyInvalid):
        parse_reply('{"tool": "gpio_switch", "argu', ())
