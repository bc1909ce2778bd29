"""The SDK's own client against our server over stdio, in both protocol modes: the handshake
era (``legacy``, 2025-11-25) and the SDK's default (``auto``: 2026-07-28, ``server/discover``
and ``input_required`` elicitation)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import clawseed_edge

from .test_server_stdio import CONFIG

mcp = pytest.importorskip("mcp")
types = pytest.importorskip("mcp_types")


MODES = ["legacy", "auto"]


def _params(home: Path, tmp_path: Path) -> Any:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    return mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "clawseed_edge", "--config", str(config), "mcp", "serve", "--sim"],
        env={"CLAWSEED_HOME": str(home)},
    )


async def _value(client: Any, device: str) -> float:
    import json

    result = await client.read_resource(f"device://{device}")
    return float(json.loads(result.contents[0].text)["value"])


@pytest.mark.parametrize("mode", MODES)
async def test_the_handshake_names_our_version_and_templates_are_listed(
    tmp_path: Path, clawseed_home: Path, mode: str
) -> None:
    async with mcp.Client(_params(clawseed_home, tmp_path), mode=mode) as client:
        version = client.protocol_version
        info = client.server_info
        templates = await client.list_resource_templates()
        tools = {t.name: t for t in (await client.list_tools()).tools}
        await client.send_ping()
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert info is not None and (info.name, info.version) == (
        "clawseed-edge",
        clawseed_edge.__version__,
    )
    assert {t.uri_template for t in templates.resource_templates} == {
        "device://{name}",
        "sensor://{name}",
        "board://{name}",
    }
    switch = tools["gpio_switch"]
    assert switch.title == "Gpio switch"
    assert switch.annotations.idempotent_hint is True
    assert switch.annotations.open_world_hint is False
    assert tools["gpio_read"].annotations.read_only_hint is True


@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_tool_and_a_prompt_without_its_argument_are_invalid_params(
    tmp_path: Path, clawseed_home: Path, mode: str
) -> None:
    from mcp.shared.exceptions import MCPError

    async with mcp.Client(_params(clawseed_home, tmp_path), mode=mode) as client:
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("no_such_tool", {})
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("diagnose_wiring", {})
        prompt = await client.get_prompt("diagnose_wiring", {"device": "porch_light"})
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
    assert unknown.value.code == -32602 and "no_such_tool" in str(unknown.value)
    assert missing.value.code == -32602 and "device" in str(missing.value)
    assert "porch_light" in prompt.messages[0].content.text
    assert "the device the device" not in prompt.messages[0].content.text
    assert [a.required for a in listed["diagnose_wiring"].arguments] == [True]


def _answering(content: Any, asked: list[str], action: str = "accept") -> Any:
    async def elicit(ctx: Any, params: Any) -> Any:
        asked.append(params.message)
        return types.ElicitResult(action=action, content=content)

    return elicit


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("action", "content", "value"),
    [
        ("accept", {"approve": True}, 1.0),
        ("decline", None, 0.0),
        ("accept", {"approve": "no"}, 0.0),
        ("accept", {"approve": "false"}, 0.0),
        ("accept", {"approve": "0"}, 0.0),
        ("accept", {"approve": "true"}, 0.0),  # a string, not the JSON boolean we asked for
        ("accept", {}, 0.0),
    ],
)
async def test_only_the_json_true_of_our_schema_approves(
    tmp_path: Path, clawseed_home: Path, mode: str, action: str, content: Any, value: float
) -> None:
    asked: list[str] = []
    async with mcp.Client(
        _params(clawseed_home, tmp_path),
        mode=mode,
        elicitation_callback=_answering(content, asked, action),
    ) as client:
        result = await client.call_tool("gpio_switch", {"device": "heater", "on": True})
        after = await _value(client, "heater")
    assert len(asked) == 1 and "heater" in asked[0]
    assert result.is_error is (value == 0.0), result.content[0].text
    assert after == value


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_with_a_progress_callback_gets_its_step(
    tmp_path: Path, clawseed_home: Path, mode: str
) -> None:
    steps: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        steps.append((done, total))

    async with mcp.Client(_params(clawseed_home, tmp_path), mode=mode) as client:
        result = await client.call_tool(
            "gpio_switch", {"device": "porch_light", "on": True}, progress_callback=progress
        )
    assert not result.is_error
    assert steps == [(1.0, 1.0)]
