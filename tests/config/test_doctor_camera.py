"""The doctor's camera check on a fake machine tree."""

from __future__ import annotations

import os
from pathlib import Path

from clawseed_edge.config.doctor import make_context
from clawseed_edge.config.doctor_camera import check_camera
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
