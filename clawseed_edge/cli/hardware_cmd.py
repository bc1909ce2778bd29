"""``clawseed-edge hardware status`` and ``clawseed-edge estop`` (``hardware scan``: hardware_scan.py).

Both cover every configured peripheral: the Pi header of ``[hardware]`` + ``[[devices]]`` and
every ``[[peripherals]]`` table (built by :func:`clawseed_edge.config.hardware.build_peripherals`).
``--devices-toml PATH`` reads ``[[devices]]`` and an optional ``[hardware]`` from another file
instead. ``estop`` first asks a running service over its control socket (it owns the pins);
only when none answers does it open the pins itself. The handler logic is in :func:`hardware_status`, :func:`estop` and :func:`send_estop`.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from clawseed_edge.api import Peripheral
    from clawseed_edge.peripherals.gpio import HardwareConfig


def register(subparsers: Any) -> None:
    """Add the ``hardware`` group and the top-level ``estop`` command."""
    parser = subparsers.add_parser("hardware", help="show the wired devices and their state")
    sub = parser.add_subparsers(dest="hardware_command", metavar="SUBCOMMAND")
    p_status = sub.add_parser("status", help="the wiring, and with --sim the simulated pin states")
    _common(p_status)
    p_status.add_argument("--json", action="store_true", help="print JSON")
    p_status.add_argument(
        "--raw",
        action="store_true",
        help="the sensors' raw readings, before their filters (default: the filtered values)",
    )
    p_status.set_defaults(func=_status)
    from .hardware_scan import add_scan_parser

    add_scan_parser(sub)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])

    p_estop = subparsers.add_parser(
        "estop",
        help="drive every output to its safe value (emergency stop; asks the running "
        "service first, over its control socket)",
    )
    _common(p_estop)
    p_estop.add_argument(
        "--pid",
        type=int,
        metavar="PID",
        help="ask a running clawseed-edge (run, chat, agent) to apply its safe state instead "
        "(SIGUSR1); only a clawseed-edge process that announced its handler is signalled",
    )
    p_estop.add_argument(
        "--reset",
        action="store_true",
        help="release the latched emergency stop (a person only); switches nothing: every "
        "output stays at its safe level, jobs and automations run again",
    )
    p_estop.add_argument(
        "--no-latch",
        action="store_true",
        help="apply the safe state without latching the emergency stop (the systemd unit's "
        "ExecStopPost after a service stop)",
    )
    p_estop.set_defaults(func=_estop)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sim", action="store_true", help="use simulated (mock) pins")
    parser.add_argument(
        "--devices-toml",
        metavar="PATH",
        help="a TOML file with [[devices]] and an optional [hardware] table "
        "(default: the config file's [hardware], [[devices]] and [[peripherals]])",
    )


def _load(args: argparse.Namespace) -> tuple[list[Peripheral], str] | None:
    """The peripherals: the Pi header of ``--devices-toml`` if given, else every peripheral of
    the config file (``--config``, ``$CLAWSEED_HOME/config.toml`` or the embedded default)."""
    from clawseed_edge.api import ClawseedError
    from clawseed_edge.config.file import load_config
    from clawseed_edge.config.hardware import build_peripherals
    from clawseed_edge.peripherals.gpio import load_hardware_toml

    try:
        if args.devices_toml:
            hardware = load_hardware_toml(args.devices_toml)
            return [_pi(hardware, args.sim, args.devices_toml)], args.devices_toml
        loaded = load_config(getattr(args, "config", None))
        peripherals = build_peripherals(
            loaded.config, loaded.source, sim=args.sim, tables=loaded.peripheral_tables
        )
        if not peripherals:  # still say which board is configured, with no devices
            peripherals = [_pi(loaded.config.hardware_with_devices(), args.sim, loaded.source)]
        return peripherals, loaded.source
    except ClawseedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def _status(args: argparse.Namespace) -> int:
    if not args.devices_toml:
        answered = status_from_service(as_json=args.json, raw=args.raw)
        if answered is not None:
            return answered
        if not args.json:
            print(
                "no running service: the configured wiring"
                + (" and a fresh simulation's states" if args.sim else "")
                + " (a running service shows its live states)"
            )
            print(_stored_estop_line())
    loaded = _load(args)
    if loaded is None:
        return 2
    code = hardware_status(loaded[0], sim=args.sim, as_json=args.json, source=loaded[1])
    if code == 0 and not args.devices_toml and not args.json:
        code = sensor_status(getattr(args, "config", None), sim=args.sim)
    return code


def status_from_service(
    *, as_json: bool = False, out: TextIO | None = None, timeout_s: float = 5.0, raw: bool = False
) -> int | None:
    """Print the running service's live device states and latest sensor readings (over its
    control socket); None when no service listens (the caller shows the configuration)."""
    from clawseed_edge.config.paths import clawseed_home
    from clawseed_edge.service import ControlError, control_request, find_control_socket

    out = out or sys.stdout
    path = find_control_socket(clawseed_home())
    if not path.exists():
        return None
    try:
        answer = asyncio.run(
            control_request(
                path, "hardware_states", timeout_s=timeout_s, **({"raw": True} if raw else {})
            )
        )
    except ControlError as exc:
        cause = exc.__cause__
        if isinstance(cause, ConnectionRefusedError | FileNotFoundError):
            return None  # a socket left by a stopped service: nothing runs
        print(
            f"warning: the running service did not answer ({exc}); showing the configuration",
            file=sys.stderr,
        )
        return None
    if as_json:
        print(json.dumps({"source": "service", "socket": str(path), **answer}, indent=2), file=out)
        return 0
    print(f"live states from the running service ({path}):", file=out)
    print(estop_line(answer.get("estop") or {}), file=out)
    _print_live(answer, out)
    return 0


def _stored_estop_line() -> str:
    """The latch kept in state.db, for ``hardware status`` with no service running."""
    from clawseed_edge.config.paths import clawseed_home
    from clawseed_edge.state.latch import read_stored_latch

    try:
        state = read_stored_latch(clawseed_home() / "state.db")
    except Exception as exc:  # sqlite3.Error: say so rather than guess either way
        return f"  emergency stop: unknown (state.db cannot be read: {exc})"
    return estop_line(state.to_dict())


def estop_line(estop: dict[str, Any]) -> str:
    """``emergency stop: LATCHED since ... (why); reset: ...`` or ``emergency stop: not
    latched`` for ``status`` and ``hardware status``."""
    if not estop.get("latched"):
        return "  emergency stop: not latched"
    since = time.strftime("%H:%M:%S", time.localtime(float(estop.get("since") or 0)))
    return (
        f"  emergency stop: LATCHED since {since} ({estop.get('why')}); every output stays at "
        "its safe level until a person runs `clawseed-edge estop --reset`"
    )


def _print_live(answer: dict[str, Any], out: TextIO) -> None:
    from clawseed_edge.api import SensorReading
    from clawseed_edge.peripherals.wired.toolset import reading_line

    devices = answer.get("devices") or []
    several = len({d.get("peripheral") for d in devices}) > 1
    if not devices:
        print("  no devices are wired", file=out)
    for d in devices:
        where = f" ({d.get('peripheral')})" if several else ""
        print(
            f"  {d.get('device')}: {d.get('kind')} on {d.get('pin')}{where}, {_state(d)}", file=out
        )
    readings = answer.get("readings") or []
    if readings:
        kind = "raw readings, before the filters" if answer.get("raw") else "readings"
        print(f"sensors (latest {kind}, not read now):", file=out)
    now = float(answer.get("now") or time.time())
    for r in readings:
        reading = SensorReading(
            peripheral="",
            sensor=str(r.get("sensor")),
            values=r.get("values") or {},
            units=r.get("units") or {},
            time=float(r.get("time") or now),
            error=str(r.get("error") or ""),
        )
        print(f"  {reading_line(reading, now)}", file=out)
    if answer.get("left_off"):
        print(f"  ... and {answer['left_off']} more", file=out)


def _state(device: dict[str, Any]) -> str:
    value, mode = device.get("value"), device.get("mode")
    if value is None:
        return "unknown" if mode != "closed" else "closed"
    if "min" in device or mode == "pwm":
        return f"level {float(value):.2f}"
    if mode == "input":
        return "active" if value else "inactive"
    return "on" if value else "off"


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
        peripherals = build_peripherals(
            loaded.config, loaded.source, sim=sim, tables=loaded.peripheral_tables
        )
    except ClawseedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for bank in (p for p in peripherals if isinstance(p, SensorBank)):
        print(f"\n[{bank.name}]", file=out)
        if not bank.is_sim:
            print(bank.describe(), file=out)
            print("(sensors are not read here: the buses belong to the running agent)", file=out)
            continue

        async def read_all(bank: SensorBank = bank) -> list[dict[str, Any]]:
            async with bank:
                return await bank.status(read=True)

        print(bank.describe(), file=out)
        print("simulated readings:", file=out)
        for entry in asyncio.run(read_all()):
            reading = str(entry.get("reading", "")).removeprefix(f"{entry['device']}: ")
            shown = reading or entry.get("error") or " | ".join(entry.get("lines", []))
            print(f"  {entry['device']:<16} {entry['kind']:<8} {entry['where']}: {shown}", file=out)
    return 0


def _estop(args: argparse.Namespace) -> int:
    if args.reset:
        from .estop_reset import reset_estop

        return reset_estop()
    if args.pid is not None:
        return send_estop(args.pid)
    if args.devices_toml is None:
        answered = estop_running_service()
        if answered is not None:
            return answered
    loaded = _load(args)
    if loaded is None:
        return 2
    code = estop(loaded[0], sim=args.sim, source=loaded[1])
    if args.devices_toml is None and not args.sim and not args.no_latch:
        from clawseed_edge.config.paths import clawseed_home

        from .estop_reset import latch_offline

        latch_offline(clawseed_home(), "clawseed-edge estop (no service was running)")
    return code


def estop_running_service(out: TextIO | None = None, *, timeout_s: float = 5.0) -> int | None:
    """Ask the running service to estop over its control socket; None when none answers.

    The service owns the pins while it runs: it aborts its turns and applies the safe state
    itself (at once, no PID needed). None (no socket, or a stale one left by a killed service)
    means the caller opens the pins itself, as after ``systemctl stop`` or a watchdog kill.
    When the socket is there but does not answer within ``timeout_s`` (every descriptor taken,
    a stuck loop), the estop goes to the service as a signal (SIGUSR1, see :func:`send_estop`)
    to every clawseed-edge process that announced an estop handler under the same home.
    """
    from clawseed_edge.config.paths import clawseed_home
    from clawseed_edge.service import ControlError, control_request, find_control_socket

    out = out or sys.stdout
    path = find_control_socket(clawseed_home())
    try:
        answer = asyncio.run(control_request(path, "estop", timeout_s=timeout_s))
    except ControlError as exc:
        cause = exc.__cause__
        if isinstance(cause, OSError) and not isinstance(cause, TimeoutError):
            if not isinstance(cause, ConnectionRefusedError | FileNotFoundError):
                # Listening but not accepting (no descriptor left, a stuck loop): the signal
                # handler runs without the socket.
                return _estop_by_signal(path.parent, f"the control socket failed ({cause})")
            return None  # nothing listens there: no service holds the pins
        if isinstance(cause, TimeoutError):
            return _estop_by_signal(
                path.parent, f"the control socket did not answer in {timeout_s:g} s"
            )
        print(f"error: the running service did not confirm its estop: {exc}", file=sys.stderr)
        return 1
    failures = answer.get("failures") or []
    for line in failures:
        print(f"error: {line}", file=sys.stderr)
    if failures:
        print("estop: the running service did NOT bring every output to its safe state", file=out)
        return 1
    print(
        f"estop: the running service aborted its turns and applied its safe state ({path}); "
        "the stop holds until a person runs `clawseed-edge estop --reset`",
        file=out,
    )
    return 0


def _estop_by_signal(home: Path, why: str) -> int:
    """SIGUSR1 to each clawseed-edge process with an estop handshake under ``home``."""
    from clawseed_edge.peripherals import estop_handshake as hs

    pids = []
    for entry in sorted((home / "run").glob("estop-*.json")):
        number = entry.stem.removeprefix("estop-")
        if number.isdigit() and Path(f"/proc/{number}").exists():
            pids.append(int(number))
    if not pids:
        print(
            f"error: {why}, and no clawseed-edge process under {home} announced an estop "
            "handler to signal; stop the service (systemctl stop clawseed-edge) to apply its "
            "safe state",
            file=sys.stderr,
        )
        return 1
    print(f"estop: {why}; sending it as a signal instead", file=sys.stderr)
    worst = 0
    for pid in pids:
        if hs.read_handshake(pid, home) is None:
            continue
        worst = max(worst, send_estop(pid, home=home))
    return worst


def _pi(hardware: HardwareConfig, sim: bool, source: str) -> Any:
    from clawseed_edge.peripherals.gpio import PiGpio

    return PiGpio(hardware, sim=True if sim else None, source=source)


def _peripherals(wiring: Any, sim: bool, source: str) -> list[Any]:
    """A HardwareConfig becomes its one Pi header; a list of peripherals is used as it is."""
    from clawseed_edge.peripherals.gpio import HardwareConfig

    if isinstance(wiring, HardwareConfig):
        return [_pi(wiring, sim, source)]
    return list(wiring)


def _simulated(p: Any) -> bool:
    return bool(getattr(p, "sim", False))


def hardware_status(
    hardware: Any,
    *,
    sim: bool = False,
    as_json: bool = False,
    source: str = "config.toml",
    out: TextIO | None = None,
) -> int:
    """Print the wiring of every peripheral; for simulated ones also every pin's state.

    Args:
        hardware: A HardwareConfig (one Pi header) or the peripherals (unconnected).

    On real hardware this does not claim any pin: a running agent owns them, and creating
    devices here would drive its outputs to their initial values. Returns the exit code.
    """
    from clawseed_edge.api import ClawseedError

    out = out or sys.stdout
    try:
        peripherals = _peripherals(hardware, sim, source)
    except ClawseedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    docs: list[dict[str, Any]] = []
    for p in peripherals:
        states: dict[str, dict[str, Any]] | None = None
        if _simulated(p):
            try:
                states = asyncio.run(_sim_states(p))
            except ClawseedError as exc:
                print(f"error: {p.name}: {exc}", file=sys.stderr)
                return 1
        docs.append({"peripheral": p, "states": states})
    if as_json:
        doc = {
            "source": "config",  # status_from_service answers with "service"
            "peripherals": [_status_doc(d["peripheral"], d["states"]) for d in docs],
        }
        print(json.dumps(doc, indent=2), file=out)
        return 0
    from clawseed_edge.peripherals.sensors.bank import SensorBank

    # Sensor banks have no pins: `sensor_status` prints them with their readings.
    shown = [d for d in docs if not isinstance(d["peripheral"], SensorBank)]
    for i, d in enumerate(shown):
        if len(docs) > 1:
            print(("\n" if i else "") + f"[{d['peripheral'].name}]", file=out)
        _print_status(d["peripheral"], d["states"], out)
    return 0


def _status_doc(p: Any, states: dict[str, dict[str, Any]] | None) -> dict[str, Any]:
    devices = p.devices() if hasattr(p, "devices") else []
    return {
        "name": p.name,
        "board": p.board_type,
        "sim": _simulated(p),
        # GPIO devices carry their wiring; other peripherals describe themselves in text.
        "devices": [_wiring(d) for d in devices if hasattr(d, "wired")],
        "pins": states,
    }


def _print_status(p: Any, states: dict[str, dict[str, Any]] | None, out: TextIO) -> None:
    print(p.describe(), file=out)
    if states is None:
        print(
            "(live pin states are not read: the pins belong to the running agent; "
            "use --sim to see the simulated states)",
            file=out,
        )
        return
    print("simulated pins:" if states else "simulated pins: none", file=out)
    for pin, st in states.items():
        print(
            f"  {pin:<7} {st['device']:<16} {st['kind']:<11} {st['mode']:<7} "
            f"value={st['value']} level={st['level']}",
            file=out,
        )


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


async def _sim_states(p: Any) -> dict[str, dict[str, Any]]:
    await p.connect()
    try:
        if hasattr(p, "pin_states"):
            states: dict[str, dict[str, Any]] = p.pin_states()
            return states
        return {}
    finally:
        await p.disconnect()


def estop(
    hardware: Any,
    *,
    sim: bool = False,
    source: str = "config.toml",
    out: TextIO | None = None,
) -> int:
    """Open every configured peripheral at its safe values, apply them, release; exit code.

    Args:
        hardware: A HardwareConfig (one Pi header) or the peripherals (unconnected).

    GPIO outputs are created at their safe value (never at ``initial``), so nothing passes
    through a value that is not safe. Every peripheral is tried even when one fails. If a
    running agent holds the pins, this fails with "pin in use": then use ``--pid`` (``run``
    applies its safe state on SIGUSR1) or stop the service (SIGTERM applies it too).
    """
    from clawseed_edge.api import ClawseedError

    out = out or sys.stdout
    try:
        peripherals = _peripherals(hardware, sim, source)
    except ClawseedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results = asyncio.run(_estop_all(peripherals))
    outputs = 0
    failed = False
    for p, (states, error) in zip(peripherals, results, strict=True):
        if error is not None:
            failed = True
            _explain_failure(p, error)
            continue
        if states is None:
            print(f"{p.name} ({p.board_type}): safe state applied", file=out)
            continue
        for dev in (d for d in p.devices() if d.is_output):
            outputs += 1
            st = states[dev.pin_name]
            print(
                f"{dev.name} ({dev.pin_name}): safe value {dev.wired.config.safe} applied "
                f"(level {st['level']})",
                file=out,
            )
    if failed:
        print("estop: NOT every output is in its safe state (see the errors above)", file=out)
        return 1
    boards = ", ".join(dict.fromkeys(p.board_type for p in peripherals))
    plural = "" if outputs == 1 else "s"
    print(f"estop: {outputs} output{plural} on {boards} in their safe state", file=out)
    return 0


def _explain_failure(p: Any, error: Exception) -> None:
    from clawseed_edge.api import ClawseedError, PinInUse

    what = str(error) if isinstance(error, ClawseedError) else f"{type(error).__name__}: {error}"
    print(f"error: {p.name}: {what}", file=sys.stderr)
    if isinstance(error, PinInUse):
        print(
            "If clawseed-edge is running it owns the pins: use `clawseed-edge estop --pid "
            "PID` or `systemctl stop clawseed-edge` (both apply the safe state).",
            file=sys.stderr,
        )


async def _estop_all(
    peripherals: Sequence[Any],
) -> list[tuple[dict[str, dict[str, Any]] | None, Exception | None]]:
    results: list[tuple[dict[str, dict[str, Any]] | None, Exception | None]] = []
    for p in peripherals:
        try:
            if "at_safe" in inspect.signature(p.connect).parameters:
                # Pi headers and Nucleos: every output starts at its safe value, never initial.
                await p.connect(at_safe=True)
            else:
                await p.connect()
            try:
                await p.apply_safe_state()
                pin_states = getattr(p, "pin_states", None)
                states = pin_states() if pin_states and hasattr(p, "devices") else None
            finally:
                await p.disconnect()
            results.append((states, None))
        except Exception as exc:  # an estop tries every peripheral, whatever one of them raised
            results.append((None, exc))
    return results


def send_estop(
    pid: int,
    *,
    home: str | os.PathLike[str] | None = None,
    timeout_s: float = 5.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Ask process ``pid`` to apply its safe state (SIGUSR1) and report what it did.

    Only a clawseed-edge process (its command line) that wrote a matching estop handshake
    (:mod:`clawseed_edge.peripherals.estop_handshake`) is signalled: SIGUSR1 kills any process
    that does not handle it. Returns 0 only when the process confirmed its safe state within
    ``timeout_s`` seconds.
    """
    import signal

    from clawseed_edge.peripherals import estop_handshake as hs

    if not Path(f"/proc/{pid}").exists():
        print(f"error: no process {pid}", file=sys.stderr)
        return 1
    args = hs.process_cmdline(pid)
    if args is None:
        print(
            f"error: cannot read the command line of process {pid}; nothing was sent",
            file=sys.stderr,
        )
        return 1
    if not hs.is_clawseed_cmdline(args):
        shown = " ".join(args)[:80] or "a kernel thread"
        print(
            f"error: process {pid} ({shown}) is not clawseed-edge; nothing was sent "
            "(SIGUSR1 would have killed it). Give the pid of `clawseed-edge run`.",
            file=sys.stderr,
        )
        return 1
    record = hs.read_handshake(pid, home)
    if record is None or record.pid != pid or record.start != hs.process_start_time(pid):
        where = hs.handshake_path(pid, home)
        print(
            f"error: process {pid} is clawseed-edge but has not announced an estop handler "
            f"(no {where}); nothing was sent. It may hold no pins, be an older version, or "
            "run with another CLAWSEED_HOME (set the same one here); Ctrl-C or SIGTERM stops "
            "it with its safe state applied.",
            file=sys.stderr,
        )
        return 1
    try:
        os.kill(pid, signal.SIGUSR1)
    except ProcessLookupError:
        print(f"error: process {pid} exited before it was signalled", file=sys.stderr)
        return 1
    except PermissionError:
        print(
            f"error: not allowed to signal process {pid}; run as its user (or sudo)",
            file=sys.stderr,
        )
        return 1
    return _await_confirmation(pid, record.estops, home, timeout_s, sleep, clock)


def _await_confirmation(
    pid: int,
    before: int,
    home: str | os.PathLike[str] | None,
    timeout_s: float,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> int:
    from clawseed_edge.peripherals import estop_handshake as hs

    deadline = clock() + timeout_s
    while True:
        record = hs.read_handshake(pid, home)
        if record is not None and record.estops > before:
            if record.failures:
                for line in record.failures:
                    print(f"error: process {pid}: {line}", file=sys.stderr)
                print(
                    f"process {pid} did NOT bring every output to its safe state", file=sys.stderr
                )
                return 1
            print(f"process {pid} applied its safe state and keeps running", file=sys.stderr)
            return 0
        if not Path(f"/proc/{pid}").exists():
            print(
                f"error: process {pid} exited after SIGUSR1 without confirming its safe state; "
                "check the outputs (run `clawseed-edge estop` now that the pins are free)",
                file=sys.stderr,
            )
            return 1
        if clock() >= deadline:
            print(
                f"error: sent SIGUSR1 to {pid}, but it did not confirm its safe state within "
                f"{timeout_s:g} s; check its log (journalctl -u clawseed-edge)",
                file=sys.stderr,
            )
            return 1
        sleep(0.05)
