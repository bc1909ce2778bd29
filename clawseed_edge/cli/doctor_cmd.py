"""``clawseed-edge doctor``: check this machine and this config, and say how to fix each problem.

The checks live in :mod:`clawseed_edge.config.doctor` (and ``doctor_hardware``); the service
check is here, since it talks to a running service through its control socket (the service
layer is above config). Exit 0 when nothing failed (warnings allowed), 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

__all__ = ["register"]

_MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL", "skip": "skip"}
UNIT = "clawseed-edge"


def register(subparsers: Any) -> None:
    """Add the ``doctor`` command."""
    parser = subparsers.add_parser(
        "doctor",
        help="check GPIO, I2C, serial, the model server, memory, disk and the service",
        description="Check what the runtime needs on this machine (Python and packages, the "
        "board, GPIO/I2C/1-Wire/serial access and groups, the model server and model, the "
        "memory database, disk space, the service), each problem with its fix. Exit 1 when "
        "a check fails.",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object for scripts")
    parser.add_argument(
        "--root",
        default="/",
        metavar="DIR",
        help="look for /proc, /sys, /dev and /etc/group under DIR (a copied tree; default /)",
    )
    parser.set_defaults(func=_doctor)


def _doctor(args: argparse.Namespace) -> int:
    from clawseed_edge.config.doctor import Machine, default_checks, make_context, run_checks

    root = Path(args.root)
    machine = Machine(root=root) if args.root != "/" else Machine()
    ctx = make_context(getattr(args, "config", None), machine)
    checks = [*default_checks(), _broker_acl_check, _service_check(real_machine=args.root == "/")]
    results = asyncio.run(run_checks(ctx, checks))
    failed = [r for r in results if r.status == "fail"]
    warned = [r for r in results if r.status == "warn"]
    if args.json:
        print(json.dumps({"ok": not failed, "checks": [r.to_dict() for r in results]}, indent=2))
        return 1 if failed else 0
    width = max(len(r.name) for r in results)
    for r in results:
        print(f"{_MARK.get(r.status, r.status)}  {r.name:<{width}}  {r.summary}")
        if r.fix and r.status != "ok":
            print(f"{'':{width + 8}}fix: {r.fix}")
    if failed:
        print(f"\n{len(failed)} failed, {len(warned)} warning(s): fix the FAIL lines above")
    elif warned:
        print(f"\nno failures, {len(warned)} warning(s)")
    else:
        print("\nall checks passed")
    return 1 if failed else 0


async def _broker_acl_check(ctx: Any) -> Any:
    """What this node's broker account may publish (only with [mqtt] on; its own module)."""
    if ctx.loaded is None or not ctx.loaded.config.mqtt.enabled:
        return []
    from clawseed_edge.channels.mqtt.acl_check import check_broker_acl

    return await check_broker_acl(ctx)


def _service_check(*, real_machine: bool) -> Any:
    """The service's state: its control socket answers, and what systemd says of the unit."""
    from clawseed_edge.config.doctor import CheckResult, DoctorContext

    async def check_service(ctx: DoctorContext) -> CheckResult:
        from clawseed_edge.config.paths import clawseed_home
        from clawseed_edge.service.control import ControlError, control_path, control_request

        home = ctx.loaded.home if ctx.loaded is not None else clawseed_home()
        socket = control_path(home)
        unit = await _systemctl_state() if real_machine else None
        unit_text = f"; systemd unit {UNIT}: {unit}" if unit else ""
        if socket.exists():
            try:
                answer = await control_request(socket, "status", timeout_s=2.0)
            except ControlError:
                return CheckResult(
                    "service", "warn", f"{socket} exists but no service answers{unit_text}",
                    "a service that crashed leaves it; the next start replaces it",
                )  # fmt: skip
            return CheckResult("service", "ok", f"running: {answer.get('summary', '')}{unit_text}")
        if unit == "active":
            return CheckResult(
                "service", "ok", f"systemd unit {UNIT} is active (its home is not {home})"
            )
        if unit in ("failed", "activating"):
            return CheckResult(
                "service", "fail", f"systemd unit {UNIT} is {unit}",
                f"`journalctl -u {UNIT} -n 50` shows why",
            )  # fmt: skip
        return CheckResult(
            "service", "skip", f"no service running{unit_text}",
            "`sudo $(command -v clawseed-edge) service install` runs it at boot",
        )  # fmt: skip

    return check_service


async def _systemctl_state() -> str | None:
    """``systemctl is-active clawseed-edge`` (bounded), or None without systemctl."""
    systemctl = shutil.which("systemctl")
    if systemctl is None:
        return None
    try:
        process = await asyncio.create_subprocess_exec(
            systemctl, "is-active", UNIT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
    except OSError:
        return None
    from clawseed_edge.tools.subprocesses import communicate_within

    out = await communicate_within(process, 2.0)
    if out is None:
        return None
    state = out.decode(errors="replace").strip()[:40]
    # "inactive" also means "no such unit"; systemctl in a container without systemd says
    # "offline" or prints nothing.
    return state if state in ("active", "failed", "activating", "inactive") else None
