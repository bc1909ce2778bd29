"""The doctor's camera check: each configured camera present, usable and not held elsewhere.

Read-only like the other checks: nothing is opened. A Pi camera needs picamera2, a system
package of Raspberry Pi OS that a venv sees only when it was made with
``--system-site-packages``; a USB webcam needs its ``/dev/videoN`` usable (group ``video``)
and not open in another process; motion needs Pillow.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

from .doctor_hardware import _access
from .doctor_machine import CheckResult, DoctorContext, Machine

__all__ = ["check_camera"]

#: Processes looked at for a device held open (``/proc/<pid>/fd``).
MAX_PROCESSES = 4096


def _venv_sees_system_packages() -> bool | None:
    """Whether this venv includes the system's site-packages (None: not a venv)."""
    if sys.prefix == sys.base_prefix:
        return None
    cfg = Path(sys.prefix) / "pyvenv.cfg"
    try:
        text = cfg.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "include-system-site-packages":
            return value.strip().lower() == "true"
    return False


def _holders(machine: Machine, device: str) -> list[str]:
    """``pid (name)`` of the processes (readable to us) that have ``device`` open."""
    found: list[str] = []
    for proc in itertools.islice(machine.root.glob("proc/[0-9]*"), MAX_PROCESSES):
        if proc.name == str(os.getpid()):
            continue
        try:
            fds = list((proc / "fd").iterdir())[:1024]
        except OSError:
            continue  # another user's process: not readable without root
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target == device or target == str(machine.root / device.lstrip("/")):
                try:
                    name = (proc / "comm").read_text(encoding="utf-8").strip()
                except OSError:
                    name = "?"
                found.append(f"{proc.name} ({name})")
                break
    return found


def _picamera(ctx: DoctorContext, names: list[str]) -> CheckResult | None:
    if ctx.machine.has_module("picamera2"):
        return None
    sees = _venv_sees_system_packages()
    if sees is False:
        fix = (
            "this venv does not see the system's packages: install picamera2 with `sudo apt "
            "install python3-picamera2`, then recreate the venv with `python3 -m venv "
            "--system-site-packages` and reinstall clawseed-edge in it (docs/camera.md)"
        )
    else:
        fix = "sudo apt install python3-picamera2 (Raspberry Pi OS); see docs/camera.md"
    return CheckResult("camera", "fail", f"{', '.join(names)}: picamera2 is not importable", fix)


def check_camera(ctx: DoctorContext) -> CheckResult:
    """Cameras: picamera2 importable, V4L2 nodes present, usable and free, Pillow for motion."""
    cameras = list(ctx.loaded.config.cameras) if ctx.loaded is not None else []
    if not cameras:
        return CheckResult("camera", "skip", "no camera configured")
    machine = ctx.machine
    pi_cameras = [c.name for c in cameras if c.source == "picamera"]
    if pi_cameras:
        problem = _picamera(ctx, pi_cameras)
        if problem is not None:
            return problem
    webcams = [c for c in cameras if c.source.startswith("/dev/")]
    if webcams and not machine.has_module("linuxpy"):
        return CheckResult(
            "camera", "fail", f"{webcams[0].name}: linuxpy (the V4L2 backend) is not installed",
            "pip install 'clawseed-edge[camera]'",
        )  # fmt: skip
    for camera in webcams:
        node = machine.root / camera.source.lstrip("/")
        if not node.exists():
            return CheckResult(
                "camera", "fail", f"{camera.name}: {camera.source} does not exist",
                "plug the webcam in; `v4l2-ctl --list-devices` (package v4l-utils) lists the "
                "video devices",
            )  # fmt: skip
        denied = _access(machine, [node], "video", "camera")
        if denied is not None:
            return denied
        held = _holders(machine, camera.source)
        if held:
            return CheckResult(
                "camera", "fail", f"{camera.name}: {camera.source} is open in {', '.join(held)}",
                "stop that program (a webcam serves one reader at a time)",
            )  # fmt: skip
    if any(c.fps > 0 for c in cameras) and not machine.has_module("PIL"):
        return CheckResult(
            "camera", "fail", "motion is on (fps > 0) but Pillow is not installed",
            "pip install 'clawseed-edge[camera]'",
        )  # fmt: skip
    listed = ", ".join(f"{c.name} ({c.source})" for c in cameras)
    note = " (picamera2 from the system's packages)" if pi_cameras else ""
    return CheckResult("camera", "ok", f"{listed}{note}")
