"""The scheduler loop on a manual clock: restarts, missed runs, overlaps, failures, one-offs."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from clawseed_edge.scheduler import Job, JobStore, ManualClock, Schedule, Scheduler
from clawseed_edge.state import StateDB

from .conftest import T0, RecordingRunner

UTC = ZoneInfo("UTC")


def every(name: str, seconds: int, missed: str = "skip") -> Job:
    return Job.build(
        name, Schedule.parse("every", seconds), prompt="hello", missed=missed, created_at=T0
    )


def scheduler(store: JobStore, runner: RecordingRunner, clock: ManualClock) -> Scheduler:
    return Scheduler(store, runner, zone=UTC, clock=clock)


async def statuses(store: JobStore, name: str) -> list[str]:
    return [r.status for r in reversed(await store.runs(name))]


async def test_a_due_job_runs_and_its_next_run_moves_on(
    store: JobStore, runner: RecordingRunner
) -> None:
    clock = ManualClock(T0)
    sched = scheduler(store, runner, clock)
    await store.add(every("tick", 60))
    await sched.prepare()
    assert await sched.run_due() == []
    clock.set(T0 + 60)
    assert await sched.run_due() == ["tick"]
    await sched.wait_idle()
    job = await store.get("tick")
    assert job is not None and job.next_run == T0 + 120 and job.last_run == T0 + 60
    runs = await store.runs("tick")
    assert [(r.status, r.output, r.scheduled_for) for r in runs] == [("ok", "tick done", T0 + 60)]


async def test_a_job_is_restored_after_a_restart(state_path: Path, runner: RecordingRunner) -> None:
    clock = ManualClock(T0)
    async with await StateDB.open(state_path) as db:
        sched = scheduler(JobStore(db), runner, clock)
        await JobStore(db).add(every("tick", 60))
        await sched.prepare()
        clock.set(T0 + 60)
        await sched.run_due()
        await sched.wait_idle()
        await sched.aclose()
    # A new process: the job and its next run come back from state.db.
    clock.set(T0 + 100)
    async with await StateDB.open(state_path) as db:
        store = JobStore(db)
        sched = scheduler(store, runner, clock)
        await sched.prepare()
        assert await sched.run_due() == []
        clock.set(T0 + 120)
        assert await sched.run_due() == ["tick"]
        await sched.wait_idle()
        assert await statuses(store, "tick") == ["ok", "ok"]
    assert runner.ran == ["tick", "tick"]


async def test_a_missed_run_with_skip_is_recorded_and_not_run(
    store: JobStore, runner: RecordingRunner
) -> None:
    await store.add(every("tick", 60, missed="skip"))
    await store.set_times("tick", next_run=T0 + 60)
    clock = ManualClock(T0 + 600)  # the service was down for ten runs
    sched = scheduler(store, runner, clock)
    await sched.prepare()
    assert await sched.run_due() == []
    runs = await store.runs("tick")
    assert [r.status for r in runs] == ["missed"]
    assert runs[0].scheduled_for == T0 + 60 and "skipped (missed = skip)" in (runs[0].error or "")
    job = await store.get("tick")
    assert job is not None and job.next_run == T0 + 660
    assert runner.ran == []


async def test_a_missed_run_with_run_once_runs_once_however_many_were_missed(
    store: JobStore, runner: RecordingRunner
) -> None:
    await store.add(every("tick", 60, missed="run_once"))
    await store.set_times("tick", next_run=T0 + 60)
    clock = ManualClock(T0 + 600)
    sched = scheduler(store, runner, clock)
    await sched.prepare()
    assert await sched.run_due() == ["tick"]
    await sched.wait_idle()
    assert await sched.run_due() == []
    job = await store.get("tick")
    assert job is not None and job.next_run == T0 + 660
    assert runner.ran == ["tick"]
    assert await statuses(store, "tick") == ["ok"]


async def test_a_job_never_overlaps_itself_when_a_run_outlasts_its_interval(
    store: JobStore, runner: RecordingRunner
) -> None:
    await store.add(every("slow", 1))
    clock = ManualClock(T0)
    sched = scheduler(store, runner, clock)
    await sched.prepare()
    runner.gate.clear()  # the run takes longer than its interval
    clock.set(T0 + 1)
    assert await sched.run_due() == ["slow"]
    await runner.started.wait()
    for second in (2, 3):
        clock.set(T0 + second)
        assert await sched.run_due() == []
    runner.gate.set()
    await sched.wait_idle()
    clock.set(T0 + 4)
    assert await sched.run_due() == ["slow"]
    await sched.wait_idle()
    assert runner.ran == ["slow", "slow"]
    assert await statuses(store, "slow") == ["ok", "skipped", "skipped", "ok"]
    skipped = (await store.runs("slow"))[1]
    assert "never overlaps itself" in (skipped.error or "")


async def test_a_failure_is_recorded_with_its_error(
    store: JobStore, runner: RecordingRunner
) -> None:
    await store.add(every("probe", 60))
    clock = ManualClock(T0)
    sched = scheduler(store, runner, clock)
    await sched.prepare()
    runner.fail = "sensor 'greenhouse' did not answer"
    clock.set(T0 + 60)
    await sched.run_due()
    await sched.wait_idle()
    run = (await store.runs("probe"))[0]
    assert (run.status, run.error) == ("failed", "sensor 'greenhouse' did not answer")
    assert run.finished_at == T0 + 60
    # The schedule goes on after a failure.
    job = await store.get("probe")
    assert job is not None and job.next_run == T0 + 120 and job.enabled


async def test_a_one_off_runs_once_then_is_disabled(
    store: JobStore, runner: RecordingRunner
) -> None:
    job = Job.build("once", Schedule.parse("at", "2026-12-01T00:05"), prompt="hi", created_at=T0)
    await store.add(job)
    clock = ManualClock(T0)
    sched = scheduler(store, runner, clock)
    await sched.prepare()
    clock.set(T0 + 299)
    assert await sched.run_due() == []
    clock.set(T0 + 300)
    assert await sched.run_due() == ["once"]
    await sched.wait_idle()
    clock.set(T0 + 10_000)
    assert await sched.run_due() == []
    stored = await store.get("once")
    assert stored is not None and not stored.enabled and stored.next_run is None


async def test_a_run_left_running_by_a_stopped_service_is_marked_failed(
    store: JobStore, runner: RecordingRunner
) -> None:
    await store.add(every("tick", 60))
    await store.start_run("tick", T0, T0)
    sched = scheduler(store, runner, ManualClock(T0 + 5))
    await sched.prepare()
    run = (await store.runs("tick"))[0]
    assert run.status == "failed" and "interrupted" in (run.error or "")


async def test_the_loop_wakes_on_the_manual_clock_and_after_a_change(
    store: JobStore, runner: RecordingRunner
) -> None:
    clock = ManualClock(T0)
    sched = scheduler(store, runner, clock)
    await store.add(every("tick", 10))
    await sched.start()
    try:
        await clock.wait_sleeping()
        await clock.advance(10)
        await asyncio.wait_for(runner.started.wait(), 10)
        await sched.wait_idle()
        # A job added while the loop sleeps (as cron_add does) is seen once it is woken.
        runner.started.clear()
        await store.add(Job.build("soon", Schedule.parse("every", 3), prompt="x", created_at=T0))
        sched.wake()
        await asyncio.wait_for(_first_run_set(store, "soon"), 10)
        await clock.wait_sleeping()
        await clock.advance(3)
        await asyncio.wait_for(runner.started.wait(), 10)
    finally:
        await sched.aclose()
    assert runner.ran == ["tick", "soon"]


class MinuteClock(ManualClock):
    """The real clock's habit on a manual clock: no sleep longer than a minute."""

    async def sleep_until(self, when: float) -> None:
        await super().sleep_until(min(when, self.now() + 60.0))


