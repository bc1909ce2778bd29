"""GatewayHub: what every endpoint and connection of one gateway shares.

Shared across connections: the service's runtime, the gateway-wide tool registry (built-ins
plus every connection's remote tools, for ``/api/tools``), pairing, rate limits, metrics, the
SSE listeners. From the channels floor: the approvals broker, the one emergency stop and the
conversations (each connection's agent is built there, from the assembled parts, once per
connection and never by assembling again). The hub does not know the connection class: it
holds its connections as :class:`ChatPeer` (what it needs of one).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from clawseed_edge.agent import MetricsObserver, ToolRegistry
from clawseed_edge.api import Actor, ToolResult
from clawseed_edge.channels.approvals import ApprovalBroker
from clawseed_edge.channels.conversations import Conversations
from clawseed_edge.channels.estop import EmergencyStop
from clawseed_edge.channels.watch import HardwareWatch
from clawseed_edge.config.schema import GatewaySettings
from clawseed_edge.state import PairingTokens, StateDB, TokenInfo

from .detached import DetachedTurns
from .idempotency import IdempotencyCache
from .limits import RateLimiter
from .pairing import PairingGate
from .protocol import FrameLimits

if TYPE_CHECKING:
    from clawseed_edge.channels.host import ChannelHost
    from clawseed_edge.config.assembly import Runtime

__all__ = ["ChatPeer", "GatewayHub"]

log = logging.getLogger(__name__)

#: ``await act(tool, arguments, actor)``: the host's one path to a tool.
Act = Callable[[str, dict[str, Any], Actor], Awaitable[ToolResult]]

SSE_QUEUE = 256
SseQueue = asyncio.Queue[dict[str, Any] | None]


class ChatPeer(Protocol):
    """A connected chat client, as the hub sees it (the connection class is not imported)."""

    who: TokenInfo
    session_id: str
    remote_names: set[str]
    answers_approvals: bool

    def send(self, frame: dict[str, Any]) -> None: ...

    def remote_tools(self) -> list[dict[str, Any]]: ...

    async def close(
        self, reason: str, *, grace_s: float = 0.0, keep_turn: bool = False
    ) -> None: ...


class GatewayHub:
    """Shared gateway state; see the module docstring.

    Args:
        host: What the gateway is built with (:class:`~clawseed_edge.channels.host.ChannelHost`):
            its act (a person's device command), approvals broker, emergency stop,
            conversations, state.db (pairing tokens), metrics, sensor history, hardware view;
            and its runtime, for the config, health and session routes.
        settings: ``[gateway]``.
        remote_timeout_s: Override ``remote_tool_timeout_s`` (tests make it short).
        clock: Monotonic seconds for rate limits and lockouts.

    Raises:
        ConfigInvalid: The host has no approvals broker or no state.db.
    """

    def __init__(
        self,
        host: ChannelHost,
        settings: GatewaySettings,
        *,
        remote_timeout_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from clawseed_edge.api import ConfigInvalid

        if host.approvals is None or host.state is None:
            raise ConfigInvalid("the gateway needs the approvals broker and state.db of its host")
        runtime: Runtime = host.runtime
        #: The service's agent (webhook turns, sessions) and peripherals (health, states).
        self.agent = host.agent
        self.peripherals = tuple(host.peripherals)
        #: For the config, provider and memory routes only.
        self.runtime = runtime
        #: The host's one path to a tool (``POST /api/peripherals/{device}``).
        self.act: Act = host.act
        #: The sensor history (a SensorHistory) behind /api/sensors/{name}/history, or None.
        self.history = host.history
        self.settings = settings
        self.state: StateDB = host.state
        self.broker: ApprovalBroker = host.approvals
        self.metrics: MetricsObserver | None = host.metrics
        self.conversations: Conversations = host.conversations
        self.remote_timeout_s = (
            remote_timeout_s if remote_timeout_s is not None else settings.remote_tool_timeout_s
        )
        self.pairing = PairingGate(
            PairingTokens(self.state),
            clock=clock,
            required=settings.require_pairing,
            code_ttl_s=settings.pairing_code_ttl_s,
            max_code_failures=settings.pairing_code_max_failures,
            attempts_per_minute=settings.pairing_attempts_per_minute,
        )
        self.rate = RateLimiter(settings.requests_per_minute, clock=clock)
        self.idempotency = IdempotencyCache(300.0, clock=clock)
        self.limits = FrameLimits(
            max_frame_bytes=settings.max_frame_bytes,
            max_message_chars=settings.max_message_chars,
            max_remote_tools=settings.max_remote_tools,
            max_tool_schema_bytes=settings.max_tool_schema_bytes,
        )
        # The device's tools; each connection's remote tools are in its own registry only.
        self.registry: ToolRegistry = host.agent.registry.copy()
        self.connections: dict[str, ChatPeer] = {}
        #: Turns whose client went away, and what they sent since (for the resumed session).
        self.detached = DetachedTurns()
        self.accepting = True
        self.started_at = time.time()
        self._sse: set[SseQueue] = set()
        self._sse_hardware: set[SseQueue] = set()
        self._sse_answering: set[SseQueue] = set()
        # Every SSE stream belongs to the token that opened it (revoking it closes the stream).
        self._sse_tokens: dict[SseQueue, str] = {}
        # Live hardware state for SSE listeners that ask for it (the phone app's dashboard).
        self.watch: HardwareWatch = host.hardware_watch(self.publish_hardware)
        #: The one emergency stop (``POST /api/estop`` calls it).
        self.estop: EmergencyStop = host.emergency_stop

    # --- people: turns, approvals, events (the gateway as a Channel) ---------------------

    def abort_turns(self, reason: str) -> int:
        """Abort the running turn of every connection's conversation."""
        return self.conversations.abort_all(reason, channel="gateway")

    @property
    def answerers(self) -> int:
        """Connected clients and SSE listeners that can answer an approval request."""
        peers = sum(1 for c in self.connections.values() if c.answers_approvals)
        return peers + len(self._sse_answering)

    def ask(self, frame: dict[str, Any]) -> None:
        """Show an approval request to every connected client and SSE listener."""
        for connection in list(self.connections.values()):
            connection.send(frame)
        self.publish(frame)

    def deliver(self, frame: dict[str, Any]) -> None:
        """A channel delivery: to every SSE listener; a resolved approval also to every
        WebSocket client (they were all shown the request)."""
        if frame.get("type") == "approval_resolved":
            for connection in list(self.connections.values()):
                connection.send(frame)
        self.publish(frame)

    def publish(self, frame: dict[str, Any]) -> None:
        """Send ``frame`` to every SSE listener (a slow one loses its oldest events)."""
        for queue in list(self._sse):
            sse_put(queue, frame)

    def publish_hardware(self, frame: dict[str, Any]) -> None:
        """Send a live hardware frame to the SSE listeners that asked for them."""
        for queue in list(self._sse_hardware):
            sse_put(queue, frame)

    def open_sse(
        self, *, hardware: bool = False, answers: bool = True, token_id: str = ""
    ) -> SseQueue:
        """A queue of SSE frames; ``hardware`` adds the live ``devices``, ``sensor`` and
        ``boards`` frames (the hardware is read only while someone asked for them);
        ``answers``: the listener answers approvals (``POST /api/approvals/{id}``);
        ``token_id``: the pairing token that opened it (:meth:`revoke` ends the stream).
        Requests already waiting are queued at once."""
        queue: SseQueue = asyncio.Queue(SSE_QUEUE)
        self._sse.add(queue)
        self._sse_tokens[queue] = token_id
        if answers:
            self._sse_answering.add(queue)
        for frame in self.broker.waiting_frames():
            sse_put(queue, frame)
        if hardware:
            self._sse_hardware.add(queue)
            self.watch.listener_added()
        return queue

    def close_sse(self, queue: SseQueue) -> None:
        self._sse.discard(queue)
        self._sse_tokens.pop(queue, None)
        self._sse_answering.discard(queue)
        if queue in self._sse_hardware:
            self._sse_hardware.discard(queue)
            self.watch.listener_removed()

    async def revoke(self, token_id: str) -> bool:
        """Revoke a pairing token and end everything it opened: its WebSocket connections
        and its ``/sse`` streams (a revoked phone must not keep receiving).

        Returns whether the token existed. Safe to cancel (what was closed stays closed).
        """
        revoked = await self.pairing.tokens.revoke(token_id)
        for queue, owner in list(self._sse_tokens.items()):
            if owner == token_id:
                # No frame reaches it any more; the stream ends at its next read.
                self.close_sse(queue)
                sse_put(queue, None)
        for connection in list(self.connections.values()):
            if connection.who.id == token_id:
                await connection.close("the pairing was revoked")
        return revoked

    # --- shutdown -------------------------------------------------------------------------

    async def close_all(self, reason: str, *, grace_s: float = 3.0) -> None:
        """Stop accepting, let running turns finish for ``grace_s``, then abort them and close
        every connection and SSE stream. Safe to cancel (what was closed stays closed)."""
        self.accepting = False
        connections = list(self.connections.values())
        await asyncio.gather(
            *(c.close(reason, grace_s=grace_s) for c in connections), return_exceptions=True
        )
        self.detached.abort_all(reason)
        for queue in list(self._sse):
            sse_put(queue, None)
        await self.watch.aclose()


def sse_put(queue: asyncio.Queue[dict[str, Any] | None], frame: dict[str, Any] | None) -> None:
    """Queue ``frame`` for an SSE listener, dropping its oldest event when it is full."""
    if queue.full():
        queue.get_nowait()
    queue.put_nowait(frame)
