"""``system_info``: the board, CPU temperature, load, memory, disk, uptime and, on a Raspberry
Pi, whether it is (or was) throttled or under-powered, in plain words.

Everything is read from files under two roots, ``/proc`` and ``/sys`` by default: tests pass a
fake tree and run the same code as a Pi. A missing file is a missing line, never an error
(a laptop has no device-tree model, a container may have no thermal zone). On a Pi the
throttling flags come from the firmware's sysfs file
(``/sys/devices/platform/soc/soc:firmware/get_throttled``, a hexadecimal number), else from
``vcgencmd get_throttled`` when that program exists.

Throttling bits (Raspberry Pi firmware): 0 under-voltage now, 1 ARM frequency capped now,
2 throttled now, 3 soft temperature limit now; 16..19 the same "has occurred since boot".
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clawseed_edge.api import BaseTool, RiskClass, ToolContext, ToolResult

from .subprocesses import communicate_within

__all__ = [
    "THROTTLED_NOW_MASK",
    "SystemInfoTool",
    "decode_throttled",
    "format_system_info",
    "read_system_info",
    "read_throttled",
]

# A Pi starts to throttle at 80 °C (the soft limit can start at 60 on some models; bit 3 says).
THROTTLE_TEMPERATURE_C = 80.0
WARM_TEMPERATURE_C = 70.0
_MAX_READ = 65_536  # no file of interest here is larger; a fake or odd one is not read whole

_NOW = {
    0: "under-voltage now (the power supply is too weak)",
    1: "ARM frequency capped now",
    2: "throttled now",
    3: "soft temperature limit active now",
}
_SINCE = {
    16: "under-voltage has occurred since boot",
    17: "ARM frequency capping has occurred since boot",
    18: "throttling has occurred since boot",
    19: "soft temperature limit has occurred since boot",
}


def decode_throttled(value: int) -> list[str]:
    """The flags set in a ``get_throttled`` value, in words (empty: none)."""
    return [words for bit, words in {**_NOW, **_SINCE}.items() if value & (1 << bit)]


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as f:
            return f.read(_MAX_READ).decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return None


def _board_model(proc: Path, sys: Path) -> str | None:
    for path in (
        proc / "device-tree" / "model",
        sys / "firmware" / "devicetree" / "base" / "model",
    ):
        text = _read(path)
        if text and text.strip("\x00\n "):
            return text.strip("\x00\n ")
    return _cpuinfo(proc, ("Model",))  # a Pi's cpuinfo names the board too


def _cpuinfo(proc: Path, keys: Sequence[str]) -> str | None:
    lines = (_read(proc / "cpuinfo") or "").splitlines()
    for key in keys:
        for line in lines:
            name, _, value = line.partition(":")
            if name.strip() == key and value.strip():
                return value.strip()
    return None


def _temperatures(sys: Path) -> list[tuple[str, float]]:
    zones = sys / "class" / "thermal"
    found: list[tuple[str, float]] = []
    with contextlib.suppress(OSError):
        for zone in sorted(zones.glob("thermal_zone*"))[:16]:
            raw = (_read(zone / "temp") or "").strip()
            try:
                millideg = int(raw)
            except ValueError:
                continue
            kind = (_read(zone / "type") or zone.name).strip() or zone.name
            found.append((kind, millideg / 1000.0))
    return found


def _meminfo(proc: Path) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in (_read(proc / "meminfo") or "").splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            values[name.strip()] = int(parts[0]) * 1024  # kB
    return values


def _throttled_sysfs(sys: Path) -> int | None:
    raw = _read(sys / "devices" / "platform" / "soc" / "soc:firmware" / "get_throttled")
    if raw is None:
        return None
    try:
        return int(raw.strip(), 16)
    except ValueError:
        return None


async def _throttled_vcgencmd(program: str) -> int | None:
    """``vcgencmd get_throttled`` -> the value, or None (no program, an error, no answer)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            program,
            "get_throttled",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        return None
    out = await communicate_within(proc, 3.0)
    if out is None:
        return None
    _, _, value = out.decode("ascii", errors="replace").strip().partition("=")
    try:
        return int(value.strip(), 16) if proc.returncode == 0 else None
    except ValueError:
        return None


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover - the loop returns


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    days, minutes = divmod(minutes, 1440)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{days} d"] if days else []
    if days or hours:
        parts.append(f"{hours} h")
    parts.append(f"{minutes} min")
    return " ".join(parts)


