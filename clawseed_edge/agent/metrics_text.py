"""Latency summaries and the Prometheus text exposition format, for :class:`MetricsObserver`.

Pure functions over plain values: the observer owns the counters, this module only formats.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["Summary", "family", "summary_lines"]


class Summary:
    """Count and sum of every observation, plus a bounded window for quantiles."""

    __slots__ = ("count", "samples", "total")

    def __init__(self, window: int) -> None:
        self.count = 0
        self.total = 0.0
        self.samples: deque[float] = deque(maxlen=window)

    def add(self, value: float) -> None:
        self.count += 1
        self.total += value
        self.samples.append(value)

    def quantiles(self) -> tuple[float, float] | None:
        """(median, p95) over the window; p95 by nearest rank. None when empty."""
        if not self.samples:
            return None
        import statistics  # with fractions: imported when metrics are first read

        ordered = sorted(self.samples)
        p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
        return statistics.median(ordered), p95

    def as_dict(self) -> dict[str, Any]:
        q = self.quantiles()
        return {
            "count": self.count,
            "sum": self.total,
            "median": q[0] if q else None,
            "p95": q[1] if q else None,
        }


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape_label(v)}"' for k, v in labels.items()) + "}"


def family(
    out: list[str],
    name: str,
    kind: str,
    help_text: str,
    samples: Iterable[tuple[Mapping[str, str], float]],
) -> None:
    full = f"clawseed_{name}"
    out.append(f"# HELP {full} {help_text}")
    out.append(f"# TYPE {full} {kind}")
    out.extend(f"{full}{_labels(labels)} {_number(value)}" for labels, value in samples)


def summary_lines(out: list[str], name: str, help_text: str, summary: Summary) -> None:
    full = f"clawseed_{name}"
    out.append(f"# HELP {full} {help_text}")
    out.append(f"# TYPE {full} summary")
    q = summary.quantiles()
    if q is not None:
        out.append(f'{full}{{quantile="0.5"}} {_number(q[0] / 1000)}')
        out.append(f'{full}{{quantile="0.95"}} {_number(q[1] / 1000)}')
    out.append(f"{full}_sum {_number(summary.total / 1000)}")
    out.append(f"{full}_count {summary.count}")
