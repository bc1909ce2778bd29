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
        """The rules, whether they are paused, and the recorded firings (newest last)."""
        a = self.automations
        if a is None:
            return {"automations": [], "paused": None, "firings": []}
        return {
            "automations": [
                {"name": r.config.name, "when": r.config.when, "active": r.state.active}
                for r in a.rules
            ],
            "paused": a.paused,
            "firings": list(a.firings),
        }

    async def _op_automations_resume(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"resumed": self.automations.resume() if self.automations is not None else False}

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
        rt = self.runtime
        return LocalBackend(rt.agent, list(rt.peripherals), header_board=_header_board(rt))

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

    async def _op_mcp_pinouts(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"pinouts": await self._mcp_backend().pinouts()}


def _header_board(runtime: Runtime) -> str | None:
    """The Pi header's board id (``[hardware] board``), for its pinout."""
    return runtime.loaded.config.hardware.board
