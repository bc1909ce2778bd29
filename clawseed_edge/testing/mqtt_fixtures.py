"""The ``mosquitto`` fixture: a started :class:`~clawseed_edge.testing.mqtt.MosquittoBroker`.

Skipped where the binary is missing, failed instead when ``CI`` is set.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .mqtt import MosquittoBroker, require_mosquitto

__all__ = ["mosquitto"]


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """A mosquitto on a free port of 127.0.0.1 (anonymous clients allowed), stopped after."""
    binary = require_mosquitto()
    with MosquittoBroker(tmp_path / "mosquitto", binary=binary) as broker:
        yield broker
