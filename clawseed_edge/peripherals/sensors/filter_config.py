"""Sensor filters from config: ``{ median = { window_size = 7 } }`` -> a filter object.

The names, keys and defaults are ESPHome's (:mod:`.filters` lists them). Every mistake is a
:class:`~.filters.FilterInvalid` whose ``key`` says where under the filter it is.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .filters import (
    MAX_DATAPOINTS,
    MAX_FILTERS,
    MAX_WINDOW,
    NAN,
    FilterChain,
    FilterInvalid,
    SensorFilter,
    _Debounce,
    _Delta,
    _Ema,
    _Heartbeat,
    _Map,
    _median,
    _Or,
    _quantile,
    _SkipInitial,
    _Throttle,
    _ThrottleAverage,
    _Timeout,
    _Window,
    parse_seconds,
)

__all__ = ["FILTERS", "UNIT_FILTERS", "build_chain", "build_filter", "in_units"]


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        if isinstance(value, str) and value.strip().lower() == "nan":
            return NAN
        raise FilterInvalid(f"{what}: expected a number, got {str(value)[:40]!r}")
    return float(value)


def _integer(value: Any, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FilterInvalid(f"{what}: expected a whole number {low}..{high}", what)
    return value


def _table(args: Any, name: str, allowed: Iterable[str]) -> dict[str, Any]:
    if not isinstance(args, Mapping):
        raise FilterInvalid(f"{name}: expected a table such as {{ window_size = 5 }}")
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise FilterInvalid(
            f"{name}: unknown key {unknown[0]!r}; it takes {', '.join(allowed)}", unknown[0]
        )
    return dict(args)


def _window(name: str, args: Any, size: int, compute: Callable[..., float] | None) -> SensorFilter:
    keys = ["window_size", "send_every", "send_first_at"] + (
        ["quantile"] if name == "quantile" else []
    )
    t = _table(args, name, keys)
    window_size = _integer(t.get("window_size", size), "window_size", 1, MAX_WINDOW)
    send_every = _integer(t.get("send_every", size), "send_every", 1, MAX_WINDOW)
    first = _integer(t.get("send_first_at", 1), "send_first_at", 1, MAX_WINDOW)
    if first > send_every:
        raise FilterInvalid(
            f"{name}: send_first_at ({first}) must not be greater than send_every ({send_every})",
            "send_first_at",
        )
    if name == "quantile":
        q = _number(t.get("quantile", 0.9), "quantile")
        if not 0 < q <= 1:
            raise FilterInvalid("quantile: must be in (0, 1]", "quantile")
        compute = _quantile(q)
    assert compute is not None
    return _Window(name, compute, window_size, send_every, first)


def _datapoints(points: Any, name: str) -> list[tuple[float, float]]:
    """``[[x, y], ...]`` or ESPHome's ``["x -> y", ...]`` as pairs."""
    if not isinstance(points, Sequence) or isinstance(points, str) or not points:
        raise FilterInvalid(f"{name}: give datapoints such as [[0.0, 0.0], [10.0, 12.1]]")
    if len(points) > MAX_DATAPOINTS:
        raise FilterInvalid(f"{name}: at most {MAX_DATAPOINTS} datapoints")
    pairs: list[tuple[float, float]] = []
    for p in points:
        if isinstance(p, str) and "->" in p:  # ESPHome's "0.0 -> 0.0"
            left, _, right = p.partition("->")
            try:
                pairs.append((float(left), float(right)))
            except ValueError:
                raise FilterInvalid(f"{name}: {p[:40]!r} is not 'x -> y'") from None
        elif isinstance(p, Sequence) and not isinstance(p, str) and len(p) == 2:
            pairs.append((_number(p[0], "datapoint"), _number(p[1], "datapoint")))
        else:
            raise FilterInvalid(f"{name}: {str(p)[:40]!r} is not [x, y] or 'x -> y'")
    return pairs


