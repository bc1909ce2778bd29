"""The memory tools over a real SqliteMemory (keyword-only) and over NoneMemory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clawseed_edge.api import RiskClass, Tool, ToolContext
from clawseed_edge.memory.none import NoneMemory
from clawseed_edge.memory.sqlite import SqliteMemory
from clawseed_edge.tools.memory_tools import memory_tools

ALICE = ToolContext(session_id="phone", namespace="alice")
BOB = ToolContext(session_id="cli", namespace="bob")


@pytest.fixture
async def tools(tmp_path: Path) -> AsyncIterator[dict[str, Tool]]:
    async with SqliteMemory.open(tmp_path / "m.db") as mem:
        yield {t.name: t for t in memory_tools(mem)}


def test_names_risks_and_specs() -> None:
    made = {t.name: t for t in memory_tools(NoneMemory())}
    assert {n: t.risk for n, t in made.items()} == {
        "memory_store": RiskClass.ACT,
        "memory_recall": RiskClass.READ,
        "memory_forget": RiskClass.ACT,
    }
    for tool in made.values():
        assert isinstance(tool, Tool)
        assert tool.spec().parameters["type"] == "object"


async def test_store_recall_forget_scoped_to_namespace(tools: dict[str, Tool]) -> None:
    stored = await tools["memory_store"].execute(
        {"key": "fan_pin", "content": "the fan relay is on GPIO23"}, ALICE
    )
    assert stored.success, stored.error
    found = await tools["memory_recall"].execute({"query": "fan relay"}, ALICE)
    assert found.success and "GPIO23" in found.output and found.data[0]["key"] == "fan_pin"
    other = await tools["memory_recall"].execute({"query": "fan relay"}, BOB)
    assert other.success and other.data == [] and "GPIO23" not in other.output
    denied = await tools["memory_forget"].execute({"key": "fan_pin"}, BOB)
    assert not denied.success and "nothing is remembered" in (denied.error or "")
    gone = await tools["memory_forget"].execute({"key": "fan_pin"}, ALICE)
    assert gone.success
    after = await tools["memory_recall"].execute({"query": "fan relay"}, ALICE)
    assert after.data == []


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("memory_store", {"key": "k"}, "content"),
        ("memory_store", {"key": "", "content": "x"}, "key"),
        ("memory_store", {"key": "k", "content": "x", "importance": 7}, "importance"),
        ("memory_store", {"key": "k", "content": "x" * 5000}, "at most"),
        ("memory_recall", {"query": 3}, "query"),
        ("memory_forget", {}, "key"),
    ],
)
async def test_bad_arguments_fail_with_a_clear_message(
    tools: dict[str, Tool], name: str, arguments: dict[str, object], message: str
) -> None:
    result = await tools[name].execute(arguments, ALICE)
    assert not result.success and message in (result.error or "")


async def test_hostile_query_is_answered(tools: dict[str, Tool]) -> None:
    result = await tools["memory_recall"].execute({"query": '"; -x: AND*'}, ALICE)
    assert result.success


async def test_none_memory_answers_unavailable_with_reason() -> None:
    made = {t.name: t for t in memory_tools(NoneMemory("cannot open /x/memory.db: disk full"))}
    for name, arguments in [
        ("memory_store", {"key": "k", "content": "v"}),
        ("memory_recall", {"query": "v"}),
        ("memory_forget", {"key": "k"}),
    ]:
        result = await made[name].execute(arguments, ALICE)
        assert not result.success
        assert result.error == "memory is unavailable: cannot open /x/memory.db: disk full"