#: The "now" bits of a ``get_throttled`` value (under-voltage, capped, throttled, soft limit).
THROTTLED_NOW_MASK = 0xF


async def read_throttled(
    *, sys_root: str | os.PathLike[str] = "/sys", vcgencmd: str | None = "vcgencmd"
) -> tuple[int | None, str]:
    """The Pi's ``get_throttled`` value and where it came from (``sysfs`` or ``vcgencmd``);
    ``(None, "")`` where the device cannot tell (not a Pi). Decode it with
    :func:`decode_throttled`; bits 0-3 (:data:`THROTTLED_NOW_MASK`) are "now"."""
    sys = Path(sys_root)
    throttled = _throttled_sysfs(sys)
    if throttled is not None:
        return throttled, "sysfs"
    if vcgencmd is not None and shutil.which(vcgencmd):
        throttled = await _throttled_vcgencmd(vcgencmd)
        if throttled is not None:
            return throttled, "vcgencmd"
    return None, ""


async def read_system_info(
    *,
    proc_root: str | os.PathLike[str] = "/proc",
    sys_root: str | os.PathLike[str] = "/sys",
    disk_paths: Sequence[str | os.PathLike[str]] = ("/",),
    vcgencmd: str | None = "vcgencmd",
) -> dict[str, Any]:
    """What ``system_info`` reports, as data (keys absent when the device cannot tell).

    Keys: ``board``, ``cpu``, ``temperatures`` (list of (zone type, °C)), ``load`` (1, 5, 15 min),
    ``cpus``, ``memory`` (total/available bytes), ``disks`` (path -> total/free bytes),
    ``uptime_s``, ``throttled`` (the raw value) with ``throttled_flags`` (words), and
    ``throttled_source``.

    Args:
        proc_root, sys_root: Where ``/proc`` and ``/sys`` are (a fake tree in tests).
        disk_paths: Filesystems to report (``statvfs``).
        vcgencmd: The program asked when the sysfs throttling file is missing (None: never).
    """
    # Read on the loop: procfs and sysfs files are served from kernel memory, a few per call.
    proc, sys = Path(proc_root), Path(sys_root)
    info: dict[str, Any] = {}
    board = _board_model(proc, sys)
    if board:
        info["board"] = board
    cpu = _cpuinfo(proc, ("model name", "Hardware"))
    if cpu:
        info["cpu"] = cpu
    temps = _temperatures(sys)
    if temps:
        info["temperatures"] = temps
    loadavg = (_read(proc / "loadavg") or "").split()
    with contextlib.suppress(ValueError):
        if len(loadavg) >= 3:
            info["load"] = tuple(float(x) for x in loadavg[:3])
    info["cpus"] = os.cpu_count() or 1
    mem = _meminfo(proc)
    if "MemTotal" in mem:
        info["memory"] = {
            "total": mem["MemTotal"],
            "available": mem.get("MemAvailable", mem.get("MemFree", 0)),
        }
    disks: dict[str, dict[str, int]] = {}
    for path in disk_paths:
        with contextlib.suppress(OSError):
            st = os.statvfs(path)
            disks[str(path)] = {
                "total": st.f_blocks * st.f_frsize,
                "free": st.f_bavail * st.f_frsize,
            }
    if disks:
        info["disks"] = disks
    uptime = (_read(proc / "uptime") or "").split()
    with contextlib.suppress(ValueError, IndexError):
        info["uptime_s"] = float(uptime[0])
    throttled, source = await read_throttled(sys_root=sys, vcgencmd=vcgencmd)
    if throttled is not None:
        info["throttled"] = throttled
        info["throttled_flags"] = decode_throttled(throttled)
        info["throttled_source"] = source
    return info


