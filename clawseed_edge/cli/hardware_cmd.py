"""``clawseed-edge hardware status`` and ``clawseed-edge estop``.

Until the config layer lands, the wiring comes from ``--devices-toml PATH`` (``[[devices]]`` and
an optional ``[hardware]``); without it: the ``sim`` board with no devices. The handler logic is
in :func:`hardware_status` and :func:`estop`, which take an already-loaded HardwareConfig.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from clawseed_edge.peripherals.gpio import HardwareConfig


def register(subparsers: Any) -> None:
    """Add the ``hardware`` group and the top-level ``estop`` command."""
    parser = subparsers.add_parser("hardware", help="show the wired devices and their state")
    sub = parser.add_subparsers(dest="hardware_command", metavar="SUBCOMMAND")
    p_status = sub.add_parser("status", help="the wiring, and with --sim the simulated pin states")
    _common(p_status)
    p_status.add_argument("--json", action="store_true", help="print JSON")
    p_status.set_defaults(func=_status)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])

    p_estop = subparsers.add_parser(
        "estop", help="drive every output to its safe value (emergency stop)"
    )
    _common(p_estop)
    p_estop.add_argument(
        "--pid",
        type=int,
        metavar="PID",
        help="signal a running clawseed-edge (SIGUSR1) to apply its safe state instead",
    )
    p_estop.set_defaults(func=_estop)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sim", action="store_true", help="use simulated (mock) pins")
    parser.add_argument(
        "--devices-toml",
        metavar="PATH",
        help="a TOML file with [[devices]] and an optional [hardware] table "
        "(default: the config file's)",
    )


def _load(args: argparse.Namespace) -> tuple[HardwareConfig, str] | None:
    """The wiring: ``--devices-toml`` if given, else ``[hardware]``/``[[devices]]`` of the
    config file (``--config``, ``$CLAWSEED_HOME/config.toml`` or the embedded default)."""
    from clawseed_edge.api import ConfigError
    from clawseed_edge.config.file import load_config
    from clawseed_edge.peripherals.gpio import load_hardware_toml

    try:
        if args.devices_toml:
            return load_hardware_toml(args.devices_toml), args.devices_toml
        loaded = load_config(getattr(args, "config", None))
        return loaded.config.hardware_with_devices(), loaded.source
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def _status(args: argparse.Namespace) -> int:
    loaded = _load(args)
    if loaded is None:
        return 2
    code = hardware_status(loaded[0], sim=args.sim, as_json=args.json, source=loaded[1])
    if code == 0 and not args.devices_toml and not args.json:
        code = sensor_status(getattr(args, "config", None), sim=args.sim)
    return code


def sensor_status(config_path: str | None, *, sim: bool, out: TextIO | None = None) -> int:
    """Print every sensor bank of the config (``[[sensors]]`` and ``type = "sensors"`` tables);
    simulated ones (``--sim``, the sim board) are read now.

    Real buses are not touched: the running agent owns them and reads them itself.
    """
    from clawseed_edge.api import ClawseedError
    from clawseed_edge.config.file import load_config
    from clawseed_edge.config.hardware import build_peripherals
    from clawseed_edge.peripherals.sensors.bank import SensorBank

    out = out or sys.stdout
    try:
        loaded = load_config(config_path)
        peripherals = build_peripherals(loaded.config, loaded.source, sim=sim)
    except ClawseedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for bank in (p for p in peripherals if isinstance(p, SensorBank)):
        if not bank.is_sim:
            print(bank.describe(), file=out)
            print("(sensors are not read here: the buses belong to the running agent)", file=out)
            continue

        async def read_all(bank: SensorBank = bank) -> list[dict[str, Any]]:
            async with bank:
                return await bank.status(read=True)

        print(f"simulated sensors ({bank.name}):", file=out)
        for entry in asyncio.run(read_all()):
            reading = str(entry.get("reading", "")).removeprefix(f"{entry['device']}: ")
            shown = reading or entry.get("error") or " | ".join(entry.get("lines", []))
            print(f"  {entry['device']:<16} {entry['kind']:<8} {entry['where']}: {shown}", file=out)
    return 0


def _estop(args: argparse.Namespace) -> int:
    if args.pid is not None:
        return send_estop(args.pid)
    loaded = _load(args)
    if loaded is None:
        return 2
    return estop(loaded[0], sim=args.sim, source=loaded[1])


def _make(hardware: HardwareConfig, sim: bool, source: str) -> Any:
    from clawseed_edge.peripherals.gpio import PiGpio

    return PiGpio(hardware, sim=True if sim else None, source=source)


def hardware_status(
    hardware: HardwareConfig,
    *,
    sim: bool = False,
    as_json: bool = False,
    source: str = "config.toml",
    out: TextIO | None = None,
) -> int:
    """Print the wiring; with ``sim`` (or the ``sim`` board) also every simulated pin's state.

    On real hardware this does not claim any pin: a running agent owns them, and creating
    devices here would drive its outputs to their initial values. Returns the exit code.
    """
    from clawseed_edge.api import ClawseedError

    out = out or sys.stdout
    try:
        gpio = _make(hardware, sim, source)
    except ClawseedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    states: dict[str, dict[str, Any]] | None = None
    if gpio.sim:
        try:
            states = asyncio.run(_sim_states(gpio))
        except ClawseedError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    if as_json:
        doc = {
            "board": gpio.board_type,
            "sim": gpio.sim,
            "devices": [_wiring(d) for d in gpio.devices()],
            "pins": states,
        }
        print(json.dumps(doc, indent=2), file=out)
        return 0
    print(gpio.describe(), file=out)
    if states is None:
        print(
            "(live pin states are not read: the pins belong to the running agent; "
            "use --sim to see the simulated states)",
            file=out,
        )
        return 0
    print("simulated pins:" if states else "simulated pins: none", file=out)
    for pin, st in states.items():
        print(
            f"  {pin:<7} {st['device']:<16} {st['kind']:<11} {st['mode']:<7} "
            f"value={st['value']} level={st['level']}",
            file=out,
        )
    return 0


def _wiring(dev: Any) -> dict[str, Any]:
    cfg = dev.wired.config
    return {
        "name": cfg.name,
        "kind": cfg.kind,
        "pin": dev.pin_name,
        "header": dev.wired.pin.header,
        "safe": cfg.safe,
        "approval": cfg.approval,
        "max_switches_per_minute": cfg.max_switches_per_minute,
        "max_level": cfg.max_level,
    }


async def _sim_states(gpio: Any) -> dict[str, dict[str, Any]]:
    async with gpio:
        states: dict[str, dict[str, Any]] = gpio.pin_states()
        return states


def estop(
    hardware: HardwareConfig,
    *,
    sim: bool = False,
    source: str = "config.toml",
    out: TextIO | None = None,
) -> int:
    """Claim every configured output, drive it to its safe value, release; returns exit code.

    If a running agent holds the pins, this fails with "pin in use": then use ``--pid`` (the
    agent applies its safe state on SIGUSR1) or stop the service (SIGTERM applies it too).
    """
    from clawseed_edge.api import ClawseedError, PinInUse

    out = out or sys.stdout
    try:
        gpio = _make(hardware, sim, source)
    except ClawseedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    async def run() -> dict[str, dict[str, Any]]:
        await gpio.connect()
        try:
            await gpio.apply_safe_state()
            states: dict[str, dict[str, Any]] = gpio.pin_states()
            return states
        finally:
            await gpio.disconnect()

    try:
        states = asyncio.run(run())
    except ClawseedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if isinstance(exc, PinInUse):
            print(
                "If clawseed-edge is running it owns the pins: use `clawseed-edge estop --pid "
                "PID` or `systemctl stop clawseed-edge` (both apply the safe state).",
                file=sys.stderr,
            )
        return 1
    outputs = [d for d in gpio.devices() if d.is_output]
    for dev in outputs:
        st = states[dev.pin_name]
        print(
            f"{dev.name} ({dev.pin_name}): safe value {dev.wired.config.safe} applied "
            f"(level {st['level']})",
            file=out,
        )
    n = len(outputs)
    print(
        f"estop: {n} output{'' if n == 1 else 's'} on {gpio.board_type} in their safe state",
        file=out,
    )
    return 0


def send_estop(pid: int) -> int:
    """Send SIGUSR1 to a running clawseed-edge; returns the exit code."""
    import signal

    try:
        os.kill(pid, signal.SIGUSR1)
    except ProcessLookupError:
        print(f"error: no process {pid}", file=sys.stderr)
        return 1
    except PermissionError:
        print(
            f"error: not allowed to signal process {pid}; run as its user (or sudo)",
            file=sys.stderr,
        )
        return 1
    print(f"sent SIGUSR1 to {pid}: it applies its safe state and keeps running", file=sys.stderr)
    return 0
