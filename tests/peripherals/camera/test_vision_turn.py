"""A turn with a fake vision model: the snapshot reaches it in each wire format.

The fake servers replace ``{saw}`` in a scripted answer with the size and digest of every image
the request carried, so the answer quotes what the fake saw and the test compares it with the
file the camera stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.agent.approval import CallbackApprover
from clawseed_edge.agent.builder import AgentBuilder
from clawseed_edge.api import ApprovalRequest, Provider
from clawseed_edge.peripherals.camera.bank import CameraBank
from clawseed_edge.peripherals.camera.config import CameraConfig
from clawseed_edge.providers import AnthropicProvider, OllamaProvider, ProviderConfig
from clawseed_edge.providers.openai_compat import OpenAICompatProvider
from clawseed_edge.testing.fake_servers import FakeAnthropic, FakeOllama, FakeOpenAI, Reply

MODELS = {"llava:7b": ["completion", "tools", "vision"], "qwen2.5:3b": ["completion", "tools"]}


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(var, raising=False)


def cameras(tmp_path: Path, **kw: Any) -> CameraBank:
    config = CameraConfig(name="porch_cam", resolution=[160, 120], **kw)
    return CameraBank([config], tmp_path / "workspace" / "snapshots")


def saw(path: Path) -> str:
    data = path.read_bytes()
    return f"1 image: {len(data)} bytes sha256 {hashlib.sha256(data).hexdigest()[:12]}"


async def turn(provider: Provider, bank: CameraBank, tmp_path: Path, *texts: str) -> list[str]:
    agent = (
        AgentBuilder()
        .provider(provider)
        .workspace_dir(tmp_path / "workspace")
        .peripherals([bank])
        .platform("test")
        .build()
    )
    async with agent:
        return [await agent.run(text) for text in texts]


@pytest.fixture
async def ollama() -> AsyncIterator[FakeOllama]:
    async with FakeOllama(models=MODELS) as server:
        yield server


def assert_seen(bank: CameraBank, answers: list[str]) -> None:
    """The first turn's answer quotes the stored picture; the next turn's request had none."""
    path = bank.latest("porch_cam")
    assert path is not None
    assert answers == [f"I see {saw(path)}", "Now I see no image"]


def script(server: Any) -> None:
    server.queue(
        Reply.tool_call("camera_snapshot", {"camera": "porch_cam", "width": 128}),
        Reply.text("I see {saw}"),
        Reply.text("Now I see {saw}"),  # the next turn: the picture is not in history
    )


async def test_ollama_gets_the_picture_in_images(ollama: FakeOllama, tmp_path: Path) -> None:
    script(ollama)
    provider = OllamaProvider(ProviderConfig(base_url=ollama.url, model="llava:7b"))
    await provider.probe()
    bank = cameras(tmp_path)
    assert_seen(bank, await turn(provider, bank, tmp_path, "how is the porch?", "and?"))
    tool_message = ollama.requests_to("/api/chat")[1].json["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["images"]


async def test_anthropic_gets_an_image_block_in_the_tool_result(
    anthropic_server: FakeAnthropic, tmp_path: Path
) -> None:
    script(anthropic_server)
    provider = AnthropicProvider(
        ProviderConfig(name="anthropic", base_url=anthropic_server.url, api_key="sk-test")
    )
    bank = cameras(tmp_path)
    assert_seen(bank, await turn(provider, bank, tmp_path, "how is the porch?", "and?"))
    result = anthropic_server.requests[1].json["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert result["content"][1]["source"]["media_type"] == "image/jpeg"


async def test_openai_compatible_gets_a_data_url_after_the_tool_message(
    openai_server: FakeOpenAI, tmp_path: Path
) -> None:
    script(openai_server)
    provider = OpenAICompatProvider(
        ProviderConfig(
            name="openai", base_url=openai_server.url + "/v1", api_key="sk-openai", model="gpt-4o"
        )
    )
    bank = cameras(tmp_path)
    assert_seen(bank, await turn(provider, bank, tmp_path, "how is the porch?", "and?"))
    messages = openai_server.requests_to("/v1/chat/completions")[1].json["messages"]
    assert [m["role"] for m in messages[-2:]] == ["tool", "user"]
    assert messages[-1]["content"][1]["image_url"]["url"].startswith("data:image/jpeg;base64,")


async def test_a_model_without_vision_is_refused_and_no_picture_is_taken(
    ollama: FakeOllama, tmp_path: Path
) -> None:
    ollama.queue(
        Reply.tool_call("camera_snapshot", {"camera": "porch_cam"}), Reply.text("I see {saw}")
    )
    provider = OllamaProvider(ProviderConfig(base_url=ollama.url, model="qwen2.5:3b"))
    await provider.probe()
    bank = cameras(tmp_path)
    (answer,) = await turn(provider, bank, tmp_path, "look at the porch")
    assert answer == "I see no image"
    assert bank.latest("porch_cam") is None
    tool_message = ollama.requests_to("/api/chat")[1].json["messages"][-1]
    assert "cannot see images" in tool_message["content"]
    assert "base64" not in tool_message["content"] and "/9j/" not in tool_message["content"]


async def test_a_camera_with_approval_asks_even_for_a_read(
    ollama: FakeOllama, tmp_path: Path
) -> None:
    asked: list[ApprovalRequest] = []

    async def refuse(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    ollama.queue(
        Reply.tool_call("camera_snapshot", {"camera": "porch_cam"}), Reply.text("I see {saw}")
    )
    provider = OllamaProvider(ProviderConfig(base_url=ollama.url, model="llava:7b"))
    await provider.probe()
    bank = cameras(tmp_path, approval=True)
    agent = (
        AgentBuilder()
        .provider(provider)
        .workspace_dir(tmp_path / "workspace")
        .peripherals([bank])
        .approver(CallbackApprover(refuse))
        .autonomy("full")
        .platform("test")
        .build()
    )
    async with agent:
        answer = await agent.run("look at the porch")
    assert len(asked) == 1
    assert answer == "I see no image"
    assert bank.latest("porch_cam") is None
