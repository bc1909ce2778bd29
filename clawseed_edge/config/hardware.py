"""The hardware part of a config: the legacy Pi header and the ``[[peripherals]]`` tables.

Two ways to describe hardware, which may be mixed:

* ``[hardware]`` + top-level ``[[devices]]``: one Pi header, the peripheral called ``pi``
  (every file written before ``[[peripherals]]`` existed keeps working);
* ``[[peripherals]]`` tables, each built by the factory its ``type`` names
  (:mod:`clawseed_edge.peripherals.registry`), with their own ``[[peripherals.devices]]``.

:func:`check_hardware` runs at load (errors name the file and the key) and validates each
``[[peripherals]]`` table once; the loader keeps the validated tables
(:attr:`~.file.LoadedConfig.peripheral_tables`) and :func:`build_peripherals` builds from those at
assembly, never validating a table again. Device names are unique across the whole file, so one
set of gpio_* tools routes a call to the right board by its ``device`` argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import ConfigInvalid

from .schema import Config

if TYPE_CHECKING:
    from clawseed_edge.api import Peripheral
    from clawseed_edge.peripherals.registry import PeripheralTable

__all__ = [
    "CAMERAS_PERIPHERAL",
    "LEGACY_PERIPHERAL",
    "SENSORS_PERIPHERAL",
    "build_peripherals",
    "check_hardware",
    "peripheral_tables",
]

LEGACY_PERIPHERAL = "pi"
"""The name of the Pi header described by ``[hardware]`` + ``[[devices]]``."""

SENSORS_PERIPHERAL = "sensors"
"""The name of the sensor bank described by ``[[sensors]]`` + ``[[displays]]`` + ``[i2c]``."""

CAMERAS_PERIPHERAL = "cameras"
"""The name of the camera bank described by ``[[cameras]]``."""


def peripheral_tables(
    config: Config, source: str, registry: Any | None = None
) -> list[PeripheralTable]:
    """Every ``[[peripherals]]`` table validated by its factory (``PeripheralTable`` objects).

    Raises:
        ConfigInvalid: An unknown type or a key its factory rejects (names file and key).
    """
    if not config.peripherals:
        return []  # the factories (and the registry) are imported only for a table
    from clawseed_edge.peripherals.registry import default_registry

    registry = registry or default_registry()
    return [
        registry.parse(table, source=source, index=i) for i, table in enumerate(config.peripherals)
    ]


def check_hardware(
    config: Config, source: str, registry: Any | None = None
) -> list[PeripheralTable]:
    """Check what can be checked without building anything; called by the loader.

    Returns the ``[[peripherals]]`` tables, each validated by its factory (once: assembly
    builds from these).

    Raises:
        ConfigInvalid: ``[[devices]]`` without ``[hardware] board``; a ``[[peripherals]]``
            table its factory rejects; two peripherals, or two devices anywhere in the file,
            with the same name (the message names both places).
    """
    if config.devices and config.hardware.board is None:
        raise ConfigInvalid(
            "[[devices]] are wired but [hardware] board is not set; set it to your Pi's id "
            '(e.g. board = "rpi4b"; `clawseed-edge boards list` shows them) or to "sim" '
            "for simulated pins",
            file=source,
            key="hardware.board",
        )
    tables = peripheral_tables(config, source, registry)
    peripherals: dict[str, str] = {}
    devices: dict[str, str] = {}
    if config.devices:
        peripherals[LEGACY_PERIPHERAL] = "[hardware]"
        for i, dev in enumerate(config.devices):
            _claim(devices, dev.name, f"devices[{i}]", source)
    for table in tables:
        _claim(peripherals, table.name, f"{table.key}.name", source, what="peripheral")
        for j, name in enumerate(table.device_names()):
            _claim(devices, name, f"{table.key}.devices[{j}]", source)
    if config.sensors or config.displays:
        _claim(peripherals, SENSORS_PERIPHERAL, "[[sensors]]", source, what="peripheral")
    for table_name, entries in (("sensors", config.sensors), ("displays", config.displays)):
        for i, entry in enumerate(entries):
            _claim(devices, entry.name, f"{table_name}[{i}]", source)
    if config.cameras:
        from clawseed_edge.peripherals.camera.config import check_camera

        _claim(peripherals, CAMERAS_PERIPHERAL, "[[cameras]]", source, what="peripheral")
        for i, camera in enumerate(config.cameras):
            check_camera(camera, f"cameras[{i}]", source)
            _claim(devices, camera.name, f"cameras[{i}]", source)
    return tables


def _claim(
    seen: dict[str, str], name: str, place: str, source: str, *, what: str = "device"
) -> None:
    first = seen.get(name)
    if first is not None:
        raise ConfigInvalid(
            f"{what} name {name!r} is used twice, at {first} and at {place}; names are unique "
            f"across the whole file (the tools find a {what} by its name): rename one",
            file=source,
            key=f"{place}.name" if what == "device" else place,
        )
    seen[name] = place


def build_peripherals(
    config: Config,
    source: str,
    *,
    sim: bool = False,
    registry: Any | None = None,
    tables: Sequence[PeripheralTable] | None = None,
    workspace: Path | None = None,
) -> list[Peripheral]:
    """The configured peripherals, unconnected, sharing one set of gpio_* tools.

    ``tables`` are the ``[[peripherals]]`` tables the loader validated
    (:attr:`~.file.LoadedConfig.peripheral_tables`): they are built as they are. Without them
    (a config built in code) the hardware is checked here first, as the loader would.

    The legacy Pi header comes first (when it has devices), then the ``[[peripherals]]`` in
    file order. With several peripherals the first one carries the shared tool set (see
    :func:`~clawseed_edge.peripherals.wired.share_gpio_tools`), so an agent that registers every
    peripheral's tools registers each tool once.

    ``[[cameras]]`` make one more peripheral, last; their snapshots go to
    ``<workspace>/snapshots`` (``workspace`` defaults to ``./workspace``).

    Raises:
        ConfigInvalid / HardwareError: The config or the wiring is wrong (names file and key).
    """
    from clawseed_edge.peripherals.gpio import PiGpio
    from clawseed_edge.peripherals.wired import share_gpio_tools, share_readings

    if tables is None:
        tables = check_hardware(config, source, registry)
    peripherals: list[Peripheral] = []
    hardware = config.hardware_with_devices()
    if hardware.devices:
        peripherals.append(
            PiGpio(hardware, name=LEGACY_PERIPHERAL, sim=True if sim else None, source=source)
        )
    for table in tables:
        peripherals.append(table.create(sim=sim, source=source))
    bank = _sensor_bank(config, source, sim=sim)
    if bank is not None:
        peripherals.append(bank)
    share_gpio_tools(peripherals)
    share_readings(peripherals)  # hardware_status lists the sensor bank's latest readings
    if config.cameras:
        from clawseed_edge.peripherals.camera.bank import CameraBank

        cameras = CameraBank(
            config.cameras, (workspace or Path("workspace")) / "snapshots", name=CAMERAS_PERIPHERAL
        )
        cameras.follow(peripherals)  # the simulated door contacts (sim_door)
        peripherals.append(cameras)
    return peripherals


def _sensor_bank(config: Config, source: str, *, sim: bool) -> Peripheral | None:
    """The ``[[sensors]]`` + ``[[displays]]`` bank (simulated with ``sim`` or on the ``sim``
    board), checked against the Pi header's wiring; None when none are configured."""
    if not config.sensors and not config.displays:
        return None
    from clawseed_edge.peripherals.boards import default_registry as boards
    from clawseed_edge.peripherals.sensors.factory import sensor_bank_from_config

    hardware = config.hardware_with_devices()
    board = boards().get(hardware.board)
    return sensor_bank_from_config(
        config.sensors,
        config.displays,
        config.i2c,
        sim=sim or board.family == "sim",
        board=board,
        gpio_devices=hardware.devices,
        source=source,
        name=SENSORS_PERIPHERAL,
    )
