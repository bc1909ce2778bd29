"""Both ends of a fleet call over a connected client: :class:`FleetCaller` asks another node,
:class:`FleetAnswerer` answers one, rate-limited per calling node (:class:`CallBuckets`).

The wire format is :mod:`.calls`; the connection is the owner's (the channel of ``run``, or the
one-shot :class:`~.oneshot.FleetLink`), handed in as ``client`` (``await client.publish(...)``).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable
from typing import Any

from clawseed_edge.api import Actor, ToolResult

from .calls import (
    FLEET_TOOLS,
    CallRequest,
    PendingCalls,
    call_topic,
    encode_reply,
    encode_request,
    parse_reply,
    parse_request,
    reply_topic,
)
from .fleet import FleetView

__all__ = ["MAX_SOURCES", "CallBuckets", "FleetAnswerer", "FleetCaller"]

log = logging.getLogger(__name__)

#: Calling nodes whose buckets are kept; the least recently seen is forgotten beyond it.
MAX_SOURCES = 256
#: A flood is logged at most once per window (per calling node).
LOG_WINDOW_S = 60.0


class CallBuckets:
    """A token bucket per calling node: up to ``per_minute`` calls at once, refilled evenly
    (``per_minute`` per 60 s). What does not fit is refused; a flood is logged once a minute.

    Args:
        per_minute: The bucket's size and refill per minute.
        clock: Seconds, monotonic (tests pass a fake one).
        max_sources: Buckets kept at most (a flood of made-up sender names forgets the oldest;
            the channel's global ``max_commands_per_minute`` still bounds them all).
    """

    def __init__(
        self,
        per_minute: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_sources: int = MAX_SOURCES,
    ) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._max = max_sources
        # source -> (tokens, when they were counted, when a drop was last logged)
        self._buckets: collections.OrderedDict[str, tuple[float, float, float]] = (
            collections.OrderedDict()
        )
        #: Calls refused, per source (for tests and `fleet list` one day).
        self.dropped: collections.Counter[str] = collections.Counter()

    def admit(self, source: str) -> bool:
        """Whether a call from ``source`` may run now (takes a token when it may)."""
        now = self._clock()
        tokens, then, logged = self._buckets.pop(source, (float(self.per_minute), now, -1e18))
        tokens = min(float(self.per_minute), tokens + (now - then) * self.per_minute / 60.0)
        admitted = tokens >= 1.0
        if admitted:
            tokens -= 1.0
        else:
            self.dropped[source] += 1
            if now - logged >= LOG_WINDOW_S:
                log.warning(
                    "MQTT: node %s sends more than %d fleet calls a minute; its calls are "
                    "dropped until it slows down (said once a minute)",
                    source,
                    self.per_minute,
                )
                logged = now
        self._buckets[source] = (tokens, now, logged)
        while len(self._buckets) > self._max:
            self._buckets.popitem(last=False)
        return admitted


class FleetCaller:
    """The calling side: publishes requests and matches the replies by id (bounded).

    Args:
        node_id: This node (the requests' ``from``).
        fleet: What the broker says of the other nodes (offline, unknown).
        reply_token: Non-empty for a one-shot process: its replies come on a topic of its own.
    """

    def __init__(self, node_id: str, fleet: FleetView, *, reply_token: str = "") -> None:
        self.node_id = node_id
        self.fleet = fleet
        self.reply_token = reply_token
        #: The connected client (None while there is no connection).
        self.client: Any = None
        self._calls = PendingCalls()

    @property
    def reply_topic(self) -> str:
        return reply_topic(self.node_id, self.reply_token)

    async def call(
        self, node: str, tool: str, arguments: dict[str, Any], *, timeout_s: float = 10.0
    ) -> ToolResult:
        """Run ``tool(arguments)`` on ``node``, decided by that node's own policy; its answer,
        or a failed result saying why there is none (offline, unknown, no answer in time).

        Safe to cancel: the call is forgotten (the owner may still run it).
        """
        known = self.fleet.get(node)
        if known is None:
            names = ", ".join(n.node for n in self.fleet.nodes()) or "none"
            return ToolResult.fail(f"no node named {node!r} on the broker (known: {names})")
        if known.online is False:
            return ToolResult.fail(f"{node} is offline (its last will on the broker says so)")
        client = self.client
        if client is None:
            return ToolResult.fail("this node is not connected to the MQTT broker now")
        try:
            call_id, future = self._calls.open()
        except RuntimeError as exc:
            return ToolResult.fail(str(exc))
        request = CallRequest(call_id, self.node_id, tool, arguments, self.reply_token)
        try:
            await client.publish(call_topic(node), encode_request(request), qos=1)
            async with asyncio.timeout(timeout_s):
                result = await future
        except TimeoutError:
            return ToolResult.fail(f"{node} did not answer within {timeout_s:g} s")
        finally:
            self._calls.close(call_id)
        if not result.success and result.error is not None:
            # The owner's refusal or failure names the owner: "the gateway is off" is the
            # shed's gateway, not the caller's.
            return ToolResult.fail(
                f"{node} answered: {result.error}", result.output, result.code or "tool_failed"
            )
        return result

    def take_reply(self, payload: bytes) -> None:
        """A message on :attr:`reply_topic`: resolves the call it answers (else logged)."""
        try:
            call_id, result = parse_reply(payload)
        except ValueError as exc:
            log.warning("MQTT: dropped a malformed fleet reply (%s)", str(exc)[:200])
            return
        if not self._calls.resolve(call_id, result):
            log.info("MQTT: a fleet reply nobody waits for (late or unknown): %s", call_id[:40])


class FleetAnswerer:
    """The owning side: a request from another node, rate-limited per node, run through this
    node's own SecurityPolicy and approvals, answered on the caller's reply topic.

    Args:
        node_id: This node.
        act: The host's one path to a tool (``await act(tool, arguments, actor)``): the
            SecurityPolicy first, with the calling node as a ``fleet`` actor.
        per_node_per_minute: :class:`CallBuckets` size per calling node.
    """

    def __init__(
        self,
        node_id: str,
        act: Any,
        *,
        per_node_per_minute: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.node_id = node_id
        self.act = act
        self.buckets = CallBuckets(per_node_per_minute, clock=clock)
        self._clock = clock
        self._malformed_logged = -1e18

    def take(self, payload: bytes) -> CallRequest | None:
        """The request in ``payload`` if it is well formed and its node is within its rate;
        None (logged, a flood of them once a minute) otherwise."""
        try:
            request = parse_request(payload)
        except ValueError as exc:
            now = self._clock()
            if now - self._malformed_logged >= LOG_WINDOW_S:
                self._malformed_logged = now
                log.warning(
                    "MQTT: dropped a malformed fleet call (%s); more are dropped quietly "
                    "for a minute",
                    str(exc)[:200],
                )
            return None
        return request if self.buckets.admit(request.sender) else None

    async def answer(self, client: Any, request: CallRequest) -> None:
        """Run ``request`` here and publish the answer (QoS 1). Safe to cancel."""
        named = [request.arguments.get(k) for k in ("device", "sensor")]
        if request.tool not in FLEET_TOOLS:
            result = ToolResult.fail(
                f"{self.node_id} takes only device tools from the fleet "
                f"({', '.join(sorted(FLEET_TOOLS))}), not {request.tool!r}"
            )
        elif any(isinstance(n, str) and "." in n for n in named):
            # A call names the owner's own device: no node passes a call on to a third one.
            result = ToolResult.fail(
                f"{self.node_id} takes calls for its own devices only, by their own names"
            )
        else:
            result = await self.act(
                request.tool, request.arguments, Actor("fleet", "mqtt", request.sender)
            )
        log.info(
            "MQTT: fleet call %s from %s: %s",
            request.tool,
            request.sender,
            "done" if result.success else f"refused: {str(result.error)[:200]}",
        )
        topic = reply_topic(request.sender, request.reply)
        await client.publish(topic, encode_reply(request.id, result), qos=1)
