"""The doctor's hardware checks: the board, GPIO, I2C, 1-Wire, DHT and serial (Nucleo) access.

Each reads the machine through :class:`~.doctor.Machine` (a root directory, the user's groups,
whether a device node is usable): nothing is opened, nothing written. The fixes are the
Raspberry Pi OS (Bookworm) ones: ``raspi-config nonint``, ``/boot/firmware/config.txt``,
``usermod -aG``.
"""

from __future__ import annotations

from pathlib import Path

from .doctor_machine import CheckResult, DoctorContext, Machine

__all__ = [
    "check_board",
    "check_dht",
    "check_gpio",
    "check_i2c",
    "check_one_wire",
    "check_serial",
]

CONFIG_TXT = "/boot/firmware/config.txt"
_SYSFS_DRIVERS = frozenset({"ds18b20", "dht11", "dht22"})


def _configured_pi_boards(ctx: DoctorContext) -> list[str]:
    """The Pi board ids the config drives for real (``sim`` left out)."""
    if ctx.loaded is None:
        return []
    config = ctx.loaded.config
    boards = [config.hardware.board] if config.hardware.board else []
    tables = ctx.loaded.peripheral_tables or ()
    boards += [t.settings.board for t in tables if t.type == "pi_gpio"]
    return [b for b in boards if b and b != "sim"]


def _sensor_drivers(ctx: DoctorContext) -> list[tuple[str, str, int, str | None]]:
    """(name, driver, bus, device) of every configured sensor and display."""
    if ctx.loaded is None:
        return []
    config = ctx.loaded.config
    return [(s.name, s.driver, s.bus, s.device) for s in (*config.sensors, *config.displays)]


def _group_fix(machine: Machine, group: str) -> str:
    if machine.listed_in_group(group):
        return (
            f"{machine.user} is in group {group} in /etc/group, but not in this login: log "
            "out and in again (or reboot)"
        )
    return f"sudo usermod -aG {group} {machine.user}, then log out and in again"


def _access(machine: Machine, nodes: list[Path], group: str, what: str) -> CheckResult | None:
    """A fail for the first node the user cannot use, or None when all are usable."""
    for node in nodes:
        if not machine.usable(node):
            in_group = machine.is_root or group in machine.group_names()
            why = "" if in_group else f" ({machine.user} is not in group {group})"
            return CheckResult(
                what, "fail", f"{machine.show(node)} is not usable by {machine.user}{why}",
                _group_fix(machine, group) if not in_group else
                f"check the owner and mode of {machine.show(node)} (root:{group}, 0660)",
            )  # fmt: skip
    return None


def check_board(ctx: DoctorContext) -> CheckResult:
    """Which board this is, and whether the config names the same one."""
    found = ctx.detected
    configured = _configured_pi_boards(ctx)
    if found.pi is not None:
        wrong = [b for b in configured if b != found.pi.id]
        summary = f"{found.model} ({found.pi.id})"
        if found.memory_mb:
            summary += f", {found.memory_mb / 1024:.1f} GB RAM"
        if wrong:
            return CheckResult(
                "board", "warn", f"{summary}; the config says {', '.join(wrong)}",
                f'set [hardware] board = "{found.pi.id}"',
            )  # fmt: skip
        return CheckResult("board", "ok", summary)
    if found.is_pi:
        return CheckResult(
            "board", "warn", f"{found.model}: a Pi without a board file here",
            "pick the closest board id from `clawseed-edge boards list`",
        )  # fmt: skip
    if configured:
        return CheckResult(
            "board", "fail", f"the config drives {', '.join(configured)}, but this is not a "
            "Raspberry Pi (no /proc/device-tree/model)",
            'run with --sim here, or set [hardware] board = "sim"',
        )  # fmt: skip
    return CheckResult(
        "board", "skip", "not a Raspberry Pi: GPIO, I2C and 1-Wire checks are skipped "
        "(simulated pins with --sim need nothing)",
    )  # fmt: skip


def check_gpio(ctx: DoctorContext) -> CheckResult:
    """``/dev/gpiochip*`` present and usable (group gpio), and lgpio importable."""
    if not ctx.detected.is_pi:
        return CheckResult("gpio", "skip", "not a Raspberry Pi")
    machine = ctx.machine
    chips = machine.nodes("dev/gpiochip*")
    if not chips:
        return CheckResult(
            "gpio", "fail", "no /dev/gpiochip*: the kernel's GPIO character device is missing",
            "use Raspberry Pi OS Bookworm (or a kernel with the GPIO character device)",
        )  # fmt: skip
    denied = _access(machine, chips, "gpio", "gpio")
    if denied is not None:
        return denied
    if not machine.has_module("lgpio"):
        return CheckResult(
            "gpio", "fail", "lgpio is not installed: gpiozero cannot drive the pins",
            "reinstall in the venv (`pip install -e .` brings lgpio on Pi OS), or "
            "`pip install lgpio` (needs `sudo apt install swig liblgpio-dev` if no wheel fits)",
        )  # fmt: skip
    names = ", ".join(machine.show(c) for c in chips)
    return CheckResult("gpio", "ok", f"{names} usable; lgpio installed")


