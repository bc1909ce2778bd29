"""``clawseed-edge sim nucleo``: a virtual Nucleo running the real firmware behind a pty;
``clawseed-edge sim set SENSOR.QUANTITY VALUE``: what a simulated sensor of the running service
measures (over its control socket), to try filters, history and automations at the desk;
``clawseed-edge sim press DEVICE`` and ``sim set-input DEVICE VALUE``: a simulated button, door
contact or motion input of the running service, for hardware-in-the-loop tests of what follows
(Home Assistant's binary sensors, rules, automations).

The pty's path is the first line on stdout; after it, every pin change the firmware makes, as
it happens: ``[pin] PA8 (D7, door): 1``, ``[pin] PB4 (D5, lamp): pwm 1000 Hz, duty 25%``. The
labels are the pin's header and aliases, and the device wired to it in ``--config`` when one is
given (a ``nucleo`` peripheral on the same board).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clawseed_edge.peripherals.boards import BoardSpec
    from clawseed_edge.peripherals.serial.sim_machine import PinChange


def register(subparsers: Any) -> None:
    """Add the ``sim`` command group."""
    parser = subparsers.add_parser("sim", help="simulated boards and sensors, without hardware")
    sub = parser.add_subparsers(dest="sim_command", metavar="COMMAND")
    p_nucleo = sub.add_parser(
        "nucleo",
        help="a virtual Nucleo on a pseudo-terminal (prints its path on the first line)",
    )
    p_nucleo.add_argument(
        "--board", default="nucleo-f401re", metavar="ID", help="a Nucleo board id"
    )
    p_nucleo.add_argument(
        "--baud", type=int, default=None, help="emulate the wire at this rate (bits per second)"
    )
    p_nucleo.add_argument(
        "--adc",
        action="append",
        default=[],
        metavar="PIN=RAW",
        help="a raw 16-bit ADC reading for a pin (PA0=32768); repeatable",
    )
    p_nucleo.set_defaults(func=_nucleo)
    p_set = sub.add_parser(
        "set",
        help="set what a simulated sensor measures in the running service (control socket)",
    )
    p_set.add_argument("target", metavar="SENSOR.QUANTITY", help="e.g. greenhouse.temperature")
    p_set.add_argument("value", type=float, help="the value, in the quantity's unit")
    p_set.set_defaults(func=_set)
    p_press = sub.add_parser(
        "press",
        help="press a simulated button (or trigger any simulated input) of the running service",
    )
    p_press.add_argument("device", help="the input device's name, e.g. doorbell")
    p_press.add_argument(
        "--hold", type=float, default=0.2, metavar="S", help="seconds held active (default 0.2)"
    )
    p_press.set_defaults(func=_press)
    p_input = sub.add_parser(
        "set-input",
        help="hold a simulated input of the running service active or inactive",
    )
    p_input.add_argument("device", help="the input device's name, e.g. front_door")
    p_input.add_argument("value", help="1/on/active/pressed/open, or 0/off/inactive/released")
    p_input.set_defaults(func=_set_input)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def _set(args: argparse.Namespace) -> int:
    """``sim set greenhouse.temperature 31``: the running service's simulated sensor."""
    from .common import run_async

    async def main() -> int:
        from clawseed_edge.config.paths import clawseed_home
        from clawseed_edge.service import control_request, find_control_socket

        answer = await control_request(
            find_control_socket(clawseed_home()),
            "sim_set",
            timeout_s=10.0,
            target=args.target,
            value=args.value,
        )
        print(f"{answer['sensor']}.{answer['quantity']} = {answer['value']:g} (simulated)")
        return 0

    return run_async(args, main)


def _press(args: argparse.Namespace) -> int:
    """``sim press doorbell``: active for ``--hold`` seconds, then inactive again."""
    answer = _sim_input(args, device=args.device, press=True, hold_s=args.hold)
    if answer is None:
        return 1
    print(f"{answer['device']} pressed for {answer['pressed_s']:g} s (simulated)")
    return 0


def _set_input(args: argparse.Namespace) -> int:
    """``sim set-input front_door open``: the input stays so until set again."""
    answer = _sim_input(args, device=args.device, value=args.value)
    if answer is None:
        return 1
    state = {1.0: "active", 0.0: "inactive"}.get(answer["value"], "changing")
    print(f"{answer['device']} is {state} (simulated)")
    return 0


