"""``GpioPort``: what the gpio_* tools need from a peripheral, and nothing more.

The tools depend on this protocol, not on :class:`~.board.WiredBoard` or its backends, so one
tool set routes to every peripheral that has pin devices (a Pi header, a Nucleo, a plugin's
board) and the tools module does not import the peripheral that builds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from clawseed_edge.api import ConfigInvalid, StateFeed, Tool

from .config import DeviceConfig
from .kinds import KindSpec

__all__ = ["DeviceRoutes", "GpioDeviceView", "GpioPort"]


class GpioDeviceView(Protocol):
    """A configured device as the tools see it."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def pin_name(self) -> str: ...

    @property
    def spec(self) -> KindSpec: ...

    @property
    def config(self) -> DeviceConfig: ...

    @property
    def value(self) -> float | None: ...


@runtime_checkable
class GpioPort(Protocol):
    """A peripheral with named pin devices; every coroutine raises api errors only."""

    name: str
    board_type: str
    #: Where the devices' states are published (``hardware_status`` reads them there).
    states: StateFeed

    def devices(self) -> Sequence[GpioDeviceView]: ...

    async def refresh(self) -> None: ...

    async def switch(self, name: str, on: bool) -> float | None: ...

    async def toggle(self, name: str) -> float | None: ...

    async def set_level(self, name: str, level: float) -> float | None: ...

    async def read(self, name: str) -> float | None: ...

    async def blink(self, name: str, count: int, on_ms: int, off_ms: int) -> None: ...

    async def status(self) -> list[dict[str, Any]]: ...

    def share_tools(self, tools: Sequence[Tool]) -> None: ...


class DeviceRoutes:
    """Device name -> (peripheral, device) over several ports; names are unique across them.

    Raises:
        ConfigInvalid: Two peripherals have a device of the same name (the config loader
            reports this earlier, naming both places; this guards hand-built setups).
    """

    def __init__(self, ports: Sequence[GpioPort]) -> None:
        self.ports = list(ports)
        self._routes: dict[str, tuple[GpioPort, GpioDeviceView]] = {}
        for port in self.ports:
            for dev in port.devices():
                if dev.name in self._routes:
                    other = self._routes[dev.name][0].name
                    raise ConfigInvalid(
                        f"device name {dev.name!r} is used by peripherals {other!r} and "
                        f"{port.name!r}; give every device its own name"
                    )
                self._routes[dev.name] = (port, dev)

    def devices(self) -> list[GpioDeviceView]:
        return [dev for _, dev in self._routes.values()]

    def get(self, name: str) -> tuple[GpioPort, GpioDeviceView] | None:
        return self._routes.get(name)
