"""BlockingWorker: one thread, FIFO, results back on the loop, cancel-safe, bounded close."""

from __future__ import annotations

import asyncio
import threading

import pytest

from clawseed_edge.api import ResourceClosed
from clawseed_edge.peripherals.worker import BlockingWorker


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
