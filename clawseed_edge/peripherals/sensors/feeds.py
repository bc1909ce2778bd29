"""What a sensor bank publishes: one value per sensor for every reader, raw readings apart.

ESPHome's sensors publish their filtered state and keep the raw one for whoever asks; so does
:class:`SensorFeeds`. ``states`` is what MQTT (Home Assistant), ``hardware status``, Telegram and
MCP resources read: for a sensor the service samples through its filter chains (the sampler
hands them over with :meth:`SensorFeeds.sample_through_filters`), the filtered values once the
first one exists; for the others, each reading. ``raw`` carries every raw reading.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from clawseed_edge.api import SensorReading, StateFeed

__all__ = ["SensorFeeds"]


class SensorFeeds:
    """The bank's two feeds and which sensors' values come from filter chains.

    Args:
        peripheral: The bank's name (stamped on the filtered readings it publishes).
        sensors: The bank's sensor names (only those can be handed to filter chains).
    """

    def __init__(self, peripheral: str, sensors: Iterable[str]) -> None:
        self.peripheral = peripheral
        self._known = set(sensors)
        #: What every reader shows (see the module's docstring).
        self.states = StateFeed()
        #: Every raw reading taken (and every failed read), for who asks for raw values.
        self.raw = StateFeed()
        self._sampled: set[str] = set()  # sensors whose shown value comes from filter chains
        self._filtered: set[str] = set()  # ... and that have a filtered value already

    def publish_read(self, reading: SensorReading, *, for_filters: bool = False) -> None:
        """A reading just taken (or a failed one): raw always; shown unless the sensor's shown
        value is its filtered one (a read for the filters shows nothing by itself)."""
        self.raw.publish(reading)
        if not reading.ok or (not for_filters and reading.sensor not in self._filtered):
            # A sampled sensor shows a raw reading only until its first filtered value: the
            # value every reader shows is the one history, charts and automations use.
            self.states.publish(reading)

    def sample_through_filters(self, names: Iterable[str]) -> None:
        """Hand the shown values of ``names`` to a sampler's filter chains (the service's
        :class:`~clawseed_edge.service.sampler.SensorSampler`); an empty list hands them back."""
        self._sampled = {n for n in names if n in self._known}
        self._filtered &= self._sampled

    def publish_filtered(self, reading: SensorReading) -> None:
        """Publish a sampled sensor's filtered values (every quantity's latest) as shown."""
        if reading.sensor not in self._sampled:
            return
        self._filtered.add(reading.sensor)
        self.states.publish(dataclasses.replace(reading, peripheral=self.peripheral))

    def filtered(self, name: str) -> SensorReading | None:
        """The latest filtered values of a sampled sensor, or None (not sampled, or no filtered
        value yet)."""
        if name not in self._filtered:
            return None
        return next(
            (
                r
                for r in self.states.latest()
                if isinstance(r, SensorReading) and r.sensor == name and r.ok
            ),
            None,
        )
