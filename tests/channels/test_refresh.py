"""RefreshSchedule: one schedule for every channel that wants fresh readings; the shortest
wanted interval wins; nothing is refreshed once nobody wants it; failures are told."""

from __future__ import annotations

from clawseed_edge.channels.refresh import RefreshSchedule
from clawseed_edge.channels.watch import HardwareWatch

from .test_watch import Board, _until


async def test_the_shortest_wanted_interval_wins_and_the_loop_ends_without_wants() -> None:
    board = Board()
    schedule = RefreshSchedule([board])
    slow = schedule.want(3600.0)
    await _until(lambda: board.refreshes == 1)  # the first round at once
    fast = schedule.want(0.01)
    assert schedule.interval_s == 0.01
    await _until(lambda: board.refreshes >= 4)
    fast()
    assert schedule.interval_s == 3600.0
    slow()
    await _until(lambda: not schedule.running)
    done = board.refreshes
    schedule.poke()
    assert board.refreshes == done and schedule.interval_s is None
    await schedule.aclose()


async def test_a_failed_refresh_is_told_to_whoever_wants_refreshes() -> None:
    board = Board(refresh_error=OSError("i2c bus 1 vanished"))
    schedule = RefreshSchedule([board])
    heard: list[str] = []
    release = schedule.want(0.01, heard.append)
    await _until(lambda: len(heard) >= 2)
    assert heard[0] == "pi: i2c bus 1 vanished"
    release()
    await schedule.aclose()


async def test_two_watches_on_one_schedule_refresh_once_per_round() -> None:
    board = Board()
    schedule = RefreshSchedule([board])
    frames: list[dict[str, object]] = []
    one = HardwareWatch([board], frames.append, refresh_s=3600.0, schedule=schedule)
    two = HardwareWatch([board], frames.append, refresh_s=3600.0, schedule=schedule)
    one.listener_added()
    two.listener_added()
    await _until(lambda: schedule.rounds >= 1)
    assert board.refreshes == schedule.rounds  # one refresh per round, not one per watch
    await one.aclose()
    await two.aclose()
    await _until(lambda: not schedule.running)
    await schedule.aclose()
