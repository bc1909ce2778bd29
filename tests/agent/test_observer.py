"""Observers: log lines and levels, metrics arithmetic, cost, exposition format, isolation."""

from __future__ import annotations

import json
import logging
import re

import pytest

from clawseed_edge.agent.observer import (
    CompositeObserver,
    LoggingObserver,
    MetricsObserver,
    NoopObserver,
)
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
    Usage,
)

ALL_EVENTS: list[ObserverEvent] = [
    TurnStarted("s1", "t1"),
    LlmRequest("ollama", "qwen3:4b", messages=3, tools=5),
    LlmResponse("ollama", "qwen3:4b", latency_ms=120.0, usage=Usage(100, 20, 50)),
    ToolExecuted("gpio_write", duration_ms=2.5, success=True),
    PolicyDecision("shell", "denied", reason="not in allowlist", device=None),
    LlmResponse("ollama", "qwen3:4b", latency_ms=30000.0, success=False, error="timed out\nx"),
    ErrorObserved("provider", "connection refused", code="provider_unreachable"),
    TurnEnded("s1", "t1", "done", iterations=2, duration_ms=900.0, usage=Usage(100, 20)),
]


def test_every_observer_satisfies_the_protocol() -> None:
    for obs in (NoopObserver(), LoggingObserver(), MetricsObserver(), CompositeObserver()):
        assert isinstance(obs, Observer)


def test_noop_accepts_everything() -> None:
    obs = NoopObserver()
    for event in ALL_EVENTS:
        obs.record(event)


# --- LoggingObserver ----------------------------------------------------------------------------


