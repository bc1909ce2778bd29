"""What the MCP server serves, apart from the protocol: tools, calls, states.

A :class:`ToolBackend` lists the tools (name, description, JSON schema, risk), runs one call
through the policy, and reports the devices' states and the sensors' readings. Two exist: the
:class:`LocalBackend` over a runtime assembled in this process, and the command's bridge to the
running service (its control socket's ``mcp_tools``/``mcp_call``/``mcp_states``/
``mcp_pinouts`` ops and the ``mcp_watch`` stream, served by the same :class:`LocalBackend`
over the service's runtime).

Approvals (``eliciting.py``): :class:`~.eliciting.ElicitingApprover` asks the MCP client
(elicitation) when the current call came from a client that can be asked
(:func:`~.eliciting.asking`), else it hands the request to the approver it wraps (the approvals
broker). It never says yes by itself. Through the bridge the
service's ``mcp_call`` sets an asker that asks the bridge back, which asks its host.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Protocol

from clawseed_edge.agent.tool_run import call_tool
from clawseed_edge.api import Actor, StateSource, ToolContext
from clawseed_edge.api.wording import for_people

__all__ = ["LocalBackend", "ToolBackend", "annotations_for"]

log = logging.getLogger(__name__)

#: What one call's text result may hold when it goes back to the MCP client.
MAX_RESULT_CHARS = 64_000
#: Images one call's result may carry (a snapshot is one).
MAX_IMAGES = 4
#: How long a state refresh may take before the last known states are served.
REFRESH_TIMEOUT_S = 2.0


#: What a tool does beyond its risk class, for the hosts that decide by the MCP hints whether
#: to ask before a call: ``destructive`` (it removes or overwrites), ``idempotent`` (a repeat
#: changes nothing more), ``open_world`` (it reaches beyond this board).
_HINTS: dict[str, dict[str, bool]] = {
    "memory_forget": {"destructive": True, "idempotent": True},
    "file_write": {"destructive": True, "idempotent": True},
    "memory_store": {"idempotent": False},
    "shell": {"destructive": True, "open_world": True},
    "http_request": {"open_world": True},
    "gpio_switch": {"idempotent": True},
    "gpio_set_level": {"idempotent": True},
}


def annotations_for(risk: str, name: str = "") -> dict[str, Any]:
    """MCP tool annotations of a tool: its title, and hints from its risk class and
    :data:`_HINTS` (read -> readOnlyHint; dangerous or overwriting -> destructiveHint)."""
    hints = _HINTS.get(name, {})
    read = risk == "read"
    found: dict[str, Any] = {
        "readOnlyHint": read,
        "destructiveHint": (not read) and (risk == "dangerous" or hints.get("destructive", False)),
        "idempotentHint": read or hints.get("idempotent", False),
        "openWorldHint": hints.get("open_world", False),
    }
    if name:
        found["title"] = name.replace("_", " ").capitalize()
    return found


class ToolBackend(Protocol):
    """Where the MCP server's tools and states come from (this process, or the service)."""

    async def tools(self) -> list[dict[str, Any]]:
        """``[{"name", "description", "parameters", "risk"}]``."""
        ...

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """``{"ok": bool, "output": str, "error": str}``, the policy having decided first."""
        ...

    async def states(self) -> dict[str, Any]:
        """``{"devices": [...], "readings": [...]}`` from the state feeds."""
        ...

    async def pinouts(self) -> list[dict[str, Any]]:
        """Each board's pins as configured (:func:`~clawseed_edge.peripherals.pinout.pinouts`)."""
        ...

    def watch(self, listener: Callable[[list[str]], None]) -> Callable[[], None]:
        """Call ``listener(uris)`` with the resource URIs a state change touched; returns the
        function that stops it (a backend that cannot watch returns a no-op)."""
        ...


class LocalBackend:
    """A :class:`ToolBackend` over an assembled runtime's agent and peripherals.

    Args:
        agent: The agent whose registry, hooks and policy serve the calls.
        peripherals: Whose state feeds the states come from.
        session_id: The session the calls are made in (the policy's rate limits, the audit).
        header_board: The Pi header's board id (``[hardware] board``): its pinout is served
            even when no device is wired to it.
    """

    def __init__(
        self,
        agent: Any,
        peripherals: list[Any],
        session_id: str = "mcp",
        header_board: str | None = None,
    ) -> None:
        self.agent = agent
        self.peripherals = peripherals
        self.session_id = session_id
        self.header_board = header_board

    async def tools(self) -> list[dict[str, Any]]:
        # The registry's one listing; a tool that declares no risk is offered as one that acts.
        return [{**t, "risk": t["risk"] or "act"} for t in self.agent.registry.listing()]

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        # The MCP host's user acts (the one call path, with this actor for policy and audit).
        actor = Actor("person", "mcp", self.session_id)
        context = ToolContext(session_id=self.session_id, channel="mcp", actor=actor)
        result = await call_tool(self.agent, name, arguments, context)
        answer: dict[str, Any] = {
            "ok": result.success,
            "output": _capped(result.output or ""),
            "error": _capped(for_people(result.error or "")),
        }
        if result.images:  # camera_snapshot: base64 JPEG, each bounded by the camera
            answer["images"] = list(result.images[:MAX_IMAGES])
        return answer

    async def states(self) -> dict[str, Any]:
        devices: list[dict[str, Any]] = []
        readings: list[dict[str, Any]] = []
        for peripheral in self.peripherals:
            if not isinstance(peripheral, StateSource):
                continue
            with contextlib.suppress(Exception):  # the last known states are served
                async with asyncio.timeout(REFRESH_TIMEOUT_S):
                    await peripheral.refresh()
            devices.extend(state.as_dict() for state in peripheral.states.devices())
            readings.extend(reading.as_dict() for reading in peripheral.states.readings())
        return {"devices": devices, "readings": readings}

    async def pinouts(self) -> list[dict[str, Any]]:
        from clawseed_edge.peripherals.boards import default_registry
        from clawseed_edge.peripherals.pinout import pinouts, read_config_txt

        header = None
        if self.header_board is not None:
            with contextlib.suppress(Exception):  # an unknown board: the peripherals' pinouts
                header = default_registry().get(self.header_board)
        config_txt = None
        if any(getattr(p, "kernel_sensors", list)() for p in self.peripherals):
            config_txt = await asyncio.to_thread(read_config_txt)  # where the overlays set pins
        return pinouts(self.peripherals, header, config_txt)

    def watch(self, listener: Callable[[list[str]], None]) -> Callable[[], None]:
        def changed(update: Any) -> None:
            if hasattr(update, "device"):
                listener([f"device://{update.device}", "clawseed://devices"])
            else:
                listener([f"sensor://{update.sensor}", "clawseed://sensors"])

        stops = [
            p.states.subscribe(changed) for p in self.peripherals if isinstance(p, StateSource)
        ]

        def stop() -> None:
            for unsubscribe in stops:
                unsubscribe()

        return stop


def _capped(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    return text[: MAX_RESULT_CHARS - 40] + f"... [cut: {len(text)} characters in all]"
