"""The node's health as Home Assistant's diagnostic entities show it: CPU temperature and the
Pi's throttling flags (the ``system_info`` tool's reader), published on ``.../health/state``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["cpu_temperature", "read_health"]


async def read_health(sys_root: Path, vcgencmd: str | None) -> dict[str, Any]:
    """``{"cpu_temperature", "throttled", "throttled_now", "throttled_flags"}``.

    ``throttled`` is the raw ``get_throttled`` value and ``throttled_now`` whether any "now"
    bit is set (under-voltage, capped, throttled, soft limit); both None where the device
    cannot tell (not a Pi), with no flags.
    """
    from clawseed_edge.tools.system_info import (
        THROTTLED_NOW_MASK,
        decode_throttled,
        read_throttled,
    )

    throttled, _ = await read_throttled(sys_root=sys_root, vcgencmd=vcgencmd)
    return {
        "cpu_temperature": cpu_temperature(sys_root),
        "throttled": throttled,
        "throttled_now": None if throttled is None else bool(throttled & THROTTLED_NOW_MASK),
        "throttled_flags": [] if throttled is None else decode_throttled(throttled),
    }


def cpu_temperature(sys_root: Path) -> float | None:
    """The first thermal zone's temperature, degrees C (None where there is none)."""
    try:
        raw = (sys_root / "class" / "thermal" / "thermal_zone0" / "temp").read_text()
        return round(int(raw.strip()) / 1000.0, 1)
    except (OSError, ValueError):
        return None
