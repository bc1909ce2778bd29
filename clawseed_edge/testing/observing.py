"""An observer that keeps every event, and a clock that moves only when told.

Both are injected through constructors (``AgentBuilder().observer(...)``,
``SecurityPolicy(clock=...)``, ``ReliableProvider(sleep=clock.sleep)``), never patched into an
object's private fields, and no test has to wait for real time to pass.
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["FakeClock", "RecordingObserver"]

E = TypeVar("E")


class RecordingObserver:
    """Keeps every observer event it is given, in order.

    Attributes:
        events: Every event recorded.
    """

    def __init__(self) -> None:
        self.events: list[Any] = []

    def record(self, event: Any) -> None:
        self.events.append(event)

    def of(self, kind: type[E]) -> list[E]:
        """The recorded events of one type (``observer.of(ToolExecuted)``)."""
        return [e for e in self.events if isinstance(e, kind)]


class FakeClock:
    """Monotonic seconds that move only when a test says so; call it to read the time.

    Args:
        now: The starting time, in seconds.

    Attributes:
        now: The current time, in seconds (assign or :meth:`advance` to move it).
        sleeps: The delays passed to :meth:`sleep`, in seconds.
    """

    def __init__(self, now: float = 1000.0) -> None:
        if now != now or now in (float("inf"), float("-inf")):
            raise ValueError(f"FakeClock needs a finite start time in seconds, got {now!r}")
        self.now = now
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (not backwards: a monotonic clock never does)."""
        if not seconds >= 0:
            raise ValueError(f"a monotonic clock only moves forward; got {seconds!r} seconds")
        self.now += seconds

    async def sleep(self, seconds: float) -> None:
        """A stand-in for ``asyncio.sleep``: records the delay and advances, without waiting.

        Cancel-safe (nothing is awaited).
        """
        self.sleeps.append(seconds)
        self.advance(max(0.0, seconds))
