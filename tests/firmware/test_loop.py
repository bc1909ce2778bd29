"""The firmware's UART loop on CPython (the virtual board's path), over a pipe in place of the
UART; tests/firmware/test_wasm.py runs the same loop under real MicroPython."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import CoreDriver


class PipeRx:
    """The read end of a pipe, fed with ``lines`` one per round; ``idle`` counts empty polls."""

    def __init__(self) -> None:
        self.r, self.w = os.pipe()

    def fileno(self) -> int:
        return self.r

    def read(self, n: int) -> bytes:
        return os.read(self.r, n)

    def close(self) -> None:
        os.close(self.r)
        os.close(self.w)


class Tx:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data


@pytest.fixture
def rx() -> Iterator[PipeRx]:
    pipe = PipeRx()
    yield pipe
    pipe.close()


def _serve(fw: CoreDriver, rx: PipeRx, tx: Any, rounds: int) -> None:
    loop = __import__("clawseed_loop")
    done = iter(range(rounds))
    loop.serve(fw.core, rx, tx, stop=lambda: next(done, None) is None)


def test_an_exception_in_the_loop_is_answered_and_serving_goes_on(rx: PipeRx) -> None:
    fw = CoreDriver()
    real_tick, calls = fw.core.tick, []

    def tick(now: int) -> Any:
        calls.append(now)
        if len(calls) == 1:
            raise MemoryError  # as MicroPython raises it when the heap is full
        return real_tick(now)

    fw.core.tick = tick
    os.write(rx.w, b'{"id": 7, "op": "ping"}\n')
    tx = Tx()
    _serve(fw, rx, tx, rounds=3)
    replies = [json.loads(line) for line in tx.data.splitlines()]
    assert replies[0]["id"] is None and replies[0]["error"]["code"] == "internal"
    assert "MemoryError" in replies[0]["error"]["message"]
    assert replies[1] == {"id": 7, "ok": True, "result": {"pong": True}}


def test_a_memory_error_building_a_reply_answers_that_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fw = CoreDriver()
    real_dumps, calls = json.dumps, []

    def dumps(obj: Any, **kw: Any) -> str:
        calls.append(obj)
        if len(calls) == 1:
            raise MemoryError
        return real_dumps(obj, **kw)

    monkeypatch.setattr(fw.fw.json, "dumps", dumps)
    reply = json.loads(fw.core.handle('{"id": 3, "op": "ping"}'))
    assert reply["id"] == 3 and reply["error"]["code"] == "no_memory"


def test_a_fault_the_loop_cannot_get_past_drives_outputs_safe(rx: PipeRx) -> None:
    class DeadTx:
        def write(self, data: bytes) -> None:
            raise OSError(5, "EIO")

    fw = CoreDriver()
    os.write(
        rx.w, b'{"id": 1, "op": "pin.mode", "args": {"pin": "D13", "mode": "out", "value": 1}}\n'
    )
    with pytest.raises(OSError):
        _serve(fw, rx, DeadTx(), rounds=5)
    assert fw.state.history == [("PA5", 1), ("PA5", 0)]


class FakeClock:
    """The loop's clock and pause: a pause moves the clock (no real sleeping)."""

    def __init__(self) -> None:
        self.now = 0
        self.pauses: list[int] = []

    def now_ms(self) -> int:
        self.now += 1  # a round takes a millisecond
        return self.now

    def pause(self, ms: int) -> None:
        self.pauses.append(ms)
        self.now += ms


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The loop's clock and pause, faked (its back-off never sleeps)."""
    loop = __import__("clawseed_loop")
    fake = FakeClock()
    monkeypatch.setattr(loop, "_now_ms", fake.now_ms)
    monkeypatch.setattr(loop, "_pause", fake.pause)
    return fake


def test_failing_rounds_back_off_instead_of_giving_up_after_fifty(
    rx: PipeRx, clock: FakeClock
) -> None:
    fw = CoreDriver()
    real_tick, calls = fw.core.tick, []

    def tick(now: int) -> Any:
        calls.append(now)
        if len(calls) <= 60:  # more failing rounds in a row than the old limit of 50
            raise MemoryError
        return real_tick(now)

    fw.core.tick = tick
    os.write(rx.w, b'{"id": 9, "op": "ping"}\n')
    tx = Tx()
    _serve(fw, rx, tx, rounds=62)
    replies = [json.loads(line) for line in tx.data.splitlines()]
    assert replies[-1] == {"id": 9, "ok": True, "result": {"pong": True}}  # still serving
    assert clock.pauses[:8] == [10, 20, 40, 80, 160, 320, 640, 1000]
    assert set(clock.pauses[7:]) == {1000}  # capped: at most one error line a second


def test_a_fault_that_lasts_gives_up_after_give_up_ms_with_outputs_safe(
    rx: PipeRx, clock: FakeClock
) -> None:
    loop = __import__("clawseed_loop")
    fw = CoreDriver()
    fw.ok("pin.mode", pin="D13", mode="out", value=1)

    def tick(now: int) -> Any:
        raise MemoryError

    fw.core.tick = tick
    with pytest.raises(MemoryError):
        _serve(fw, rx, Tx(), rounds=10_000)
    assert loop.GIVE_UP_MS <= clock.now < loop.GIVE_UP_MS + 2 * loop.BACKOFF_MS[1]
    assert len(clock.pauses) < 80  # a minute of 1 s pauses, not thousands of rounds
    assert fw.state.history[-1] == ("PA5", 0)  # safe before the REPL
