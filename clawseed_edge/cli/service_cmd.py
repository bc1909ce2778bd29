"""``clawseed-edge service install|uninstall|status``: run clawseed-edge under systemd.

``install`` (as root) creates the ``clawseed`` system user in the gpio, i2c and dialout groups,
writes ``/etc/systemd/system/clawseed-edge.service`` with this venv's ``clawseed-edge``, the
udev rule for the Nucleo boards' ST-LINK, ``/var/lib/clawseed-edge/config.toml`` if missing,
and enables the unit (``--now`` starts it too). ``--root DIR`` writes the files under DIR and
only prints the system commands. ``status`` shows systemd's view and asks the running service
over its control socket. See docs/service.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from .common import described, fail

__all__ = ["register"]


def register(sub: Any) -> None:
    service = sub.add_parser(
        "service",
        help="install, remove or inspect the systemd service",
        description=described(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = service.add_subparsers(dest="service_command", metavar="ACTION")
    p_install = actions.add_parser("install", help="create the user, write the unit, enable it")
    p_install.add_argument("--now", action="store_true", help="start it as well")
    p_install.add_argument("--no-enable", action="store_true", help="write the files only")
    p_install.add_argument("--user", default="clawseed", help="system user (default clawseed)")
    p_install.add_argument(
        "--gateway",
        action="store_true",
        help="a new config hosts the gateway on the network (the phone web app; each phone "
        "pairs with a code from `sudo clawseed-edge pair`)",
    )
    _root_option(p_install)
    p_install.add_argument(
        "--byte-compile",
        action="store_true",
        help="with --root: byte-compile this venv too (when the image is built from it); "
        "a live install always does",
    )
    p_install.set_defaults(func=_install)
    p_uninstall = actions.add_parser("uninstall", help="stop, disable and remove the unit")
    _root_option(p_uninstall)
    p_uninstall.set_defaults(func=_uninstall)
    p_status = actions.add_parser("status", help="systemd's state and the service's own")
    p_status.add_argument("--json", action="store_true", help="print JSON")
    p_status.set_defaults(func=_status)
    service.set_defaults(func=lambda args: (service.print_help(), 2)[1])


def _root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        metavar="DIR",
        type=Path,
        default=Path("/"),
        help="write the files under DIR and print the system commands instead of running "
        "them (for tests and images)",
    )


def _install(args: argparse.Namespace) -> int:
    from clawseed_edge.service.install import ServiceInstallError, install

    try:
        lines = install(
            args.root,
            user=args.user,
            enable=not args.no_enable,
            now=args.now,
            init_args=["--gateway"] if args.gateway else [],
            byte_compile=True if args.byte_compile else None,
        )
    except ServiceInstallError as exc:
        return fail(str(exc))
    print("\n".join(lines))
    return 0


def _uninstall(args: argparse.Namespace) -> int:
    from clawseed_edge.service.install import ServiceInstallError, uninstall

    try:
        lines = uninstall(args.root)
    except ServiceInstallError as exc:
        return fail(str(exc))
    print("\n".join(lines))
    return 0


def systemd_state(unit: str) -> dict[str, str]:
    """``systemctl show`` of the unit's state; ``{"error": ...}`` where systemd cannot say."""
    if shutil.which("systemctl") is None:
        return {"error": "systemctl not found (not a systemd system)"}
    props = "LoadState,ActiveState,SubState,MainPID,StatusText,NRestarts,Result"
    try:
        done = subprocess.run(
            ["systemctl", "show", unit, f"--property={props}"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"systemctl show failed: {exc}"}
    if done.returncode != 0:
        return {"error": (done.stderr.strip() or f"systemctl exit {done.returncode}")[:300]}
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


def _status(args: argparse.Namespace) -> int:
    import asyncio

    from clawseed_edge.config.paths import clawseed_home
    from clawseed_edge.service import ControlError, control_request, find_control_socket
    from clawseed_edge.service.unit import UNIT_NAME

    state = systemd_state(UNIT_NAME)
    path = find_control_socket(clawseed_home())
    try:
        answer: dict[str, Any] = asyncio.run(control_request(path, "status", timeout_s=5.0))
        answer.pop("ok", None)
    except ControlError as exc:
        answer = {"error": str(exc)}
    if args.json:
        print(json.dumps({"systemd": state, "service": answer}, indent=2))
    else:
        if "error" in state:
            print(f"systemd: {state['error']}")
        else:
            print(
                f"systemd: {state.get('ActiveState', '?')} ({state.get('SubState', '?')}), "
                f"pid {state.get('MainPID', '?')}, restarts {state.get('NRestarts', '?')}"
            )
            if state.get("StatusText"):
                print(f"  status: {state['StatusText']}")
        if "error" in answer:
            print(f"service: {answer['error']}")
        else:
            print(f"service: {answer.get('summary', '')}")
    return 0 if "error" not in answer else 1
