"""system_info reads a fake /proc and /sys tree with the same code that reads a Pi's, and runs
on this machine without failing on what is missing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from clawseed_edge.api import RiskClass, ToolContext
from clawseed_edge.tools.system_info import SystemInfoTool, decode_throttled, read_system_info

CTX = ToolContext()
HAS_LOADAVG = os.path.exists("/proc/loadavg")
THROTTLED = "devices/platform/soc/soc:firmware/get_throttled"


def fake_pi(root: Path, *, temp_millideg: int = 48_312, throttled: str | None = "50005") -> Path:
    """A Raspberry Pi 4's /proc and /sys, as far as system_info reads them."""
    files = {
        "proc/device-tree/model": "Raspberry Pi 4 Model B Rev 1.4\x00",
        "proc/cpuinfo": "processor\t: 0\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B\n",
        "proc/loadavg": "0.52 0.38 0.30 1/123 4567\n",
        "proc/meminfo": "MemTotal:        3884376 kB\nMemFree:  100 kB\nMemAvailable:    2942108 kB\n",
        "proc/uptime": "93784.52 180000.00\n",
        "sys/class/thermal/thermal_zone0/temp": f"{temp_millideg}\n",
        "sys/class/thermal/thermal_zone0/type": "cpu-thermal\n",
    }
    if throttled is not None:
        files[f"sys/{THROTTLED}"] = f"{throttled}\n"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def tool_for(root: Path, **kwargs: object) -> SystemInfoTool:
    return SystemInfoTool(
        proc_root=root / "proc", sys_root=root / "sys", disk_paths=[root], **kwargs
    )


async def test_a_pi_that_is_under_powered_and_throttled(tmp_path: Path) -> None:
    result = await tool_for(fake_pi(tmp_path), vcgencmd=None).execute({}, CTX)
    assert result.success
    lines = result.output.splitlines()
    assert lines[0].startswith("Problem: it is under-powered right now")
    assert "it is throttled right now" in lines[0]
    out = result.output
    assert "Board: Raspberry Pi 4 Model B Rev 1.4" in out
    assert "Temperature (cpu-thermal): 48.3 °C" in out
    assert "Load average: 0.52 0.38 0.30" in out
    assert "Memory: 2.8 GiB available of 3.7 GiB" in out
    assert "Uptime: 1 d 2 h 3 min" in out
    assert "get_throttled=0x50005, from sysfs" in out
    for words in (
        "under-voltage now",
        "throttled now",
        "under-voltage has occurred since boot",
        "throttling has occurred since boot",
    ):
        assert words in out
    assert "soft temperature limit active now" not in out
    assert result.data["throttled"] == 0x50005


async def test_a_cool_pi_that_throttled_earlier(tmp_path: Path) -> None:
    result = await tool_for(fake_pi(tmp_path, throttled="50000"), vcgencmd=None).execute({}, CTX)
    first = result.output.splitlines()[0]
    assert first == (
        "Not now, but earlier: CPU temperature 48.3 °C is fine (throttling starts at 80 °C), "
        "under-voltage has occurred since boot; throttling has occurred since boot (the power "
        "supply or cooling may be marginal)."
    )


async def test_a_healthy_pi(tmp_path: Path) -> None:
    result = await tool_for(fake_pi(tmp_path, throttled="0"), vcgencmd=None).execute({}, CTX)
    assert result.output.splitlines()[0] == (
        "OK: CPU temperature 48.3 °C is fine (throttling starts at 80 °C), no throttling or "
        "under-voltage since boot."
    )


async def test_a_hot_pi_is_a_problem(tmp_path: Path) -> None:
    root = fake_pi(tmp_path, temp_millideg=82_100, throttled="0")
    result = await tool_for(root, vcgencmd=None).execute({}, CTX)
    assert "the CPU is at 82.1 °C, at or above the 80 °C throttling point" in result.output
    assert "Throttling (get_throttled=0x0, from sysfs): none" in result.output


async def test_vcgencmd_is_asked_when_the_sysfs_file_is_missing(tmp_path: Path) -> None:
    root = fake_pi(tmp_path / "tree", throttled=None)
    program = tmp_path / "vcgencmd"
    program.write_text("#!/bin/sh\necho throttled=0x80008\n", encoding="utf-8")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    info = await read_system_info(
        proc_root=root / "proc", sys_root=root / "sys", disk_paths=[], vcgencmd=str(program)
    )
    assert info["throttled"] == 0x80008 and info["throttled_source"] == "vcgencmd"
    assert info["throttled_flags"] == [
        "soft temperature limit active now",
        "soft temperature limit has occurred since boot",
    ]


async def test_an_empty_tree_reports_what_it_can(tmp_path: Path) -> None:
    result = await tool_for(tmp_path, vcgencmd=None).execute({}, CTX)
    assert result.success
    assert result.output.splitlines()[0] == (
        "No temperature or throttling information on this device."
    )
    assert "Board: unknown" in result.output and "Throttling: not reported" in result.output


async def test_garbage_files_are_skipped(tmp_path: Path) -> None:
    root = fake_pi(tmp_path, throttled="not hex")
    (root / "proc/loadavg").write_text("x y z\n", encoding="utf-8")
    (root / "sys/class/thermal/thermal_zone0/temp").write_text("hot\n", encoding="utf-8")
    info = await read_system_info(proc_root=root / "proc", sys_root=root / "sys", vcgencmd=None)
    assert "load" not in info and "temperatures" not in info and "throttled" not in info
    assert info["board"].startswith("Raspberry Pi 4")


async def test_on_this_machine() -> None:
    # Whatever this machine has or lacks (no device tree, no thermal zone, no vcgencmd), the
    # tool answers; load, memory, disk and uptime exist on every Linux.
    result = await SystemInfoTool().execute({}, CTX)
    assert result.success
    assert "Memory:" in result.output and "Disk /:" in result.output
    if HAS_LOADAVG:
        assert "Load average:" in result.output


@pytest.mark.parametrize(
    ("value", "count"), [(0, 0), (0x1, 1), (0xF000F, 8), (0x10000, 1), (0x20, 0)]
)
def test_decode_throttled(value: int, count: int) -> None:
    assert len(decode_throttled(value)) == count


def test_risk_is_read() -> None:
    assert SystemInfoTool.risk is RiskClass.READ
