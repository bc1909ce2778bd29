"""BlockingWorker: one thread, FIFO, results back on the loop, cancel-safe, bounded close."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from clawseed_edge.api import ResourceClosed
from clawseed_edge.peripherals.worker import BlockingWorker, Outcome, Repeating


async def test_runs_in_order_on_one_named_thread() -> None:
    worker = BlockingWorker("bus-test")
    seen: list[tuple[int, str]] = []

    def job(i: int) -> int:
        seen.append((i, threading.current_thread().name))
        return i * 2

    results = await asyncio.gather(*(worker.run(job, i) for i in range(20)))
    assert results == [i * 2 for i in range(20)]
    assert [i for i, _ in seen] == list(range(20))  # FIFO
    assert {name for _, name in seen} == {"bus-test"}
    assert await worker.aclose()


async def test_errors_reach_the_caller() -> None:
    worker = BlockingWorker("bus-test")

    def boom() -> None:
        raise OSError("bus error")

    with pytest.raises(OSError, match="bus error"):
        await worker.run(boom)
    assert await worker.run(lambda: 5) == 5  # the thread survives a failed job
    await worker.aclose()


async def test_a_cancelled_caller_is_harmless_and_the_job_still_runs() -> None:
    worker = BlockingWorker("bus-test")
    gate = threading.Event()
    ran: list[str] = []

    def slow() -> str:
        gate.wait(5)
        ran.append("slow")
        return "late"

    task = asyncio.create_task(worker.run(slow))
    await asyncio.sleep(0)
    task.cancel()
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await worker.run(lambda: "next") == "next"  # queued behind slow: it ran first
    assert ran == ["slow"]
    await worker.aclose()


async def test_close_waits_for_queued_jobs_then_refuses_work() -> None:
    worker = BlockingWorker("bus-test")
    ran: list[int] = []
    pending = [asyncio.create_task(worker.run(ran.append, i)) for i in range(3)]
    await asyncio.sleep(0)
    assert await worker.aclose()
    await asyncio.gather(*pending)
    assert ran == [0, 1, 2]
    with pytest.raises(ResourceClosed, match="bus-test"):
        await worker.run(ran.append, 4)
    assert await worker.aclose()  # idempotent


async def test_close_is_bounded_when_a_job_hangs() -> None:
    worker = BlockingWorker("bus-test")
    gate = threading.Event()
    hung = asyncio.create_task(worker.run(gate.wait, 5))
    await asyncio.sleep(0)
    assert await worker.aclose(timeout_s=0.05) is False  # gave up waiting, did not block
    gate.set()
    await hung


async def _outcome(rep: Repeating) -> Outcome:
    """The next outcome of ``rep`` (a bound on attempts, not a timing assertion)."""
    for _ in range(1000):
        out = rep.take()
        if out is not None:
            return out
        await asyncio.sleep(0.01)
    raise AssertionError("no outcome within 10 s")


async def test_a_repeated_call_runs_on_the_worker_and_waits_to_be_taken() -> None:
    worker = BlockingWorker("bus-test")
    calls: list[str] = []

    def read() -> int:
        calls.append(threading.current_thread().name)
        if len(calls) == 2:
            raise OSError("a bad read")
        return len(calls)

    rep = worker.repeat(read, ready_in_s=0.0, every_s=0.05)
    first = await _outcome(rep)
    assert first.result == 1 and first.error is None
    second = await _outcome(rep)
    assert isinstance(second.error, OSError) and second.result is None  # kept, for the taker
    assert (await _outcome(rep)).result >= 3
    # Jobs still run between the repeated calls, on the same thread.
    assert await worker.run(threading.current_thread) is not threading.current_thread()
    assert set(calls) == {"bus-test"}
    rep.cancel()
    assert rep.take() is None
    assert await worker.aclose()
    done = len(calls)
    await asyncio.sleep(0.2)
    assert len(calls) == done  # closed: no more calls


async def test_a_repeated_call_starts_early_enough_for_its_own_duration() -> None:
    worker = BlockingWorker("bus-test")
    rep = worker.repeat(lambda: time.sleep(0.1), ready_in_s=0.0, every_s=1.0)
    await _outcome(rep)
    # The call took 0.1 s or more: the next one starts at least 0.16 s before its slot.
    assert 0.16 <= rep.lead <= 0.8
    assert rep.due == rep.ready_by - rep.lead
    rep.cancel()
    assert await worker.aclose()
    with pytest.raises(ResourceClosed):
        worker.repeat(lambda: None, 0.0, 1.0)