def _calibrate_linear(args: Any) -> SensorFilter:
    method = "least_squares"
    points: Any = args
    if isinstance(args, Mapping):
        t = _table(args, "calibrate_linear", ["datapoints", "method"])
        points, method = t.get("datapoints", []), t.get("method", "least_squares")
        if method not in ("least_squares", "exact"):
            raise FilterInvalid("method: 'least_squares' (the default) or 'exact'", "method")
    pairs = _datapoints(points, "calibrate_linear")
    if len(pairs) < 2 or len({x for x, _ in pairs}) < 2:
        raise FilterInvalid("calibrate_linear: needs at least two datapoints with different x")
    if method == "exact":
        # ESPHome's rule: the segments are the points in the order written, so they must
        # rise; a sorted copy of a mistyped table would calibrate something else silently.
        for (x0, _), (x1, _) in itertools.pairwise(pairs):
            if x1 == x0:
                raise FilterInvalid(f"calibrate_linear: x {x0:g} appears twice (exact method)")
            if x1 < x0:
                raise FilterInvalid(
                    f"calibrate_linear: x must rise for the exact method ({x0:g} then {x1:g}); "
                    "write the datapoints in ascending order of x"
                )
        segments = [
            (x0, (y1 - y0) / (x1 - x0), y0) for (x0, y0), (x1, y1) in itertools.pairwise(pairs)
        ]
        ends = [x for x, _, _ in segments[1:]]

        def exact(v: float) -> float:
            # Each segment covers up to the next one's start; the ends extrapolate.
            i = sum(1 for x in ends if v >= x)
            x0, slope, y0 = segments[i]
            return y0 + slope * (v - x0)

        return _Map("calibrate_linear", exact)
    n = len(pairs)
    mx = sum(x for x, _ in pairs) / n
    my = sum(y for _, y in pairs) / n
    slope = sum((x - mx) * (y - my) for x, y in pairs) / sum((x - mx) ** 2 for x, _ in pairs)
    intercept = my - slope * mx
    return _Map("calibrate_linear", lambda v: slope * v + intercept)


#: The highest polynomial degree (the normal equations grow ill-conditioned beyond).
MAX_DEGREE = 6


def _calibrate_polynomial(args: Any) -> SensorFilter:
    t = _table(args, "calibrate_polynomial", ["datapoints", "degree"])
    if "degree" not in t:
        raise FilterInvalid("calibrate_polynomial: give degree = 2 (and datapoints)", "degree")
    degree = _integer(t["degree"], "degree", 0, MAX_DEGREE)
    pairs = _datapoints(t.get("datapoints", []), "calibrate_polynomial")
    if degree >= len(pairs):
        raise FilterInvalid(
            f"degree {degree} needs at least {degree + 1} datapoints; "
            f"the highest with {len(pairs)} is {len(pairs) - 1}",
            "degree",
        )
    coefficients = _least_squares(pairs, degree)

    def polynomial(v: float) -> float:
        # ESPHome's sum of a_i * x^i, lowest power first.
        return sum(a * v**i for i, a in enumerate(coefficients))

    return _Map("calibrate_polynomial", polynomial)


