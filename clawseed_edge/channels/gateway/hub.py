"""GatewayHub: what every endpoint and connection of one gateway shares.

Shared across connections: the provider, memory, peripherals and built-in tool instances (all
from the service's :class:`~clawseed_edge.config.assemble.Runtime`), the gateway-wide tool
registry (built-ins plus every connection's remote tools, for ``/api/tools``), the approval
broker, pairing, metrics. Per connection (:meth:`GatewayHub.build_agent`): an Agent with its own
registry copy, hook instances, SecurityPolicy (its action rate limits) and history.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from clawseed_edge.agent import (
    AgentBuilder,
    CallbackApprover,
    HookFactoryRegistry,
    MetricsObserver,
    ToolRegistry,
)
from clawseed_edge.api import (
    ApprovalRequest,
    DeviceAction,
    SessionStore,
    ToolContext,
)
from clawseed_edge.channels.approvals import ApprovalBroker
from clawseed_edge.channels.estop import EmergencyStop
from clawseed_edge.channels.watch import HardwareWatch
from clawseed_edge.config.assemble import build_policy, secret_scrubber
from clawseed_edge.config.schema import GatewaySettings
from clawseed_edge.state import PairingTokens, StateDB

from .idempotency import IdempotencyCache
from .limits import RateLimiter
from .pairing import PairingGate
from .protocol import FrameLimits

if TYPE_CHECKING:
    from clawseed_edge.agent import Agent
    from clawseed_edge.config.assemble import Runtime

    from .connection import ChatConnection

__all__ = ["GatewayHub"]

log = logging.getLogger(__name__)

SSE_QUEUE = 256


class GatewayHub:
    """Shared gateway state; see the module docstring.

    Args:
        runtime: The assembled runtime (its agent serves webhooks and API actions).
        settings: ``[gateway]``.
        state: The open ``state.db`` (pairing tokens).
        broker: The approval broker the runtime's policy asks.
        estop: The service's one emergency stop (the gateway's turns are aborted in it, and
            its outcome is published as an ``estop`` frame).
        metrics: The service's metrics observer (``/metrics``), if any.
        hook_factories: Builds each connection's own hook instances from ``[[hooks]]``.
        remote_timeout_s: Override ``remote_tool_timeout_s`` (tests make it short).
        clock: Monotonic seconds for rate limits and lockouts.
    """

    def __init__(
        self,
        runtime: Runtime,
        settings: GatewaySettings,
        *,
        state: StateDB,
        broker: ApprovalBroker,
        estop: EmergencyStop | None = None,
        metrics: MetricsObserver | None = None,
        hook_factories: HookFactoryRegistry | None = None,
        remote_timeout_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.runtime = runtime
        self.settings = settings
        self.state = state
        self.broker = broker
        broker.describe = self.describe_approval
        self.metrics = metrics
        self.hook_factories = hook_factories or HookFactoryRegistry()
        self.remote_timeout_s = (
            remote_timeout_s if remote_timeout_s is not None else settings.remote_tool_timeout_s
        )
        self.pairing = PairingGate(
            PairingTokens(state), clock=clock, required=settings.require_pairing
        )
        self.rate = RateLimiter(settings.requests_per_minute, clock=clock)
        self.idempotency = IdempotencyCache(300.0, clock=clock)
        self.limits = FrameLimits(
            max_frame_bytes=settings.max_frame_bytes,
            max_message_chars=settings.max_message_chars,
            max_remote_tools=settings.max_remote_tools,
            max_tool_schema_bytes=settings.max_tool_schema_bytes,
        )
        self._scrubber = secret_scrubber(runtime.loaded)
        # Gateway-wide: the runtime's tools plus every connection's remote tools.
        self.registry: ToolRegistry = runtime.agent.registry.copy()
        self.connections: dict[str, ChatConnection] = {}
        self.accepting = True
        self.started_at = time.time()
        self._sse: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._sse_hardware: set[asyncio.Queue[dict[str, Any] | None]] = set()
        # Live hardware state for SSE listeners that ask for it (the phone app's dashboard).
        self.watch = HardwareWatch(runtime.peripherals, self.publish_hardware)
        #: The one emergency stop (``POST /api/estop`` calls it).
        self.estop = estop if estop is not None else EmergencyStop(runtime.peripherals)
        self.estop.on_stop(self._abort_turns)
        self.estop.on_stopped(self._stopped)

    # --- per-connection agents ------------------------------------------------------------

    def build_agent(self, approve: Callable[[ApprovalRequest], Any]) -> Agent:
        """An Agent for one connection, sharing the runtime's provider, memory, peripherals and
        tool instances, with its own registry, hooks, policy and history."""
        runtime = self.runtime
        config = runtime.loaded.config
        shared = runtime.agent
        # The same policy as the service agent's (own files forbidden, auto_approve ...), with
        # this connection's approver and its own rate windows.
        policy = build_policy(
            runtime.loaded, approver=CallbackApprover(approve), observer=shared.observer
        )
        hooks = self.hook_factories.build_all([{"name": h.name, **h.options} for h in config.hooks])
        builder = (
            AgentBuilder()
            .provider(runtime.provider)
            .registry(shared.registry.copy())
            .memory(runtime.memory)
            .workspace_dir(runtime.workspace_dir)
            .hooks(hooks)
            .security_policy(policy)
            .peripherals(runtime.peripherals)
            .observer(shared.observer)
            .max_tool_iterations(config.agent.max_tool_iterations)
            .tool_timeout(config.agent.tool_timeout_s)
            .max_history(config.agent.max_history)
        )
        if isinstance(shared.session_store, SessionStore):
            builder = builder.session_store(shared.session_store)
        agent = builder.build()
        self._wire_upkeep(agent)
        # Never aclose() a connection's agent: that would close the shared provider and drive
        # the shared peripherals to their safe state. A leaving connection aborts its turns.
        return agent

    def _wire_upkeep(self, agent: Agent) -> None:
        # The same after-turn memory upkeep the assembler wires on the service's agent, so a
        # phone conversation is consolidated like any other.
        memory = self.runtime.memory
        consolidate = getattr(memory, "consolidate", None)
        prune_if_due = getattr(memory, "prune_if_due", None)
        if consolidate is None or prune_if_due is None:
            return
        retention_days = self.runtime.loaded.config.memory.retention_days

        scrubber = self._scrubber

        async def upkeep(context: ToolContext, text: str, answer: str) -> None:
            # Scrubbed of credentials first, as the service agent's upkeep does.
            await consolidate(
                context.session_id,
                scrubber.scrub(text),
                scrubber.scrub(answer),
                namespace=context.namespace,
            )
            await prune_if_due(retention_days)

        agent.on_turn_done(upkeep)

    # --- the emergency stop ----------------------------------------------------------------

    def _abort_turns(self, why: str) -> None:
        for connection in list(self.connections.values()):
            connection.agent.abort(connection.session_id, why)

    def _stopped(self, why: str, failures: list[str]) -> None:
        self.publish({"type": "estop", "by": why, "failures": failures})
        self.watch.poke()

    # --- approvals and events -------------------------------------------------------------

    def describe_approval(self, request: ApprovalRequest) -> dict[str, Any]:
        """``device``, ``action`` and ``value`` of a request, from its tool's describe_action."""
        tool = self.registry.get(request.tool)
        describe = getattr(tool, "describe_action", None)
        action = describe(request.arguments) if describe is not None else None
        if not isinstance(action, DeviceAction):
            return {}
        return {
            "device": action.device,
            "action": action.summary or f"{action.operation} {action.device}",
            "value": action.value,
        }

    def publish(self, frame: dict[str, Any]) -> None:
        """Send ``frame`` to every SSE listener (a slow one loses its oldest events)."""
        for queue in list(self._sse):
            sse_put(queue, frame)

    def publish_hardware(self, frame: dict[str, Any]) -> None:
        """Send a live hardware frame to the SSE listeners that asked for them."""
        for queue in list(self._sse_hardware):
            sse_put(queue, frame)

    def open_sse(self, *, hardware: bool = False) -> asyncio.Queue[dict[str, Any] | None]:
        """A queue of SSE frames; ``hardware`` adds the live ``devices``, ``sensor`` and
        ``boards`` frames (the hardware is read only while someone asked for them)."""
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(SSE_QUEUE)
        self._sse.add(queue)
        if hardware:
            self._sse_hardware.add(queue)
            self.watch.listener_added()
        return queue

    def close_sse(self, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        self._sse.discard(queue)
        if queue in self._sse_hardware:
            self._sse_hardware.discard(queue)
            self.watch.listener_removed()

    # --- shutdown -------------------------------------------------------------------------

    async def close_all(self, reason: str, *, grace_s: float = 3.0) -> None:
        """Stop accepting, let running turns finish for ``grace_s``, then abort them and close
        every connection and SSE stream. Safe to cancel (what was closed stays closed)."""
        self.accepting = False
        connections = list(self.connections.values())
        await asyncio.gather(
            *(c.close(reason, grace_s=grace_s) for c in connections), return_exceptions=True
        )
        for queue in list(self._sse):
            sse_put(queue, None)
        await self.watch.aclose()


def sse_put(queue: asyncio.Queue[dict[str, Any] | None], frame: dict[str, Any] | None) -> None:
    """Queue ``frame`` for an SSE listener, dropping its oldest event when it is full."""
    if queue.full():
        queue.get_nowait()
    queue.put_nowait(frame)
