"""The doctor's camera check on a fake machine tree."""

from __future__ import annotations

import os
from pathlib import Path

from clawseed_edge.config.doctor import make_context
from clawseed_edge.config.doctor_camera import (
    SYSTEM_PICAMERA2,
    check_camera,
    picamera_venv_note,
    venv_sees_system_packages,
)
from clawseed_edge.config.doctor_machine import Machine


def context(tmp_path: Path, text: str, **machine: object):  # type: ignore[no-untyped-def]
    path = tmp_path / "config.toml"
    path.write_text('[provider]\nname = "demo"\n' + text, encoding="utf-8")
    root = tmp_path / "root"
    (root / "dev").mkdir(parents=True, exist_ok=True)
    machine.setdefault("has_module", lambda name: True)
    return make_context(path, Machine(root=root, user="pi", **machine))  # type: ignore[arg-type]


def test_no_camera_is_skipped(tmp_path: Path) -> None:
    assert check_camera(context(tmp_path, "")).status == "skip"


def test_a_pi_camera_without_picamera2_says_how_to_get_it(tmp_path: Path) -> None:
    ctx = context(
        tmp_path,
        '[[cameras]]\nname = "cam"\nsource = "picamera"\n',
        has_module=lambda name: name != "picamera2",
    )
    result = check_camera(ctx)
    assert result.status == "fail" and "picamera2 is not importable" in result.summary
    assert "python3-picamera2" in result.fix


def test_a_webcam_missing_unusable_held_or_fine(tmp_path: Path) -> None:
    text = '[[cameras]]\nname = "shed"\nsource = "/dev/video0"\n'
    ctx = context(tmp_path, text)
    result = check_camera(ctx)
    assert result.status == "fail" and "/dev/video0 does not exist" in result.summary
    node = tmp_path / "root" / "dev" / "video0"
    node.write_bytes(b"")
    ctx = context(tmp_path, text, usable=lambda p: False, groups=frozenset({"pi"}), is_root=False)
    result = check_camera(ctx)
    assert result.status == "fail" and "group video" in result.summary
    # Another process holds it: a fake /proc entry whose fd points at the node.
    proc = tmp_path / "root" / "proc" / "4242"
    (proc / "fd").mkdir(parents=True)
    (proc / "comm").write_text("motion\n")
    os.symlink("/dev/video0", proc / "fd" / "3")
    ctx = context(tmp_path, text, usable=lambda p: True)
    result = check_camera(ctx)
    assert result.status == "fail" and "4242 (motion)" in result.summary
    (proc / "fd" / "3").unlink()
    assert check_camera(context(tmp_path, text, usable=lambda p: True)).status == "ok"


def test_motion_needs_pillow(tmp_path: Path) -> None:
    ctx = context(
        tmp_path, '[[cameras]]\nname = "cam"\nfps = 1\n', has_module=lambda name: name != "PIL"
    )
    result = check_camera(ctx)
    assert result.status == "fail" and "Pillow" in result.summary


def fake_venv(tmp_path: Path, system_site_packages: bool | None) -> Path:
    """A venv's prefix whose pyvenv.cfg says (or, None, does not say) whether it sees the
    system's packages."""
    prefix = tmp_path / "venv"
    prefix.mkdir(parents=True, exist_ok=True)
    lines = ["home = /usr/bin", "version = 3.11.2"]
    if system_site_packages is not None:
        lines.append(f"include-system-site-packages = {str(system_site_packages).lower()}")
    (prefix / "pyvenv.cfg").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return prefix


def test_the_venv_flag_is_read_from_pyvenv_cfg(tmp_path: Path) -> None:
    base = tmp_path / "usr"
    assert venv_sees_system_packages(fake_venv(tmp_path, True), base) is True
    assert venv_sees_system_packages(fake_venv(tmp_path, False), base) is False
    assert venv_sees_system_packages(fake_venv(tmp_path, None), base) is False  # venv's default
    assert venv_sees_system_packages(base, base) is None  # the system's own Python


def test_init_note_for_picamera2_outside_the_venv(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    missing = Machine(root=root, user="pi", has_module=lambda name: name != "picamera2")
    base = tmp_path / "usr"
    closed, open_ = fake_venv(tmp_path / "a", False), fake_venv(tmp_path / "b", True)
    # Nothing on the system, nothing configured: nothing to say.
    assert picamera_venv_note(missing, wanted=False, prefix=closed, base_prefix=base) is None
    # A configured Pi camera and no picamera2 anywhere: install it (and recreate the venv).
    note = picamera_venv_note(missing, wanted=True, prefix=closed, base_prefix=base)
    assert note is not None and "sudo apt install -y python3-picamera2" in note
    assert f"python3 -m venv --system-site-packages {closed}" in note
    # Raspberry Pi OS's package is there, the venv does not see it: recreate the venv.
    (root / SYSTEM_PICAMERA2).mkdir(parents=True)
    note = picamera_venv_note(missing, wanted=False, prefix=closed, base_prefix=base)
    assert note is not None and "/usr/lib/python3/dist-packages/picamera2" in note
    assert f"python3 -m venv --system-site-packages {closed}" in note and "apt" not in note
    # A venv that sees the system's packages, or picamera2 importable: nothing to say.
    assert picamera_venv_note(missing, wanted=True, prefix=open_, base_prefix=base) is None
    present = Machine(root=root, user="pi", has_module=lambda name: True)
    assert picamera_venv_note(present, wanted=True, prefix=closed, base_prefix=base) is None