def test_logging_one_line_per_event_with_levels(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("test.observer")
    obs = LoggingObserver(logger)
    with caplog.at_level(logging.DEBUG, logger="test.observer"):
        for event in ALL_EVENTS:
            obs.record(event)
    records = [r for r in caplog.records if r.name == "test.observer"]
    assert len(records) == len(ALL_EVENTS)
    levels = [r.levelno for r in records]
    assert levels == [
        logging.DEBUG,  # turn started
        logging.DEBUG,  # llm request
        logging.INFO,  # llm response
        logging.INFO,  # tool
        logging.INFO,  # policy
        logging.WARNING,  # failed llm request
        logging.WARNING,  # error
        logging.INFO,  # turn ended
    ]
    messages = [r.getMessage() for r in records]
    assert all("\n" not in m for m in messages)
    assert "qwen3:4b" in messages[2] and "120 ms" in messages[2]
    assert "failed" in messages[5] and "timed out x" in messages[5]
    assert "provider_unreachable" in messages[6]
    assert "denied" in messages[4] and "shell" in messages[4] and "allowlist" in messages[4]


def test_logging_turn_error_is_a_warning_and_failed_tool_names_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    obs = LoggingObserver(logging.getLogger("test.observer2"))
    with caplog.at_level(logging.DEBUG, logger="test.observer2"):
        obs.record(TurnEnded("s", "t", "error", 1, 5.0))
        obs.record(ToolExecuted("relay", 1.0, False, "pin reserved"))
    assert caplog.records[0].levelno == logging.WARNING
    assert "pin reserved" in caplog.records[1].getMessage()


def test_logging_clips_long_errors(caplog: pytest.LogCaptureFixture) -> None:
    obs = LoggingObserver(logging.getLogger("test.observer3"))
    with caplog.at_level(logging.DEBUG, logger="test.observer3"):
        obs.record(ErrorObserved("x", "y" * 5000))
    assert len(caplog.records[0].getMessage()) < 300


# --- MetricsObserver ----------------------------------------------------------------------------


def test_metrics_counters_and_tokens() -> None:
    m = MetricsObserver()
    for event in ALL_EVENTS:
        m.record(event)
    m.record(ToolExecuted("gpio_write", 7.5, False, "boom"))
    m.record(ToolExecuted("memory_store", 1.0, True))
    m.record(PolicyDecision("gpio_write", "approved"))
    m.record(PolicyDecision("gpio_write", "approved"))
    m.record(TurnEnded("s1", "t2", "limit", 10, 100.0))
    snap = m.snapshot()
    assert snap["turns"]["started"] == 1
    assert snap["turns"]["by_outcome"] == {"done": 1, "limit": 1}
    assert snap["llm"]["requests"] == 1
    assert snap["llm"]["responses"] == 2
    assert snap["llm"]["errors"] == 1
    assert snap["llm"]["errors_by_model"] == {"ollama/qwen3:4b": 1}
    assert snap["tokens"] == {"cached_input": 50, "input": 100, "output": 20}
    assert snap["tools"]["calls"] == 3
    assert snap["tools"]["by_name"] == {
        "gpio_write": {"success": 1, "failure": 1},
        "memory_store": {"success": 1, "failure": 0},
    }
    assert snap["policy"] == {"approved": 2, "denied": 1}
    assert snap["errors"] == {"provider/provider_unreachable": 1}
    json.dumps(snap)  # JSON-able


def test_latency_summary_median_p95_count_sum() -> None:
    m = MetricsObserver()
    for ms in range(1, 101):  # 1..100 ms
        m.record(LlmResponse("p", "m", latency_ms=float(ms)))
    m.record(LlmResponse("p", "m", latency_ms=99999.0, success=False))  # failures not timed
    lat = m.snapshot()["llm"]["latency_ms"]
    assert lat == {"count": 100, "sum": 5050.0, "median": 50.5, "p95": 95.0}


def test_latency_window_is_bounded_but_count_is_total() -> None:
    m = MetricsObserver(window=10)
    for ms in range(1, 101):
        m.record(ToolExecuted("t", float(ms), True))
    dur = m.snapshot()["tools"]["duration_ms"]
    assert dur["count"] == 100
    assert dur["sum"] == 5050.0
    assert dur["median"] == 95.5  # median of 91..100
    assert dur["p95"] == 100.0
    assert len(m._tool_duration.samples) == 10


def test_empty_summary_has_no_quantiles() -> None:
    lat = MetricsObserver().snapshot()["llm"]["latency_ms"]
    assert lat == {"count": 0, "sum": 0.0, "median": None, "p95": None}


def test_cost_from_price_table() -> None:
    m = MetricsObserver({"claude-x": (3.0, 15.0), "ollama/qwen3:4b": (0.0, 0.0)})
    m.record(LlmResponse("anthropic", "claude-x", 1.0, Usage(1_000_000, 100_000)))
    m.record(LlmResponse("anthropic", "claude-x", 1.0, Usage(2000, 1000, 500)))
    m.record(LlmResponse("ollama", "qwen3:4b", 1.0, Usage(5000, 500)))
    cost = m.snapshot()["cost"]
    expected = 3.0 + 1.5 + 2000 * 3 / 1e6 + 1000 * 15 / 1e6
    assert cost["usd_by_model"]["claude-x"] == pytest.approx(expected)
    assert cost["usd_by_model"]["qwen3:4b"] == 0.0
    assert cost["usd_total"] == pytest.approx(expected)
    assert cost["unpriced_responses"] == 0


def test_provider_qualified_price_wins_over_bare_model() -> None:
    m = MetricsObserver({"gpt": (1.0, 1.0), "openrouter/gpt": (2.0, 2.0)})
    m.record(LlmResponse("openrouter", "gpt", 1.0, Usage(1_000_000, 0)))
    m.record(LlmResponse("openai", "gpt", 1.0, Usage(1_000_000, 0)))
    assert m.snapshot()["cost"]["usd_total"] == pytest.approx(3.0)


def test_unknown_model_costs_nothing_and_is_counted_unpriced() -> None:
    m = MetricsObserver({"known": (1.0, 2.0)})
    m.record(LlmResponse("x", "mystery", 1.0, Usage(10_000, 10_000)))
    m.record(LlmResponse("x", "mystery", 1.0, Usage(0, 0), success=False))  # no tokens
    cost = m.snapshot()["cost"]
    assert cost["usd_total"] == 0
    assert cost["unpriced_responses"] == 1
    assert cost["unpriced_models"] == ["mystery"]


@pytest.mark.parametrize(
    "prices",
    [{"m": (-1.0, 1.0)}, {"m": (1.0, float("nan"))}, {"m": (1.0,)}, {"m": ("a", "b")}],
)
def test_bad_prices_are_rejected_naming_the_model(prices: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="'m'"):
        MetricsObserver(prices)  # type: ignore[arg-type]


def test_metrics_record_never_raises_on_garbage(caplog: pytest.LogCaptureFixture) -> None:
    m = MetricsObserver()
    bad = LlmResponse("p", "m", latency_ms="slow")  # type: ignore[arg-type]
    m.record(bad)
    m.record(object())  # type: ignore[arg-type]
    assert m.snapshot()["llm"]["latency_ms"]["count"] == 0


# --- Prometheus exposition ----------------------------------------------------------------------

_SAMPLE = re.compile(
    r'^clawseed_[a-z_]+(\{[a-z_]+="(?:[^"\\\n]|\\.)*"(,[a-z_]+="(?:[^"\\\n]|\\.)*")*\})? '
    r"(-?[0-9.e+-]+|NaN|[+-]Inf)$"
)


def _metrics_with_data() -> MetricsObserver:
    m = MetricsObserver({"m": (1.0, 2.0)})
    for event in ALL_EVENTS:
        m.record(event)
    m.record(LlmResponse("p", "m", 250.0, Usage(1_000_000, 500_000)))
    m.record(ToolExecuted('we"ird\\tool\n', 1.0, True))
    return m


def test_prometheus_lines_are_well_formed() -> None:
    text = _metrics_with_data().prometheus_text()
    assert text.endswith("\n")
    types: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in {"counter", "summary"}
            types[name] = kind
            continue
        assert _SAMPLE.match(line), line
        family = re.sub(r"(_sum|_count)$", "", line.split("{")[0].split(" ")[0])
        assert family in types, line


def test_prometheus_values() -> None:
    text = _metrics_with_data().prometheus_text()
    lines = set(text.splitlines())
    assert "clawseed_turns_started_total 1" in lines
    assert 'clawseed_turns_total{outcome="done"} 1' in lines
    assert 'clawseed_llm_requests_total{provider="ollama",model="qwen3:4b"} 1' in lines
    assert 'clawseed_llm_errors_total{provider="ollama",model="qwen3:4b"} 1' in lines
    assert 'clawseed_llm_tokens_total{type="input"} 1000100' in lines
    assert 'clawseed_tool_calls_total{tool="gpio_write",outcome="success"} 1' in lines
    assert 'clawseed_policy_decisions_total{decision="denied"} 1' in lines
    assert 'clawseed_cost_usd_total{model="m"} 2.0' in lines
    assert 'clawseed_unpriced_responses_total{model="qwen3:4b"} 1' in lines
    # summaries in seconds: successful latencies 120 ms and 250 ms
    assert 'clawseed_llm_latency_seconds{quantile="0.5"} 0.185' in lines
    assert 'clawseed_llm_latency_seconds{quantile="0.95"} 0.25' in lines
    assert "clawseed_llm_latency_seconds_sum 0.37" in lines
    assert "clawseed_llm_latency_seconds_count 2" in lines
    # label values are escaped
    assert 'clawseed_tool_calls_total{tool="we\\"ird\\\\tool\\n",outcome="success"} 1' in lines


def test_prometheus_empty_observer_has_zero_counters_and_no_quantiles() -> None:
    text = MetricsObserver().prometheus_text()
    assert "clawseed_turns_started_total 0" in text.splitlines()
    assert "clawseed_tool_duration_seconds_count 0" in text.splitlines()
    assert "quantile=" not in text


def test_prometheus_is_deterministic() -> None:
    assert _metrics_with_data().prometheus_text() == _metrics_with_data().prometheus_text()


# --- CompositeObserver --------------------------------------------------------------------------


class _Broken:
    def record(self, event: ObserverEvent) -> None:
        raise RuntimeError("broken observer")


def test_composite_fans_out_and_isolates_a_failing_observer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first, last = MetricsObserver(), MetricsObserver()
    comp = CompositeObserver(first, _Broken(), last)
    with caplog.at_level(logging.DEBUG, logger="clawseed_edge.agent.observer"):
        for event in ALL_EVENTS:
            comp.record(event)
    assert first.snapshot() == last.snapshot()
    assert last.snapshot()["llm"]["requests"] == 1
    assert comp.failures[1] == len(ALL_EVENTS)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # first failure with traceback, later ones quieter
    assert "_Broken" in warnings[0].getMessage()
    assert warnings[0].exc_info is not None


def test_empty_composite_is_fine() -> None:
    CompositeObserver().record(TurnStarted("s", "t"))
