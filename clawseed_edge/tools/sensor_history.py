"""``sensor_history``: what a sensor measured over a window, from the stored history.

So the model can answer "how cold was it overnight?": min and max with when they happened,
the mean, the last value and a few points, for ``"last night"``, ``"today"``, ``"24h"`` or
a from/to pair. The history object is duck-typed (``summary`` and ``series`` of
:class:`clawseed_edge.state.SensorHistory`); this layer does not import it.

:func:`parse_window` is shared with the CLI and the gateway: local-time words are computed in
the local zone (a DST night is 8 or 10 hours long, as the clock on the wall says).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from clawseed_edge.api import BaseTool, RiskClass, ToolArgumentsInvalid, ToolContext, ToolResult

__all__ = ["MAX_SPAN_S", "SensorHistoryTool", "format_summary", "parse_window"]

#: The longest window asked for (a little over a year: what the hour aggregates keep).
MAX_SPAN_S = 400 * 86400.0
#: Points shown to the model (the summary carries more for the CLI and charts).
MODEL_POINTS = 12
#: When "last night" starts and ends, local hours.
NIGHT = (22, 7)

_SPAN = re.compile(r"^(?:last|past)?\s*(\d+(?:\.\d+)?)?\s*([a-z]+)$")
_UNITS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
    "month": 30 * 86400, "year": 365 * 86400,
}  # fmt: skip


def _local(day: dt.date, hour: int, tz: dt.tzinfo | None) -> float:
    # A naive datetime's timestamp() goes through mktime: the system zone, DST included.
    return dt.datetime(day.year, day.month, day.day, hour, tzinfo=tz).timestamp()


#: The times a window may name, in Unix seconds: 1970-01-01 .. 2999-12-31 (UTC). Outside it
#: the platform's time functions overflow (a year-1 ``from``), and no sensor kept a value.
EARLIEST_S = 0.0
LATEST_S = 32_503_680_000.0

#: Unix seconds written as text: ``1790000000`` or ``1790000000.5``.
_UNIX = re.compile(r"\+?\d{1,12}(?:\.\d{1,9})?")


def _when(value: Any, what: str, tz: dt.tzinfo | None) -> float:
    seconds: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and _UNIX.fullmatch(text := value.strip()):
        seconds = float(text)
    elif isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(text)
        except ValueError:
            pass
        else:
            if parsed.tzinfo is None and tz is not None:
                parsed = parsed.replace(tzinfo=tz)
            try:
                seconds = parsed.timestamp()
            except (OverflowError, ValueError, OSError):
                seconds = -math.inf  # year 1 in local time: before anything the range allows
    if seconds is None:
        raise ToolArgumentsInvalid(
            f"{what}: {str(value)[:40]!r} is not a time; write ISO 8601 such as "
            "'2026-12-01T22:00' (local time) or Unix seconds"
        )
    if not EARLIEST_S <= seconds <= LATEST_S:  # also NaN and the infinities
        raise ToolArgumentsInvalid(
            f"{what}: {str(value)[:40]!r} is outside the times history can hold "
            "(1970-01-01 .. 2999-12-31); give a time in that range"
        )
    return seconds


def parse_window(
    window: str | None = None,
    start: Any = None,
    end: Any = None,
    *,
    now: float,
    tz: dt.tzinfo | None = None,
) -> tuple[float, float, str]:
    """(start, end, label) in Unix seconds for a window in words or a from/to pair.

    Args:
        window: ``"last night"`` (22:00-07:00 local, up to now while it lasts), ``"today"``,
            ``"yesterday"``, ``"24h"``, ``"10m"``, ``"last 7 days"``, ``"last hour"``,
            ``"week"``; ignored when ``start`` is given.
        start, end: ISO 8601 (local time when no offset is written) or Unix seconds (a
            number, or a string of digits); ``end`` defaults to now. Both within 1970-01-01 ..
            2999-12-31.
        now: The current Unix time.
        tz: The local zone (None: the system's).

    Raises:
        ToolArgumentsInvalid: Words it does not know (what it knows is listed), a time that is
            not one or is out of range, end before start, a window longer than 400 days.
    """
    if start is not None:
        a = _when(start, "from", tz)
        b = now if end is None else _when(end, "to", tz)
        label = "the window asked for"
    else:
        a, b, label = _words((window or "24h").strip().lower(), now, tz)
    if b <= a:
        raise ToolArgumentsInvalid("the window ends before it starts; give from before to")
    if b - a > MAX_SPAN_S:
        raise ToolArgumentsInvalid("the window is longer than 400 days; ask for less")
    return a, b, label


def _words(text: str, now: float, tz: dt.tzinfo | None) -> tuple[float, float, str]:
    today = dt.datetime.fromtimestamp(now, tz).date()
    text = " ".join(text.split())
    if text in ("last night", "overnight", "tonight", "night"):
        end = _local(today, NIGHT[1], tz)
        if now < end:
            end = now  # still night: up to now
        start = _local(today - dt.timedelta(days=1), NIGHT[0], tz)
        return start, end, "last night"
    if text == "today":
        return _local(today, 0, tz), now, "today"
    if text == "yesterday":
        midnight = _local(today, 0, tz)
        return _local(today - dt.timedelta(days=1), 0, tz), midnight, "yesterday"
    m = _SPAN.match(text)
    if m and m.group(2) in _UNITS:
        amount = float(m.group(1) or 1)
        seconds = amount * _UNITS[m.group(2)]
        return now - seconds, now, f"the last {text.removeprefix('last ').removeprefix('past ')}"
    raise ToolArgumentsInvalid(
        f"window: {text[:40]!r} is not a window; write 'last night', 'today', 'yesterday', "
        "'24h', '10m', '7d', 'last week', or give from/to"
    )


def _clock(t: float | None, tz: dt.tzinfo | None, span: float) -> str:
    if t is None:
        return "?"
    d = dt.datetime.fromtimestamp(t, tz)
    return d.strftime("%H:%M" if span <= 86400 else "%Y-%m-%d %H:%M")


def _num(v: float | None, unit: str) -> str:
    if v is None:
        return "?"
    return f"{v:.2f}".rstrip("0").rstrip(".") + (f" {unit}" if unit else "")


def format_summary(s: Any, label: str, tz: dt.tzinfo | None = None) -> str:
    """One paragraph for the model: extremes with times, mean, last, a few points."""
    span = s.end - s.start
    head = (
        f"{s.sensor} {s.quantity}, {label} ({_clock(s.start, tz, 1e9)} .. {_clock(s.end, tz, 1e9)})"
    )
    if not s.count:
        return f"{head}: no values stored in this window."
    u = s.unit
    text = (
        f"{head}: min {_num(s.min, u)} at {_clock(s.min_time, tz, span)}, "
        f"max {_num(s.max, u)} at {_clock(s.max_time, tz, span)}, mean {_num(s.mean, u)}, "
        f"last {_num(s.last, u)} at {_clock(s.last_time, tz, span)}; {s.count} value{'' if s.count == 1 else 's'}"
    )
    if s.resolution != "raw":
        text += f" (from {s.resolution} aggregates)"
    if s.points:
        pts = s.points[:: max(1, len(s.points) // MODEL_POINTS)][:MODEL_POINTS]
        text += ". Points: " + ", ".join(f"{_clock(t, tz, span)} {_num(v, '')}" for t, v in pts)
    return text + "."


class SensorHistoryTool(BaseTool):
    """Summarise a sensor's stored history over a window (risk: read).

    Args:
        history: A :class:`~clawseed_edge.state.SensorHistory` (``summary``, ``series``).
        tz: The local zone for "last night" (None: the system's).
        clock: Unix seconds.
    """

    name = "sensor_history"
    description = (
        "What a sensor measured over a time window, from the stored history: min and max with "
        "when they happened, mean, last value and a few points. Answers 'how cold was it last "
        "night?', 'what was the humidity today?'. window: 'last night', 'today', 'yesterday', "
        "'24h', '7d', 'last week'; or from/to as ISO 8601 local time."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "sensor": {"type": "string", "maxLength": 64, "description": "the sensor's name"},
            "quantity": {
                "type": "string",
                "maxLength": 64,
                "description": "temperature, humidity, pressure ...; omit for all it measures",
            },
            "window": {"type": "string", "maxLength": 40, "description": "e.g. 'last night'"},
            "from": {"type": "string", "maxLength": 40},
            "to": {"type": "string", "maxLength": 40},
        },
        "required": ["sensor"],
        "additionalProperties": False,
    }
    risk = RiskClass.READ

    def __init__(
        self,
        history: Any,
        *,
        tz: dt.tzinfo | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.history = history
        self.tz = tz
        self.clock = clock

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        sensor = str(arguments.get("sensor", ""))[:64]
        quantity = arguments.get("quantity")
        now = self.clock()
        try:
            start, end, label = parse_window(
                arguments.get("window"),
                arguments.get("from"),
                arguments.get("to"),
                now=now,
                tz=self.tz,
            )
        except ToolArgumentsInvalid as exc:
            return ToolResult.fail(str(exc))
        stored = await self.history.series()
        quantities = [q for s, q, _ in stored if s == sensor]
        if not quantities:
            names = sorted({s for s, _, _ in stored})
            return ToolResult.fail(
                f"no history for sensor {sensor!r}; sensors with history: "
                f"{', '.join(names[:20]) or 'none yet (the service records sensors that have an update_interval)'}"
            )
        if quantity is not None:
            if quantity not in quantities:
                return ToolResult.fail(
                    f"{sensor} has no history of {str(quantity)[:40]!r}; it has {', '.join(quantities)}"
                )
            quantities = [str(quantity)]
        texts, data = [], []
        for q in quantities[:8]:
            s = await self.history.summary(sensor, q, start, end, points=48, now=now)
            if s is None:
                continue
            texts.append(format_summary(s, label, self.tz))
            data.append(s.as_dict())
        return ToolResult.ok("\n".join(texts), data=data)
