"""What is wired here: I2C chips, 1-Wire sensors and boards on USB, and the config they would be.

Read-only by design. On I2C, after i2cdetect's probes (:meth:`I2CBus.scan`), a chip is only
*read* where its datasheet defines an identification read, and only at the addresses that chip
can have:

* BME280 / BMP280 / BME680 at 0x76-0x77: register 0xD0, the chip id (0x60, 0x58, 0x61);
* SHT3x at 0x44-0x45: the "read status register" command 0xF32D, its 2 bytes and their CRC
  (the command selects what the next read returns; it changes no setting);
* ADS1115 at 0x48-0x4B: the config register 0x01 (0x8583 after power-on);
* BH1750 (0x23, 0x5C), SSD1306 (0x3C, 0x3D) and the PCF8574 backpack of an HD44780 LCD
  (0x20-0x27, 0x38-0x3F) have no identification register: they are named by address only,
  and said to be a guess.

Nothing is ever written to a register. 1-Wire sensors are the kernel's directories under
``/sys/bus/w1/devices`` (family 28: DS18B20); Nucleo boards are found by their ST-LINK's USB ids
(:func:`~clawseed_edge.peripherals.detect.usb_boards`). Everything is read below a root
directory, as :mod:`~clawseed_edge.peripherals.detect` does, so tests use fake trees; the I2C
buses are :class:`~clawseed_edge.peripherals.i2c.bus.I2CBus` objects, so ``--sim`` scans the
simulated bus through the same code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import HardwareError

from .detect import usb_boards
from .i2c.drivers.sht31 import crc8
from .sysfs.w1 import W1_DEVICES

if TYPE_CHECKING:
    from .i2c.bus import I2CBus
    from .i2c.smbus import SMBusLike

__all__ = [
    "SIM_NUCLEO",
    "Finding",
    "ScanReport",
    "i2c_bus_numbers",
    "proposal_toml",
    "scan_i2c",
    "scan_machine",
    "scan_usb",
    "scan_w1",
    "simulated_buses",
]

#: Bounds on what a scan reads: buses, 1-Wire devices (the kernel caps its own list too).
_MAX_BUSES = 16
_MAX_W1 = 64

#: The board ``--sim`` reports as the virtual Nucleo (what a ``nucleo`` peripheral runs
#: against with ``--sim``).
SIM_NUCLEO = "nucleo-f401re"


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing found.

    Attributes:
        where: Where it is (``i2c-1 0x76``, ``1-Wire 28-0316a2794d1f``, ``USB 1-1.2``).
        what: What it is, and how we know (``BME280 (chip id 0x60 at register 0xD0)``).
        driver: The driver for ``[[sensors]]`` / ``[[displays]]``, or None.
        table: ``sensors``, ``displays``, ``peripherals``, or "" (nothing to propose).
        certain: True when an identification read confirmed it, False for a guess by address.
        bus: The I2C bus number, for I2C chips.
        address: The 7-bit I2C address, for I2C chips.
        device: The sysfs name, for 1-Wire sensors (``28-...``).
        board: The board id, for boards (``nucleo-f401re``).
    """

    where: str
    what: str
    driver: str | None = None
    table: str = ""
    certain: bool = True
    bus: int | None = None
    address: int | None = None
    device: str | None = None
    board: str | None = None


@dataclass(frozen=True, slots=True)
class ScanReport:
    """What :func:`scan_machine` found, and what it could not look at (with why)."""

    findings: tuple[Finding, ...]
    problems: tuple[str, ...] = ()


# --- I2C ------------------------------------------------------------------------------------

_BOSCH_IDS = {0x60: ("BME280", "bme280"), 0x58: ("BMP280", None), 0x61: ("BME680", None)}
_ADS1115_RESET_CONFIG = 0x8583
#: Chips with no identification register: named by their address only, as a guess.
_BY_ADDRESS = (
    ({0x23, 0x5C}, "probably a BH1750 light sensor (by address; it has no id)", "bh1750", "sensors"),
    ({0x3C, 0x3D}, "probably an SSD1306 OLED display (by address; it has no id)", "ssd1306",
     "displays"),
    ({*range(0x20, 0x28), *range(0x38, 0x40)},
     "probably an HD44780 LCD on a PCF8574 backpack (by address)", "hd44780", "displays"),
)  # fmt: skip


def _read_bosch_id(bus: SMBusLike, address: int) -> int:
    return bus.read_byte_data(address, 0xD0)


