"""The native dispatcher and dispatcher selection."""

from __future__ import annotations

import sys

import pytest

from clawseed_edge.agent.dispatch import (
    NativeToolDispatcher,
    ToolDispatcher,
    ensure_call_ids,
    select_dispatcher,
)
from clawseed_edge.api import ChatResponse, ToolCall, ToolResult, ToolSpec
from clawseed_edge.testing import ScriptedProvider


def test_native_dispatcher_round_trip() -> None:
    d = NativeToolDispatcher()
    assert isinstance(d, ToolDispatcher)
    specs = (ToolSpec("a", "A"), ToolSpec("b", "B"))
    assert d.tools_for_request(specs) == specs
    assert d.system_prompt_section(specs) == ""
    response = ChatResponse("thinking aloud", (ToolCall("a", {"x": 1}, "t1"), ToolCall("b", {})))
    text, calls = d.parse_response(response)
    assert text == "thinking aloud"
    assert [c.id for c in calls] == ["t1", "call_2"]
    msg = d.assistant_message(response, text, calls)
    assert msg.role == "assistant" and msg.tool_calls == tuple(calls)
    results = d.result_messages(
        [(calls[0], ToolResult.ok("one")), (calls[1], ToolResult.fail("bad"))]
    )
    assert [(m.role, m.tool_call_id, m.name, m.content) for m in results] == [
        ("tool", "t1", "a", "one"),
        ("tool", "call_2", "b", "Error: bad"),
    ]


def test_duplicate_ids_are_made_unique() -> None:
    calls = ensure_call_ids([ToolCall("a", {}, "x"), ToolCall("b", {}, "x"), ToolCall("c")])
    assert [c.id for c in calls] == ["x", "call_2", "call_3"]


def test_select_dispatcher_native() -> None:
    assert isinstance(select_dispatcher(ScriptedProvider(native_tools=True)), NativeToolDispatcher)


def test_select_dispatcher_prompt_guided_imports_lazily() -> None:
    try:
        import clawseed_edge.agent.xml_dispatch  # noqa: F401
    except ImportError:
        pytest.skip("xml_dispatch is not merged into this branch")
    d = select_dispatcher(ScriptedProvider(native_tools=False))
    assert type(d).__name__ == "XmlToolDispatcher" and not d.streams_text
    assert "clawseed_edge.agent.xml_dispatch" in sys.modules
