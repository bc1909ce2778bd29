"""The control socket's operations on the scheduler, automations, sensors and MCP.

:class:`ControlOpsMixin` holds the ``_op_*`` handlers that only read or drive one part of the
running service; :class:`~.process.Service` lists them in its handler table (``_handlers``)
beside its own (pairing, status, estop, reload).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from clawseed_edge.config.assemble import Runtime
    from clawseed_edge.scheduler import Scheduler
    from clawseed_edge.scheduler.automations import Automations

    from .recorder import SensorRecorder

__all__ = ["ControlOpsMixin"]


class ControlOpsMixin:
    """Control-socket handlers of the scheduler, automations, sensors and MCP (see above)."""

    runtime: Runtime | None
    scheduler: Scheduler | None
    recorder: SensorRecorder | None
    automations: Automations | None

    async def _op_cron_run_now(self, request: dict[str, Any]) -> dict[str, Any]:
        from clawseed_edge.api import ConfigInvalid

        if self.scheduler is None:
            raise ConfigInvalid("the scheduler is off in the running service ([scheduler])")
        run = await self.scheduler.run_now(str(request.get("name", "")))
        return {"run": msgspec.to_builtins(run)}

    async def _op_cron_resume(self, request: dict[str, Any]) -> dict[str, Any]:
        from clawseed_edge.api import ConfigInvalid

        if self.scheduler is None:
            raise ConfigInvalid("the scheduler is off in the running service ([scheduler])")
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

        from .recorder import find_sensor_bank

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

    async def _op_sensors(self, request: dict[str, Any]) -> dict[str, Any]:
        """What the sampler does: per sensor its interval, reads, failures, latest values."""
        return self.recorder.status() if self.recorder is not None else {"sampled": []}

    def _mcp_backend(self) -> Any:
        """The MCP server's view of this service (``mcp serve`` bridges to it)."""
        from clawseed_edge.channels.mcp import LocalBackend

        assert self.runtime is not None
        return LocalBackend(self.runtime.agent, list(self.runtime.peripherals))

    async def _op_mcp_tools(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"tools": await self._mcp_backend().tools()}

    async def _op_mcp_call(self, request: dict[str, Any]) -> dict[str, Any]:
        """One tool call from an MCP host, through this service's policy and approvals."""
        from clawseed_edge.api import ConfigInvalid

        name, arguments = request.get("name"), request.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise ConfigInvalid('send {"op": "mcp_call", "name": "<tool>", "arguments": {...}}')
        answer = await self._mcp_backend().call(name[:100], arguments)
        return {"call_ok": answer["ok"], "output": answer["output"], "error": answer["error"]}

    async def _op_mcp_states(self, request: dict[str, Any]) -> dict[str, Any]:
        return dict(await self._mcp_backend().states())