def _read_sht3x_status(bus: SMBusLike, address: int) -> list[int]:
    from .i2c.smbus import bare_read

    # The two-byte command 0xF32D on the wire (a "register" byte and a data byte), then the
    # status word and its CRC: what the datasheet's "Readout of Status Register" does.
    bus.write_byte_data(address, 0xF3, 0x2D)
    return bare_read(bus, address, 3)


def _read_ads_config(bus: SMBusLike, address: int) -> int:
    high, low = bus.read_i2c_block_data(address, 0x01, 2)
    return (high << 8) | low


async def _identify(bus: I2CBus, address: int) -> Finding:
    """What answers at ``address``: an identification read where the datasheet has one."""
    where = f"i2c-{bus.number} 0x{address:02x}"
    common: dict[str, Any] = {"bus": bus.number, "address": address}
    try:
        if address in (0x76, 0x77):
            chip = await bus.call(
                lambda b: _read_bosch_id(b, address), what="reading the chip id", address=address
            )
            name, driver = _BOSCH_IDS.get(chip, (None, None))
            if name is None:
                return Finding(
                    where,
                    f"a chip whose id register 0xD0 reads 0x{chip:02x} (not a BME280 or BMP280)",
                    **common,
                )
            what = f"{name} (chip id 0x{chip:02x} at register 0xD0)"
            if driver is None:
                what += ": no built-in driver reads it (the bme280 driver needs a BME280)"
                return Finding(where, what, **common)
            return Finding(where, what, driver=driver, table="sensors", **common)
        if address in (0x44, 0x45):
            frame = await bus.call(
                lambda b: _read_sht3x_status(b, address), what="reading the status", address=address
            )
            if crc8(frame[:2]) == frame[2]:
                return Finding(
                    where,
                    "SHT3x (status register read, CRC correct)",
                    driver="sht31",
                    table="sensors",
                    **common,
                )
            return Finding(
                where, "a chip at an SHT3x address whose status read fails its CRC", **common
            )
        if 0x48 <= address <= 0x4B:
            config = await bus.call(
                lambda b: _read_ads_config(b, address), what="reading the config", address=address
            )
            if config == _ADS1115_RESET_CONFIG:
                what = "ADS1115 (config register 0x01 reads 0x8583, its power-on value)"
                return Finding(where, what, driver="ads1115", table="sensors", **common)
            what = f"probably an ADS1x15 (config register 0x01 reads 0x{config:04x})"
            return Finding(where, what, driver="ads1115", table="sensors", certain=False, **common)
    except HardwareError as exc:
        return Finding(
            where,
            f"a chip that did not answer its identification read ({exc})",
            certain=False,
            **common,
        )
    for addresses, what, driver, table in _BY_ADDRESS:
        if address in addresses:
            return Finding(where, what, driver=driver, table=table, certain=False, **common)
    return Finding(where, "a chip this scan does not know", certain=False, **common)


async def scan_i2c(bus: I2CBus) -> list[Finding]:
    """Every chip that answers on an open ``bus``, identified where a datasheet allows.

    Raises:
        BusLost, BusNotFound, BusAccessDenied, HardwareError: As :meth:`I2CBus.scan`.
    """
    return [await _identify(bus, address) for address in await bus.scan()]


def i2c_bus_numbers(root: Path = Path("/")) -> list[int]:
    """The N of every ``/dev/i2c-N`` below ``root``, ascending (at most 16)."""
    try:
        names = [p.name for p in (root / "dev").iterdir()]
    except OSError:
        return []
    found = sorted(int(m.group(1)) for n in names if (m := re.fullmatch(r"i2c-(\d+)", n)))
    return found[:_MAX_BUSES]


# --- 1-Wire and USB -------------------------------------------------------------------------


def scan_w1(root: Path = Path("/")) -> list[Finding]:
    """The DS18B20s the kernel's 1-Wire driver lists (``/sys/bus/w1/devices/28-*``)."""
    base = root / "sys" / W1_DEVICES
    try:
        names = sorted(p.name for p in base.iterdir())[:_MAX_W1]
    except OSError:
        return []
    return [
        Finding(
            f"1-Wire {name}",
            "DS18B20 temperature sensor (1-Wire family 28)",
            driver="ds18b20",
            table="sensors",
            device=name,
        )
        for name in names
        if name.startswith("28-")
    ]


