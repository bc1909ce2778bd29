"""``SensorChannel``: one configured sensor or display in a bank, and its runtime state: its
driver and worker, its reading cache, and the reading its worker took ahead.

The cache serves a reading for the sensor's minimum interval less a tolerance
(:func:`cache_window`): a reader on that interval whose pass comes a little early still gets a
new reading, while two readers within the interval share one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import HardwareError

from ..sensor_driver import Reading
from ..worker import BlockingWorker, Outcome, Repeating
from .config import ValidSensor

if TYPE_CHECKING:
    from clawseed_edge.peripherals.i2c import I2CBus

__all__ = ["CACHE_TOLERANCE", "CACHE_TOLERANCE_MAX_S", "SensorChannel", "cache_window"]

#: The share of a minimum interval a reader on that interval may come early and still get a
#: new reading (at most :data:`CACHE_TOLERANCE_MAX_S`): a sampler pass on an exact 1 s grid
#: that runs 20 ms later than the one before is a new second, not a cache hit.
CACHE_TOLERANCE = 0.25
CACHE_TOLERANCE_MAX_S = 0.5

log = logging.getLogger(__name__)


def cache_window(min_interval_s: float) -> float:
    """How long (seconds) a reading is served from the cache for a ``min_interval_s`` sensor."""
    return min_interval_s - min(min_interval_s * CACHE_TOLERANCE, CACHE_TOLERANCE_MAX_S)


@dataclass(slots=True)
class SensorChannel:
    """One configured sensor or display and its runtime state (the bank's, not shared)."""

    valid: ValidSensor
    driver: Any = None
    ready: bool = False
    last: Reading | None = None
    last_at: float = 0.0
    worker: BlockingWorker | None = None
    ahead: Repeating | None = None

    @property
    def name(self) -> str:
        return self.valid.name

    @property
    def cache_s(self) -> float:
        """How long a reading is served from the cache (see :func:`cache_window`)."""
        return cache_window(self.valid.min_interval_s)

    def take_ahead(self) -> tuple[Outcome, float] | None:
        """The outcome the worker read ahead and its age (seconds), if one is waiting and was
        taken for this slot of the schedule, not an earlier one."""
        ahead = self.ahead.take() if self.ahead is not None else None
        if ahead is None or self.ahead is None:
            return None
        age = time.monotonic() - ahead.taken
        return (ahead, age) if age < self.ahead.every_s else None

    def keep(self, values: dict[str, float], age: float, now: float) -> Reading:
        """The reading of ``values`` taken ``age`` seconds before ``now`` (the bank's clock),
        kept for the cache."""
        q = {q.name: q for q in self.valid.driver.quantities}
        reading = Reading(
            sensor=self.name,
            values=values,
            units={k: q[k].unit for k in values},
            time=time.time() - age,
            decimals={k: q[k].decimals for k in values},
        )
        # The reading's age counts from when it was taken (after the read), not from the call.
        self.last, self.last_at = reading, now - age
        return reading

    def step(self, op: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """``op(driver)`` after the driver's setup, if it needs one (on the worker thread)."""

        def step(driver: Any) -> Any:
            if not self.ready:
                driver.setup()
                self.ready = True
            return op(driver)

        return step

    def on_bus(self, step: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """``step`` as an I2C bus call: the driver gets the bus's (possibly new) handle."""

        def on_bus(handle: Any) -> Any:
            self.driver.bus = handle  # a reopened bus has a new handle
            return step(self.driver)

        return on_bus

    def sampled_every(self, every_s: float) -> None:
        """Tell a driver with a free-running mode (a BME280) how often the sampler reads it
        (0: it stopped); the driver's next read applies it."""
        if (hint := getattr(self.driver, "sampled_every", None)) is not None:
            hint(every_s if every_s > 0 else None)

    async def sleep_chip(self, bus: I2CBus) -> None:
        """Put a chip that measures on its own back to sleep, as after power-on (at close and
        on an emergency stop; a reader's next read starts it again). One that does not answer
        is logged, not raised: a sensor is no output left unsafe."""
        if not self.ready or not hasattr(self.driver, "sleep"):
            return
        try:
            async with asyncio.timeout(1.0):
                sleep = self.on_bus(lambda d: d.sleep())
                await bus.call(sleep, what=f"{self.name}: sleep", address=self.valid.address)
        except (HardwareError, TimeoutError) as exc:
            log.warning("sensor %s: could not put it to sleep: %s", self.name, exc)
