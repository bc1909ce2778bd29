"""Input events (a button pressed, a sensor line changed) and the rules that turn them into
agent messages.

gpiozero calls its callbacks from its own threads (on mock pins: from whoever drives the pin);
:class:`~..gpio.PiGpio` hands each edge to the event loop with ``call_soon_threadsafe`` as an
:class:`InputEvent` (a Nucleo's edges arrive on the loop already, as firmware events).
:class:`InputRules` maps events to :class:`EventMessage` objects from the ``on_press`` /
``on_release`` texts of the config, at most ``events_per_minute`` per device; the service wires
the messages into the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable

import msgspec

from .config import DeviceConfig

__all__ = [
    "EventHub",
    "EventMessage",
    "EventStream",
    "InputEvent",
    "InputRules",
    "RateWindow",
]

log = logging.getLogger(__name__)

QUEUE_SIZE = 256
"""Events a stream holds before it drops the oldest."""


class InputEvent(msgspec.Struct, frozen=True):
    """An input changed.

    Attributes:
        device: The configured device name.
        value: 1 when the input became active (button pressed), 0 when it became inactive.
        at: Wall-clock time of the edge, Unix seconds.
        pin: The canonical pin name.
    """

    device: str
    value: int
    at: float
    pin: str = ""

    @property
    def active(self) -> bool:
        return self.value == 1


class EventMessage(msgspec.Struct, frozen=True):
    """A message for the agent produced by an input rule."""

    device: str
    text: str
    at: float


class EventStream:
    """Input events as an async iterator, from :meth:`EventHub.stream` (``PiGpio.events()``).

    Has its own bounded queue: when the consumer falls :data:`QUEUE_SIZE` events behind, the
    oldest is dropped (the hub's ``dropped`` counts them). Ends when the hub closes (the
    peripheral disconnects). Use ``async with`` or ``aclose()`` to stop early. Safe to cancel.
    """

    def __init__(self, hub: EventHub) -> None:
        self._hub = hub
        self.queue: asyncio.Queue[InputEvent | None] = asyncio.Queue(QUEUE_SIZE)
        self._closed = False

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> InputEvent:
        if self._closed:
            raise StopAsyncIteration
        event = await self.queue.get()
        if event is None:
            await self.aclose()
            raise StopAsyncIteration
        return event

    async def aclose(self) -> None:
        """Stop receiving events. Idempotent."""
        self._closed = True
        self._hub.discard(self)

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class EventHub:
    """Fans input events out to listeners and streams, on the event loop's thread.

    Attributes:
        dropped: Events dropped from full stream queues (end markers included).
    """

    def __init__(self) -> None:
        self._listeners: list[Callable[[InputEvent], None]] = []
        self._streams: list[EventStream] = []
        self.dropped = 0

    def add_listener(self, callback: Callable[[InputEvent], None]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event; returns a function that removes it."""
        self._listeners.append(callback)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(callback)

        return remove

    def stream(self) -> EventStream:
        """A new stream, registered now."""
        stream = EventStream(self)
        self._streams.append(stream)
        return stream

    def discard(self, stream: EventStream) -> None:
        """Stop feeding ``stream``."""
        with contextlib.suppress(ValueError):
            self._streams.remove(stream)

    def emit(self, event: InputEvent) -> None:
        """Hand ``event`` to every listener (errors are logged) and stream."""
        for callback in list(self._listeners):
            try:
                callback(event)
            except Exception:
                log.exception("input listener failed on %s", event)
        for stream in self._streams:
            self._put(stream.queue, event)

    def emit_threadsafe(self, loop: asyncio.AbstractEventLoop | None, event: InputEvent) -> None:
        """:meth:`emit` on ``loop`` from any thread; dropped when the loop is gone."""
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # loop closed between the check and the call
            loop.call_soon_threadsafe(self.emit, event)

    def close(self) -> None:
        """End every stream."""
        for stream in self._streams:
            self._put(stream.queue, None)

    def _put(self, queue: asyncio.Queue[InputEvent | None], item: InputEvent | None) -> None:
        if queue.full():
            queue.get_nowait()
            self.dropped += 1
        queue.put_nowait(item)


class RateWindow:
    """A sliding one-minute window of events per key, with an injectable monotonic clock."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, window_s: float = 60.0) -> None:
        self._clock = clock
        self._window = window_s
        self._seen: dict[str, deque[float]] = {}

    def allow(self, key: str, limit: int | None, cost: int = 1) -> bool:
        """Count ``cost`` events for ``key`` if that stays within ``limit``; return whether it did."""
        if limit is None:
            return True
        now = self._clock()
        seen = self._seen.setdefault(key, deque())
        while seen and now - seen[0] >= self._window:
            seen.popleft()
        if len(seen) + cost > limit:
            return False
        seen.extend([now] * cost)
        return True

    def retry_after(self, key: str) -> float:
        """Seconds until the oldest counted event of ``key`` leaves the window."""
        seen = self._seen.get(key)
        if not seen:
            return 0.0
        return max(0.0, self._window - (self._clock() - seen[0]))


class InputRules:
    """Turns input events into agent messages, rate-limited per device.

    Args:
        devices: The configured devices; those with ``on_press`` / ``on_release`` make rules.
        clock: Monotonic clock for the rate limit (tests pass a fake one).

    Attributes:
        dropped: How many events matched a rule but were dropped by the rate limit.
    """

    def __init__(
        self, devices: Iterable[DeviceConfig], *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rules: dict[str, DeviceConfig] = {
            d.name: d for d in devices if d.on_press is not None or d.on_release is not None
        }
        self._window = RateWindow(clock)
        self.dropped = 0

    def __bool__(self) -> bool:
        return bool(self._rules)

    def devices(self) -> list[str]:
        """Names of the devices that have a rule."""
        return list(self._rules)

    def message_for(self, event: InputEvent) -> EventMessage | None:
        """The message for ``event``, or None (no rule, or the rate limit is used up)."""
        rule = self._rules.get(event.device)
        if rule is None:
            return None
        text = rule.on_press if event.active else rule.on_release
        if text is None:
            return None
        if not self._window.allow(event.device, rule.events_per_minute):
            self.dropped += 1
            return None
        return EventMessage(event.device, text, event.at)

    async def messages(self, events: AsyncIterator[InputEvent]) -> AsyncIterator[EventMessage]:
        """Yield a message for every event that a rule turns into one.

        Safe to cancel; ends when ``events`` ends.
        """
        async for event in events:
            message = self.message_for(event)
            if message is not None:
                yield message
