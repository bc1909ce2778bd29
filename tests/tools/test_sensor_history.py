"""sensor_history: windows in words (a DST night included) and a turn that answers from history."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from clawseed_edge.agent import AgentBuilder, SecurityPolicy
from clawseed_edge.api import DoneEvent, RiskClass, ToolArgumentsInvalid, ToolCall
from clawseed_edge.state import HistoryPoint, SensorHistory
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.tools.sensor_history import SensorHistoryTool, parse_window

BERLIN = ZoneInfo("Europe/Berlin")


def at(*args: int) -> float:
    return dt.datetime(*args, tzinfo=BERLIN).timestamp()  # type: ignore[misc]


def test_last_night_is_22_to_07_local() -> None:
    now = at(2026, 12, 2, 9, 30)
    start, end, label = parse_window("last night", now=now, tz=BERLIN)
    assert (start, end, label) == (at(2026, 12, 1, 22), at(2026, 12, 2, 7), "last night")
    # still night: up to now
    start, end, _ = parse_window("last night", now=at(2026, 12, 2, 3), tz=BERLIN)
    assert (start, end) == (at(2026, 12, 1, 22), at(2026, 12, 2, 3))


def test_a_dst_night_is_as_long_as_the_wall_clock_says() -> None:
    start, end, _ = parse_window("last night", now=at(2026, 10, 25, 12), tz=BERLIN)
    assert end - start == 10 * 3600  # clocks went back an hour
    start, end, _ = parse_window("last night", now=at(2026, 3, 29, 12), tz=BERLIN)
    assert end - start == 8 * 3600  # clocks went forward


@pytest.mark.parametrize(
    ("window", "seconds"),
    [("24h", 86400), ("10m", 600), ("7d", 7 * 86400), ("last week", 604800), ("last hour", 3600)],
)
def test_spans(window: str, seconds: float) -> None:
    start, end, _ = parse_window(window, now=1000000.0)
    assert (start, end) == (1000000.0 - seconds, 1000000.0)


def test_from_to_in_local_time_and_mistakes() -> None:
    start, end, _ = parse_window(
        None, "2026-12-01T22:00", "2026-12-02T07:00", now=at(2026, 12, 3, 0), tz=BERLIN
    )
    assert (start, end) == (at(2026, 12, 1, 22), at(2026, 12, 2, 7))
    with pytest.raises(ToolArgumentsInvalid, match="'fortnight' is not a window"):
        parse_window("fortnight", now=0.0)
    with pytest.raises(ToolArgumentsInvalid, match="ends before it starts"):
        parse_window(None, 100, 50, now=200.0)
    with pytest.raises(ToolArgumentsInvalid, match="longer than 400 days"):
        parse_window("500d", now=1e9)


async def night_of_readings(path: Path) -> tuple[SensorHistory, float]:
    """A night in the greenhouse, one value every 10 min: coldest 2.5 °C at 05:10."""
    now = at(2026, 12, 2, 9, 30)
    history = await SensorHistory.open(path, clock=lambda: now)
    t = at(2026, 12, 1, 18)
    while t <= now:
        hours = (t - at(2026, 12, 2, 5, 10)) / 3600
        history.record(HistoryPoint("greenhouse", "temperature", "°C", t, 2.5 + abs(hours)))
        t += 600
    await history.flush()
    return history, now


async def test_the_tool_summarises_last_night(tmp_path: Path) -> None:
    history, now = await night_of_readings(tmp_path / "h.db")
    async with history:
        tool = SensorHistoryTool(history, tz=BERLIN, clock=lambda: now)
        assert tool.risk is RiskClass.READ
        result = await tool.execute({"sensor": "greenhouse", "window": "last night"}, None)  # type: ignore[arg-type]
        assert result.success, result.error
        assert "min 2.5 °C at 05:10" in result.output
        assert "max 9.67 °C at 22:00" in result.output
        assert result.data[0]["count"] == 55  # 22:00 .. 07:00 every 10 min
        missing = await tool.execute({"sensor": "porch"}, None)  # type: ignore[arg-type]
        assert not missing.success and "sensors with history: greenhouse" in (missing.error or "")
        wrong = await tool.execute({"sensor": "greenhouse", "quantity": "humidity"}, None)  # type: ignore[arg-type]
        assert "it has temperature" in (wrong.error or "")


async def test_a_turn_answers_how_cold_it_was_last_night(tmp_path: Path) -> None:
    history, now = await night_of_readings(tmp_path / "h.db")
    async with history:
        call = ToolCall("sensor_history", {"sensor": "greenhouse", "window": "last night"})
        provider = ScriptedProvider(
            [call, ScriptedProvider.text("It got down to 2.5 °C at 05:10.")]
        )
        agent = (
            AgentBuilder()
            .provider(provider)
            .tools([SensorHistoryTool(history, tz=BERLIN, clock=lambda: now)])
            .security_policy(SecurityPolicy(autonomy="read_only"))  # a read: allowed
            .platform("test")
            .option("clock", lambda: "")
            .build()
        )
        try:
            events = [e async for e in agent.turn("How cold was it in the greenhouse last night?")]
        finally:
            await agent.aclose()
        assert isinstance(events[-1], DoneEvent)
        assert events[-1].text == "It got down to 2.5 °C at 05:10."
        sent = provider.requests[1].messages[-1]
        assert sent.role == "tool"
        assert "min 2.5 °C at 05:10" in sent.content


def test_unix_seconds_as_text_and_times_outside_the_range() -> None:
    # --from/--to arrive as text: Unix seconds are accepted as the help says.
    start, end, _ = parse_window(None, "1790000000", "1790003600.5", now=1_800_000_000.0)
    assert (start, end) == (1_790_000_000.0, 1_790_003_600.5)
    for bad, what in (
        ("0001-01-01T00:00", "from"),  # overflowed the platform's mktime: a traceback before
        ("0001-01-01T00:00+00:00", "from"),
        (-5, "from"),
        (float("nan"), "from"),
        ("9999-12-31T23:59", "from"),
    ):
        with pytest.raises(ToolArgumentsInvalid, match=f"^{what}: .* outside the times"):
            parse_window(None, bad, now=1_800_000_000.0)
    with pytest.raises(ToolArgumentsInvalid, match=r"^to: .* outside the times"):
        parse_window(None, "2026-12-01T22:00", "0001-01-01", now=1_800_000_000.0)
