"""Service: everything ``clawseed-edge run`` hosts, started and stopped in order.

Start: the bind check (before any hardware is touched), assemble the runtime (its approver is
the gateway's broker, or a refusal that says why when there is no gateway), open state.db, start
the gateway, the control socket, the input consumers. Stop (:meth:`Service.aclose`): stop
accepting, let running turns finish briefly then abort them, close sessions, stop the inputs,
close the runtime (safe state, disconnect, memory), close state.db. A signal applies the safe
state first of all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from clawseed_edge.api import ESTOP_LATCHED, Lifecycle

from .channel_tables import channel_tables
from .estop_latch import estop_status, restore_latch
from .notify import Notifier
from .start_imports import RUNTIME_MODULES, import_in_thread
from .summary import runtime_summary

if TYPE_CHECKING:
    from clawseed_edge.api import Channel
    from clawseed_edge.channels.approvals import ApprovalBroker
    from clawseed_edge.channels.estop import EmergencyStop
    from clawseed_edge.channels.gateway.hub import GatewayHub
    from clawseed_edge.channels.gateway.server import GatewayServer
    from clawseed_edge.channels.host import ChannelHost
    from clawseed_edge.config.assembly import Runtime
    from clawseed_edge.config.file import LoadedConfig
    from clawseed_edge.config.reload import ReloadReport
    from clawseed_edge.scheduler import Scheduler
    from clawseed_edge.scheduler.automations import Automations
    from clawseed_edge.state import StateDB

    from .control import ControlServer
    from .recorder import SensorRecorder

__all__ = ["Service", "ServiceOptions", "runtime_summary"]

log = logging.getLogger("clawseed_edge.run")

NO_GATEWAY_NOTE = (
    "note: the gateway is off, so actions that need approval will be refused (no one can be "
    "asked); set [gateway] enabled = true (or run `clawseed-edge gateway`) to approve them "
    "from a phone"
)


@dataclass(slots=True)
class ServiceOptions:
    """How to run the service beyond the config file.

    Attributes:
        sim: Devices on mock pins.
        gateway: Force the gateway on (True) or off (False); None follows ``[gateway] enabled``.
        host / port: Override ``[gateway] host`` / ``port`` (port 0: any free port).
        assemble: Extra keywords for :func:`~clawseed_edge.config.assembly.assemble`
            (``provider``, ``hook_factories`` ...).
        remote_timeout_s: Override the remote-tool timeout (tests).
        control_socket: Serve ``control.sock`` (tests running several services turn it off).
        scheduler: Extra keywords for the scheduler (``clock``: tests pass a manual one).
        mqtt: Extra keywords for the MQTT channel (``state_interval_s``, ``sys_root``).
        say: Where the start-up lines go (default: stderr).
        notifier: Where ``sd_notify`` messages go (default: ``NOTIFY_SOCKET`` of the
            environment; nothing is sent without it).
        channels: Extra keywords per channel (``{"telegram": {"backoff_s": ...}}``: tests).
    """

    sim: bool = False
    gateway: bool | None = None
    host: str | None = None
    port: int | None = None
    assemble: dict[str, Any] = field(default_factory=dict)
    remote_timeout_s: float | None = None
    control_socket: bool = True
    scheduler: dict[str, Any] = field(default_factory=dict)
    mqtt: dict[str, Any] = field(default_factory=dict)
    say: Callable[[str], None] = field(
        default=lambda line: print(line, file=sys.stderr, flush=True)
    )
    notifier: Notifier | None = None
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)


#: The control ops of :mod:`.control_ops` (imported at the first one), plain and streaming.
_PART_OPS = (
    "cron_run_now",
    "cron_changed",
    "cron_resume",
    "mcp_tools",
    "mcp_states",
    "mcp_pinouts",
    "sim_set",
    "sim_input",
    "sensors",
    "hardware_states",
    "automations",
    "automations_resume",
    "automations_changed",
    "automation_add",
    "automation_remove",
    "automation_firings",
)
_PART_STREAM_OPS = ("mcp_call", "mcp_watch")


class Service:
    """The running service; ``await start()``, then ``await wait()``, then ``await aclose()``.

    Or ``async with Service(loaded, options) as service:`` (start and ordered stop).
    """

    def __init__(self, loaded: LoadedConfig, options: ServiceOptions | None = None) -> None:
        self.options = options or ServiceOptions()
        settings = loaded.config.gateway
        if self.options.host is not None:
            settings = msgspec.structs.replace(settings, host=self.options.host)
        if self.options.port is not None:
            settings = msgspec.structs.replace(settings, port=self.options.port)
        if self.options.gateway is not None:
            settings = msgspec.structs.replace(settings, enabled=self.options.gateway)
        self.loaded = loaded
        self.settings = settings
        self.state = Lifecycle.UNOPENED
        self.runtime: Runtime | None = None
        self.hub: GatewayHub | None = None
        self.server: GatewayServer | None = None
        self.state_db: StateDB | None = None
        self.scheduler: Scheduler | None = None
        self.control: ControlServer | None = None
        self.emergency_stop: EmergencyStop | None = None
        #: What every channel is built with (None until the channels start).
        self.host: ChannelHost | None = None
        self._mcp_http: Any = None  # channels.mcp.server.McpHttp when [mcp] http = true
        self._control_ops: Any = None  # .control_ops.ControlOps, made at its first request
        #: The sensor sampler and its history (when a sensor has an update_interval).
        self.recorder: SensorRecorder | None = None
        #: ``[[automations]]`` on the sampler's readings (None: none configured).
        self.automations: Automations | None = None
        self._unsubscribe: list[Callable[[], None]] = []
        from clawseed_edge.channels.notifications import Notifications

        #: Job answers, alerts and estops, to the channels that asked for them.
        self.notifications = Notifications()
        #: The ways in, started in order and stopped in reverse (the gateway today).
        self.channels: list[Channel] = []
        self.metrics: Any = None
        self._consumers: list[asyncio.Task[None]] = []
        self._stop = asyncio.Event()
        self._safe_tasks: set[asyncio.Task[None]] = set()
        self.notifier = self.options.notifier if self.options.notifier is not None else Notifier()
        self.started_at: float | None = None
        #: The gateway's server, listening from early in :meth:`start` (channels/gateway/door.py).
        self._door: GatewayServer | None = None

    # --- start ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Start everything configured.

        Raises:
            GatewayBindRefused: A non-loopback host without ``allow_public_bind`` (nothing was
                started).
            ConfigInvalid / HardwareError / GatewayBindFailed / ControlError: From start-up;
                whatever was started is stopped again.

        Safe to cancel: what was started is stopped again by :meth:`aclose`.
        """
        from clawseed_edge.config.packages import require_packages

        settings = self.settings
        # One line with the install command, before any hardware, rather than an import error
        # half-way through start-up (under systemd: a crash loop).
        require_packages(self.loaded.config, gateway=settings.enabled)
        tables = channel_tables(self.loaded, self.settings)
        self._check_before_hardware(tables)
        if any(name == "gateway" for name, _ in tables):
            from clawseed_edge.channels.gateway.door import open_door

            # Listening before the rest starts: /health answers at once, other requests wait
            # for the gateway, and a busy port fails before any hardware is touched; the
            # gateway channel takes the server over (channels/gateway/door.py).
            self._door = await open_door(self.settings)
            # The rest of start-up's imports in a thread: the loop answers the door meanwhile.
            await import_in_thread(RUNTIME_MODULES)
        from clawseed_edge.agent import (
            CompositeObserver,
            LoggingObserver,
            MetricsObserver,
            StaticApprover,
        )
        from clawseed_edge.channels.estop import EmergencyStop
        from clawseed_edge.config.assembly import assemble

        broker = None
        if any(name != "mqtt" for name, _ in tables):
            from clawseed_edge.channels.approvals import ApprovalBroker

            # Someone in a channel can be asked (Home Assistant is no person: MQTT alone asks
            # nobody).
            broker = ApprovalBroker(self.loaded.config.autonomy.approval_timeout_s)
            fallback: Any = broker
        else:
            fallback = StaticApprover(
                False,
                "no one can be asked: the gateway is off ([gateway] enabled = false); turn it "
                "on to approve from a phone, or run `clawseed-edge chat` to approve on a terminal",
            )
        from clawseed_edge.channels.approvals import CallerFirstApprover

        # A call from a caller that can be asked itself (an MCP host's elicitation) is asked
        # there; every other call goes to the broker, or the refusal above.
        approver = CallerFirstApprover(fallback)
        self.metrics = MetricsObserver()
        observer = CompositeObserver(LoggingObserver(), self.metrics)
        # No provider probe before ready: no network I/O and no SDK in an idle service (the
        # probe starts in the background once everything listens, below).
        # The latch before any hardware: a stop that held at the last stop still holds.
        latch, latch_store = await restore_latch(await self._open_state())
        kwargs = {
            "approver": approver,
            "observer": observer,
            "probe_at_start": False,
            "latch": latch,
            **self.options.assemble,
        }
        self.runtime = await assemble(self.loaded, sim=self.options.sim, **kwargs)
        self.state = Lifecycle.OPEN
        if broker is not None:
            broker.tools = self.runtime.agent.registry  # what each request is described from
        self.emergency_stop = EmergencyStop(
            self.runtime.peripherals, latch=latch, store=latch_store
        )
        self.emergency_stop.on_stop(self._stop_every_turn)
        self.emergency_stop.on_stopped(self._estop_done)
        self.emergency_stop.on_reset(self._estop_reset_done)
        try:
            await self._start_recorder()  # before the gateway: it serves the history
            await self._start_automations()  # before the gateway: it copies the tools
            await self._start_scheduler()  # before the gateway: it copies the cron tools
            if latch.latched:  # jobs and rules wait for a person's reset, as before the restart
                self._pause_jobs(f"the emergency stop is latched ({latch.state.why})")
            if tables:
                await self._start_channels(tables, broker)
            if broker is None:
                self.options.say(NO_GATEWAY_NOTE)
            if self.options.control_socket:
                from .control import ControlServer, control_path

                self.control = ControlServer(
                    control_path(self.loaded.home), self._handlers(), self._stream_handlers()
                )
                await self.control.start()
            from .inputs import consume_input_events

            self._consumers = [
                asyncio.create_task(
                    consume_input_events(self.runtime.agent, p), name=f"events-{p.name}"
                )
                for p in self.runtime.peripherals
                if getattr(p, "events", None) is not None
            ]
            # One pass of the loop: each consumer subscribes to its event stream (synchronously,
            # at its first step), so an edge right after start() returns is not missed.
            await asyncio.sleep(0)
        except BaseException:
            await self.aclose()
            raise
        self.options.say(f"clawseed-edge running: {self.summary()}; SIGTERM or Ctrl-C stops")
        self._notify_ready()
        # After READY: the probe's network I/O (and any wait on a slow server) is not start-up.
        self.runtime.start_background_probe()

    def _check_before_hardware(self, tables: list[tuple[str, Any]]) -> None:
        """What can fail without touching hardware fails here: a public bind without
        ``allow_public_bind``, a Telegram bot without its token.

        Raises:
            GatewayBindRefused / ConfigInvalid: Nothing was started.
        """
        names = {name for name, _ in tables}
        if "gateway" in names:
            from clawseed_edge.channels.gateway.server import check_bind

            check_bind(self.settings.host, self.settings.allow_public_bind)
        if "telegram" in names:
            from clawseed_edge.api import ConfigInvalid
            from clawseed_edge.channels.telegram.factory import telegram_token

            try:
                telegram_token(self.loaded.config.channels.telegram, self.loaded.home)
            except ConfigInvalid as exc:
                raise ConfigInvalid(
                    str(exc), file=self.loaded.source, key="channels.telegram.bot_token_env"
                ) from None

    async def _start_channels(
        self, tables: list[tuple[str, Any]], broker: ApprovalBroker | None
    ) -> None:
        """Build the host, then each channel the one way, ``registry.get(name)(settings,
        host)`` (built-ins and plugins alike), and start it."""
        from clawseed_edge.channels.conversations import Conversations
        from clawseed_edge.channels.host import ChannelHost, build_channel
        from clawseed_edge.config.plugins import channel_registry

        assert self.runtime is not None and self.emergency_stop is not None
        extra = self.options.channels
        options = {
            **extra,
            "gateway": {
                "remote_timeout_s": self.options.remote_timeout_s,
                "server": self._door,
                **extra.get("gateway", {}),
            },
            "mqtt": {**self.options.mqtt, **extra.get("mqtt", {})},
        }
        self.host = ChannelHost(
            agent=self.runtime.agent,
            peripherals=self.runtime.peripherals,
            emergency_stop=self.emergency_stop,
            notifications=self.notifications,
            conversations=Conversations(self.runtime, broker),
            approvals=broker,
            state=await self._open_state(),
            home=self.loaded.home,
            runtime=self.runtime,
            metrics=self.metrics,
            history=self.recorder.history if self.recorder is not None else None,
            status=self.summary,
            say=self.options.say,
            options=options,
            stop_all=self.estop,
        )
        if any(name == "gateway" for name, _ in tables) and self.loaded.config.mcp.http:
            self.host.http_mounts = [("/mcp", await self._start_mcp_http())]
        registry = channel_registry()
        for name, table in tables:
            channel = await build_channel(registry.get(name), table, self.host)
            await self._start_channel(channel, broker)
            if name == "gateway":
                self._started_gateway(channel)

    async def _start_mcp_http(self) -> Any:
        """The MCP server for ``/mcp`` (``[mcp] http = true``): this service's tools and states
        through its policy; approvals go to its broker (the phones)."""
        from clawseed_edge.channels.mcp import LocalBackend
        from clawseed_edge.channels.mcp.http import McpHttp

        assert self.runtime is not None
        backend = LocalBackend(
            self.runtime.agent,
            list(self.runtime.peripherals),
            "mcp-http",
            header_board=self.loaded.config.hardware.board,
        )
        self._mcp_http = McpHttp(backend, self.loaded.config.mcp.approvers)
        await self._mcp_http.start()
        return self._mcp_http.app

    def _started_gateway(self, channel: Any) -> None:
        """The gateway's lines: where it listens, and how to pair."""
        self.hub, self.server = channel.hub, channel.server
        assert self.server is not None
        self.options.say(f"gateway listening on {self.server.url}")
        if self.settings.require_pairing:
            self.options.say(self._pairing_line())
        else:
            self.options.say("warning: pairing is off ([gateway] require_pairing = false)")

    async def _start_channel(self, channel: Channel, broker: ApprovalBroker | None) -> None:
        """Start ``channel`` and give it its share: approvals to ask, notifications, the estop
        (which aborts its turns through :meth:`_stop_every_turn`)."""
        self.channels.append(channel)  # first: a failed start is still stopped by aclose()
        await channel.start()
        if broker is not None:
            broker.add_channel(channel)
        self.notifications.subscribe(channel)

    async def _open_state(self) -> StateDB:
        """``state.db``, opened once for the gateway's tokens and the scheduler's jobs."""
        from clawseed_edge.state import StateDB

        if self.state_db is None:
            self.state_db = await StateDB.open(self.loaded.home / "state.db")
        return self.state_db

    # --- sensors -------------------------------------------------------------------------

    async def _start_recorder(self) -> None:
        """Sample the sensors that have an ``update_interval``; keep their history."""
        assert self.runtime is not None
        from .inputs import find_sensor_bank

        bank = find_sensor_bank(self.runtime.peripherals)
        if bank is None or not any(bank.sensor(n).interval_s for n in bank.sensor_names()):
            return
        from .recorder import SensorRecorder

        self.recorder = SensorRecorder(bank, self.loaded.home, self.loaded.config.history)
        await self.recorder.start()
        self.runtime.agent.registry.register_many(self.recorder.tools())

    async def _start_automations(self) -> None:
        """Rules on readings and input events: ``[[automations]]`` synced into state.db with
        the ones made by chat or the CLI, the automation tools on the agent, the loop started."""
        from clawseed_edge.scheduler.automation_setup import automations_for

        assert self.runtime is not None
        sampler = self.recorder.sampler if self.recorder is not None else None
        self.automations, self._unsubscribe = await automations_for(
            self.runtime,
            await self._open_state(),
            readings=sampler.states if sampler is not None else None,
            publish=self.notifications.notify,
        )
        self.automations.start()

    # --- scheduler -----------------------------------------------------------------------

    async def _start_scheduler(self) -> None:
        """The ``[scheduler]``: cron tools on the agent, ``[[jobs]]`` synced, the loop started."""
        if not self.loaded.config.scheduler.enabled:
            return
        from clawseed_edge.scheduler import scheduler_for

        assert self.runtime is not None
        self.scheduler = await scheduler_for(
            self.runtime,
            await self._open_state(),
            publish=self._publish_job_result,
            **self.options.scheduler,
        )
        await self.scheduler.start()

    def _publish_job_result(self, frame: dict[str, Any]) -> None:
        # To the channels that asked (the gateway: its /sse stream); logged when none did.
        self.notifications.notify(frame)

    def summary(self) -> str:
        """One line: the model, each peripheral with its device count, the gateway's URL."""
        assert self.runtime is not None
        return runtime_summary(self.runtime, self.server.url if self.server else None)

    # --- control ops ---------------------------------------------------------------------

    def _handlers(self) -> dict[str, Any]:
        own = {
            "pair": self._op_pair,
            "pair_list": self._op_pair_list,
            "pair_revoke": self._op_pair_revoke,
            "status": self._op_status,
            "estop": self._op_estop,
            "estop_reset": self._op_estop_reset,
            "reload": self._op_reload,
        }
        return own | {op: self._part_op(op) for op in _PART_OPS}

    def _stream_handlers(self) -> dict[str, Any]:
        """The ops that exchange frames before their answer (see :mod:`.control`)."""
        return {op: self._part_op(op) for op in _PART_STREAM_OPS}

    def _part_op(self, op: str) -> Callable[..., Any]:
        """The handler of ``op`` in :mod:`.control_ops`, loaded at its first request."""

        async def handle(*args: Any) -> Any:
            if self._control_ops is None:
                from .control_ops import ControlOps

                self._control_ops = ControlOps(self)
            return await getattr(self._control_ops, f"_op_{op}")(*args)

        return handle

    def _require_hub(self) -> GatewayHub:
        from clawseed_edge.api import ConfigInvalid

        if self.hub is None:
            raise ConfigInvalid(
                "the gateway is off in the running service; enable [gateway] and restart it"
            )
        return self.hub

    async def _op_pair(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("channel") == "telegram":
            from clawseed_edge.api import ConfigInvalid

            bot = next((c for c in self.channels if c.name == "telegram"), None)
            if bot is None:
                raise ConfigInvalid(
                    "the Telegram channel is off in the running service; set "
                    "[channels.telegram] enabled = true and restart it"
                )
            return {"code": bot.new_pair_code(), "channel": "telegram"}  # type: ignore[attr-defined]
        hub = self._require_hub()
        code = hub.pairing.new_code()
        # The long form passes the budget all clients share: only the owner's console sees it.
        url = self.server.url if self.server else ""
        return {"code": code, "long_code": hub.pairing.long_code, "url": url}

    async def _op_pair_list(self, request: dict[str, Any]) -> dict[str, Any]:
        """Every paired client and channel person (Telegram users too): the one store."""
        from clawseed_edge.state import PairingTokens

        tokens = await PairingTokens(await self._open_state()).list()
        return {"tokens": [msgspec.to_builtins(t) for t in tokens]}

    async def _op_pair_revoke(self, request: dict[str, Any]) -> dict[str, Any]:
        from clawseed_edge.state import PairingTokens

        token_id = str(request.get("id", ""))
        if self.hub is not None:
            # A revoked client loses its open connections and streams too, not only its
            # future requests.
            revoked = await self.hub.revoke(token_id)
        else:
            revoked = await PairingTokens(await self._open_state()).revoke(token_id)
        for channel in self.channels:
            forget = getattr(channel, "peer_revoked", None)
            if callable(forget):
                forget(token_id)  # a Telegram user paired with /pair stops being served
        return {"revoked": revoked}

    async def _op_status(self, request: dict[str, Any]) -> dict[str, Any]:
        return {
            "summary": self.summary(),
            "connections": len(self.hub.connections) if self.hub else 0,
            **self._status_details(),
        }

    async def _op_estop(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"failures": await self.estop("estop over the control socket")}

    async def _op_estop_reset(self, request: dict[str, Any]) -> dict[str, Any]:
        # Only the service's own user reaches the socket (mode 0600): a person at the board.
        by = f"{str(request.get('by') or 'clawseed-edge estop --reset')[:80]} (control socket)"
        reset = self.emergency_stop is not None and await self.emergency_stop.reset(by)
        return {"reset": reset, "estop": estop_status(self.emergency_stop)}

    async def estop(self, why: str, *, latch: bool = True) -> list[str]:
        """The one emergency stop (:class:`~clawseed_edge.channels.estop.EmergencyStop`): abort
        every turn in every channel, pause the scheduler, apply every output's safe value;
        returns the failures. The control socket, the gateway and the signals all come here.

        Not meant to be cancelled: outputs reached before a cancel keep their safe values.
        """
        if self.emergency_stop is None:
            return []  # nothing was opened yet
        return await self.emergency_stop(why, latch=latch)

    # --- running and stopping ------------------------------------------------------------

    def install_signal_handlers(self) -> Callable[[], None]:
        """SIGTERM/SIGINT/SIGHUP: safe state, then stop; SIGUSR1: safe state, keep running.

        Returns a function that removes the handlers.
        """
        loop = asyncio.get_running_loop()

        def on_stop(sig: signal.Signals) -> None:
            self._spawn(self._safe_then_stop(sig.name))

        def on_estop() -> None:
            self._spawn(self._apply_safe_state_logged("SIGUSR1 (estop)"))

        installed = []
        # SIGHUP too: a closed terminal or SSH session ends the service in the safe state.
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, on_stop, sig)
            installed.append(sig)
        loop.add_signal_handler(signal.SIGUSR1, on_estop)
        installed.append(signal.SIGUSR1)

        def remove() -> None:
            for sig in installed:
                with contextlib.suppress(ValueError, RuntimeError):
                    loop.remove_signal_handler(sig)

        return remove

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._safe_tasks.add(task)
        task.add_done_callback(self._safe_tasks.discard)

    async def _apply_safe_state_logged(self, why: str) -> None:
        await self.estop(why)

    async def _safe_then_stop(self, why: str) -> None:
        self.notifier.stopping(f"stopping ({why}): applying the safe state")
        n = len(self.runtime.peripherals) if self.runtime is not None else 0
        log.warning("%s: applying the safe state of %d peripheral%s", why, n, "" if n == 1 else "s")
        await self.estop(why, latch=False)  # a shutdown is not an emergency stop
        self.stop()

    def stop(self) -> None:
        """Ask :meth:`wait` to return (the caller then closes the service)."""
        self._stop.set()

    async def wait(self) -> None:
        """Wait until :meth:`stop` (or a stop signal). Cancel-safe."""
        await self._stop.wait()

    async def aclose(self) -> None:
        """Stop in order (see the module docstring). Idempotent; bounded to a few seconds.

        Cancelling it leaves the remaining steps undone; call it again.
        """
        if self.state is Lifecycle.CLOSED:
            return
        self.state = Lifecycle.CLOSING
        self.notifier.stopping()
        for channel in reversed(self.channels):
            await channel.stop("the service is stopping")
        if self._door is not None:  # closed with the gateway, or never taken over by it
            await self._door.aclose(timeout_s=3.0)
        if self._mcp_http is not None:
            await self._mcp_http.aclose()
        if self.host is not None and self.host.refresh is not None:
            await self.host.refresh.aclose()
        if self.control is not None:
            await self.control.aclose()
        for task in self._consumers:
            task.cancel()
        await asyncio.gather(*self._consumers, return_exceptions=True)
        if self.scheduler is not None:
            await self.scheduler.aclose(grace_s=2.0)
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        if self.automations is not None:
            await self.automations.aclose()
        if self.recorder is not None:
            await self.recorder.aclose()
        if self.runtime is not None:
            await self.runtime.aclose()
        if self.state_db is not None:
            await self.state_db.aclose()
        await self.notifier.aclose()
        self.state = Lifecycle.CLOSED

    # --- systemd, status and reload ----------------------------------------------------

    def _notify_ready(self) -> None:
        """READY=1 (peripherals connected, the gateway listening), then the watchdog pings."""
        self.started_at = time.monotonic()
        self.notifier.ready(f"running: {self.summary()}")
        self.notifier.start_watchdog()

    def _estop_done(self, why: str, failures: list[str]) -> None:
        self.notifications.notify({"type": "estop", "by": why, "failures": failures})
        self._notify_estop(failures)

    def _notify_estop(self, failures: list[str]) -> None:
        """A STATUS= line, so ``systemctl status`` shows the last estop."""
        when = time.strftime("%H:%M:%S")
        if failures:
            self.notifier.status(f"estop at {when}: NOT every output is safe: {failures[0]}")
        else:
            self.notifier.status(f"estop at {when}: every output in its safe state")

    def _pairing_line(self) -> str:
        """The start-up pairing line. Under journald the code stays out of the log: it works
        until used, and the journal is read by more people than the service's user."""
        from .journal import stream_is_journal

        assert self.hub is not None
        if stream_is_journal():
            return (
                "pairing: run `sudo clawseed-edge pair` for a one-time code (codes are "
                "kept out of the journal)"
            )
        code = self.hub.pairing.new_code()
        return (
            f"pairing code: {code} (works once; `clawseed-edge pair` prints a new one; when "
            f"others send wrong codes, the long form works: {self.hub.pairing.long_code})"
        )

    def _stop_every_turn(self, why: str) -> None:
        """First step of an emergency stop: abort every turn in every channel and of the
        service's own agent (input events, webhooks, API actions), and pause the scheduler
        (running jobs cancelled, none run until `clawseed-edge cron resume`), so nothing
        switches an output back on after it went safe."""
        for channel in self.channels:
            channel.abort_turns(why)
        if self.runtime is not None:
            self.runtime.agent.abort_every(why)
        self._pause_jobs(why)

    def _pause_jobs(self, why: str) -> None:
        """Cancel running jobs and rule actions; none run until a person's reset."""
        if self.scheduler is not None:
            self.scheduler.pause(why)
        if self.automations is not None:
            self.automations.pause(why, ESTOP_LATCHED)

    def _estop_reset_done(self, by: str) -> None:
        """After a person's reset: jobs and rules run again, every channel hears of it. No
        output is switched (each stays at its safe level)."""
        if self.scheduler is not None:
            self.scheduler.resume()
        if self.automations is not None:
            self.automations.resume()
        self.notifications.notify({"type": "estop_reset", "by": by})
        self.notifier.status(f"emergency stop reset by {by}; outputs stay safe")

    def _status_details(self) -> dict[str, Any]:
        assert self.runtime is not None
        provider = self.runtime.provider
        policy = getattr(self.runtime.agent.hooks, "policy", None)
        autonomy = getattr(policy, "autonomy", None)
        return {
            "pid": os.getpid(),
            "uptime_s": round(time.monotonic() - self.started_at, 1) if self.started_at else 0.0,
            "provider": f"{provider.name}/{provider.model}",
            "autonomy": str(getattr(autonomy, "value", autonomy or "")),
            "gateway": self.server.url if self.server is not None else None,
            "scheduler": (
                "off"
                if self.scheduler is None
                else f"paused ({self.scheduler.paused})"
                if self.scheduler.paused
                else "running"
            ),
            "automations": _automations_state(self.automations),
            "config": self.loaded.source,
            "channels": [_channel_state(c) for c in self.channels],
            "watchdog_s": self.notifier.watchdog_s if self.notifier.enabled else None,
            "estop": estop_status(self.emergency_stop),
        }

    async def _op_reload(self, request: dict[str, Any]) -> dict[str, Any]:
        return (await self.reload()).to_dict()

    async def reload(self) -> ReloadReport:
        """Re-read the config file and apply its provider, model and autonomy.

        Returns a :class:`~clawseed_edge.config.reload.ReloadReport` (what applied, which
        tables need a restart).

        Raises:
            ConfigInvalid / ConfigFileNotFound: The file no longer loads; nothing changed.
        """
        from clawseed_edge.config.file import load_config
        from clawseed_edge.config.reload import reload_runtime

        assert self.runtime is not None
        self.notifier.reloading()
        try:
            path = None if self.loaded.embedded else self.loaded.source
            fresh = load_config(path)
            report = await reload_runtime(self.runtime, fresh)
            self.loaded = self.runtime.loaded
        finally:
            self.notifier.ready(f"running: {self.summary()}")
        log.info(
            "reloaded %s: applied %s; needs a restart: %s",
            self.loaded.source,
            ", ".join(report.applied) or "nothing changed",
            ", ".join(report.needs_restart) or "nothing",
        )
        return report

    async def __aenter__(self) -> Service:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _automations_state(automations: Automations | None) -> str:
    """``3 rules`` or ``3 rules, paused (estop ...)`` for ``status``."""
    if automations is None:
        return "off"
    count = f"{len(automations.rules)} rule{'' if len(automations.rules) == 1 else 's'}"
    return f"{count}, paused ({automations.paused})" if automations.paused else count


def _channel_state(channel: Any) -> dict[str, Any]:
    """What ``status`` and ``channels list`` show of a running channel."""
    describe = getattr(channel, "describe", None)
    if callable(describe):
        return dict(describe())
    url = getattr(channel, "url", None)
    return {"name": channel.name, "state": "running", "detail": str(url) if url else ""}
