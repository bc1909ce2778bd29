"""Every built-in tool's schema compiles and accepts what the tool accepts (issue 16.16).

The engine refuses any call its tool's schema refuses, so a schema that is broken, or stricter
than its tool, would silently disable that tool.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.agent.arguments import SchemaValidator
from clawseed_edge.api import Tool, ToolCall
from clawseed_edge.testing import EchoTool
from clawseed_edge.testing.hardware import wired_sim_board
from clawseed_edge.tools.files import file_tools
from clawseed_edge.tools.memory_tools import memory_tools
from clawseed_edge.tools.shell import ShellTool

WIRING = """
[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"
[[devices]]
name = "lamp"
pin = "GPIO18"
kind = "pwm_led"
[[devices]]
name = "fan"
pin = "GPIO23"
kind = "relay"
[[devices]]
name = "doorbell"
pin = "GPIO27"
kind = "button"
[[devices]]
name = "arm"
pin = "GPIO12"
kind = "servo"
"""

#: Calls each tool carries out (from its own tests), which its schema must therefore accept.
GOOD: dict[str, list[dict[str, Any]]] = {
    "gpio_switch": [{"device": "red_led", "on": True}, {"device": "fan", "on": False}],
    "gpio_toggle": [{"device": "fan"}],
    "gpio_set_level": [{"device": "lamp", "level": 0.25}, {"device": "arm", "level": -0.5}],
    "gpio_read": [{"device": "doorbell"}],
    "gpio_blink": [{"device": "red_led"}, {"device": "red_led", "count": 2, "on_ms": 100}],
    "hardware_status": [{}],
    "file_read": [{"path": "notes.txt"}],
    "file_write": [{"path": "notes.txt", "content": "hi"}],
    "file_list": [{}, {"path": "."}],
    "shell": [{"command": "df -h"}],
    "memory_store": [
        {"key": "fan_pin", "content": "the fan is on GPIO23"},
        {"key": "k", "content": "c", "category": "core", "importance": 0.8},
    ],
    "memory_recall": [{"query": "fan"}, {"query": "fan", "limit": 3, "category": "core"}],
    "memory_forget": [{"key": "fan_pin"}],
    "echo": [{"text": "hi"}],
}


class _NoMemory:
    """Enough of a Memory to build the memory tools (never called here)."""


async def builtin_tools(tmp_path: Path) -> list[Tool]:
    board = wired_sim_board(WIRING)
    await board.connect()
    tools: list[Tool] = list(board.tools())
    tools += file_tools(tmp_path)
    tools.append(ShellTool(tmp_path))
    tools += memory_tools(_NoMemory())  # type: ignore[arg-type]
    tools.append(EchoTool())
    await board.disconnect()
    return tools


async def test_every_builtin_schema_compiles_and_is_consistent(tmp_path: Path) -> None:
    validator = SchemaValidator()
    tools = await builtin_tools(tmp_path)
    assert set(GOOD) == {t.name for t in tools}, "a built-in tool without example calls"
    for tool in tools:
        assert not isinstance(validator.compiled(tool), str), tool.name
        schema = tool.parameters
        assert schema["type"] == "object", tool.name
        properties = schema.get("properties", {})
        assert set(schema.get("required", ())) <= set(properties), tool.name
        for arguments in GOOD[tool.name]:
            problem = validator.problem(tool, ToolCall(tool.name, arguments))
            assert problem is None, f"{tool.name} {arguments}: {problem}"


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("gpio_switch", {"device": "red_led", "on": True, "pin": "GPIO4"}),
        ("gpio_switch", {"device": "doorbell", "on": True}),  # an input is not switchable
        ("gpio_set_level", {"device": "lamp", "level": 2}),
        ("gpio_blink", {"device": "red_led", "count": 2.5}),
        ("memory_store", {"key": "k", "content": "c", "importance": 3}),
        ("memory_forget", {"key": "k", "everything": True}),
    ],
)
async def test_builtin_schemas_refuse_what_their_tools_refuse(
    tmp_path: Path, name: str, arguments: dict[str, Any]
) -> None:
    tools = {t.name: t for t in await builtin_tools(tmp_path)}
    assert SchemaValidator().problem(tools[name], ToolCall(name, arguments)) is not None


def test_validation_does_not_fill_in_defaults() -> None:
    tool = EchoTool()
    tool.parameters = {
        "type": "object",
        "properties": {"text": {"type": "string", "default": "filled"}},
    }
    arguments: dict[str, Any] = {}
    assert SchemaValidator().problem(tool, ToolCall("echo", arguments)) is None
    assert arguments == {}  # the tool applies its own defaults; the call is not rewritten
