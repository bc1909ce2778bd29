"""``clawseed-edge init``: a commented config for the board found here, the workspace, secrets.

Non-interactive with flags (``--board``, ``--provider``, ``--model``, ``--gateway``, ``--yes``);
on a terminal it asks a few questions, each with the detected or default answer. Answers are
all gathered before anything is written, and the config is written to a temporary file that
replaces the target at once: Ctrl-C or end of input leaves nothing half-written.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["register"]

_SECRETS_TEMPLATE = """\
# API keys for remote providers, one NAME=value per line (this file stays mode 0600).
# ANTHROPIC_API_KEY=...
"""


def register(sub: Any) -> None:
    init = sub.add_parser(
        "init",
        help="write a starter config for this board in $CLAWSEED_HOME",
        description="Create $CLAWSEED_HOME (default ~/.clawseed-edge) with a commented "
        "config.toml for the board found here (a Raspberry Pi from /proc/device-tree/model, "
        "a Nucleo from its USB ids), a workspace with SOUL.md, and an empty secrets file "
        "readable only by you. On a terminal it asks; --yes takes every default.",
    )
    init.add_argument("--force", action="store_true", help="overwrite an existing config.toml")
    init.add_argument(
        "--board",
        default="auto",
        metavar="KIND",
        help="pi, nucleo, sim, auto (default: what is detected), or a board id (rpi5, "
        "nucleo-f411re ...)",
    )
    init.add_argument(
        "--provider",
        choices=("ollama", "anthropic", "openai", "demo"),
        help="the model server (default: ollama)",
    )
    init.add_argument("--model", help="the model (default: one that fits this board's RAM)")
    gateway = init.add_mutually_exclusive_group()
    gateway.add_argument(
        "--gateway", dest="gateway", action="store_true", default=None,
        help="host the gateway (phones, HTTP API) in `run`",
    )  # fmt: skip
    gateway.add_argument("--no-gateway", dest="gateway", action="store_false")
    init.add_argument(
        "--root",
        default="/",
        metavar="DIR",
        help="look for /proc, /sys and /dev under DIR (a copied tree; default /)",
    )
    init.add_argument(
        "--wiring",
        choices=("demo", "detected"),
        help="demo: keep the embedded default's devices and sensor (default on simulated "
        "pins); detected: start from what `hardware scan` finds (default on a board)",
    )
    init.add_argument(
        "--sim",
        action="store_true",
        help="look at the simulated hardware (a BME280 on I2C bus 1, a virtual Nucleo) instead "
        "of this machine's buses",
    )
    init.add_argument(
        "-y", "--yes", action="store_true", help="ask nothing: take the flags and the defaults"
    )
    init.set_defaults(func=_init)


def _init(args: argparse.Namespace) -> int:
    from clawseed_edge.agent.prompt import ensure_workspace
    from clawseed_edge.config.init_text import starter_config
    from clawseed_edge.config.paths import clawseed_home

    home = clawseed_home()
    config_path = (args.config and os.path.expanduser(args.config)) or str(home / "config.toml")
    # The user's own config (before --force replaces it) may have a Pi camera.
    camera_note = _picamera_note(Path(args.root), Path(config_path))
    if os.path.exists(config_path) and not args.force:
        print(
            f"error: {config_path} exists; edit it, or pass --force to replace it",
            file=sys.stderr,
        )
        if camera_note:
            print(f"note: {camera_note}", file=sys.stderr)
        return 1
    interactive = not args.yes and sys.stdin.isatty()
    try:
        choices = _choices(args, ask=_ask if interactive else None)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (EOFError, KeyboardInterrupt):
        print("\ninit: stopped; nothing was written", file=sys.stderr)
        return 130
    text = starter_config(choices)
    home.mkdir(parents=True, exist_ok=True)
    os.chmod(home, 0o700)
    _write_atomically(Path(config_path), text)
    secrets = home / "secrets"
    if not secrets.exists():
        fd = os.open(secrets, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(_SECRETS_TEMPLATE)
    ensure_workspace(home / "workspace")
    print(f"wrote {config_path}:")
    for line in _summary(Path(config_path), choices):
        print(f"  {line}")
    if choices.detected:
        print(f"board:     {choices.detected}")
    print(f"workspace: {home / 'workspace'} (edit SOUL.md to give the agent its character)")
    print(f"secrets:   {secrets} (mode 600)")
    for line in _next_steps(choices):
        print(line)
    if camera_note:
        print(f"note: {camera_note}")
    return 0


def _picamera_note(root: Path, config: Path) -> str | None:
    """What to say about picamera2 and this venv (:func:`picamera_venv_note`): for a
    ``source = "picamera"`` camera in the existing config, or a system that has picamera2."""
    from clawseed_edge.config.doctor_camera import picamera_venv_note
    from clawseed_edge.config.doctor_machine import Machine

    return picamera_venv_note(Machine(root=root), wanted=_wants_picamera(config))


def _wants_picamera(config: Path) -> bool:
    """Whether the config at ``config`` has a ``source = "picamera"`` camera (False when there
    is no such file or it does not parse: init's own config has no camera)."""
    import tomllib

    try:
        with config.open("rb") as f:
            data = tomllib.loads(f.read(1_000_000).decode("utf-8", errors="replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return False
    cameras = data.get("cameras")
    return isinstance(cameras, list) and any(
        isinstance(c, dict) and c.get("source") == "picamera" for c in cameras
    )


def _summary(path: Path, choices: Any) -> list[str]:
    """What the written config holds, read back with the real loader (one line per part)."""
    from clawseed_edge.config.file import load_config

    config = load_config(path).config
    board = config.hardware.board or "none"
    lines = [f"board:     {board}" + (" (simulated pins)" if board == "sim" else "")]
    devices = ", ".join(d.name for d in config.devices)
    origin = " (the demo wiring)" if choices.demo_wiring else ""
    lines.append(f"devices:   {devices + origin if devices else 'none yet (docs/hardware.md)'}")
    sensors = [f"{s.name} ({s.driver})" for s in [*config.sensors, *config.displays]]
    lines.append(f"sensors:   {', '.join(sensors) or 'none'}")
    if config.peripherals:
        boards = ", ".join(f"{p['name']} ({p.get('board', p['type'])})" for p in config.peripherals)
        lines.append(f"boards:    {boards}")
    model = config.provider.name + (f"/{config.provider.model}" if config.provider.model else "")
    lines.append(f"model:     {model}")
    lines.append(f"autonomy:  {config.autonomy.level}")
    lines.append(f"gateway:   {'on' if config.gateway.enabled else 'off'}")
    return lines


def _next_steps(choices: Any) -> list[str]:
    steps = []
    if choices.provider == "ollama":
        steps.append(f"next: `ollama pull {choices.model}` for the model")
    elif choices.provider in ("anthropic", "openai"):
        env = "ANTHROPIC_API_KEY" if choices.provider == "anthropic" else "OPENAI_API_KEY"
        steps.append(f"next: `clawseed-edge secrets set {env}` for the key")
    if choices.board_kind == "sim":
        steps.append("next: `clawseed-edge chat --sim` to try it on simulated pins")
    else:
        steps.append("next: `clawseed-edge doctor` checks groups, devices and the model server")
    return steps


def _ask(question: str, default: str, allowed: tuple[str, ...] = ()) -> str:
    """One question on the terminal; Enter takes the default. EOF/Ctrl-C propagate."""
    hint = f" [{'/'.join(allowed)}]" if allowed else ""
    while True:
        answer = input(f"{question}{hint} ({default}): ").strip() or default
        if not allowed or answer in allowed:
            return answer
        print(f"  please answer one of: {', '.join(allowed)}", file=sys.stderr)


Ask = Callable[..., str]


def _choices(args: argparse.Namespace, *, ask: Ask | None) -> Any:
    """The choices from the flags, the detection and (on a terminal) the answers.

    Raises:
        ValueError: an unknown ``--board`` (names the known ones).
    """
    from clawseed_edge.config.init_text import PROVIDERS, InitChoices, default_model
    from clawseed_edge.peripherals.boards import default_registry
    from clawseed_edge.peripherals.detect import detect_boards

    registry = default_registry()
    found = detect_boards(Path(args.root), registry)
    kind, board_id, others, detected = _board_from(args.board, found, registry)
    # A Pi with a Nucleo on its USB (the usual bench): both go into the config.
    nucleo = found.usb[0] if found.usb else None
    if ask is not None and args.board == "auto":
        kind = ask("board", kind, ("pi", "nucleo", "sim"))
        if kind != _board_from("auto", found, registry)[0]:
            kind, board_id, others, detected = _board_from(kind, found, registry)
    wiring = args.wiring or ("demo" if kind == "sim" else "detected")
    if ask is not None and args.wiring is None and kind != "nucleo":
        wiring = ask(
            "wiring: keep the demo's, or start from the detected hardware",
            wiring,
            ("demo", "detected"),
        )
    provider = args.provider or "ollama"
    if ask is not None and args.provider is None:
        provider = ask("model server", provider, PROVIDERS)
    model = args.model or default_model(provider, found.memory_mb if found.is_pi else None)
    if ask is not None and args.model is None and provider != "demo":
        model = ask("model", model)
    gateway = bool(args.gateway)
    if ask is not None and args.gateway is None:
        gateway = ask("host the gateway for a phone", "no", ("yes", "no")) == "yes"
    beside = nucleo if kind == "pi" and found.pi is not None else None
    if beside is not None:
        others = beside.candidates[1:]
        detected += f"; {beside.product or 'ST-LINK'} {beside.usb} on USB {beside.sysfs_name}"
    nucleo_id = beside.candidates[0] if beside is not None else None
    found_text, virtual = _scan(args, demo=wiring == "demo" and kind != "nucleo")
    if virtual and nucleo_id is None and kind in ("pi", "sim"):
        nucleo_id = virtual
    return InitChoices(
        board_kind=kind,
        board_id=board_id,
        provider=provider,
        model=model,
        gateway=gateway,
        detected=detected,
        other_boards=others,
        nucleo_id=nucleo_id,
        demo_wiring=wiring == "demo" and kind != "nucleo",
        found=found_text,
    )


def _scan(args: argparse.Namespace, *, demo: bool) -> tuple[str, str | None]:
    """(The sensor and display tables for what a scan finds, the virtual Nucleo's board id
    with ``--sim``). With the demo wiring, a chip at the demo sensor's address is that sensor."""
    import asyncio

    from clawseed_edge.config.init_text import DEMO_SENSOR_ADDRESSES
    from clawseed_edge.peripherals.scan import proposal_toml, scan_machine, simulated_buses

    buses = simulated_buses() if args.sim else None
    report = asyncio.run(scan_machine(Path(args.root), buses=buses, sim=args.sim))
    chips = [
        f
        for f in report.findings
        if f.table in ("sensors", "displays")
        and not (demo and (f.bus, f.address) in DEMO_SENSOR_ADDRESSES)
    ]
    for f in report.findings:
        if f.table:
            kept = f in chips or f.table == "peripherals"
            print(f"found: {f.where}: {f.what}" + ("" if kept else " (the demo's sensor)"))
    taken = ("greenhouse", "red_led", "lamp", "fan", "door", "doorbell") if demo else ()
    virtual = next((f.board for f in report.findings if f.where.startswith("virtual")), None)
    return proposal_toml(chips, taken=taken), virtual


def _board_from(wanted: str, found: Any, registry: Any) -> tuple[Any, str, tuple[str, ...], str]:
    """(kind, board id, other candidate ids, what was detected) for ``--board``.

    Raises:
        ValueError: ``wanted`` is neither a kind nor a known board id, or ``pi`` was asked for
            on a machine that is not a Pi we know.
    """
    if wanted not in ("auto", "pi", "nucleo", "sim"):
        if wanted not in registry:
            raise ValueError(
                f"--board {wanted!r}: expected pi, nucleo, sim, auto or a board id "
                f"({', '.join(registry.ids())})"
            )
        spec = registry.get(wanted)
        kind = "nucleo" if spec.family == "mcu" else spec.family
        return kind, spec.id, (), ""
    nucleo = found.usb[0] if found.usb else None
    if wanted == "auto":
        wanted = "pi" if found.pi is not None else "nucleo" if nucleo is not None else "sim"
    if wanted == "pi":
        if found.pi is None:
            what = f"'{found.model}' has no board file" if found.model else "this is not a Pi"
            raise ValueError(
                f"--board pi: {what}; pass a board id (rpi4b, rpi5, rpizero2w ...) or sim"
            )
        return "pi", found.pi.id, (), f"{found.model} ({found.pi.id})"
    if wanted == "nucleo":
        if nucleo is None:
            return "nucleo", "nucleo-f401re", (), "no Nucleo on USB: written for a NUCLEO-F401RE"
        first, *rest = nucleo.candidates
        seen = f"{nucleo.product or 'ST-LINK'} {nucleo.usb} on USB {nucleo.sysfs_name}"
        return "nucleo", first, tuple(rest), seen
    return "sim", "sim", (), ""


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` (mode 0600), then rename it over."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    # Named after the file (".config.toml.XXXX"): the forbidden-path rule covers it too.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