def _least_squares(pairs: Sequence[tuple[float, float]], degree: int) -> list[float]:
    """a_0..a_degree minimising the squared error (normal equations, Gauss-Jordan)."""
    n = degree + 1
    rows = [[sum(x ** (i + j) for x, _ in pairs) for j in range(n)] for i in range(n)]
    rhs = [sum(y * x**i for x, y in pairs) for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        if abs(rows[pivot][col]) < 1e-12:
            raise FilterInvalid(
                "calibrate_polynomial: the datapoints do not fix a polynomial of that degree "
                "(too few different x)",
                "datapoints",
            )
        rows[col], rows[pivot] = rows[pivot], rows[col]
        rhs[col], rhs[pivot] = rhs[pivot], rhs[col]
        for r in range(n):
            if r != col:
                k = rows[r][col] / rows[col][col]
                rows[r] = [a - k * b for a, b in zip(rows[r], rows[col], strict=True)]
                rhs[r] -= k * rhs[col]
    return [rhs[i] / rows[i][i] for i in range(n)]


def _clamp(args: Any) -> SensorFilter:
    t = _table(args, "clamp", ["min_value", "max_value", "ignore_out_of_range"])
    low = _number(t.get("min_value", -math.inf), "min_value")
    high = _number(t.get("max_value", math.inf), "max_value")
    ignore = t.get("ignore_out_of_range", False)
    if not isinstance(ignore, bool):
        raise FilterInvalid("ignore_out_of_range: true or false", "ignore_out_of_range")
    if low > high:
        raise FilterInvalid("clamp: min_value is greater than max_value", "min_value")

    def clamp(v: float) -> float | None:
        # ESPHome: NaN is "not >= min", so it is clamped (or dropped) too.
        if math.isfinite(low) and not v >= low:
            return None if ignore else low
        if math.isfinite(high) and not v <= high:
            return None if ignore else high
        return v

    return _Map("clamp", clamp)


def _filter_out(args: Any, decimals: int) -> SensorFilter:
    raw = args if isinstance(args, list) else [args]
    if not raw or len(raw) > MAX_DATAPOINTS:
        raise FilterInvalid(f"filter_out: give 1..{MAX_DATAPOINTS} values")
    values = [_number(v, "filter_out") for v in raw]
    scale = 10.0**decimals

    def keep(v: float) -> float | None:
        for out in values:
            if math.isnan(out):
                if math.isnan(v):
                    return None
            elif not math.isnan(v) and _roundf(out * scale) == _roundf(v * scale):
                return None
        return v

    return _Map("filter_out", keep)


def _amount(value: Any, what: str) -> tuple[float, bool]:
    """(amount, relative) from ``0.5`` or ``"10%"`` (a fraction of the baseline)."""
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            amount = float(value.strip()[:-1]) / 100
        except ValueError:
            raise FilterInvalid(
                f"{what}: {value[:40]!r} is not a percentage such as '10%'"
            ) from None
        relative = True
    else:
        amount, relative = _number(value, what), False
    if not amount >= 0:
        raise FilterInvalid(f"{what}: must be a number >= 0 (or a percentage such as '10%')")
    return amount, relative


def _delta(args: Any) -> SensorFilter:
    if not isinstance(args, Mapping):
        amount, relative = _amount(args, "delta")
        return _Delta(amount, relative)
    t = _table(args, "delta", ["min_value", "max_value", "baseline"])
    if "min_value" not in t and "max_value" not in t:
        raise FilterInvalid("delta: give min_value, max_value or both", "min_value")
    low, relative = _amount(t.get("min_value", 0.0), "min_value")
    high, max_relative = _amount(t.get("max_value", math.inf), "max_value")
    if relative == max_relative and low > high:
        raise FilterInvalid("delta: min_value is greater than max_value", "min_value")
    baseline = t.get("baseline")
    base = None if baseline is None else _number(baseline, "baseline")
    return _Delta(low, relative, high, base, max_relative)


def _round_to_multiple_of(args: Any) -> SensorFilter:
    if isinstance(args, Mapping):
        args = _table(args, "round_to_multiple_of", ["multiple"]).get("multiple")
    multiple = _number(args, "round_to_multiple_of")
    if not multiple > 0:
        raise FilterInvalid("round_to_multiple_of: must be a number > 0, such as 0.5")
    # C's remainderf, as ESPHome: the nearest multiple, halves to the even one.
    return _Map(
        "round_to_multiple_of",
        lambda v: v - math.remainder(v, multiple) if math.isfinite(v) else v,
    )


def _or(args: Any, decimals: int) -> SensorFilter:
    if not isinstance(args, list) or not args:
        raise FilterInvalid(
            "or: give a list of filters, such as [{ throttle = '60s' }, { delta = 1 }]"
        )
    return _Or(_build_all(args, decimals, "in an or"))


def _timeout(args: Any) -> SensorFilter:
    value: Any = "nan"
    if isinstance(args, Mapping):
        t = _table(args, "timeout", ["timeout", "value"])
        if "timeout" not in t:
            raise FilterInvalid("timeout: give timeout = '5min'", "timeout")
        args, value = t["timeout"], t.get("value", "nan")
    period = parse_seconds(args, "timeout")
    if value == "last":
        return _Timeout(period, None)
    return _Timeout(period, _number(value, "value"))


def _heartbeat(args: Any) -> SensorFilter:
    if isinstance(args, Mapping):
        t = _table(args, "heartbeat", ["period", "optimistic"])
        optimistic = t.get("optimistic", False)
        if not isinstance(optimistic, bool):
            raise FilterInvalid("optimistic: true or false", "optimistic")
        return _Heartbeat(parse_seconds(t.get("period"), "period"), optimistic)
    return _Heartbeat(parse_seconds(args, "heartbeat"))


def _roundf(value: float) -> float:
    """C's ``roundf``: halves away from zero (Python's ``round`` goes to even: 2.5 -> 2)."""
    return math.copysign(math.floor(abs(value) + 0.5), value)


def _round(args: Any) -> SensorFilter:
    digits = _integer(args, "round", 0, 9)
    scale = 10.0**digits
    return _Map("round", lambda v: _roundf(v * scale) / scale if math.isfinite(v) else v)


#: Filter name -> builder(args, decimals). The names and defaults are ESPHome's.
FILTERS: dict[str, Callable[[Any, int], SensorFilter]] = {
    "offset": lambda a, d: _offset(_number(a, "offset")),
    "multiply": lambda a, d: _multiply(_number(a, "multiply")),
    "calibrate_linear": lambda a, d: _calibrate_linear(a),
    "clamp": lambda a, d: _clamp(a),
    "round": lambda a, d: _round(a),
    "median": lambda a, d: _window("median", a, 5, _median),
    "min": lambda a, d: _window("min", a, 5, min),
    "max": lambda a, d: _window("max", a, 5, max),
    "quantile": lambda a, d: _window("quantile", a, 5, None),
    "sliding_window_moving_average": lambda a, d: _window(
        "sliding_window_moving_average", a, 15, lambda v: sum(v) / len(v)
    ),
    "exponential_moving_average": lambda a, d: _ema(a),
    "throttle": lambda a, d: _Throttle(parse_seconds(a, "throttle", low=0)),
    "throttle_average": lambda a, d: _ThrottleAverage(parse_seconds(a, "throttle_average")),
    "delta": lambda a, d: _delta(a),
    "or": _or,
    "debounce": lambda a, d: _Debounce(parse_seconds(a, "debounce")),
    "skip_initial": lambda a, d: _SkipInitial(_integer(a, "skip_initial", 1, 1_000_000)),
    "round_to_multiple_of": lambda a, d: _round_to_multiple_of(a),
    "calibrate_polynomial": lambda a, d: _calibrate_polynomial(a),
    "heartbeat": lambda a, d: _heartbeat(a),
    "timeout": lambda a, d: _timeout(a),
    "filter_out": _filter_out,
}


def _offset(k: float) -> SensorFilter:
    return _Map("offset", lambda v: v + k)


def _multiply(k: float) -> SensorFilter:
    return _Map("multiply", lambda v: v * k)


def _ema(args: Any) -> SensorFilter:
    t = _table(args, "exponential_moving_average", ["alpha", "send_every", "send_first_at"])
    alpha = _number(t.get("alpha", 0.1), "alpha")
    if not 0 < alpha <= 1:
        raise FilterInvalid("alpha: must be in (0, 1]", "alpha")
    send_every = _integer(t.get("send_every", 15), "send_every", 1, MAX_WINDOW)
    first = _integer(t.get("send_first_at", 1), "send_first_at", 1, MAX_WINDOW)
    if first > send_every:
        raise FilterInvalid("send_first_at must not be greater than send_every", "send_first_at")
    return _Ema(alpha, send_every, first)


def build_filter(entry: Any, *, decimals: int = 1) -> SensorFilter:
    """One filter from its config entry, a one-key table: ``{ median = { window_size = 7 } }``.

    Args:
        entry: The table.
        decimals: The quantity's decimals (``filter_out`` compares at them).

    Raises:
        FilterInvalid: Not a one-key table, an unknown filter (they are listed), bad settings.
    """
    if not isinstance(entry, Mapping) or len(entry) != 1:
        raise FilterInvalid(
            "a filter is a table with one key, such as { offset = -0.4 } or { median = {} }"
        )
    ((name, args),) = entry.items()
    builder = FILTERS.get(name)
    if builder is None:
        raise FilterInvalid(f"unknown filter {str(name)[:40]!r}; filters: {', '.join(FILTERS)}")
    try:
        return builder(args, decimals)
    except FilterInvalid as exc:
        key = f"{name}.{exc.key}" if exc.key else name
        raise FilterInvalid(str(exc), key) from None


def build_chain(entries: Sequence[Any], *, decimals: int = 1) -> FilterChain:
    """A chain from a ``filters`` list (see :func:`build_filter`).

    Raises:
        FilterInvalid: ``key`` is ``[i].<filter>...``.
    """
    return FilterChain(_build_all(entries, decimals, "per quantity"))


def _build_all(entries: Sequence[Any], decimals: int, where: str) -> list[SensorFilter]:
    """Each entry's filter; a mistake's ``key`` starts with its index (``[1].median...``)."""
    if len(entries) > MAX_FILTERS:
        raise FilterInvalid(f"at most {MAX_FILTERS} filters {where}")
    out = []
    for i, entry in enumerate(entries):
        try:
            out.append(build_filter(entry, decimals=decimals))
        except FilterInvalid as exc:
            raise FilterInvalid(str(exc), f"[{i}]" + (f".{exc.key}" if exc.key else "")) from None
    return out


#: Filters whose numbers are in the quantity's unit (or calibrate it): on a sensor with several
#: quantities they belong under ``filters_<quantity>``, never in the shared ``filters``.
UNIT_FILTERS = frozenset(
    {
        "offset",
        "multiply",
        "calibrate_linear",
        "calibrate_polynomial",
        "clamp",
        "filter_out",
        "round_to_multiple_of",
    }
)


def in_units(entry: Any) -> str | None:
    """The filter in ``entry`` whose settings are in one quantity's unit (None: none is).

    ``delta = 0.5`` is (0.5 degrees or 0.5 hPa?), ``delta = "10%"`` is not; a ``timeout``
    with a number to send is; an ``or`` is when one of its filters is.
    """
    if not isinstance(entry, Mapping) or len(entry) != 1:
        return None
    ((name, args),) = entry.items()
    if name in UNIT_FILTERS:
        return str(name)
    if name == "delta":
        amounts = list(args.values()) if isinstance(args, Mapping) else [args]
        absolute = any(not (isinstance(a, str) and a.strip().endswith("%")) for a in amounts)
        return "delta" if absolute else None
    if name == "timeout" and isinstance(args, Mapping):
        return "timeout" if args.get("value", "nan") not in ("nan", "last") else None
    if name == "or" and isinstance(args, list):
        return next((f"or: {found}" for e in args if (found := in_units(e))), None)
    return None
