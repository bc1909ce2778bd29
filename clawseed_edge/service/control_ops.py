"""The control socket's operations on the scheduler, automations, sensors and MCP.

:class:`ControlOps` holds the ``_op_*`` handlers that only read or drive one part of the
running service; :class:`~.process.Service` lists them in its handler table (``_handlers``)
beside its own (pairing, status, estop, reload), and imports this module (and makes its one
:class:`ControlOps`) at the first such request: an idle service does not load it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from .estop_latch import estop_status, refuse_while_latched

if TYPE_CHECKING:
    from clawseed_edge.channels.estop import EmergencyStop
    from clawseed_edge.config.assembly import Runtime
    from clawseed_edge.scheduler import Scheduler
    from clawseed_edge.scheduler.automations import Automations

    from .control import ControlStream
    from .recorder import SensorRecorder

__all__ = ["ControlOps", "ServiceParts"]

#: Device states and sensor readings ``hardware_states`` sends at most (one answer is one
#: line of at most 64 KB); the rest are counted in ``left_off``.
MAX_DEVICES = 150
MAX_READINGS = 64


class ServiceParts(Protocol):
    """What the handlers read of the service (:class:`~.process.Service`), as it is now."""

    runtime: Runtime | None
    scheduler: Scheduler | None
    recorder: SensorRecorder | None
    automations: Automations | None
    emergency_stop: EmergencyStop | None


class ControlOps:
    """Control-socket handlers of the scheduler, automations, sensors and MCP (see above), over
    ``service``'s parts as they are at each request."""

    def __init__(self, service: ServiceParts) -> None:
        self.service = service
        self._mcp_watchers = 0

    @property
    def runtime(self) -> Runtime | None:
        return self.service.runtime

    @property
    def scheduler(self) -> Scheduler | None:
        return self.service.scheduler

    @property
    def recorder(self) -> SensorRecorder | None:
        return self.service.recorder

    @property
    def automations(self) -> Automations | None:
        return self.service.automations

    async def _op_cron_run_now(self, request: dict[str, Any]) -> dict[str, Any]:
        from clawseed_edge.api import ConfigInvalid

        if self.scheduler is None:
            raise ConfigInvalid("the scheduler is off in the running service ([scheduler])")
        name = str(request.get("name", ""))
        refuse_while_latched(self.service.emergency_stop, f"cron run-now {name[:80]!r}")
        run = await self.scheduler.run_now(name)
        return {"run": msgspec.to_builtins(run)}

    async def _op_cron_resume(self, request: dict[str, Any]) -> dict[str, Any]:
        from clawseed_edge.api import ConfigInvalid

        if self.scheduler is None:
            raise ConfigInvalid("the scheduler is off in the running service ([scheduler])")
        refuse_while_latched(self.service.emergency_stop, "cron resume")
        return {"resumed": self.scheduler.resume()}

    async def _op_cron_changed(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.scheduler is not None:
            self.scheduler.wake()
        return {"ok": True}

    async def _op_automations(self, request: dict[str, Any]) -> dict[str, Any]:
        """The rules (origin, state), whether they are paused, the latest firings (newest
        last, from state.db: they survive restarts)."""
        a = self.automations
        if a is None:
            return {"automations": [], "paused": None, "firings": []}
        firings = (
            [f.as_dict() for f in await a.store.firings(limit=50)][::-1]
            if a.store is not None
            else list(a.firings)
        )
        return {
            "automations": [
                {
                    "name": r.config.name,
                    "when": r.config.when,
                    "active": r.state.active,
                    "origin": r.origin,
                }
                for r in a.rules
            ],
            "paused": a.paused,
            "firings": firings,
        }

    async def _op_automations_resume(self, request: dict[str, Any]) -> dict[str, Any]:
        refuse_while_latched(self.service.emergency_stop, "automations resume")
        return {"resumed": self.automations.resume() if self.automations is not None else False}

    async def _op_automations_changed(self, request: dict[str, Any]) -> dict[str, Any]:
        """An ``agent``/``chat`` process changed the rules in state.db: read them again."""
        if self.automations is not None:
            await self.automations.load()
        return {"ok": True}

    def _automations_store(self) -> Automations:
        from clawseed_edge.api import ConfigInvalid

        if self.automations is None or self.automations.store is None:
            raise ConfigInvalid("the running service has no automations (no state.db)")
        return self.automations

    async def _op_automation_add(self, request: dict[str, Any]) -> dict[str, Any]:
        """``automations add``: check the rule against this service's sensors, devices and
        tools (the same check as [[automations]]), store it, run it."""
        from clawseed_edge.api import ConfigInvalid
        from clawseed_edge.scheduler.automation_tools import add_automation

        a = self._automations_store()
        spec = request.get("spec")
        if not isinstance(spec, dict):
            raise ConfigInvalid('send {"op": "automation_add", "spec": {...}}')
        assert a.store is not None
        words = await add_automation(
            a.store, spec, origin="cli", known=a.known, check_tool=a.check_tool()
        )
        await a.load()
        return {"rule": words}

    async def _op_automation_remove(self, request: dict[str, Any]) -> dict[str, Any]:
        from clawseed_edge.api import ConfigInvalid

        a = self._automations_store()
        assert a.store is not None
        name = str(request.get("name", ""))[:64]
        entry = await a.store.get(name)
        if entry is None:
            raise ConfigInvalid(f"no automation is named {name!r}; see `automations list`")
        if entry.origin == "config":
            raise ConfigInvalid(
                f"automation {name!r} is declared in the config file ([[automations]]); "
                "remove it there (it comes back at the next start otherwise)"
            )
        await a.store.remove(name)
        await a.load()
        return {"removed": name}

    async def _op_automation_firings(self, request: dict[str, Any]) -> dict[str, Any]:
        a = self._automations_store()
        assert a.store is not None
        name = request.get("name")
        limit = int(request.get("limit", 20))
        firings = await a.store.firings(str(name)[:64] if name else None, limit=limit)
        return {"firings": [f.as_dict() for f in firings]}

    async def _op_sim_set(self, request: dict[str, Any]) -> dict[str, Any]:
        """``sim set SENSOR.QUANTITY VALUE``: what a simulated sensor measures from now on."""
        from clawseed_edge.api import ConfigInvalid

        from .inputs import find_sensor_bank

        assert self.runtime is not None
        bank = find_sensor_bank(self.runtime.peripherals)
        if bank is None:
            raise ConfigInvalid("the running service has no [[sensors]]")
        if not bank.is_sim:
            raise ConfigInvalid(
                "the running service reads real sensors; `sim set` works on a service run "
                "with --sim (or a simulated board)"
            )
        sensor, quantity, value = bank.sim_set(str(request.get("target", "")), request.get("value"))  # type: ignore[arg-type]
        return {"sensor": sensor, "quantity": quantity, "value": value}

    async def _op_sim_input(self, request: dict[str, Any]) -> dict[str, Any]:
        """``sim press DEVICE`` / ``sim set-input DEVICE VALUE``: a simulated input driven from
        outside (a press is active, ``hold_s``, then inactive)."""
        from clawseed_edge.api import ConfigInvalid

        assert self.runtime is not None
        name = str(request.get("device", ""))[:64]
        peripherals: list[Any] = list(self.runtime.peripherals)
        boards = [p for p in peripherals if callable(getattr(p, "sim_input", None))]
        board = next((b for b in boards if name in {d.name for d in b.devices()}), None)
        if board is None:
            known = sorted(d.name for b in boards for d in b.devices() if not d.is_output)
            raise ConfigInvalid(
                f"no input device {name!r} in the running service; inputs: "
                f"{', '.join(known) or 'none'}"
            )
        if request.get("press"):
            hold = request.get("hold_s", 0.2)
            if not isinstance(hold, int | float) or not 0.0 <= hold <= MAX_PRESS_S:
                raise ConfigInvalid(f"hold_s: 0..{MAX_PRESS_S:g} seconds")
            await board.sim_input(name, True)
            await asyncio.sleep(hold)
            value = await board.sim_input(name, False)
            return {"device": name, "pressed_s": hold, "value": value}
        active = _input_value(request.get("value"))
        return {"device": name, "value": await board.sim_input(name, active)}

    async def _op_hardware_states(self, request: dict[str, Any]) -> dict[str, Any]:
        """``hardware status``: every device's state and every sensor's latest reading, as the
        peripherals last published them (nothing is read now), with the service's clock. The
        readings are the filtered values every reader shows; with ``raw`` the sensors' last raw
        readings (before the filters)."""
        import time

        from clawseed_edge.api import SensorReading, StateSource

        assert self.runtime is not None
        peripherals: list[dict[str, Any]] = []
        devices: list[dict[str, Any]] = []
        readings: list[dict[str, Any]] = []
        left_off = 0
        for p in self.runtime.peripherals:
            peripherals.append({"name": p.name, "board": p.board_type})
            if not isinstance(p, StateSource):
                continue
            updates = list(p.states.latest())
            raw_feed = getattr(p, "raw_states", None) if request.get("raw") else None
            if raw_feed is not None:
                raw = list(raw_feed.latest())
                updates = [u for u in updates if not isinstance(u, SensorReading)] + raw
            for update in updates:
                if isinstance(update, SensorReading) and len(readings) < MAX_READINGS:
                    readings.append({**update.as_dict(), "error": update.error[:300]})
                elif not isinstance(update, SensorReading) and len(devices) < MAX_DEVICES:
                    devices.append(update.as_dict())
                else:
                    left_off += 1
        return {
            "now": time.time(),
            "peripherals": peripherals,
            "devices": devices,
            "readings": readings,
            "left_off": left_off,
            "estop": estop_status(self.service.emergency_stop),
            "raw": bool(request.get("raw")),
        }

    async def _op_sensors(self, request: dict[str, Any]) -> dict[str, Any]:
        """What the sampler does: per sensor its interval, reads, failures, latest values."""
        return self.recorder.status() if self.recorder is not None else {"sampled": []}

    def _mcp_backend(self) -> Any:
        """The MCP server's view of this service (``mcp serve`` bridges to it)."""
        from clawseed_edge.channels.mcp import LocalBackend

        assert self.runtime is not None
        rt = self.runtime
        return LocalBackend(rt.agent, list(rt.peripherals), header_board=_header_board(rt))

    async def _op_mcp_tools(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"tools": await self._mcp_backend().tools()}

    async def _op_mcp_call(self, request: dict[str, Any], stream: ControlStream) -> dict[str, Any]:
        """One tool call from an MCP host, through this service's policy and approvals.

        With ``"ask": true`` (a bridge whose host can elicit) an approval the call needs is
        asked back on this connection, ``{"ask": message}`` -> ``{"answer": true|false|null}``
        (null: the host could not be asked; the approvals broker decides). Otherwise the broker
        asks (phones, Telegram) as for any call.
        """
        from clawseed_edge.api import ConfigInvalid
        from clawseed_edge.channels.approvals import asking

        name, arguments = request.get("name"), request.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise ConfigInvalid('send {"op": "mcp_call", "name": "<tool>", "arguments": {...}}')
        ask = _asking_back(stream) if request.get("ask") is True else None
        async with asking(ask):
            answer = await self._mcp_backend().call(name[:100], arguments)
        return {"call_ok": answer["ok"], "output": answer["output"], "error": answer["error"]}

    async def _op_mcp_watch(self, request: dict[str, Any], stream: ControlStream) -> dict[str, Any]:
        """Send ``{"changed": [uri, ...]}`` frames as devices and sensors change, until the
        client closes the connection (or sends anything). Changes coalesce while a frame is
        written, so a slow bridge gets fewer frames, never an unbounded queue."""
        from clawseed_edge.api import ConfigInvalid

        if self._mcp_watchers >= MAX_MCP_WATCHERS:
            raise ConfigInvalid(
                f"{MAX_MCP_WATCHERS} MCP bridges already watch this service's states; "
                "close one (each `mcp serve` with a subscription is one)"
            )
        self._mcp_watchers += 1
        pending: set[str] = set()
        woken = asyncio.Event()

        def changed(uris: list[str]) -> None:
            for uri in uris:
                if len(pending) < MAX_PENDING_URIS:
                    pending.add(uri)
            woken.set()

        stop = self._mcp_backend().watch(changed)
        gone = asyncio.create_task(stream.receive())  # a line or the end: the watcher left
        try:
            await stream.send({"watching": True})
            while not gone.done():
                waiter = asyncio.create_task(woken.wait())
                await asyncio.wait({gone, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                woken.clear()
                if pending and not gone.done():
                    batch = sorted(pending)
                    pending.clear()
                    await stream.send({"changed": batch})
        finally:
            stop()
            gone.cancel()
            with contextlib.suppress(BaseException):
                await gone
            self._mcp_watchers -= 1
        return {"watched": True}

    async def _op_mcp_states(self, request: dict[str, Any]) -> dict[str, Any]:
        return dict(await self._mcp_backend().states())

    async def _op_mcp_pinouts(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"pinouts": await self._mcp_backend().pinouts()}


#: Bridged MCP hosts watching this service's states at once (``mcp_watch``), and the URIs one
#: watcher may have pending (changes coalesce while a frame is being written).
MAX_MCP_WATCHERS = 8
MAX_PENDING_URIS = 256
#: How long the service waits for a bridged host's answer to an approval it asked for (the
#: bridge's own elicitation gives up sooner: 120 s).
MCP_ASK_TIMEOUT_S = 150.0


#: The longest ``sim press`` holds an input active.
MAX_PRESS_S = 10.0
_ACTIVE = {"1": True, "on": True, "true": True, "active": True, "pressed": True, "open": True}
_INACTIVE = {"0": False, "off": False, "false": False, "inactive": False, "released": False}


def _input_value(raw: Any) -> bool:
    """Active (True) or inactive from ``1``/``on``/``active``/``pressed``/``open`` or their
    opposites."""
    from clawseed_edge.api import ConfigInvalid

    text = str(raw).strip().lower()[:16]
    found = _ACTIVE.get(text, _INACTIVE.get(text))
    if found is None:
        raise ConfigInvalid(
            f"value {text!r}: write 1/on/active/pressed/open or 0/off/inactive/released"
        )
    return found


def _asking_back(stream: ControlStream) -> Any:
    """Ask the bridge on ``stream`` (which asks its MCP host by elicitation)."""

    async def ask(message: str) -> bool | None:
        from .control import ControlError

        try:
            async with asyncio.timeout(MCP_ASK_TIMEOUT_S):
                await stream.send({"ask": message[:1000]})
                reply = await stream.receive()
        except (TimeoutError, ControlError):
            return False  # the host went away or never answered: refused, never skipped
        answer = reply.get("answer")
        return answer if isinstance(answer, bool) else None

    return ask


def _header_board(runtime: Runtime) -> str | None:
    """The Pi header's board id (``[hardware] board``), for its pinout."""
    return runtime.loaded.config.hardware.board
