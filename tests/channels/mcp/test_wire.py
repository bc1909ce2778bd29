"""Our MCP wire without a process: the server's limits, cancellation, the sealed 2026-era
approval state, subscriptions per transport session, and the bounded readers."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

import httpx
import pytest

from clawseed_edge.channels.mcp.approval import RequestStates, RoundTrip, approved
from clawseed_edge.channels.mcp.backend import annotations_for
from clawseed_edge.channels.mcp.handlers import McpServer
from clawseed_edge.channels.mcp.http import McpHttp
from clawseed_edge.channels.mcp.session import Session
from clawseed_edge.channels.mcp.subscriptions import MAX_PER_SESSION
from clawseed_edge.tools.mcp_wire import LineReader, SseReader, WireTooLarge


class FakeBackend:
    """Two devices; ``slow`` waits until cancelled; ``watch`` counts its listeners."""

    def __init__(self) -> None:
        self.listeners: list[Any] = []
        self.calls: list[str] = []
        self.started = asyncio.Event()

    async def tools(self) -> list[dict[str, Any]]:
        schema = {"type": "object", "properties": {}}
        return [
            {"name": n, "description": n, "parameters": schema, "risk": "act"}
            for n in ("slow", "fast")
        ]

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(name)
        self.started.set()
        if name == "slow":
            await asyncio.sleep(3600)
        return {"ok": True, "output": "done", "error": ""}

    async def states(self) -> dict[str, Any]:
        return {"devices": [{"device": "lamp", "value": 0.0}], "readings": []}

    async def pinouts(self) -> list[dict[str, Any]]:
        return []

    def watch(self, listener: Any) -> Any:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)


def _session(sent: list[dict[str, Any]] | None = None) -> Session:
    box = sent if sent is not None else []
    return Session("s", "stdio", may_approve=True, notify=box.append)


async def _initialized(server: McpServer, session: Session) -> None:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    await server.handle(session, init, _nowhere)


async def _nowhere(message: dict[str, Any]) -> None:
    raise AssertionError(f"nothing is sent on this stream: {message}")


async def test_a_cancelled_request_stops_its_call_and_is_answered_no_more() -> None:
    backend = FakeBackend()
    server, session = McpServer(backend), _session()
    await _initialized(server, session)
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "slow"}}
    running = asyncio.create_task(server.handle(session, call, _nowhere))
    await backend.started.wait()
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
    assert await server.handle(session, cancel, _nowhere) is None
    assert await running is None
    assert session.tasks == {}


async def test_requests_before_initialize_and_unknown_methods_get_json_rpc_errors() -> None:
    server, session = McpServer(FakeBackend()), _session()
    early = await server.handle(
        session, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, _nowhere
    )
    await _initialized(server, session)
    unknown = await server.handle(session, {"jsonrpc": "2.0", "id": 2, "method": "x/y"}, _nowhere)
    bad = await server.handle(session, {"id": 3, "method": "ping"}, _nowhere)
    version = await server.handle(
        session,
        {"jsonrpc": "2.0", "id": 4, "method": "ping",
         "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}},
        _nowhere,
    )  # fmt: skip
    assert early is not None and early["error"]["code"] == -32600
    assert unknown is not None and unknown["error"]["code"] == -32601
    assert bad is not None and bad["error"]["code"] == -32600
    assert version is not None and version["error"]["code"] == -32022
    assert "2026-07-28" in version["error"]["data"]["supported"]


def test_hints_say_what_a_tool_does_beyond_its_risk_class() -> None:
    forget, write = annotations_for("act", "memory_forget"), annotations_for("act", "file_write")
    assert forget["destructiveHint"] is True and forget["idempotentHint"] is True
    assert write["destructiveHint"] is True and write["readOnlyHint"] is False
    assert annotations_for("act", "http_request")["openWorldHint"] is True
    assert annotations_for("read", "gpio_read")["readOnlyHint"] is True
    assert annotations_for("act", "gpio_switch")["destructiveHint"] is False


@pytest.mark.parametrize(
    ("answer", "approves"),
    [
        ({"action": "accept", "content": {"approve": True}}, True),
        ({"action": "accept", "content": {"approve": "no"}}, False),
        ({"action": "accept", "content": {"approve": "false"}}, False),
        ({"action": "accept", "content": {"approve": "0"}}, False),
        ({"action": "accept", "content": {"approve": 1}}, False),
        ({"action": "accept", "content": {}}, False),
        ({"action": "accept"}, False),
        ({"action": "decline", "content": {"approve": True}}, False),
        (None, False),
    ],
)
def test_only_accept_with_the_json_true_approves(answer: Any, approves: bool) -> None:
    assert approved(answer) is approves


async def test_a_sealed_answer_is_bound_to_its_call_and_used_once() -> None:
    states = RequestStates()
    args = {"device": "heater", "on": True}
    first = RoundTrip(states, "token:a", "gpio_switch", args, {})
    assert await first("Allow switch heater?") is False and first.question
    state = first.input_required()["requestState"]
    yes = {"approve": {"action": "accept", "content": {"approve": True}}}

    def again(owner: str, arguments: Any) -> RoundTrip:
        params = {"requestState": state, "inputResponses": yes}
        return RoundTrip(states, owner, "gpio_switch", arguments, params)

    other_args = again("token:a", {"device": "door_lock", "on": True})
    other_client = again("token:b", args)
    assert await other_args("Allow switch heater?") is False, "another call's answer"
    assert await other_client("Allow switch heater?") is False, "another client's answer"
    right = again("token:a", args)
    assert await right("Allow switch heater?") is True
    replay = again("token:a", args)
    assert await replay("Allow switch heater?") is False, "an answer is used once"
    assert replay.question == "Allow switch heater?", "so the person is asked again"
    edited = RoundTrip(states, "token:a", "gpio_switch", args, {"requestState": state + "x"})
    assert await edited("Allow switch heater?") is False


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


class _Token:
    def __init__(self, ident: str) -> None:
        self.id, self.name = ident, ident


def _gated(app: Any, token: str) -> Any:
    """What the gateway's TokenGate does: the paired client in the scope."""

    async def gated(scope: Any, receive: Any, send: Any) -> None:
        scope["clawseed.client"] = _Token(token)
        await app(scope, receive, send)

    return gated


