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


def _marker_env(system: str, machine: str) -> dict[str, str]:
    return {"sys_platform": system, "platform_machine": machine, "platform_system": system.title()}


def test_a_plain_install_on_a_pi_brings_lgpio_and_a_laptop_install_does_not() -> None:
    # gpiozero drives a Pi 5 (and Bookworm Pis) through lgpio; its wheels exist for 64- and
    # 32-bit Pi OS only, so the marker must select exactly those.
    req = _requirement("lgpio")
    assert req.marker is not None
    assert req.marker.evaluate(_marker_env("linux", "aarch64"))
    assert req.marker.evaluate(_marker_env("linux", "armv7l"))
    assert not req.marker.evaluate(_marker_env("linux", "x86_64"))
    assert not req.marker.evaluate(_marker_env("darwin", "arm64"))
    assert req.specifier.contains("0.2.2.0")


def test_the_pi_extra_still_names_lgpio() -> None:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    names = [Requirement(r).name for r in data["project"]["optional-dependencies"]["pi"]]
    assert names == ["lgpio"]
