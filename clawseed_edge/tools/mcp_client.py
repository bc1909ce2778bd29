"""Other MCP servers' tools for the agent (``[[mcp.servers]]``), on our own MCP wire.

One :class:`McpServerConnection` per configured server keeps a session open in a task of its
own (:mod:`.mcp_peer`: stdio or streamable HTTP) and offers the server's tools as
:class:`McpTool` objects named ``<server>__<tool>``. Protective defaults:

* every call is bounded by ``timeout_s`` (the server is told to cancel it) and its text result
  by ``max_result_chars``; descriptions and schemas are bounded too; the bytes of any one
  message from the server are capped before they are parsed (:func:`message_cap`), so a
  30 MB result fails cleanly instead of growing the service;
* a server that dies is started again with backoff (1, 2, 4 ... 30 s), at most
  ``max_reconnects`` times in a row; a call made while it was down waits for the restart
  (within its timeout), and a call cut off mid-flight fails saying it may have run;
* a server that does not start is logged and skipped (its tools are missing, nothing else);
* a stdio server's stderr goes to this module's log, line by line (capped);
* a ``url`` server's host must resolve to public addresses, or to ``[tools.http]
  allowed_networks``, checked at every (re)connect as ``http_request`` checks its URLs; the
  session's connections go to the checked IP (the Host header and the TLS server name stay the
  host, :func:`~.http_client.pinned_url`), so a DNS answer that changes between the check and
  the connection (DNS rebinding) cannot redirect it, and a request for another origin is
  refused;
* :meth:`McpServerConnection.aclose` ends the child (its process group).

MCP tools carry ``external_content = True``: once one ran in a turn, the SecurityPolicy
auto-approves nothing more in that turn. This module is imported only when MCP servers are
configured; it loads no SDK and no pydantic.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from clawseed_edge.api import (
    BaseTool,
    ClawseedError,
    Lifecycle,
    RiskClass,
    ToolContext,
    ToolResult,
)

from .mcp_peer import HttpPeer, McpMessageTooLarge, McpPeerClosed, StdioPeer, initialize

if TYPE_CHECKING:
    from .destinations import Resolver, Target

__all__ = ["McpServerConnection", "McpTool", "open_mcp_servers"]

log = logging.getLogger(__name__)

MAX_DESCRIPTION_CHARS = 1000
MAX_SCHEMA_CHARS = 16_000
MAX_TOOLS_PER_SERVER = 128
MAX_STDERR_LINES = 1000
MAX_STDERR_LINE_CHARS = 500
BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 30.0
#: How long a close waits for the session to end (the SDK then stops the child).
CLOSE_TIMEOUT_S = 4.5
_TOOL_NAME_CHARS = 64
#: Tool-list pages followed at most (a server whose cursor never ends cannot hang a start).
MAX_TOOL_PAGES = 8


def message_cap(max_result_chars: int) -> int:
    """The most bytes one message from a server may have: room for ``max_result_chars``
    characters of JSON-escaped text and the envelope, at least 1 MiB."""
    return max(1 << 20, 6 * max_result_chars + (64 << 10))


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """A tool as the server listed it (bounded by :meth:`McpTool.__init__`)."""

    name: str
    description: str
    input_schema: dict[str, Any]

    @classmethod
    def of(cls, listed: Any) -> RemoteTool | None:
        """From a ``tools/list`` entry; None when it has no usable name."""
        if not isinstance(listed, dict):
            return None
        name, schema = listed.get("name"), listed.get("inputSchema")
        if not isinstance(name, str) or not name or len(name) > _TOOL_NAME_CHARS:
            return None
        description = listed.get("description")
        return cls(
            name,
            description[: 4 * MAX_DESCRIPTION_CHARS] if isinstance(description, str) else "",
            schema if isinstance(schema, dict) else {},
        )


class McpServerFailed(ClawseedError, ConnectionError):
    """An MCP server could not be started or reached."""

    code = "mcp_server_failed"


class _Settings(Protocol):
    """What a connection needs of ``[[mcp.servers]]`` (config.mcp.McpServerSettings)."""

    @property
    def name(self) -> str: ...

    @property
    def command(self) -> str | None: ...

    @property
    def args(self) -> list[str]: ...

    @property
    def env(self) -> dict[str, str]: ...

    @property
    def url(self) -> str | None: ...

    @property
    def token_env(self) -> str | None: ...

    @property
    def tools(self) -> list[str]: ...

    @property
    def denied(self) -> list[str]: ...

    @property
    def risk(self) -> str: ...

    @property
    def timeout_s(self) -> float: ...

    @property
    def max_result_chars(self) -> int: ...

    @property
    def connect_timeout_s(self) -> float: ...

    @property
    def max_reconnects(self) -> int: ...


class McpTool(BaseTool):
    """One tool of an MCP server, as the agent sees it (``<server>__<tool>``)."""

    external_content = True

    def __init__(self, connection: McpServerConnection, remote: RemoteTool) -> None:
        self.connection = connection
        self.remote_name = str(remote.name)
        self.name = f"{connection.name}__{self.remote_name}"[:_TOOL_NAME_CHARS]
        description = str(remote.description or self.remote_name)
        if len(description) > MAX_DESCRIPTION_CHARS:
            description = description[: MAX_DESCRIPTION_CHARS - 3] + "..."
        self.description = f"[MCP server {connection.name}] {description}"
        schema = dict(remote.input_schema or {})
        if (
            len(json.dumps(schema, default=str)) > MAX_SCHEMA_CHARS
            or schema.get("type") != "object"
        ):
            schema = {"type": "object", "additionalProperties": True}
        self.parameters = schema
        self.risk = RiskClass(connection.settings.risk)
        # The agent's own bound sits above the call's, so the call's message is the one seen.
        self.timeout_s = connection.settings.timeout_s + 5.0

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        return await self.connection.call(self.remote_name, dict(arguments))


class McpServerConnection:
    """A session with one MCP server, kept open (and reopened) by a task of its own.

    Lifecycle: UNOPENED -> (:meth:`start`) OPEN -> (:meth:`aclose`) CLOSED.
    """

    def __init__(
        self,
        settings: _Settings,
        allowed_networks: Sequence[str] = (),
        resolver: Resolver | None = None,
    ) -> None:
        self.settings = settings
        self.allowed_networks = tuple(allowed_networks)
        #: Resolves a ``url`` server's host, once per (re)connect (default: the system's).
        self.resolver = resolver
        self.name = settings.name
        self.state = Lifecycle.UNOPENED
        self.remote_tools: list[RemoteTool] = []
        self.restarts = 0
        self._client: Any = None
        self._ready = asyncio.Event()
        self._lost = asyncio.Event()
        self._closing = False
        self._stopping = asyncio.Event()
        self._given_up: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._first: asyncio.Future[None] | None = None

    # --- starting and stopping -----------------------------------------------------------

    async def start(self) -> list[McpTool]:
        """Launch or reach the server and list its tools; returns the ones the filters let in.

        Raises:
            McpServerFailed: It did not start within ``connect_timeout_s`` (it is stopped).
        """
        self._first = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._run(), name=f"mcp-{self.name}")
        try:
            async with asyncio.timeout(self.settings.connect_timeout_s):
                await asyncio.shield(self._first)
        except TimeoutError:
            await self.aclose()
            raise McpServerFailed(
                f"MCP server {self.name!r} did not start within "
                f"{self.settings.connect_timeout_s:g} s"
            ) from None
        except BaseException:
            await self.aclose()
            raise
        self.state = Lifecycle.OPEN
        return [McpTool(self, remote) for remote in self.remote_tools if self._permits(remote.name)]

    def _permits(self, name: str) -> bool:
        if any(fnmatch.fnmatchcase(name, p) for p in self.settings.denied):
            return False
        return any(fnmatch.fnmatchcase(name, p) for p in self.settings.tools)

    async def aclose(self) -> None:
        """End the session and the child process. Idempotent; safe to cancel."""
        if self.state is Lifecycle.CLOSED:
            return
        self.state = Lifecycle.CLOSED
        self._closing = True
        self._stopping.set()
        self._lost.set()
        task = self._task
        if task is not None and not task.done():
            if not self._ready.is_set():
                task.cancel()  # mid-start or in backoff: the SDK still stops the child
            await asyncio.wait({task}, timeout=CLOSE_TIMEOUT_S)
            if not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=CLOSE_TIMEOUT_S)
        self._ready.set()  # a call still waiting learns it is closed

    # --- the session's task ---------------------------------------------------------------

    async def _run(self) -> None:
        failures = 0
        while not self._closing:
            reason = ""
            try:
                await self._session()
            except Exception as exc:
                reason = _why(exc)
            if self._ready_once:
                failures = 0  # it ran: count the restarts in a row from here
            if self._closing:
                return
            if self._first is not None and not self._first.done():
                self._first.set_exception(
                    McpServerFailed(
                        f"MCP server {self.name!r} did not start: {reason or 'it exited'}"
                    )
                )
                return
            failures += 1
            if failures > self.settings.max_reconnects:
                self._given_up = (
                    f"the MCP server {self.name!r} stopped and did not come back after "
                    f"{self.settings.max_reconnects} restarts ({reason or 'it exited'}); "
                    "restart the service after fixing it"
                )
                log.error("%s", self._given_up)
                self._ready.set()  # waiting calls learn it at once
                return
            delay = min(BACKOFF_FIRST_S * 2 ** (failures - 1), BACKOFF_MAX_S)
            log.warning(
                "MCP server %r went away (%s); restart %d of at most %d in %.0f s",
                self.name,
                reason or "it exited",
                failures,
                self.settings.max_reconnects,
                delay,
            )
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._stopping.wait()
            self.restarts += 1

    _ready_once = False

    async def _session(self) -> None:
        self._ready_once = False
        self._lost.clear()
        target = None
        if self.settings.url is not None:
            target = await self._check_destination(self.settings.url)
        stderr = _StderrLog(self.name) if self.settings.command is not None else None
        try:
            async with self._transport(stderr, target) as peer:
                if stderr is not None:
                    stderr.spawned()
                from clawseed_edge import __version__

                await initialize(peer, __version__)
                self.remote_tools = await self._list_tools(peer)
                self._client = peer
                self._ready.set()
                self._ready_once = True
                if self._first is not None and not self._first.done():
                    self._first.set_result(None)
                if not self._closing:
                    await _first_of(self._lost.wait(), peer.closed.wait())
        finally:
            self._client = None
            self._ready.clear()
            if stderr is not None:
                stderr.spawned()

    async def _list_tools(self, peer: Any) -> list[RemoteTool]:
        """Every page of ``tools/list``, up to :data:`MAX_TOOLS_PER_SERVER` tools."""
        found: list[RemoteTool] = []
        cursor: Any = None
        for _ in range(MAX_TOOL_PAGES):
            answer = await peer.request("tools/list", {"cursor": cursor} if cursor else None)
            listed = answer.get("tools") if isinstance(answer, dict) else None
            for entry in listed if isinstance(listed, list) else []:
                tool = RemoteTool.of(entry)
                if tool is not None:
                    found.append(tool)
            cursor = answer.get("nextCursor") if isinstance(answer, dict) else None
            if not cursor or len(found) >= MAX_TOOLS_PER_SERVER:
                break
        return found[:MAX_TOOLS_PER_SERVER]

    async def _check_destination(self, url: str) -> Target:
        """The URL's host must resolve to public addresses only, or to ``[tools.http]
        allowed_networks``: the address checks of ``http_request``. Resolved once: the
        session connects to the addresses returned.

        Raises:
            McpServerFailed: It does not (the message says which address and why).
        """
        from urllib.parse import urlsplit

        from .destinations import DestinationPolicy, DestinationRefused

        host = urlsplit(url).hostname or ""
        policy = DestinationPolicy.of([host], self.allowed_networks, self.resolver)
        try:
            return await policy.resolve(policy.check_url(url))
        except DestinationRefused as exc:
            raise McpServerFailed(
                f"MCP server {self.name!r}: {exc} (list its network in [tools.http] "
                "allowed_networks to reach it)"
            ) from exc

    def _transport(self, stderr: _StderrLog | None, target: Target | None) -> Any:
        settings = self.settings
        cap = message_cap(settings.max_result_chars)
        if settings.command is not None:
            assert stderr is not None
            return StdioPeer(
                settings.command, list(settings.args), dict(settings.env), stderr.fd, cap
            )
        assert target is not None
        return _http_peer(settings, target, cap)

    # --- calls -----------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """One call, bounded by ``timeout_s``; a result over ``max_result_chars`` is cut."""
        if self.state is not Lifecycle.OPEN:
            return ToolResult.fail(f"the MCP server {self.name!r} is not running")
        limit = self.settings.timeout_s
        try:
            async with asyncio.timeout(limit):
                client = await self._connected()
                if client is None:
                    return ToolResult.fail(self._given_up or f"{self.name!r} is not running")
                if _closed(client):  # it died since the last call: the call was never sent
                    self._ready.clear()
                    self._lost.set()
                    client = await self._connected()
                    if client is None:
                        return ToolResult.fail(self._given_up or f"{self.name!r} is not running")
                result = await client.request("tools/call", {"name": tool, "arguments": arguments})
        except McpMessageTooLarge as exc:
            return ToolResult.fail(f"the MCP server {self.name!r} failed {tool}: {exc}")
        except TimeoutError:
            return ToolResult.fail(
                f"the MCP server {self.name!r} did not answer {tool} within {limit:g} s "
                "(it was told to cancel it)"
            )
        except Exception as exc:
            if _connection_lost(exc):
                self._lost.set()  # the task restarts it
                return ToolResult.fail(
                    f"the MCP server {self.name!r} went away during {tool}; it may or may not "
                    "have run; the server is being restarted"
                )
            return ToolResult.fail(f"the MCP server {self.name!r} failed {tool}: {_why(exc)}")
        return self._result(tool, result)

    async def _connected(self) -> Any:
        await self._ready.wait()
        return None if self._closing else self._client

    def _result(self, tool: str, result: Any) -> ToolResult:
        result = result if isinstance(result, dict) else {}
        parts: list[str] = []
        content = result.get("content")
        for item in content if isinstance(content, list) else []:
            text = item.get("text") if isinstance(item, dict) else None
            kind = item.get("type", "content") if isinstance(item, dict) else "content"
            parts.append(text if isinstance(text, str) else f"[{str(kind)[:20]}]")
        if not parts and result.get("structuredContent") is not None:
            parts.append(json.dumps(result["structuredContent"], default=str))
        text = "\n".join(parts)
        cap = self.settings.max_result_chars
        if len(text) > cap:
            note = (
                f"\n... [cut by clawseed-edge: the result had {len(text)} characters, "
                f"max_result_chars is {cap}]"
            )
            text = text[: max(cap - len(note), 0)] + note
        if result.get("isError") is True:
            return ToolResult.fail(f"{self.name}__{tool}: {text or 'the tool failed'}")
        return ToolResult.ok(text)


def _closed(peer: Any) -> bool:
    """Whether the session's transport is known closed (nothing sent on it arrives)."""
    return bool(peer.closed.is_set())


