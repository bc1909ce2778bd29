"""The tool registry: tools by name, where they came from, and which ones the agent may see.

Names must match ``^[a-zA-Z0-9_-]{1,64}$`` (what Anthropic, OpenAI and Ollama accept). A second
tool under a taken name is an error (:class:`~clawseed_edge.api.ToolNameClash`), never a silent
overwrite; :meth:`ToolRegistry.register_or_replace` replaces on purpose. Allow/deny filters are
``fnmatch`` globs applied when a tool is registered (deny wins); MCP servers can have their own
filters on top. The same tool object may be registered in several registries (shared
instances): the registry never changes a tool.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

from clawseed_edge.api import Tool, ToolNameClash, ToolNameInvalid, ToolSpec

__all__ = [
    "BUILTIN",
    "BuiltIn",
    "Mcp",
    "Remote",
    "ToolFilter",
    "ToolRegistry",
    "ToolSource",
    "validate_tool_name",
]

_NAME_RE = re.compile(r"[a-zA-Z0-9_-]{1,64}")


class BuiltIn(msgspec.Struct, frozen=True):
    """A tool shipped with clawseed-edge or added by the application."""

    def __str__(self) -> str:
        return "builtin"


class Mcp(msgspec.Struct, frozen=True):
    """A tool offered by an MCP server (``server`` is its configured name)."""

    server: str

    def __str__(self) -> str:
        return f"mcp:{self.server}"


class Remote(msgspec.Struct, frozen=True):
    """A tool offered by a remote client for the length of its session."""

    session: str

    def __str__(self) -> str:
        return f"remote:{self.session}"


ToolSource = BuiltIn | Mcp | Remote
BUILTIN = BuiltIn()


def validate_tool_name(name: object) -> str:
    """Return ``name`` if it is a valid tool name.

    Raises:
        ToolNameInvalid: ``name`` is not a string matching ``^[a-zA-Z0-9_-]{1,64}$``.
    """
    if not isinstance(name, str) or _NAME_RE.fullmatch(name) is None:
        raise ToolNameInvalid(
            f"invalid tool name {name!r}: a tool name must be 1-64 characters of letters, "
            "digits, '_' or '-' (what every provider accepts); rename the tool"
        )
    return name


class ToolFilter(msgspec.Struct, frozen=True):
    """Glob patterns (``fnmatch``) that decide which tool names pass; deny wins.

    An empty ``allowed`` means every name is allowed unless denied.
    """

    allowed: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()

    @classmethod
    def of(cls, allowed: Iterable[str] = (), denied: Iterable[str] = ()) -> ToolFilter:
        return cls(tuple(allowed), tuple(denied))

    def permits(self, name: str) -> bool:
        """Whether ``name`` passes: not denied, and allowed (or no allow list)."""
        if any(fnmatch.fnmatchcase(name, pat) for pat in self.denied):
            return False
        if not self.allowed:
            return True
        return any(fnmatch.fnmatchcase(name, pat) for pat in self.allowed)


_PASS_ALL = ToolFilter()


def _spec_of(tool: Any) -> ToolSpec:
    spec = getattr(tool, "spec", None)
    if callable(spec):
        result = spec()
        if isinstance(result, ToolSpec):
            return result
    return ToolSpec(
        tool.name,
        getattr(tool, "description", ""),
        getattr(tool, "parameters", {"type": "object", "properties": {}}),
    )


class ToolRegistry:
    """Tools by name (O(1) lookup) with their source, filters and cached specs.

    Args:
        allowed: Glob patterns of tool names to keep (empty: all).
        denied: Glob patterns of tool names to drop; deny wins over allow.
        mcp_filters: Extra filters per MCP server name, applied to tools from ``Mcp(server)``
            after the global filter.

    A tool dropped by a filter is not registered: ``register`` returns False and the name is
    listed in :attr:`filtered_out`. ``specs()`` is cached and rebuilt after every write and
    whenever a tool's ``schema_revision`` (optional, an int that only grows: a tool whose enum
    follows other nodes' devices) changes; :attr:`version` increases with both (the engine
    keys its system prompt on it). A tool whose ``offered`` (optional) is False is left out of
    ``specs()`` until it is True again.
    """

    def __init__(
        self,
        *,
        allowed: Iterable[str] = (),
        denied: Iterable[str] = (),
        mcp_filters: Mapping[str, ToolFilter] | None = None,
    ) -> None:
        self._filter = ToolFilter.of(allowed, denied)
        self._mcp_filters: dict[str, ToolFilter] = dict(mcp_filters or {})
        self._tools: dict[str, Tool] = {}
        self._sources: dict[str, ToolSource] = {}
        self._specs: tuple[ToolSpec, ...] | None = None
        self._specs_revision = 0
        self.filtered_out: list[str] = []
        self._writes = 0
        # Tools whose schema changes without a write (``schema_revision``): usually none.
        self._revised: list[Any] = []

    # --- reading -------------------------------------------------------------------------

    def get(self, name: str) -> Tool | None:
        """The tool registered under ``name``, or None."""
        return self._tools.get(name)

    def source_of(self, name: str) -> ToolSource | None:
        """Where the tool registered under ``name`` came from, or None."""
        return self._sources.get(name)

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._tools)

    def tools(self) -> list[Tool]:
        """Registered tools, in registration order."""
        return list(self._tools.values())

    @property
    def version(self) -> int:
        """Grows on every write and every change of a tool's ``schema_revision``."""
        return self._writes + self._schema_revisions()

    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools' specs in registration order (cached until the next write or revision)."""
        specs = self._specs
        revision = self._schema_revisions()
        if specs is None or revision != self._specs_revision:
            # A tool that follows other nodes may have nothing to offer now (``offered``).
            offered = [t for t in self._tools.values() if getattr(t, "offered", True)]
            specs = self._specs = tuple(_spec_of(t) for t in offered)
            self._specs_revision = revision
        return specs

    def _schema_revisions(self) -> int:
        return sum(int(t.schema_revision) for t in self._revised)

    @property
    def filter(self) -> ToolFilter:
        """The global allow/deny filter."""
        return self._filter

    def permits(self, name: str, source: ToolSource = BUILTIN) -> bool:
        """Whether the filters let a tool of this name and source in."""
        if not self._filter.permits(name):
            return False
        if isinstance(source, Mcp):
            return self._mcp_filters.get(source.server, _PASS_ALL).permits(name)
        return True

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    # --- writing -------------------------------------------------------------------------

    def register(self, tool: Tool, source: ToolSource = BUILTIN) -> bool:
        """Add ``tool``; returns False if a filter dropped it.

        Registering the very same object again under the same source is a no-op (shared
        instances may be offered twice).

        Raises:
            ToolNameInvalid: The tool's name is not valid.
            ToolNameClash: Another tool already has that name.
            TypeError: ``tool`` has no ``name`` or no ``execute``.
        """
        name = self._check(tool)
        existing = self._tools.get(name)
        if existing is not None:
            if existing is tool and self._sources[name] == source:
                return True
            raise ToolNameClash(
                f"tool name {name!r} from {source} is already registered from "
                f"{self._sources[name]}; rename one of them, deny one with a filter, or use "
                "register_or_replace() to replace it on purpose"
            )
        if not self.permits(name, source):
            self.filtered_out.append(name)
            return False
        self._tools[name] = tool
        self._sources[name] = source
        self._changed()
        return True

    def register_many(self, tools: Iterable[Tool], source: ToolSource = BUILTIN) -> list[str]:
        """Add several tools; returns the names that were registered (not filtered out).

        All names are checked first, so a clash or an invalid name leaves the registry as it
        was.
        """
        batch = list(tools)
        seen: set[str] = set()
        for tool in batch:
            name = self._check(tool)
            if name in seen:
                raise ToolNameClash(f"tool name {name!r} appears twice in one register_many()")
            seen.add(name)
            existing = self._tools.get(name)
            if existing is not None and not (existing is tool and self._sources[name] == source):
                raise ToolNameClash(
                    f"tool name {name!r} from {source} is already registered from "
                    f"{self._sources[name]}; nothing from this batch was registered"
                )
        return [t.name for t in batch if self.register(t, source)]

    def register_or_replace(self, tool: Tool, source: ToolSource = BUILTIN) -> Tool | None:
        """Add ``tool``, replacing any tool of the same name (keeps its position).

        Returns the replaced tool, or None. A filtered-out name is not registered, and an
        existing tool of that name is removed (the filter applies to the new source).
        """
        name = self._check(tool)
        old = self._tools.get(name)
        if not self.permits(name, source):
            self.filtered_out.append(name)
            if old is not None:
                self.unregister(name)
            return old
        self._tools[name] = tool
        self._sources[name] = source
        self._changed()
        return old

    def unregister(self, name: str) -> Tool | None:
        """Remove the tool of that name; returns it, or None if there was none."""
        tool = self._tools.pop(name, None)
        if tool is not None:
            del self._sources[name]
            self._changed()
        return tool

    def unregister_by_source(self, source: ToolSource) -> list[str]:
        """Remove every tool from ``source`` (an MCP server going away, a remote session
        closing); returns the removed names."""
        gone = [n for n, s in self._sources.items() if s == source]
        for name in gone:
            del self._tools[name]
            del self._sources[name]
        if gone:
            self._changed()
        return gone

    def listing(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """The one listing of the tools (``/api/tools``, MCP ``tools/list``, a client's own
        tools): ``name``, ``description``, ``parameters`` (the JSON schema), ``source`` and
        ``risk`` of each, in registration order; only ``names`` when given."""
        wanted = None if names is None else set(names)
        return [
            {
                "name": spec.name,
                "description": spec.description,
                "parameters": dict(spec.parameters),
                "source": str(self.source_of(spec.name)),
                "risk": str(getattr(getattr(self.get(spec.name), "risk", None), "value", "")),
            }
            for spec in self.specs()
            if wanted is None or spec.name in wanted
        ]

    def copy(
        self, *, allowed: Sequence[str] | None = None, denied: Sequence[str] | None = None
    ) -> ToolRegistry:
        """A new registry holding the same tool objects, optionally with other filters."""
        new = ToolRegistry(
            allowed=self._filter.allowed if allowed is None else allowed,
            denied=self._filter.denied if denied is None else denied,
            mcp_filters=self._mcp_filters,
        )
        for name, tool in self._tools.items():
            new.register(tool, self._sources[name])
        return new

    # --- internals -----------------------------------------------------------------------

    def _check(self, tool: Any) -> str:
        name = getattr(tool, "name", None)
        if name is None or not callable(getattr(tool, "execute", None)):
            raise TypeError(
                f"{tool!r} is not a tool: it needs a 'name' attribute and an async "
                "'execute(arguments, context)' method (see clawseed_edge.api.BaseTool)"
            )
        return validate_tool_name(name)

    def _changed(self) -> None:
        self._specs = None
        self._writes += 1
        self._revised = [t for t in self._tools.values() if hasattr(t, "schema_revision")]
