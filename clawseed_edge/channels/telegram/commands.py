"""The bot's commands (:data:`COMMANDS`) and the texts they answer with.

``/status`` is built from the peripherals' state feeds (no hardware is read for it); ``/help``
lists the commands. What each command does to the channel stays in the channel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["COMMANDS", "command_name", "help_text", "status_text"]

#: The bot's commands, registered with setMyCommands.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("start", "Say hello and show your user id"),
    ("help", "What this bot can do"),
    ("status", "Devices, sensors and the service"),
    ("stop", "Emergency stop: abort every turn, drive every output safe"),
    ("reset", "Reset a latched emergency stop, else start a new conversation"),
)
#: Lines per section of ``/status``.
MAX_STATUS_LINES = 50


def command_name(text: str) -> str:
    """``/Status@my_bot now`` -> ``status``."""
    return text.split()[0][1:].split("@", 1)[0].lower()


def help_text(user_id: int) -> str:
    """What ``/start`` and ``/help`` answer."""
    lines = [
        f"Hello! Your Telegram user id is {user_id}.",
        "Write what you want the device to do. Commands:",
        *(f"/{c} - {d}" for c, d in COMMANDS),
    ]
    return "\n".join(lines)


def status_text(status_line: Callable[[], str] | None, peripherals: Sequence[Any]) -> str:
    """The service line, then every device's state and the latest sensor readings (from
    the peripherals' state feeds: no hardware is read for it)."""
    lines = [status_line() if status_line is not None else "running"]
    devices: list[str] = []
    sensors: list[str] = []
    for peripheral in peripherals:
        feed = getattr(peripheral, "states", None)
        if feed is None:
            continue
        for state in feed.devices():
            value = state.value
            shown = (
                "unknown"
                if value is None
                else ("on" if value else "off")
                if value in (0, 1) and state.kind != "servo"
                else f"{value:g}"
            )
            devices.append(f"  {state.device} ({state.kind}): {shown}")
        for reading in feed.readings():
            if reading.error:
                sensors.append(f"  {reading.sensor}: no reading ({reading.error[:80]})")
                continue
            values = ", ".join(
                f"{q} {v:g}{reading.units.get(q, '')}" for q, v in reading.values.items()
            )
            sensors.append(f"  {reading.sensor}: {values}")
    if devices:
        lines += ["Devices:", *devices[:MAX_STATUS_LINES]]
    if sensors:
        lines += ["Sensors:", *sensors[:MAX_STATUS_LINES]]
    return "\n".join(lines)