async def _first_of(*waits: Any) -> None:
    """Wait until the first of ``waits`` ends; the others are cancelled."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _connection_lost(exc: BaseException) -> bool:
    return isinstance(exc, McpPeerClosed | ConnectionError | BrokenPipeError | EOFError)


def _why(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_why(e) for e in exc.exceptions[:3])
    return f"{type(exc).__name__}: {str(exc)[:300]}"


class _PinnedTransport:
    """An httpx transport, sending every request to ``target``'s checked addresses.

    Each request is rewritten by :func:`~.http_client.pinned_url` (the IP in the URL, the host
    in the Host header and TLS server name), the next address tried only when no connection
    could be made (nothing was sent). A request for another origin is refused.
    """

    def __init__(self, target: Target, inner: Any, connect_error: type[Exception]) -> None:
        self.target = target
        self.inner = inner
        self.connect_error = connect_error

    async def handle_async_request(self, request: Any) -> Any:
        from .http_client import pinned_url

        url, target = request.url, self.target
        default = 443 if url.scheme == "https" else 80
        if (url.scheme, url.host.lower(), url.port or default) != (
            target.scheme,
            target.host.lower(),
            target.port,
        ):
            raise self.connect_error(
                f"MCP server at {target.url}: refusing a request for another origin "
                f"({str(url)[:200]}); only the checked host is reached"
            )
        for index, address in enumerate(target.addresses):
            request.url, host, extensions = pinned_url(url, target, address)
            request.headers["Host"] = host
            request.extensions = {**request.extensions, **extensions}
            try:
                return await self.inner.handle_async_request(request)
            except self.connect_error:
                if index + 1 == len(target.addresses):
                    raise
        raise AssertionError("a Target always has an address")  # resolve() guarantees it

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _PinnedTransport:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.inner.__aexit__(*exc)


def _http_peer(settings: _Settings, target: Target, cap: int) -> HttpPeer:
    import httpx

    headers = {}
    if settings.token_env:
        token = os.environ.get(settings.token_env, "")
        if not token:
            raise McpServerFailed(
                f"MCP server {settings.name!r}: the environment variable "
                f"{settings.token_env} (token_env) is not set"
            )
        headers["Authorization"] = f"Bearer {token}"
    assert settings.url is not None
    # No proxies from the environment: a proxy would make its own lookup of the host.
    pinned = _PinnedTransport(target, httpx.AsyncHTTPTransport(), httpx.ConnectError)
    http = httpx.AsyncClient(
        headers=headers,
        timeout=settings.timeout_s,
        transport=pinned,  # type: ignore[arg-type]  # duck-typed: wraps httpx's own
        trust_env=False,
    )
    return HttpPeer(settings.url, http, cap)


class _StderrLog:
    """A pipe for a child's stderr; a daemon thread logs its lines (capped)."""

    def __init__(self, name: str) -> None:
        read, write = os.pipe()
        self.fd = write
        self.file = os.fdopen(write, "w")
        self._read = os.fdopen(read, "r", errors="replace")
        self._name = name
        threading.Thread(target=self._pump, name=f"mcp-{name}-stderr", daemon=True).start()

    def spawned(self) -> None:
        """The child holds its own end now (or never will): close ours. Idempotent."""
        with contextlib.suppress(Exception):
            self.file.close()

    def _pump(self) -> None:
        count = 0
        with contextlib.suppress(Exception), self._read:
            for line in self._read:
                count += 1
                if count <= MAX_STDERR_LINES:
                    log.info("MCP server %s: %s", self._name, line.rstrip()[:MAX_STDERR_LINE_CHARS])
                elif count == MAX_STDERR_LINES + 1:
                    log.info("MCP server %s: further stderr lines are not logged", self._name)


async def open_mcp_servers(
    servers: Sequence[_Settings], allowed_networks: Sequence[str] = ()
) -> tuple[list[McpServerConnection], list[McpTool]]:
    """Start every configured server at once; a failed one is logged and skipped.

    ``allowed_networks``: non-public networks a ``url`` server may be on (``[tools.http]``).

    Returns the running connections (close each with ``aclose``) and their tools.
    """
    connections = [McpServerConnection(s, allowed_networks) for s in servers]
    outcomes = await asyncio.gather(*(c.start() for c in connections), return_exceptions=True)
    running: list[McpServerConnection] = []
    tools: list[McpTool] = []
    for connection, outcome in zip(connections, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome
            log.error(
                "MCP server %r skipped: %s (its tools are missing; fix [[mcp.servers]] and "
                "restart)",
                connection.name,
                _why(outcome) if not isinstance(outcome, McpServerFailed) else outcome,
            )
            continue
        running.append(connection)
        tools.extend(outcome)
    return running, tools
