"""ChannelHost: what every way in is built with, and the one door to the tools and the pins.

Every channel, built-in or from a plugin, is made the same way, by the service::

    channel = registry.get(name)(settings, host)   # [channels.<name>] (or [gateway], [mqtt])

(a factory may be a coroutine function; the service awaits it, then ``channel.start()``). The
host offers what a channel may use, and nothing of another channel:

* :meth:`ChannelHost.act` -- the only path to a tool outside a model turn. It runs the same
  checks as a model's call (:func:`~clawseed_edge.agent.tool_run.call_tool`: bounds, schema,
  rate limits, the SecurityPolicy deciding by the :class:`~clawseed_edge.api.Actor`, approvals,
  metrics, scrubbing) and writes an audit line naming the actor;
* :attr:`~ChannelHost.conversations` (sessions per channel and peer, each agent a fork of the
  service's), :attr:`~ChannelHost.approvals` (the broker; None when no channel can ask anyone)
  and :attr:`~ChannelHost.notifications`;
* the hardware view: :attr:`~ChannelHost.peripherals` and their state feeds,
  :attr:`~ChannelHost.refresh` (the one refresh schedule: a channel says how often it wants
  fresh readings, none polls on its own clock) and :meth:`~ChannelHost.hardware_watch`;
* :attr:`~ChannelHost.pairings`: the one pairing store of the channels' people (state.db);
* :attr:`~ChannelHost.emergency_stop` and :meth:`~ChannelHost.stop` (the one emergency stop).

docs/channels.md describes the host; docs/plugins.md shows a plugin channel.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import Actor, ToolContext, ToolResult

if TYPE_CHECKING:
    from clawseed_edge.agent import Agent
    from clawseed_edge.api import Channel, Peripheral
    from clawseed_edge.state import StateDB

    from .approvals import ApprovalBroker
    from .conversations import Conversations
    from .estop import EmergencyStop
    from .notifications import Notifications
    from .refresh import RefreshSchedule
    from .watch import HardwareWatch

__all__ = ["ChannelFactory", "ChannelHost", "build_channel"]

log = logging.getLogger(__name__)

#: ``factory(settings, host)``: a channel (or an awaitable of one).
ChannelFactory = Callable[[Any, "ChannelHost"], Any]


@dataclass(eq=False, kw_only=True)
class ChannelHost:
    """What every channel is built with; see the module docstring.

    Attributes:
        agent: The service's agent (its tools, hooks and policy serve :meth:`act`).
        peripherals: The service's peripherals (their ``states`` feeds are the hardware view).
        emergency_stop: The one :class:`~clawseed_edge.channels.estop.EmergencyStop`.
        notifications: Job answers, alerts and estops to the channels that asked for them.
        conversations: Sessions per channel and peer.
        approvals: The approvals broker (None: approvals are refused with a reason).
        state: The open state.db (None: not opened).
        home: ``$CLAWSEED_HOME``.
        runtime: The assembled runtime, for the gateway's config, health and memory routes
            only (another channel uses the parts above).
        metrics: The service's metrics observer (``/metrics``), if any.
        history: The sensor history (a ``SensorHistory``), if sensors are sampled.
        refresh: The one refresh schedule of the peripherals' state feeds.
        http_mounts: ``(path, ASGI app)`` pairs another way in serves under the gateway
            (``/mcp`` when ``[mcp] http = true``).
        status: One line about the service (``/status``).
        say: Where start-up lines go (stderr, or a test's list).
        options: Extra keywords per channel name (tests: a fake client, short back-offs).
    """

    agent: Agent
    peripherals: Sequence[Peripheral]
    emergency_stop: EmergencyStop
    notifications: Notifications
    conversations: Conversations
    approvals: ApprovalBroker | None = None
    state: StateDB | None = None
    home: Path = field(default_factory=Path)
    runtime: Any = None
    metrics: Any = None
    history: Any = None
    http_mounts: Sequence[tuple[str, Any]] = ()
    refresh: RefreshSchedule | None = None
    status: Callable[[], str] = lambda: "running"
    say: Callable[[str], None] = lambda line: log.info("%s", line)
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: Runs the emergency stop the service's way (every turn aborted first); returns failures.
    stop_all: Callable[[str], Awaitable[list[str]]] | None = None

    async def act(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        actor: Actor,
        *,
        session_id: str | None = None,
    ) -> ToolResult:
        """Run ``tool(arguments)`` for ``actor``, through every check a model's call meets.

        Never raises for the tool: an unknown tool, bad arguments, a refusal and a failure are
        each a failed :class:`~clawseed_edge.api.ToolResult` with a stable ``code``
        (``unknown_tool``, ``bad_arguments``, ``policy_denied``, ``policy_refused``, ...).

        Cancel-safe as a turn's call is: a cancelled call may already have switched a device.
        """
        from clawseed_edge.agent.tool_run import call_tool

        session = session_id or f"{actor.channel}-{actor.kind}-{actor.who or 'anyone'}"[:128]
        context = ToolContext(session_id=session, channel=actor.channel, actor=actor)
        return await call_tool(self.agent, tool, dict(arguments), context)

    async def stop(self, why: str) -> list[str]:
        """The emergency stop: abort every turn, pause schedules, drive every output safe;
        returns the failures. Not meant to be cancelled."""
        if self.stop_all is not None:
            return await self.stop_all(why)
        return await self.emergency_stop(why)

    def hardware_watch(self, publish: Callable[[dict[str, Any]], None]) -> HardwareWatch:
        """The hardware view for one channel's listeners: device and sensor frames from the
        peripherals' state feeds, refreshed on the watch's one schedule."""
        from .watch import HardwareWatch

        return HardwareWatch(self.peripherals, publish, schedule=self.refresh_schedule())

    def refresh_schedule(self) -> RefreshSchedule:
        """The one refresh schedule (made at the first request)."""
        if self.refresh is None:
            from .refresh import RefreshSchedule

            self.refresh = RefreshSchedule(self.peripherals)
        return self.refresh

    def channel_options(self, name: str) -> dict[str, Any]:
        """The extra keywords given for channel ``name`` (empty for most)."""
        return dict(self.options.get(name, {}))


async def build_channel(factory: ChannelFactory, settings: Any, host: ChannelHost) -> Channel:
    """``factory(settings, host)``, awaited when it is a coroutine.

    Raises:
        ConfigInvalid: The factory did not return a channel (a plugin's bug, named).
    """
    from clawseed_edge.api import Channel, ConfigInvalid

    made = factory(settings, host)
    if inspect.isawaitable(made):
        made = await made
    if not isinstance(made, Channel):
        where = getattr(factory, "__module__", "?") + ":" + getattr(factory, "__qualname__", "?")
        raise ConfigInvalid(
            f"the channel factory {where} returned {type(made).__name__}, not a channel "
            "(name, answerers, start, stop, deliver, ask, abort_turns); see docs/plugins.md"
        )
    return made
