"""Dependency floors in pyproject.toml that protect users from known-broken releases."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _requirement(name: str) -> Requirement:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    for line in data["project"]["dependencies"]:
        req = Requirement(line)
        if req.name == name:
            return req
    raise AssertionError(f"{name} is not a dependency in {PYPROJECT}")


def test_gpiozero_floor_finds_the_pi5_header_on_gpiochip0() -> None:
    # 2.0 and 2.0.1 hard-code gpiochip4 on a Pi 5 (gone since kernel 6.6.45 renumbered the
    # header to gpiochip0); 2.0.1.post1/post2 look for /dev/gpiochip4 but lost `import os`,
    # so detection raises NameError and falls through to RPi.GPIO, which cannot drive a Pi 5.
    spec = _requirement("gpiozero").specifier
    for broken in ("2.0", "2.0.1", "2.0.1.post1", "2.0.1.post2"):
        assert not spec.contains(broken), f"gpiozero {broken} is admitted by {spec}"
    assert spec.contains("2.0.1.post3") and spec.contains("2.1")