def _sim_input(args: argparse.Namespace, **request: Any) -> dict[str, Any] | None:
    from .common import run_async

    found: dict[str, Any] = {}

    async def main() -> int:
        from clawseed_edge.config.paths import clawseed_home
        from clawseed_edge.service import control_request, find_control_socket

        found.update(
            await control_request(
                find_control_socket(clawseed_home()), "sim_input", timeout_s=20.0, **request
            )
        )
        return 0

    return found if run_async(args, main) == 0 else None


def _nucleo(args: argparse.Namespace) -> int:
    from clawseed_edge.api import ClawseedError

    from .common import fail

    try:
        from clawseed_edge.peripherals.boards import default_registry
        from clawseed_edge.peripherals.serial.sim_machine import SimBoardState
        from clawseed_edge.peripherals.serial.virtual import VirtualBoard

        board = default_registry().get(args.board)
        if board.family != "mcu":
            return fail(
                f"{args.board} is not a Nucleo; pick one of the mcu boards in `boards list`"
            )
        state = SimBoardState(adc=_parse_adc(args.adc, board))
        labels = _labels(board, _config_devices(args, board.id))
        state.listeners.append(lambda change: _print_change(change, labels))
        virtual = VirtualBoard(board.id, baud=args.baud, state=state)
    except (ClawseedError, ValueError) as exc:
        return fail(str(exc), 2)
    virtual.start()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(virtual.path, flush=True)
    print(
        f"virtual {board.id} running the repository's firmware at {virtual.path}; Ctrl-C stops it",
        file=sys.stderr,
        flush=True,
    )
    try:
        while not stop.wait(0.5):
            if virtual.error is not None:
                return fail(f"the virtual board stopped: {virtual.error!r}")
    finally:
        virtual.close()
    return 0


def _parse_adc(items: list[str], board: Any) -> dict[str, int]:
    values: dict[str, int] = {}
    for item in items:
        pin, sep, raw = item.partition("=")
        if not sep or not raw.strip().isdigit() or not 0 <= int(raw) <= 65535:
            raise ValueError(f"--adc {item!r}: write PIN=RAW with RAW 0..65535 (PA0=32768)")
        # The firmware reads the ADC by canonical pin name: resolve labels (A0) and refuse a
        # pin it would refuse, with the board file's reason.
        spec = board.lookup(pin.strip())
        if not spec.can("adc"):
            why = spec.why_not("adc") or f"it has only {', '.join(spec.caps) or 'nothing'}"
            raise ValueError(f"--adc {item!r}: {spec.name} on {board.id} is not analog: {why}")
        values[spec.name] = int(raw)
    return values


def _config_devices(args: argparse.Namespace, board_id: str) -> dict[str, str]:
    """Pin (as written) -> device name, of the ``nucleo`` peripherals on ``board_id`` in the
    ``--config`` file (none without ``--config``)."""
    if not getattr(args, "config", None):
        return {}
    from clawseed_edge.config.file import load_config

    devices: dict[str, str] = {}
    for table in load_config(args.config).config.peripherals:
        if table.get("type") == "nucleo" and table.get("board") == board_id:
            for dev in table.get("devices") or ():
                if isinstance(dev, dict) and "pin" in dev and "name" in dev:
                    devices[str(dev["pin"])] = str(dev["name"])
    return devices


def _labels(board: BoardSpec, devices: dict[str, str]) -> dict[str, str]:
    """Canonical pin -> ``"D7, door"``: its header, its aliases, the device wired to it."""
    from clawseed_edge.api import PinInvalid, PinReserved

    names: dict[str, list[str]] = {}
    for pin in board.pins:
        names[pin.name] = [pin.header] if pin.header else []
    for alias, target in board.aliases.items():
        names.setdefault(target.upper(), []).append(alias.upper())
    for written, device in devices.items():
        try:
            names.setdefault(board.lookup(written).name, []).append(device)
        except (PinInvalid, PinReserved):
            continue  # the config's own check names a bad pin
    return {pin: ", ".join(parts) for pin, parts in names.items() if parts}


def _print_change(change: PinChange, labels: dict[str, str]) -> None:
    label = labels.get(change.pin)
    where = f"{change.pin} ({label})" if label else change.pin
    if change.freq is None:
        what = f"{change.level:g}"
    elif change.freq == 0:
        what = "pwm off"
    else:
        what = f"pwm {change.freq} Hz, duty {change.level * 100:g}%"
    print(f"[pin] {where}: {what}", flush=True)
