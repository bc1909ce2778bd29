"""memory_store, memory_recall, memory_forget: the model's tools over an api ``Memory``.

Every call is scoped to the caller's ``ToolContext.namespace``, so one user's tools never see
another's memory. When the memory is unavailable (a ``NoneMemory``, a store that does not
answer) each tool answers "memory is unavailable: <reason>" instead of failing the turn.
Depends on ``clawseed_edge.api`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawseed_edge.api import (
    BaseTool,
    Memory,
    MemoryEntry,
    MemoryStoreError,
    RiskClass,
    Tool,
    ToolContext,
    ToolResult,
)

__all__ = ["MemoryForgetTool", "MemoryRecallTool", "MemoryStoreTool", "memory_tools"]

_MAX_RECALL = 20
_MAX_CONTENT = 4000


class _MemoryTool(BaseTool):
    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    async def _unavailable(self) -> ToolResult | None:
        """A failed result if memory cannot be used, else None."""
        try:
            healthy = await self.memory.health_check()
        except MemoryStoreError:
            healthy = False
        if healthy:
            return None
        reason = getattr(self.memory, "reason", None) or "the memory store does not answer"
        return ToolResult.fail(f"memory is unavailable: {reason}")


def _text(arguments: Mapping[str, Any], name: str, *, required: bool = True) -> str | None:
    value = arguments.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"argument {name!r} must be a non-empty string")
    return value.strip()


class MemoryStoreTool(_MemoryTool):
    """Remember a fact (insert, or update the fact with the same key)."""

    name = "memory_store"
    description = (
        "Remember a fact across restarts (wiring, preferences, limits). Storing an existing "
        "key replaces that fact. Use short snake_case keys such as fan_relay_pin."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "key": {"type": "string", "description": "Short unique name of the fact."},
            "content": {"type": "string", "description": "The fact, one or two sentences."},
            "category": {
                "type": "string",
                "description": "core (kept forever, default), daily or conversation (pruned).",
            },
            "importance": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["key", "content"],
        "additionalProperties": False,
    }
    risk = RiskClass.ACT

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        try:
            key = _text(arguments, "key")
            content = _text(arguments, "content")
            category = _text(arguments, "category", required=False) or "core"
            importance = float(arguments.get("importance", 0.5))
        except (ValueError, TypeError) as exc:
            return ToolResult.fail(f"{exc}; memory_store needs key and content strings")
        assert key is not None and content is not None
        if not 0.0 <= importance <= 1.0:
            return ToolResult.fail(f"importance {importance} is outside 0..1")
        if len(content) > _MAX_CONTENT:
            return ToolResult.fail(
                f"content is {len(content)} characters; store at most {_MAX_CONTENT} "
                "(split it into several facts)"
            )
        if (down := await self._unavailable()) is not None:
            return down
        entry = MemoryEntry(
            key=key,
            content=content,
            category=category,
            namespace=context.namespace,
            session_id=context.session_id,
            importance=importance,
        )
        try:
            await self.memory.store(entry)
        except MemoryStoreError as exc:
            return ToolResult.fail(str(exc))
        return ToolResult.ok(f"remembered {key!r} ({category})", data={"key": key})


class MemoryRecallTool(_MemoryTool):
    """Find remembered facts relevant to a query."""

    name = "memory_recall"
    description = (
        "Search remembered facts by meaning and keywords; returns the most relevant first."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": _MAX_RECALL, "default": 5},
            "category": {"type": "string", "description": "Only this category (e.g. core)."},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    risk = RiskClass.READ

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        try:
            query = _text(arguments, "query")
            category = _text(arguments, "category", required=False)
            limit = int(arguments.get("limit", 5))
        except (ValueError, TypeError) as exc:
            return ToolResult.fail(f"{exc}; memory_recall needs a query string")
        assert query is not None
        limit = max(1, min(limit, _MAX_RECALL))
        if (down := await self._unavailable()) is not None:
            return down
        try:
            found = await self.memory.recall(
                query, limit=limit, namespace=context.namespace, category=category
            )
        except MemoryStoreError as exc:
            return ToolResult.fail(str(exc))
        if not found:
            return ToolResult.ok(f"nothing remembered about {query!r}", data=[])
        lines = [
            f"- {e.key} ({e.category}, relevance {e.score or 0:.2f}): {e.content}" for e in found
        ]
        data = [
            {"key": e.key, "content": e.content, "category": e.category, "score": e.score}
            for e in found
        ]
        return ToolResult.ok("\n".join(lines), data=data)


class MemoryForgetTool(_MemoryTool):
    """Delete a remembered fact by key."""

    name = "memory_forget"
    description = "Forget a remembered fact by its key."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"key": {"type": "string", "description": "The fact's key."}},
        "required": ["key"],
        "additionalProperties": False,
    }
    risk = RiskClass.ACT

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        try:
            key = _text(arguments, "key")
        except ValueError as exc:
            return ToolResult.fail(f"{exc}; memory_forget needs the key of a fact")
        assert key is not None
        if (down := await self._unavailable()) is not None:
            return down
        try:
            deleted = await self.memory.forget(key, namespace=context.namespace)
        except MemoryStoreError as exc:
            return ToolResult.fail(str(exc))
        if not deleted:
            return ToolResult.fail(f"nothing is remembered under {key!r}; memory_recall lists keys")
        return ToolResult.ok(f"forgot {key!r}")


def memory_tools(memory: Memory) -> list[Tool]:
    """The three memory tools over ``memory``, ready to register."""
    return [MemoryStoreTool(memory), MemoryRecallTool(memory), MemoryForgetTool(memory)]
