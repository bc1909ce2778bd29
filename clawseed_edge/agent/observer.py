"""Observers: what the runtime does with its observer events (nothing, log lines, metrics).

Every ``record`` here is cheap, never blocks and never raises: a broken observer must not end a
turn. :class:`CompositeObserver` fans one event out to several and isolates a failing one.

:class:`MetricsObserver` keeps counters, latency summaries and a cost estimate, readable as a
JSON-able :meth:`~MetricsObserver.snapshot` or as Prometheus text exposition
(:meth:`~MetricsObserver.prometheus_text`, for a ``/metrics`` endpoint).
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any

from clawseed_edge.api import (
    ErrorObserved,
    LlmRequest,
    LlmResponse,
    Observer,
    ObserverEvent,
    PolicyDecision,
    ToolExecuted,
    TurnEnded,
    TurnStarted,
)

from .metrics_text import Summary as _Summary
from .metrics_text import family as _family
from .metrics_text import summary_lines as _summary

__all__ = [
    "CompositeObserver",
    "LoggingObserver",
    "MetricsObserver",
    "NoopObserver",
]

_log = logging.getLogger(__name__)

#: Samples kept per latency summary; median and p95 are computed over the newest ones.
DEFAULT_WINDOW = 1024


class NoopObserver:
    """Ignores every event."""

    def record(self, event: ObserverEvent) -> None:
        """Do nothing."""


def _clip(text: str | None, limit: int = 200) -> str:
    """One line of at most ``limit`` characters."""
    line = " ".join((text or "").split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


class LoggingObserver:
    """Writes one concise line per event to a logger.

    Levels: turn starts and LLM requests at DEBUG; LLM responses, tool calls, policy decisions
    and finished turns at INFO; errors (an ``ErrorObserved``, a failed LLM request, a turn that
    ended in error) at WARNING.

    Args:
        logger: Where to write; defaults to the ``clawseed_edge.agent.observer`` logger.
    """

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self.logger = logger if logger is not None else _log

    def record(self, event: ObserverEvent) -> None:
        """Log ``event``; never raises."""
        try:
            self._record(event)
        except Exception:  # an observer must never end a turn
            _log.debug("LoggingObserver could not log %r", event, exc_info=True)

    def _record(self, event: ObserverEvent) -> None:
        log = self.logger.log
        if isinstance(event, TurnStarted):
            log(logging.DEBUG, "turn %s started (session %s)", event.turn_id, event.session_id)
        elif isinstance(event, TurnEnded):
            log(
                logging.WARNING if event.outcome == "error" else logging.INFO,
                "turn %s %s: %d iterations, %.0f ms, %d in / %d out tokens (session %s)",
                event.turn_id,
                event.outcome,
                event.iterations,
                event.duration_ms,
                event.usage.input_tokens,
                event.usage.output_tokens,
                event.session_id,
            )
        elif isinstance(event, LlmRequest):
            log(
                logging.DEBUG,
                "llm request %s/%s: %d messages, %d tools",
                event.provider,
                event.model,
                event.messages,
                event.tools,
            )
        elif isinstance(event, LlmResponse):
            if event.success:
                log(
                    logging.INFO,
                    "llm response %s/%s in %.0f ms: %d in / %d out tokens (%d cached)",
                    event.provider,
                    event.model,
                    event.latency_ms,
                    event.usage.input_tokens,
                    event.usage.output_tokens,
                    event.usage.cached_input_tokens,
                )
            else:
                log(
                    logging.WARNING,
                    "llm request %s/%s failed after %.0f ms: %s",
                    event.provider,
                    event.model,
                    event.latency_ms,
                    _clip(event.error) or "unknown error",
                )
        elif isinstance(event, ToolExecuted):
            if event.success:
                log(logging.INFO, "tool %s ok in %.1f ms", event.tool, event.duration_ms)
            else:
                log(
                    logging.INFO,
                    "tool %s failed in %.1f ms: %s",
                    event.tool,
                    event.duration_ms,
                    _clip(event.error) or "no reason given",
                )
        elif isinstance(event, PolicyDecision):
            device = f" on {event.device}" if event.device else ""
            reason = f": {_clip(event.reason)}" if event.reason else ""
            log(
                logging.INFO,
                "policy %s %s%s (session %s)%s",
                event.decision,
                event.tool,
                device,
                event.session_id,
                reason,
            )
        elif isinstance(event, ErrorObserved):
            log(
                logging.WARNING,
                "error in %s [%s]: %s",
                event.component,
                event.code,
                _clip(event.message),
            )
        else:
            log(logging.DEBUG, "event %s", _clip(repr(event)))


def _sorted_counts(counter: Mapping[str, int | float]) -> dict[str, Any]:
    return {k: counter[k] for k in sorted(counter)}


class MetricsObserver:
    """Counters, latency summaries and a cost estimate built from observer events.

    Counts turns by outcome, LLM requests and errors (by provider/model), tokens in/out/cached,
    tool calls by name and success, policy decisions by decision and errors by component.
    Latency summaries (count, sum, median, p95) cover successful LLM responses, tool durations
    and turn durations; median and p95 use the newest ``window`` samples, count and sum all.

    Cost: each :class:`LlmResponse` costs ``input_tokens * in_price / 1e6 + output_tokens *
    out_price / 1e6`` USD, with the prices looked up as ``"provider/model"`` first, then
    ``"model"``. Cached input tokens are counted but not priced separately. A response with
    tokens from a model that is not in the table costs 0 and is counted as unpriced.

    Args:
        prices: Model -> (USD per million input tokens, USD per million output tokens).
        window: Samples kept per latency summary.

    Raises:
        ValueError: A price is negative or not a finite number, or ``window`` is less than 1.

    Thread-safe: ``record``, ``snapshot`` and ``prometheus_text`` may be called from any thread.
    """

    def __init__(
        self,
        prices: Mapping[str, tuple[float, float]] | None = None,
        *,
        window: int = DEFAULT_WINDOW,
    ) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        self._prices: dict[str, tuple[float, float]] = {}
        for model, pair in (prices or {}).items():
            try:
                p_in, p_out = (float(p) for p in pair)
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"price for model {model!r} must be (input, output) USD per million "
                    f"tokens, got {pair!r}"
                ) from exc
            if not all(math.isfinite(p) and p >= 0 for p in (p_in, p_out)):
                raise ValueError(
                    f"price for model {model!r} must be two finite numbers >= 0 "
                    f"(USD per million input and output tokens), got {pair!r}"
                )
            self._prices[model] = (p_in, p_out)
        self._lock = threading.Lock()
        self._turns_started = 0
        self._turns: Counter[str] = Counter()
        self._llm_requests: Counter[tuple[str, str]] = Counter()
        self._llm_responses: Counter[tuple[str, str]] = Counter()
        self._llm_errors: Counter[tuple[str, str]] = Counter()
        self._tokens: Counter[str] = Counter(input=0, output=0, cached_input=0)
        self._tools: Counter[tuple[str, bool]] = Counter()
        self._policy: Counter[str] = Counter()
        self._errors: Counter[tuple[str, str]] = Counter()
        self._cost: dict[str, float] = {}
        self._unpriced: Counter[str] = Counter()
        self._llm_latency = _Summary(window)
        self._tool_duration = _Summary(window)
        self._turn_duration = _Summary(window)

    def price_of(self, provider: str, model: str) -> tuple[float, float] | None:
        """The (input, output) USD per million tokens for a model, or None if unknown."""
        return self._prices.get(f"{provider}/{model}") or self._prices.get(model)

    def record(self, event: ObserverEvent) -> None:
        """Count ``event``; never raises."""
        try:
            with self._lock:
                self._record(event)
        except Exception:  # an observer must never end a turn
            _log.warning("MetricsObserver could not record %r", event, exc_info=True)

    def _record(self, event: ObserverEvent) -> None:
        if isinstance(event, TurnStarted):
            self._turns_started += 1
        elif isinstance(event, TurnEnded):
            self._turns[event.outcome] += 1
            self._turn_duration.add(float(event.duration_ms))
        elif isinstance(event, LlmRequest):
            self._llm_requests[event.provider, event.model] += 1
        elif isinstance(event, LlmResponse):
            key = (event.provider, event.model)
            self._llm_responses[key] += 1
            usage = event.usage
            self._tokens["input"] += usage.input_tokens
            self._tokens["output"] += usage.output_tokens
            self._tokens["cached_input"] += usage.cached_input_tokens
            if event.success:
                self._llm_latency.add(float(event.latency_ms))
            else:
                self._llm_errors[key] += 1
            self._add_cost(event)
        elif isinstance(event, ToolExecuted):
            self._tools[event.tool, bool(event.success)] += 1
            self._tool_duration.add(float(event.duration_ms))
        elif isinstance(event, PolicyDecision):
            self._policy[event.decision] += 1
        elif isinstance(event, ErrorObserved):
            self._errors[event.component, event.code] += 1

    def _add_cost(self, event: LlmResponse) -> None:
        usage = event.usage
        if not (usage.input_tokens or usage.output_tokens):
            return
        price = self.price_of(event.provider, event.model)
        if price is None:
            self._unpriced[event.model] += 1
            return
        usd = usage.input_tokens * price[0] / 1e6 + usage.output_tokens * price[1] / 1e6
        self._cost[event.model] = self._cost.get(event.model, 0.0) + usd

    def snapshot(self) -> dict[str, Any]:
        """All metrics as a JSON-able dict with sorted keys (times in milliseconds, cost in USD)."""
        with self._lock:
            tools: dict[str, dict[str, int]] = {}
            for (name, ok), n in sorted(self._tools.items()):
                entry = tools.setdefault(name, {"success": 0, "failure": 0})
                entry["success" if ok else "failure"] += n
            return {
                "turns": {
                    "started": self._turns_started,
                    "by_outcome": _sorted_counts(self._turns),
                    "duration_ms": self._turn_duration.as_dict(),
                },
                "llm": {
                    "requests": sum(self._llm_requests.values()),
                    "responses": sum(self._llm_responses.values()),
                    "errors": sum(self._llm_errors.values()),
                    "requests_by_model": _sorted_counts(
                        {f"{p}/{m}": n for (p, m), n in self._llm_requests.items()}
                    ),
                    "errors_by_model": _sorted_counts(
                        {f"{p}/{m}": n for (p, m), n in self._llm_errors.items()}
                    ),
                    "latency_ms": self._llm_latency.as_dict(),
                },
                "tokens": _sorted_counts(self._tokens),
                "tools": {
                    "calls": sum(self._tools.values()),
                    "by_name": tools,
                    "duration_ms": self._tool_duration.as_dict(),
                },
                "policy": _sorted_counts(self._policy),
                "errors": _sorted_counts({f"{c}/{k}": n for (c, k), n in self._errors.items()}),
                "cost": {
                    "usd_total": sum(self._cost.values()),
                    "usd_by_model": _sorted_counts(self._cost),
                    "unpriced_responses": sum(self._unpriced.values()),
                    "unpriced_models": sorted(self._unpriced),
                },
            }

    def prometheus_text(self) -> str:
        """The metrics in Prometheus text exposition format (version 0.0.4).

        Names start with ``clawseed_``; durations are in seconds, as Prometheus expects.
        """
        out: list[str] = []
        with self._lock:
            _family(
                out, "turns_started_total", "counter", "Turns started.", [({}, self._turns_started)]
            )
            _family(
                out,
                "turns_total",
                "counter",
                "Turns finished, by outcome.",
                [({"outcome": k}, n) for k, n in sorted(self._turns.items())],
            )
            _summary(out, "turn_duration_seconds", "Turn duration.", self._turn_duration)
            _family(
                out,
                "llm_requests_total",
                "counter",
                "Requests sent to a model provider.",
                [
                    ({"provider": p, "model": m}, n)
                    for (p, m), n in sorted(self._llm_requests.items())
                ],
            )
            _family(
                out,
                "llm_errors_total",
                "counter",
                "Model requests that failed.",
                [
                    ({"provider": p, "model": m}, n)
                    for (p, m), n in sorted(self._llm_errors.items())
                ],
            )
            _summary(
                out,
                "llm_latency_seconds",
                "Latency of successful model responses.",
                self._llm_latency,
            )
            _family(
                out,
                "llm_tokens_total",
                "counter",
                "Tokens reported by model providers, by type.",
                [({"type": k}, n) for k, n in sorted(self._tokens.items())],
            )
            _family(
                out,
                "tool_calls_total",
                "counter",
                "Tool calls, by tool and outcome.",
                [
                    ({"tool": t, "outcome": "success" if ok else "failure"}, n)
                    for (t, ok), n in sorted(self._tools.items())
                ],
            )
            _summary(out, "tool_duration_seconds", "Tool call duration.", self._tool_duration)
            _family(
                out,
                "policy_decisions_total",
                "counter",
                "SecurityPolicy decisions, by decision.",
                [({"decision": k}, n) for k, n in sorted(self._policy.items())],
            )
            _family(
                out,
                "errors_total",
                "counter",
                "Errors observed, by component and code.",
                [({"component": c, "code": k}, n) for (c, k), n in sorted(self._errors.items())],
            )
            _family(
                out,
                "cost_usd_total",
                "counter",
                "Estimated model cost in US dollars, by model.",
                [({"model": m}, usd) for m, usd in sorted(self._cost.items())],
            )
            _family(
                out,
                "unpriced_responses_total",
                "counter",
                "Model responses with tokens but no price in the table, by model.",
                [({"model": m}, n) for m, n in sorted(self._unpriced.items())],
            )
        return "\n".join(out) + "\n"


class CompositeObserver:
    """Sends each event to several observers; one that raises is logged and skipped.

    The first failure of each observer is logged at WARNING with its traceback, later ones at
    DEBUG (a broken observer would otherwise flood the log on every event).
    """

    def __init__(self, *observers: Observer) -> None:
        self.observers: tuple[Observer, ...] = observers
        self.failures: Counter[int] = Counter()

    def record(self, event: ObserverEvent) -> None:
        """Pass ``event`` to every observer in order; never raises."""
        for index, observer in enumerate(self.observers):
            try:
                observer.record(event)
            except Exception:
                self.failures[index] += 1
                level = logging.WARNING if self.failures[index] == 1 else logging.DEBUG
                try:
                    _log.log(
                        level,
                        "observer %s failed on %s (failure %d); continuing without it for "
                        "this event",
                        type(observer).__name__,
                        getattr(event, "kind", type(event).__name__),
                        self.failures[index],
                        exc_info=True,
                    )
                except Exception:  # pragma: no cover - a broken logging handler
                    pass