def scan_usb(root: Path = Path("/")) -> list[Finding]:
    """Boards on USB whose ids a board file lists (every NUCLEO-64 has the same ST-LINK)."""
    found = []
    for usb in usb_boards(root):
        what = f"{usb.product or 'ST-LINK'} {usb.usb}: a Nucleo ({', '.join(usb.candidates)})"
        found.append(
            Finding(f"USB {usb.sysfs_name}", what, table="peripherals", board=usb.candidates[0])
        )
    return found


# --- the whole machine ----------------------------------------------------------------------


def simulated_buses() -> dict[int, Callable[[], SMBusLike]]:
    """``--sim``: bus 1 with a simulated BME280 at 0x76 (the embedded default's chip)."""
    from .i2c.sim import SimI2CBus
    from .i2c.sim.bme280 import BME280Model

    bus = SimI2CBus(1)
    bus.attach(0x76, BME280Model())
    return {1: bus.opener()}


async def scan_machine(
    root: Path = Path("/"),
    *,
    buses: Mapping[int, Callable[[], SMBusLike]] | None = None,
    sim: bool = False,
) -> ScanReport:
    """Scan the I2C buses, 1-Wire and USB below ``root``. Never raises for the hardware.

    Args:
        root: Where ``/dev`` and ``/sys`` are (a fake tree in tests).
        buses: Openers by bus number (the simulated ones); default: ``/dev/i2c-N`` under
            ``root`` through smbus2 (only when ``root`` is ``/``: a fake tree has no bus).
        sim: Also report the virtual Nucleo when no board is on USB (what ``--sim`` runs a
            ``nucleo`` peripheral against).
    """
    from .i2c.bus import I2CBus, smbus2_opener

    findings: list[Finding] = []
    problems: list[str] = []
    if buses is None:
        numbers = i2c_bus_numbers(root)
        buses = {n: smbus2_opener(n) for n in numbers} if root == Path("/") else {}
        if not numbers:
            problems.append(
                "no I2C bus (/dev/i2c-*): enable I2C (`sudo raspi-config nonint "
                "do_i2c 0`) and reboot, if you have I2C chips"
            )
    for number, opener in sorted(buses.items()):
        bus = I2CBus(number, opener=opener, attempts=1)
        try:
            await bus.open()
            findings += await scan_i2c(bus)
        except HardwareError as exc:
            problems.append(f"i2c-{number}: {exc}")
        finally:
            await bus.aclose()
    findings += scan_w1(root)
    usb = scan_usb(root)
    if sim and not usb:
        usb = [
            Finding(
                "virtual (--sim)",
                f"a virtual {SIM_NUCLEO.upper()} running the firmware",
                table="peripherals",
                board=SIM_NUCLEO,
            )
        ]
    findings += usb
    return ScanReport(tuple(findings), tuple(problems))


def _names(findings: Iterable[Finding], taken: Iterable[str]) -> list[str]:
    """A unique, identifier-like name per finding (``bme280``, ``bme280_2``, ``nucleo``)."""
    used = set(taken)
    names = []
    for f in findings:
        base = f.driver or ("nucleo" if f.board and f.board.startswith("nucleo") else "board")
        name, n = base, 1
        while name in used:
            n += 1
            name = f"{base}_{n}"
        used.add(name)
        names.append(name)
    return names


def proposal_toml(findings: Iterable[Finding], *, taken: Iterable[str] = ()) -> str:
    """The ``[[sensors]]``, ``[[displays]]`` and ``[[peripherals]]`` tables for ``findings``
    (those with a table), named so as not to clash with ``taken``; "" when none has one."""
    chosen = [f for f in findings if f.table]
    blocks = []
    for f, name in zip(chosen, _names(chosen, taken), strict=True):
        note = f"# {f.where}: {f.what}"
        if f.table == "peripherals":
            lines = [
                note,
                "[[peripherals]]",
                f'name = "{name}"',
                'type = "nucleo"',
                f'board = "{f.board}"',
                "",
                "[[peripherals.devices]]",
                f'name = "{"ld2" if name == "nucleo" else name + "_ld2"}"',
                'pin = "D13"                # the green user LED (LD2)',
                'kind = "led"',
            ]
        else:
            lines = [note, f"[[{f.table}]]", f'name = "{name}"', f'driver = "{f.driver}"']
            if f.bus is not None and f.address is not None:
                lines += [f"bus = {f.bus}", f"address = 0x{f.address:02x}"]
            if f.device is not None:
                lines.append(f'device = "{f.device}"')
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
