"""Sensor filters with ESPHome's semantics and defaults, as pure objects (no I/O, no clock).

Built from config by :mod:`.filter_config` (``build_chain``).

A filter takes a value and the time (seconds, any monotonic origin) and gives zero or more
values; the timed ones (``throttle_average``, ``heartbeat``, ``timeout``, ``debounce``) also
give values from :meth:`SensorFilter.tick` when their time comes. ESPHome starts the interval
ones at boot, not at the first value: :meth:`FilterChain.start` is that moment. A :class:`FilterChain` runs a list of them in
order, as ESPHome's ``filters:`` list does; the sampler feeds it and ticks it by its
:meth:`FilterChain.deadline`. NaN means "unknown" (a ``timeout`` with no ``value`` sends it).

The filters and their defaults (ESPHome's)::

    offset = 2.0                     multiply = 1.2          round = 1
    calibrate_linear = [[0.0, 0.0], [10.0, 12.1]]   # or {datapoints = [...], method = "exact"}
    calibrate_polynomial = {datapoints = [[0, 0], [50, 51], [100, 98]], degree = 2}
    round_to_multiple_of = 0.5       skip_initial = 3        debounce = "1s"
    or = [{ throttle = "60s" }, { delta = 1.0 }]   # a value passes when any of them passes
    clamp = {min_value = 0, max_value = 100, ignore_out_of_range = false}
    median = {window_size = 5, send_every = 5, send_first_at = 1}       # also min, max
    quantile = {window_size = 5, send_every = 5, send_first_at = 1, quantile = 0.9}
    sliding_window_moving_average = {window_size = 15, send_every = 15, send_first_at = 1}
    exponential_moving_average = {alpha = 0.1, send_every = 15, send_first_at = 1}
    throttle = "60s"                 throttle_average = "60s"           heartbeat = "60s"
    timeout = "5min"                 # or {timeout = "5min", value = 0} / value = "last"
    delta = 0.5                      # or "10%", or {min_value, max_value, baseline}
    filter_out = 85.0                # or a list; compared at the quantity's decimals
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "FilterChain",
    "FilterInvalid",
    "SensorFilter",
    "parse_seconds",
]

#: Bounds on what a config may ask for (a window is kept in memory per quantity).
MAX_WINDOW = 1000
MAX_PERIOD_S = 7 * 86400
MAX_DATAPOINTS = 50
MAX_FILTERS = 20

NAN = math.nan


class FilterInvalid(ValueError):
    """A filter's settings are wrong; ``key`` is the part under the filter (``window_size``)."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.key = key