def _verdict(info: Mapping[str, Any]) -> str:
    """One line that answers "is it overheating / under-powered?"."""
    flags = info.get("throttled")
    hottest = max((t for _, t in info.get("temperatures", [])), default=None)
    problems: list[str] = []
    if flags is not None and flags & 0x1:
        problems.append("it is under-powered right now: use a better power supply or cable")
    if flags is not None and flags & 0xE:
        problems.append("it is throttled right now (heat or power): give it cooling or a fan")
    if hottest is not None and hottest >= THROTTLE_TEMPERATURE_C:
        problems.append(f"the CPU is at {hottest:.1f} °C, at or above the 80 °C throttling point")
    if problems:
        return "Problem: " + "; ".join(problems) + "."
    notes: list[str] = []
    if hottest is not None:
        state = "warm" if hottest >= WARM_TEMPERATURE_C else "fine"
        notes.append(f"CPU temperature {hottest:.1f} °C is {state} (throttling starts at 80 °C)")
    if flags is not None and flags & 0xF0000:
        past = [words for bit, words in _SINCE.items() if flags & (1 << bit)]
        notes.append(f"{'; '.join(past)} (the power supply or cooling may be marginal)")
        return "Not now, but earlier: " + ", ".join(notes) + "."
    if flags is not None:
        notes.append("no throttling or under-voltage since boot")
    if not notes:
        return "No temperature or throttling information on this device."
    return "OK: " + ", ".join(notes) + "."


def format_system_info(info: Mapping[str, Any]) -> str:
    """The report as the model and the user read it."""
    lines = [_verdict(info)]
    lines.append(f"Board: {info.get('board', 'unknown (no device-tree model)')}")
    if "cpu" in info:
        lines.append(f"CPU: {info['cpu']}")
    for kind, temp in info.get("temperatures", []):
        lines.append(f"Temperature ({kind}): {temp:.1f} °C")
    if "load" in info:
        one, five, fifteen = info["load"]
        lines.append(
            f"Load average: {one:.2f} {five:.2f} {fifteen:.2f} (1/5/15 min; {info['cpus']} CPUs)"
        )
    if "memory" in info:
        mem = info["memory"]
        lines.append(f"Memory: {_size(mem['available'])} available of {_size(mem['total'])}")
    for path, disk in info.get("disks", {}).items():
        used = 100.0 * (1 - disk["free"] / disk["total"]) if disk["total"] else 0.0
        lines.append(
            f"Disk {path}: {_size(disk['free'])} free of {_size(disk['total'])} ({used:.0f}% used)"
        )
    if "uptime_s" in info:
        lines.append(f"Uptime: {_duration(info['uptime_s'])}")
    if "throttled" in info:
        flags = info["throttled_flags"] or ["none"]
        lines.append(
            f"Throttling (get_throttled=0x{info['throttled']:x}, from "
            f"{info['throttled_source']}): {'; '.join(flags)}"
        )
    else:
        lines.append("Throttling: not reported (not a Raspberry Pi, or no firmware interface)")
    return "\n".join(lines)


class SystemInfoTool(BaseTool):
    """Report the board's health: model, temperature, load, memory, disk, uptime, throttling.

    Args:
        proc_root, sys_root: Where ``/proc`` and ``/sys`` are (tests pass a fake tree).
        disk_paths: Filesystems to report, e.g. ``("/", workspace_dir)``.
        vcgencmd: Asked for the throttling flags when the sysfs file is missing (None: never).
    """

    name = "system_info"
    description = (
        "Report this device's health: board model, CPU temperature, load, memory, disk, "
        "uptime, and on a Raspberry Pi whether it is throttled or under-powered (answers "
        "'is my Pi overheating?')."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    risk = RiskClass.READ

    def __init__(
        self,
        *,
        proc_root: str | os.PathLike[str] = "/proc",
        sys_root: str | os.PathLike[str] = "/sys",
        disk_paths: Sequence[str | os.PathLike[str]] = ("/",),
        vcgencmd: str | None = "vcgencmd",
    ) -> None:
        self.proc_root = proc_root
        self.sys_root = sys_root
        self.disk_paths = tuple(disk_paths)
        self.vcgencmd = vcgencmd
        self.timeout_s = 10.0

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        """Read everything (small files) and report. Cancel-safe."""
        info = await read_system_info(
            proc_root=self.proc_root,
            sys_root=self.sys_root,
            disk_paths=self.disk_paths,
            vcgencmd=self.vcgencmd,
        )
        return ToolResult.ok(format_system_info(info), info)
