"""``CameraBank``: the configured cameras as one peripheral (``cameras``).

Each camera owns a backend (simulated, V4L2 or picamera2) and one worker thread that every
blocking step runs on: opening, capturing, writing the file, decoding a motion thumbnail. A
camera opens on its first snapshot (or when its motion detector starts) and is released on
``disconnect`` and on the emergency stop, like any output. The latch's reset switches nothing
on: it only starts the motion detectors again (:meth:`CameraBank.resume_inputs`), an input.

Every caller (a model's tool call, an automation, a channel) goes through :meth:`snapshot`, so
the per-camera rate limit and ``allowed_hours`` hold for all of them. Motion is published on
:attr:`states` as a ``motion_sensor`` device, so ``when = "porch_cam.motion"`` works as for a PIR.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from clawseed_edge.api import (
    DeviceNotFound,
    HardwareError,
    HealthStatus,
    Lifecycle,
    PeripheralClosed,
    PolicyDenied,
    PolicyRateLimited,
    Tool,
)
from clawseed_edge.api.states import DeviceState, StateFeed

from ..worker import BlockingWorker
from .config import CameraConfig, parse_hours
from .jpeg import jpeg_size, with_rotation
from .motion import THUMBNAIL, MotionDetector
from .store import Snapshot, SnapshotStore

__all__ = ["CameraBackend", "CameraBank", "Snapshot", "backend_for"]

log = logging.getLogger(__name__)

MIN_WIDTH = 64


class CameraBackend(Protocol):
    """How frames reach a camera: blocking calls, run on the camera's worker thread."""

    source: str

    def open(self) -> None: ...

    def capture(self, width: int | None = None) -> bytes: ...

    def close(self) -> None: ...


def backend_for(config: CameraConfig, *, door_open: Callable[[], bool] | None = None) -> Any:
    """The backend ``config.source`` names (nothing is opened or imported beyond its module)."""
    if config.source == "sim":
        from .sim import SimCamera

        return SimCamera(
            config.size,
            quality=config.jpeg_quality,
            rotation=config.rotation,
            door_open=door_open,
        )
    if config.source == "picamera":
        from .picamera import PiCamera

        return PiCamera(config.size, quality=config.jpeg_quality)
    from .v4l2 import V4L2Camera

    return V4L2Camera(config.source, config.size)


class _Camera:
    """One camera's parts: config, backend, thread, store, limits, motion."""

    def __init__(self, config: CameraConfig, backend: CameraBackend, root: Path) -> None:
        self.config = config
        self.backend = backend
        self.worker = BlockingWorker(f"camera-{config.name}")
        self.store = SnapshotStore(root, config.name, config.keep_snapshots)
        self.hours = parse_hours(config.allowed_hours)
        self.taken: deque[float] = deque()
        self.is_open = False
        self.detector: MotionDetector | None = None
        self.motion_task: asyncio.Task[None] | None = None

    # --- on the worker thread ---

    def ensure_open(self) -> None:
        if not self.is_open:
            self.backend.open()
            self.is_open = True

    def release(self) -> None:
        if self.is_open:
            self.is_open = False
            self.backend.close()

    def capture(self, width: int | None) -> bytes:
        self.ensure_open()
        try:
            return self.backend.capture(width)
        except HardwareError:
            # An unplugged webcam stays broken once open: the next call opens it afresh.
            with contextlib.suppress(Exception):
                self.release()
            raise

    def take(self, width: int | None, when: float) -> tuple[bytes, Path]:
        config = self.config
        data = self.capture(width)
        if width is not None and self.backend.source != "sim":
            from .pixels import narrower

            data = narrower(data, width, config.jpeg_quality)
        if self.backend.source != "sim":  # the simulated camera draws its rotation
            data = with_rotation(data, config.rotation)
        if len(data) > config.max_snapshot_bytes:
            raise HardwareError(
                f"camera {config.name!r} gave a {len(data):,}-byte frame, over its "
                f"max_snapshot_bytes ({config.max_snapshot_bytes:,}); lower jpeg_quality or "
                "resolution, or raise the limit"
            )
        return data, self.store.write(data, when)

    def thumbnail(self) -> bytes:
        from .pixels import grey_thumbnail

        return grey_thumbnail(self.capture(None), THUMBNAIL)


