"""The doctor's camera check: each configured camera present, usable and not held elsewhere.

Read-only like the other checks: nothing is opened. A Pi camera needs picamera2, a system
package of Raspberry Pi OS that a venv sees only when it was made with
``--system-site-packages``; a USB webcam needs its ``/dev/videoN`` usable (group ``video``)
and not open in another process; motion needs Pillow. :func:`picamera_venv_note` says the same
about picamera2 for ``init``.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

from .doctor_hardware import _access
from .doctor_machine import CheckResult, DoctorContext, Machine

__all__ = ["SYSTEM_PICAMERA2", "check_camera", "picamera_venv_note", "venv_sees_system_packages"]

#: Processes looked at for a device held open (``/proc/<pid>/fd``).
MAX_PROCESSES = 4096
#: Where Raspberry Pi OS's ``python3-picamera2`` puts the package (under the machine's root).
SYSTEM_PICAMERA2 = "usr/lib/python3/dist-packages/picamera2"


def venv_sees_system_packages(
    prefix: str | Path | None = None, base_prefix: str | Path | None = None
) -> bool | None:
    """Whether the venv at ``prefix`` (this one: ``sys.prefix``) includes the system's
    site-packages, from its ``pyvenv.cfg`` (None: not a venv, or no ``pyvenv.cfg``)."""
    prefix = Path(sys.prefix if prefix is None else prefix)
    base = Path(sys.base_prefix if base_prefix is None else base_prefix)
    if prefix == base:
        return None
    cfg = prefix / "pyvenv.cfg"
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


def _recreate(prefix: str) -> str:
    return (
        f"`python3 -m venv --system-site-packages {prefix}` (recreate it) and reinstall "
        "clawseed-edge in it"
    )


def picamera_venv_note(
    machine: Machine,
    *,
    wanted: bool,
    prefix: str | Path | None = None,
    base_prefix: str | Path | None = None,
) -> str | None:
    """What ``init`` says about picamera2, or None when there is nothing to say.

    Something to say when picamera2 is not importable here and either a camera wants it
    (``wanted``: a ``source = "picamera"`` camera in the user's config) or the system has it
    (Raspberry Pi OS's package under ``machine.root``) while this venv does not see the
    system's packages (its ``pyvenv.cfg`` lacks ``include-system-site-packages = true``).
    """
    if machine.has_module("picamera2"):
        return None
    system = (machine.root / SYSTEM_PICAMERA2).is_dir()
    sees = venv_sees_system_packages(prefix, base_prefix)
    venv = str(sys.prefix if prefix is None else prefix)
    if system and sees is False:
        return (
            f"picamera2 is installed for the system's Python (/{SYSTEM_PICAMERA2}) but this "
            f"venv ({venv}) does not see the system's packages, so Pi cameras (source = "
            f'"picamera") cannot be used from it: {_recreate(venv)} (docs/camera.md)'
        )
    if wanted and not system:
        fix = "`sudo apt install -y python3-picamera2` (Raspberry Pi OS)"
        if sees is False:
            fix += f", then {_recreate(venv)}"
        return (
            f'a camera has source = "picamera" but picamera2 is not installed: {fix} '
            "(docs/camera.md)"
        )
    return None


def _picamera(ctx: DoctorContext, names: list[str]) -> CheckResult | None:
    if ctx.machine.has_module("picamera2"):
        return None
    sees = venv_sees_system_packages()
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