async def test_an_idle_loop_wakes_each_minute_without_reading_the_jobs_again(
    store: JobStore, runner: RecordingRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = MinuteClock(T0)
    sched = scheduler(store, runner, clock)
    await store.add(every("hourly", 3600))
    reads: list[float] = []
    list_jobs = store.list

    async def counted() -> list[Job]:
        reads.append(clock.now())
        return await list_jobs()

    monkeypatch.setattr(store, "list", counted)
    await sched.start()
    try:
        await clock.wait_sleeping()
        first = len(reads)
        for _ in range(30):  # half an hour of minute wake-ups, nothing due
            await clock.advance(60)
            await clock.wait_sleeping()
        assert len(reads) == first  # the database was not asked again
        # A wall clock set forward past the due time (NTP after boot) runs the job.
        await clock.advance(3600)
        await asyncio.wait_for(runner.started.wait(), 10)
        await sched.wait_idle()
    finally:
        await sched.aclose()
    assert runner.ran == ["hourly"] and len(reads) > first


async def _first_run_set(store: JobStore, name: str) -> None:
    job = await store.get(name)
    while job is None or job.next_run is None:
        await asyncio.sleep(0.01)  # the loop's pass runs SQLite on its worker thread
        job = await store.get(name)


async def test_run_now_runs_outside_the_schedule_and_returns_the_run(
    store: JobStore, runner: RecordingRunner
) -> None:
    await store.add(every("tick", 3600))
    sched = scheduler(store, runner, ManualClock(T0 + 5))
    await sched.prepare()
    run = await sched.run_now("tick")
    assert (run.status, run.output, run.scheduled_for) == ("ok", "tick done", T0 + 5)
    job = await store.get("tick")
    assert job is not None and job.next_run == T0 + 3600  # the schedule did not move


async def test_a_0230_job_runs_exactly_once_on_both_dst_nights_minute_by_minute(
    store: JobStore, runner: RecordingRunner
) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    nights = {
        "spring": datetime(2026, 3, 29, 0, 0, tzinfo=berlin),
        "fall": datetime(2026, 10, 25, 0, 0, tzinfo=berlin),
    }
    for label, start in nights.items():
        await store.remove("night")
        begin = start.timestamp()
        clock = ManualClock(begin)
        await store.add(
            Job.build("night", Schedule.parse("cron", "30 2 * * *"), prompt="x", created_at=begin)
        )
        sched = Scheduler(store, runner, zone=berlin, clock=clock)
        await sched.prepare()
        ran_at = []
        for minute in range(6 * 60):  # 00:00 .. 06:00 local, one pass a minute
            clock.set(begin + 60 * minute)
            if await sched.run_due():
                ran_at.append(datetime.fromtimestamp(clock.now(), berlin).strftime("%H:%M%z"))
            await sched.wait_idle()
        assert ran_at == {"spring": ["03:00+0200"], "fall": ["02:30+0200"]}[label], label


async def test_an_emergency_stop_pauses_the_scheduler_until_resume(
    store: JobStore, runner: RecordingRunner
) -> None:
    await store.add(every("pump", 60))
    clock = ManualClock(T0)
    sched = scheduler(store, runner, clock)
    await sched.prepare()
    runner.gate.clear()  # a run in progress when the stop comes
    clock.set(T0 + 60)
    assert await sched.run_due() == ["pump"]
    await runner.started.wait()
    assert sched.pause("estop from phone") == ["pump"]
    await sched.wait_idle()
    runs = await store.runs("pump")
    assert [(r.status, r.error) for r in runs] == [("failed", "cancelled: estop from phone")]

    runner.gate.set()
    clock.set(T0 + 120)  # due while paused: recorded as skipped, not run
    assert await sched.run_due() == []
    latest = (await store.runs("pump", limit=1))[0]
    assert latest.status == "skipped" and "paused (estop from phone)" in (latest.error or "")
    try:
        await sched.run_now("pump")
    except Exception as exc:
        assert "cron resume" in str(exc)
    else:
        raise AssertionError("run_now ran a job while the scheduler was paused")

    assert sched.resume() is True and sched.resume() is False
    clock.set(T0 + 180)
    assert await sched.run_due() == ["pump"]
    await sched.wait_idle()
    assert (await store.runs("pump", limit=1))[0].status == "ok"
    job = await store.get("pump")
    assert job is not None and job.next_run == T0 + 240, "no catch-up burst after resume"


@pytest.mark.parametrize(
    ("why", "advice"), [("estop from phone", True), ("SIGUSR1", True), ("SIGTERM", False)]
)
async def test_only_a_pause_the_service_outlives_tells_to_resume(
    store: JobStore, runner: RecordingRunner, caplog: pytest.LogCaptureFixture, why: str,
    advice: bool,
) -> None:  # fmt: skip
    sched = scheduler(store, runner, ManualClock(T0))
    with caplog.at_level(logging.INFO, logger="clawseed_edge.scheduler"):
        sched.pause(why)
    assert sched.paused == why
    assert ("cron resume" in caplog.text) is advice, caplog.text