class CameraBank:
    """The cameras of ``[[cameras]]``, as one peripheral with the ``camera_snapshot`` tool.

    Args:
        cameras: The validated tables.
        snapshot_dir: Where snapshots are written (``<workspace>/snapshots``).
        backends: Camera name -> backend, to replace the one ``source`` names (tests, plugins).
        name: The peripheral's name.
        clock: Unix seconds (rate windows, file names).
        local_minutes: Minutes since local midnight (``allowed_hours``).
    """

    board_type = "camera"

    def __init__(
        self,
        cameras: Sequence[CameraConfig],
        snapshot_dir: Path,
        *,
        backends: dict[str, CameraBackend] | None = None,
        name: str = "cameras",
        clock: Callable[[], float] = time.time,
        local_minutes: Callable[[], int] | None = None,
    ) -> None:
        self.name = name
        self.states = StateFeed()
        self.state = Lifecycle.UNOPENED
        self._clock = clock
        self._local_minutes = local_minutes or _local_minutes
        self._inputs: dict[str, float] = {}
        self._sources: list[Any] = []
        self._unsubscribe: list[Callable[[], None]] = []
        self._cameras: dict[str, _Camera] = {}
        self._snapshot_listeners: list[Callable[[Snapshot], object]] = []
        for config in cameras:
            backend = (backends or {}).get(config.name) or backend_for(
                config, door_open=self._door(config.sim_door)
            )
            self._cameras[config.name] = _Camera(config, backend, snapshot_dir)
        self._tools: list[Tool] | None = None

    # --- what the others see ---

    def camera_names(self) -> list[str]:
        return list(self._cameras)

    def config(self, camera: str) -> CameraConfig:
        return self._get(camera).config

    def latest(self, camera: str) -> Path | None:
        """The newest stored snapshot of ``camera`` (the web app, a notification)."""
        return self._get(camera).store.latest()

    def stored(self, camera: str, file: str) -> Path | None:
        """The stored snapshot of ``camera`` named ``file`` (a name, never a path), or None
        when the store does not hold it (any more). Looks only at the camera's own files."""
        for path in self._get(camera).store.files():
            if path.name == file:
                return path
        return None

    def motion(self, camera: str) -> bool | None:
        """The motion state (None: motion is off for this camera)."""
        detector = self._get(camera).detector
        return None if detector is None else detector.motion

    def on_snapshot(self, listener: Callable[[Snapshot], object]) -> Callable[[], None]:
        """Call ``listener(snapshot)`` after each picture is stored, whoever took it (Home
        Assistant's image entity); returns a remover. The listener runs on the loop and must
        not block; it may hand the bytes on, never log them."""
        self._snapshot_listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._snapshot_listeners.remove(listener)

        return remove

    def contents(self) -> str:
        """``2 cameras (porch_cam: sim, motion; shed: /dev/video0)`` for the start-up line."""
        each = [
            f"{n}: {c.config.source}{', motion' if c.config.fps > 0 else ''}"
            for n, c in self._cameras.items()
        ]
        n = len(each)
        return f"{n} camera{'' if n == 1 else 's'} ({'; '.join(each)})"

    def published_inputs(self) -> dict[str, str]:
        """Camera -> ``motion_sensor`` for each camera with motion on (automations' names)."""
        return {n: "motion_sensor" for n, c in self._cameras.items() if c.config.fps > 0}

    async def refresh(self) -> None:
        """Nothing to ask: motion states arrive from each detector on its own clock. (With
        ``states``, this makes the bank a state source: the web app, MCP resources and Home
        Assistant discovery show each motion camera as a motion sensor.)"""

    def follow(self, peripherals: Iterable[Any]) -> None:
        """Read the simulated door contacts from these peripherals' state feeds (on connect)."""
        self._sources = [p for p in peripherals if p is not self]

    def hours_problem(self, camera: str) -> str | None:
        """Why ``camera`` may not take a picture now (``allowed_hours``), or None."""
        cam = self._get(camera)
        if cam.hours is None:
            return None
        start, end = cam.hours
        now = self._local_minutes()
        inside = start <= now < end if start <= end else (now >= start or now < end)
        if inside:
            return None
        return (
            f"camera {camera!r} takes pictures only between {cam.config.allowed_hours} "
            "(its allowed_hours); ask again then, or the user can change allowed_hours"
        )

    # --- lifecycle ---

    async def connect(self) -> None:
        """Start the motion detectors (the cameras themselves open on first use).

        Raises:
            PeripheralClosed: The bank was disconnected (make a new one).
        """
        if self.state is Lifecycle.CLOSED:
            raise PeripheralClosed(f"peripheral {self.name!r} is closed; make a new one")
        if self.state is Lifecycle.OPEN:
            return
        for source in self._sources:
            feed = getattr(source, "states", None)
            if isinstance(feed, StateFeed):
                for update in feed.devices():
                    self._observe(update)
                self._unsubscribe.append(feed.subscribe(self._observe))
        self.state = Lifecycle.OPEN
        self.start_motion()

    def start_motion(self) -> None:
        """Start the motion loop of every camera with ``fps`` > 0 (not already running)."""
        if self.state is not Lifecycle.OPEN:
            return  # not connected yet (connect starts them) or closed for good
        for cam in self._cameras.values():
            if cam.config.fps > 0 and (cam.motion_task is None or cam.motion_task.done()):
                cam.detector = MotionDetector(
                    cam.config.motion_threshold, cam.config.motion_min_area
                )
                cam.motion_task = asyncio.create_task(
                    self._motion_loop(cam), name=f"motion-{cam.config.name}"
                )

    def resume_inputs(self) -> None:
        """After a person reset the emergency stop: the motion detectors watch again.

        The stop released the cameras and stopped motion; the reset drives no output, but an
        input that stays off until a restart would silently break ``when = "cam.motion"``
        rules. A camera reopens on its detector's first frame.
        """
        self.start_motion()

    async def _stop_motion(self) -> None:
        tasks = [c.motion_task for c in self._cameras.values() if c.motion_task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for cam in self._cameras.values():
            cam.motion_task = None

    async def apply_safe_state(self) -> None:
        """Stop motion and release every camera (estop, shutdown); snapshots reopen them."""
        await self._stop_motion()
        for cam in self._cameras.values():
            if not cam.worker.closed:
                await cam.worker.run(cam.release)

    async def disconnect(self) -> None:
        """Release the cameras and stop their threads. Idempotent."""
        if self.state is Lifecycle.CLOSED:
            return
        self.state = Lifecycle.CLOSING
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        try:
            await self.apply_safe_state()
        finally:
            for cam in self._cameras.values():
                await cam.worker.aclose()
            self.state = Lifecycle.CLOSED

    async def health_check(self) -> HealthStatus:
        """Opens each camera and takes no picture: present and not held by another program."""
        problems = []
        for name, cam in self._cameras.items():
            try:
                await cam.worker.run(cam.ensure_open)
            except HardwareError as exc:
                problems.append(f"{name}: {exc}")
        return HealthStatus(not problems, "; ".join(problems) or f"{len(self._cameras)} camera(s)")

    def describe(self) -> str:
        lines = ["Cameras (camera_snapshot shows you a picture):"]
        for name, cam in self._cameras.items():
            c = cam.config
            extra = " motion" if c.fps > 0 else ""
            extra += f" hours {c.allowed_hours}" if c.allowed_hours else ""
            lines.append(f"- {name}: {c.source} {c.resolution[0]}x{c.resolution[1]}{extra}")
        return "\n".join(lines)

    def tools(self) -> Sequence[Tool]:
        if self._tools is None:
            from .tools import CameraSnapshotTool

            self._tools = [CameraSnapshotTool(self)]
        return self._tools

    # --- pictures ---

    async def snapshot(self, camera: str, width: int | None = None) -> Snapshot:
        """Take, store and return one picture of ``camera``.

        Safe to cancel: a capture already started finishes on the camera's thread and is stored.

        Raises:
            DeviceNotFound: No camera of that name (the message lists them).
            PolicyDenied: Outside ``allowed_hours``.
            PolicyRateLimited: Over the camera's ``max_per_minute``.
            HardwareError: The camera failed (the message says what to check).
            PeripheralClosed: The bank was disconnected.
        """
        cam = self._get(camera)
        if self.state is Lifecycle.CLOSED or cam.worker.closed:
            raise PeripheralClosed(f"peripheral {self.name!r} is closed; make a new one")
        problem = self.hours_problem(camera)
        if problem:
            raise PolicyDenied(problem)
        config = cam.config
        if width is not None:
            width = max(MIN_WIDTH, min(int(width), config.resolution[0]))
            if width == config.resolution[0]:
                width = None
        now = self._clock()
        while cam.taken and now - cam.taken[0] >= 60.0:
            cam.taken.popleft()
        if len(cam.taken) >= config.max_per_minute:
            wait = 60.0 - (now - cam.taken[0])
            raise PolicyRateLimited(
                f"camera {camera!r} took {config.max_per_minute} pictures in the last minute "
                f"(its max_per_minute); the next one is possible in {wait:.0f} s"
            )
        cam.taken.append(now)
        data, path = await cam.worker.run(cam.take, width, now)
        w, h = jpeg_size(data)
        shot = Snapshot(camera, data, path, w, h, now)
        for listener in list(self._snapshot_listeners):
            try:
                listener(shot)
            except Exception:  # a subscriber's bug must not cost the caller its picture
                log.exception("camera %s: a snapshot listener failed", camera)
        return shot

    # --- motion ---

    async def _motion_loop(self, cam: _Camera) -> None:
        period = 1.0 / cam.config.fps
        detector = cam.detector
        assert detector is not None
        failures = 0
        while True:
            started = time.monotonic()
            try:
                thumb = await cam.worker.run(cam.thumbnail)
                failures = 0
            except (HardwareError, ValueError) as exc:
                failures += 1
                if failures in (1, 10) or failures % 100 == 0:
                    log.warning("camera %s: motion frame failed (%s)", cam.config.name, exc)
                await asyncio.sleep(min(30.0, period * failures))
                continue
            # The feed drops a state that repeats the last one: publish every frame's.
            self._publish(cam.config.name, detector.feed(thumb))
            await asyncio.sleep(max(0.0, period - (time.monotonic() - started)))

    def _publish(self, camera: str, moving: bool) -> None:
        self.states.publish(
            DeviceState(
                peripheral=self.name,
                device=camera,
                kind="motion_sensor",
                pin="camera",
                value=1.0 if moving else 0.0,
                mode="input",
            )
        )

    # --- helpers ---

    def _door(self, device: str) -> Callable[[], bool] | None:
        if not device:
            return None
        return lambda: self._inputs.get(device, 0.0) > 0

    def _observe(self, update: Any) -> None:
        if isinstance(update, DeviceState) and update.value is not None:
            self._inputs[update.device] = update.value

    def _get(self, camera: str) -> _Camera:
        cam = self._cameras.get(camera)
        if cam is None:
            known = ", ".join(self._cameras) or "none"
            raise DeviceNotFound(f"no camera named {str(camera)[:60]!r}; the cameras are: {known}")
        return cam


def _local_minutes() -> int:
    now = time.localtime()
    return now.tm_hour * 60 + now.tm_min