def check_i2c(ctx: DoctorContext) -> CheckResult:
    """``/dev/i2c-*`` present (I2C enabled) and usable (group i2c), for the configured buses."""
    needed = sorted({bus for _, driver, bus, _ in _sensor_drivers(ctx) if driver not in _SYSFS_DRIVERS})  # fmt: skip
    if not ctx.detected.is_pi:
        return CheckResult("i2c", "skip", "not a Raspberry Pi")
    machine = ctx.machine
    buses = machine.nodes("dev/i2c-*")
    enable = "sudo raspi-config nonint do_i2c 0, then reboot"
    if not buses:
        if needed:
            return CheckResult(
                "i2c", "fail", "I2C is not enabled (no /dev/i2c-*), and I2C sensors are "
                "configured", enable,
            )  # fmt: skip
        return CheckResult("i2c", "skip", "I2C is not enabled (needed only for I2C sensors)", enable)  # fmt: skip
    present = {int(p.name.split("-", 1)[1]) for p in buses if p.name.split("-", 1)[1].isdigit()}
    missing = [bus for bus in needed if bus not in present]
    if missing:
        return CheckResult(
            "i2c", "fail", f"sensors use /dev/i2c-{missing[0]}, which does not exist "
            f"(present: {', '.join(machine.show(b) for b in buses)})",
            "set bus = 1 for the header's pins 3 and 5, or enable that bus's overlay",
        )  # fmt: skip
    denied = _access(machine, buses, "i2c", "i2c")
    if denied is not None:
        return denied
    return CheckResult("i2c", "ok", f"{', '.join(machine.show(b) for b in buses)} usable")


def check_one_wire(ctx: DoctorContext) -> CheckResult:
    """1-Wire enabled and the configured DS18B20s on the bus (only when one is configured)."""
    wanted = [(n, dev) for n, driver, _, dev in _sensor_drivers(ctx) if driver == "ds18b20"]
    if not wanted:
        return CheckResult("1-wire", "skip", "no DS18B20 configured")
    devices = ctx.machine.root / "sys/bus/w1/devices"
    if not devices.is_dir():
        return CheckResult(
            "1-wire", "fail", "1-Wire is not enabled (no /sys/bus/w1/devices)",
            f"add dtoverlay=w1-gpio (data on GPIO4) to {CONFIG_TXT}, or `sudo raspi-config "
            "nonint do_onewire 0`; then reboot",
        )  # fmt: skip
    found = sorted(p.name for p in devices.glob("28-*"))[:32]
    if not found:
        return CheckResult(
            "1-wire", "fail", "1-Wire is enabled but no DS18B20 (28-*) answers",
            "check the wiring: data to GPIO4 with a 4.7 kohm pull-up to 3.3 V",
        )  # fmt: skip
    absent = [f"{n} ({dev})" for n, dev in wanted if dev and dev not in found]
    if absent:
        return CheckResult(
            "1-wire", "fail", f"not on the bus: {', '.join(absent)}; found {', '.join(found)}",
            "set device = one of the ids found",
        )  # fmt: skip
    return CheckResult("1-wire", "ok", f"DS18B20 found: {', '.join(found)}")


def check_dht(ctx: DoctorContext) -> CheckResult:
    """The kernel's DHT driver loaded (an IIO device named dht11) when a DHT is configured."""
    wanted = [n for n, driver, _, _ in _sensor_drivers(ctx) if driver in ("dht11", "dht22")]
    if not wanted:
        return CheckResult("dht", "skip", "no DHT11/DHT22 configured")
    found = []
    for name_file in ctx.machine.nodes("sys/bus/iio/devices/iio:device*/name"):
        try:
            if name_file.read_text(encoding="utf-8").strip().startswith("dht11"):
                found.append(name_file.parent.name)
        except OSError:
            continue
    if not found:
        return CheckResult(
            "dht", "fail", f"{', '.join(wanted)}: the kernel's DHT driver is not loaded "
            "(no IIO device named dht11)",
            f"add dtoverlay=dht11,gpiopin=4 (your data pin) to {CONFIG_TXT} (it reads DHT22 "
            "too); then reboot",
        )  # fmt: skip
    return CheckResult("dht", "ok", f"DHT driver: {', '.join(found)}")


def check_serial(ctx: DoctorContext) -> CheckResult:
    """Nucleo boards: configured ones plugged in, their serial port usable (group dialout)."""
    configured = []
    if ctx.loaded is not None:
        tables = ctx.loaded.peripheral_tables or ()
        configured = [t.settings for t in tables if t.type == "nucleo"]
    on_usb = ctx.detected.usb
    if not configured and not on_usb:
        return CheckResult("serial", "skip", "no Nucleo configured or on USB")
    machine = ctx.machine
    if configured and not on_usb and not any(p.port for p in configured):
        return CheckResult(
            "serial", "fail", f"{configured[0].name}: no Nucleo (ST-LINK) on USB",
            "plug the board in with a data cable (some USB cables carry power only)",
        )  # fmt: skip
    ports = machine.nodes("dev/ttyACM*")
    ports += [machine.root / str(p.port).lstrip("/") for p in configured if p.port]
    ports = [p for p in ports if p.exists()]
    if not ports:
        return CheckResult(
            "serial", "fail", "a Nucleo is on USB but has no serial port (/dev/ttyACM*)",
            "unplug and plug it again; `dmesg | tail` shows what the kernel saw",
        )  # fmt: skip
    denied = _access(machine, ports, "dialout", "serial")
    if denied is not None:
        return denied
    seen = ", ".join(f"{b.usb} ({b.candidates[0]}...)" for b in on_usb) or "configured port"
    return CheckResult(
        "serial", "ok", f"{', '.join(machine.show(p) for p in ports)} usable; on USB: {seen}"
    )