async def _open(http: httpx.AsyncClient) -> str:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    answer = await http.post("/mcp", json=init)
    return str(answer.headers["mcp-session-id"])


def _rpc(request_id: int, method: str, uri: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"uri": uri}}


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
async def test_3000_subscribes_and_unsubscribes_keep_memory_flat_and_end_with_the_session() -> None:
    backend = FakeBackend()
    mcp = McpHttp(backend)
    transport = httpx.ASGITransport(app=_gated(mcp.app, "a"))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        http.headers["mcp-session-id"] = await _open(http)

        async def churn(start: int, count: int) -> None:
            for n in range(start, start + count):
                uri = f"device://lamp{n}"
                assert (await http.post("/mcp", json=_rpc(n, "resources/subscribe", uri))).json()[
                    "result"
                ] == {}
                await http.post("/mcp", json=_rpc(n, "resources/unsubscribe", uri))

        await churn(0, 300)  # warm up: the allocator's pools, the first imports
        gc.collect()
        before = _rss_kb()
        await churn(300, 3000)
        gc.collect()
        grown = _rss_kb() - before
        held_after_churn = len(mcp.server.subscriptions)
        # Without unsubscribing, one session stops at its cap with a clear error ...
        answers = [
            (await http.post("/mcp", json=_rpc(n, "resources/subscribe", f"device://x{n}"))).json()
            for n in range(MAX_PER_SESSION + 1)
        ]
        capped = len(mcp.server.subscriptions)
        # ... and everything it held is freed when the session ends.
        await http.delete("/mcp")
    assert held_after_churn == 0 and backend.listeners == []
    assert grown < 4 * 1024, f"RSS grew by {grown} kB over 3,000 subscribe+unsubscribe"
    assert capped == MAX_PER_SESSION
    assert "too many resource subscriptions" in answers[-1]["error"]["message"]
    assert len(mcp.server.subscriptions) == 0 and mcp.sessions == {}


async def test_a_session_belongs_to_its_token_and_sessions_are_capped_per_token() -> None:
    from clawseed_edge.channels.mcp.http import MAX_SESSIONS_PER_OWNER

    mcp = McpHttp(FakeBackend())
    mine = httpx.ASGITransport(app=_gated(mcp.app, "a"))
    theirs = httpx.ASGITransport(app=_gated(mcp.app, "b"))
    async with (
        httpx.AsyncClient(transport=mine, base_url="http://t") as a,
        httpx.AsyncClient(transport=theirs, base_url="http://t") as b,
    ):
        key = await _open(a)
        stolen = await b.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
            headers={"mcp-session-id": key},
        )
        for _ in range(MAX_SESSIONS_PER_OWNER - 1):
            await _open(a)
        over = await a.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize"})
        big = await a.post("/mcp", content=b"[" + b"0," * (1 << 20) + b"0]")
    assert stolen.status_code == 404
    assert over.status_code == 429 and "per paired client" in over.json()["error"]["message"]
    assert big.status_code == 413


def test_a_line_over_the_cap_is_skipped_without_being_held() -> None:
    lines = LineReader(16)
    got = [
        *lines.feed(b'{"a":1}\n' + b"x" * 10),
        *lines.feed(b"y" * 100_000),
        *lines.feed(b'z\n{"b":2}\n'),
    ]
    assert got[0] == b'{"a":1}' and isinstance(got[1], WireTooLarge) and got[2:] == [b'{"b":2}']
    assert len(lines._buffer) == 0
    events = SseReader(16)
    found = [*events.feed(b"event: message\r\ndata: " + b"q" * 40 + b"\r\n\r\ndata: {}\r\n\r\n")]
    assert isinstance(found[0], WireTooLarge) and found[1:] == [b"{}"]


async def test_subscriptions_are_capped_per_paired_client_across_its_sessions() -> None:
    from clawseed_edge.channels.mcp.subscriptions import MAX_PER_OWNER, SubscriptionTable
    from clawseed_edge.tools.mcp_wire import RpcError

    backend = FakeBackend()
    table = SubscriptionTable(backend)
    sessions = MAX_PER_OWNER // MAX_PER_SESSION
    for s in range(sessions):
        for n in range(MAX_PER_SESSION):
            await table.add(f"s{s}", "token:a", f"device://d{n}", lambda uri: None)
    with pytest.raises(RpcError, match="per paired client"):
        await table.add("another", "token:a", "device://d0", lambda uri: None)
    await table.add("theirs", "token:b", "device://d0", lambda uri: None)  # another client
    for s in range(sessions):
        table.drop(f"s{s}")
    table.drop("theirs")
    assert len(table) == 0 and backend.listeners == [], "the watch stops with the last one"