_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|m|h|d)?\s*$")
_UNIT_S = {"ms": 0.001, "s": 1.0, "min": 60.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_seconds(
    value: Any, what: str, *, low: float = 0.001, high: float = MAX_PERIOD_S
) -> float:
    """Seconds from ``"500ms"``, ``"60s"``, ``"5min"`` (or ``"5m"``), ``"1h"``, ``"1d"`` or a number.

    Raises:
        FilterInvalid: Not a duration, or outside ``low`` .. ``high`` seconds.
    """
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise FilterInvalid(f"{what}: write a duration such as '60s', '5min', '1h'")
    if isinstance(value, str):
        m = _SECONDS.match(value.lower())
        if m is None:
            raise FilterInvalid(
                f"{what}: {value[:40]!r} is not a duration; write '500ms', '60s', '5min', '1h'"
            )
        seconds = float(m.group(1)) * _UNIT_S[m.group(2)]
    else:
        seconds = float(value)
    if not low <= seconds <= high:
        raise FilterInvalid(f"{what}: {seconds:g} s is outside {low:g} .. {high:g} s")
    return seconds


class SensorFilter:
    """One filter: :meth:`feed` a value, :meth:`tick` the time; both return the values out."""

    name = ""

    def feed(self, value: float, now: float) -> list[float]:
        return [value]

    def tick(self, now: float) -> list[float]:
        return []

    def deadline(self) -> float | None:
        """When :meth:`tick` next has something to do (None: never until the next value)."""
        return None

    def start(self, now: float) -> None:
        """The chain starts running at ``now`` (an interval filter's first period begins)."""


class _Map(SensorFilter):
    def __init__(self, name: str, fn: Callable[[float], float | None]) -> None:
        self.name = name
        self._fn = fn

    def feed(self, value: float, now: float) -> list[float]:
        out = self._fn(value)
        return [] if out is None else [out]


class _Window(SensorFilter):
    """ESPHome's sliding window: ``send_first_at`` values in, then every ``send_every``th."""

    def __init__(
        self,
        name: str,
        compute: Callable[[list[float]], float],
        window_size: int,
        send_every: int,
        send_first_at: int,
    ) -> None:
        self.name = name
        self._compute = compute
        self._window: deque[float] = deque(maxlen=window_size)
        self._every = send_every
        self._at = send_every - send_first_at

    def feed(self, value: float, now: float) -> list[float]:
        self._window.append(value)
        self._at += 1
        if self._at < self._every:
            return []
        self._at = 0
        known = [v for v in self._window if not math.isnan(v)]
        return [self._compute(known) if known else NAN]


def _median(values: list[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def _quantile(q: float) -> Callable[[list[float]], float]:
    def compute(values: list[float]) -> float:
        position = max(0, math.ceil(len(values) * q) - 1)
        return sorted(values)[position]

    return compute


class _Ema(SensorFilter):
    name = "exponential_moving_average"

    def __init__(self, alpha: float, send_every: int, send_first_at: int) -> None:
        self._alpha = alpha
        self._every = send_every
        self._at = send_every - send_first_at
        self._acc: float | None = None

    def feed(self, value: float, now: float) -> list[float]:
        if not math.isnan(value):
            a = self._alpha
            self._acc = value if self._acc is None else a * value + (1 - a) * self._acc
        self._at += 1
        if self._at < self._every:
            return []
        self._at = 0
        return [NAN if math.isnan(value) or self._acc is None else self._acc]


class _Throttle(SensorFilter):
    name = "throttle"

    def __init__(self, period: float) -> None:
        self._period = period
        self._last: float | None = None

    def feed(self, value: float, now: float) -> list[float]:
        if self._last is None or now - self._last >= self._period:
            self._last = now
            return [value]
        return []


class _Interval(SensorFilter):
    """A filter with ESPHome's ``set_interval``: ticks every ``period`` from its first time."""

    def __init__(self, period: float) -> None:
        self._period = period
        self._next: float | None = None

    def _due(self, now: float) -> bool:
        if self._next is None:
            self._next = now + self._period
            return False
        if now < self._next:
            return False
        # Missed intervals (a sampler that slept) fire once, not once each.
        skipped = math.floor((now - self._next) / self._period)
        self._next += (skipped + 1) * self._period
        return True

    def deadline(self) -> float | None:
        return self._next

    def start(self, now: float) -> None:
        if self._next is None:
            self._next = now + self._period


class _ThrottleAverage(_Interval):
    name = "throttle_average"

    def __init__(self, period: float) -> None:
        super().__init__(period)
        self._sum = 0.0
        self._n = 0
        self._nan = False

    def feed(self, value: float, now: float) -> list[float]:
        if self._next is None:
            self._next = now + self._period
        if math.isnan(value):
            self._nan = True
        else:
            self._sum += value
            self._n += 1
        return []

    def tick(self, now: float) -> list[float]:
        if not self._due(now):
            return []
        out: list[float] = []
        if self._n:
            out = [self._sum / self._n]
            self._sum, self._n = 0.0, 0
        elif self._nan:
            out = [NAN]
        self._nan = False
        return out


class _Heartbeat(_Interval):
    name = "heartbeat"

    def __init__(self, period: float, optimistic: bool = False) -> None:
        super().__init__(period)
        self._last: float | None = None
        self._optimistic = optimistic

    def feed(self, value: float, now: float) -> list[float]:
        if self._next is None:
            self._next = now + self._period
        self._last = value
        return [value] if self._optimistic else []

    def tick(self, now: float) -> list[float]:
        if not self._due(now) or self._last is None:
            return []
        return [self._last]


class _Timeout(SensorFilter):
    name = "timeout"

    def __init__(self, period: float, value: float | None) -> None:
        self._period = period
        self._value = value  # None: send the last value ("last")
        self._since: float | None = None
        self._pending = NAN

    def feed(self, value: float, now: float) -> list[float]:
        self._since = now
        self._pending = value
        return [value]

    def tick(self, now: float) -> list[float]:
        if self._since is None or now - self._since < self._period:
            return []
        self._since = None  # once, until the next value arrives
        return [self._pending if self._value is None else self._value]

    def deadline(self) -> float | None:
        return None if self._since is None else self._since + self._period


class _Delta(SensorFilter):
    """ESPHome's ``delta``: a value passes when it differs from the baseline (the last value
    passed, unless one is given) by more than ``min_value`` and at most ``max_value``; with
    ``relative`` those are fractions of the baseline. The first value passes. NaN (a dead
    sensor, a ``timeout``) passes once after a number, so ``[timeout, delta]`` reports it;
    a first NaN or a repeated one is nothing new."""

    name = "delta"

    def __init__(
        self,
        min_value: float,
        relative: bool,
        max_value: float = math.inf,
        baseline: float | None = None,
        max_relative: bool | None = None,
    ) -> None:
        self._min = min_value
        self._relative = relative
        self._max = max_value
        self._max_relative = relative if max_relative is None else max_relative
        self._baseline = baseline
        self._last = NAN

    def feed(self, value: float, now: float) -> list[float]:
        if math.isnan(value):
            if math.isnan(self._last):
                return []
            self._last = value
            return [value]
        if math.isnan(self._last):
            self._last = value
            return [value]
        ref = self._last if self._baseline is None else self._baseline
        low = abs(self._min * ref) if self._relative else self._min
        high = abs(self._max * ref) if self._max_relative else self._max
        if low < abs(value - ref) <= high:
            self._last = value
            return [value]
        return []


class _SkipInitial(SensorFilter):
    name = "skip_initial"

    def __init__(self, count: int) -> None:
        self._left = count

    def feed(self, value: float, now: float) -> list[float]:
        if self._left > 0:
            self._left -= 1
            return []
        return [value]


class _Debounce(SensorFilter):
    """ESPHome's ``debounce``: a value goes on once no other came for ``period`` seconds."""

    name = "debounce"

    def __init__(self, period: float) -> None:
        self._period = period
        self._pending = NAN
        self._at: float | None = None

    def feed(self, value: float, now: float) -> list[float]:
        self._pending, self._at = value, now + self._period
        return []

    def tick(self, now: float) -> list[float]:
        if self._at is None or now < self._at:
            return []
        self._at = None
        return [self._pending]

    def deadline(self) -> float | None:
        return self._at


class _Or(SensorFilter):
    """ESPHome's ``or``: every filter gets the value; the first that gives one passes it on,
    at most one per value in (a timed one's output too, until the next value resets it)."""

    name = "or"

    def __init__(self, filters: Sequence[SensorFilter]) -> None:
        self.filters = list(filters)
        self._passed = False

    def feed(self, value: float, now: float) -> list[float]:
        self._passed = False
        return self._first([out for f in self.filters for out in f.feed(value, now)])

    def tick(self, now: float) -> list[float]:
        return self._first([out for f in self.filters for out in f.tick(now)])

    def _first(self, values: list[float]) -> list[float]:
        if not values or self._passed:
            return []
        self._passed = True
        return values[:1]

    def deadline(self) -> float | None:
        times = [t for f in self.filters if (t := f.deadline()) is not None]
        return min(times) if times else None

    def start(self, now: float) -> None:
        for f in self.filters:
            f.start(now)


class FilterChain:
    """Filters in order; what one gives, the next takes (ESPHome's ``filters:`` list)."""

    def __init__(self, filters: Sequence[SensorFilter] = ()) -> None:
        self.filters = list(filters)

    def feed(self, value: float, now: float) -> list[float]:
        """The values out of the chain for ``value`` at ``now`` (what is due first, then it)."""
        return self.tick(now) + self._run(0, value, now)

    def tick(self, now: float) -> list[float]:
        """The values the timed filters give at ``now`` (passed on down the chain)."""
        out: list[float] = []
        for i, f in enumerate(self.filters):
            for v in f.tick(now):
                out += self._run(i + 1, v, now)
        return out

    def deadline(self) -> float | None:
        """The earliest time a timed filter wants a :meth:`tick` (None: none waits)."""
        times = [t for f in self.filters if (t := f.deadline()) is not None]
        return min(times) if times else None

    def start(self, now: float) -> None:
        """The chain runs from ``now``: ``throttle_average`` and ``heartbeat`` count their
        periods from here (ESPHome's boot), not from the first value."""
        for f in self.filters:
            f.start(now)

    def _run(self, start: int, value: float, now: float) -> list[float]:
        values = [value]
        for f in self.filters[start:]:
            values = [out for v in values for out in f.feed(v, now)]
            if not values:
                break
        return values
