"""pytest fixtures for hardware-in-the-loop tests on mock pins.

* ``mock_pin_factory``: a fresh gpiozero MockFactory whose pins support PWM, closed after the
  test. Pass it as ``pin_factory=`` to gpiozero devices or to :class:`PiGpio`.
* ``sim_board``: a factory fixture; ``board = await sim_board('''[[devices]] ...''')`` returns a
  connected :class:`~clawseed_edge.peripherals.gpio.PiGpio` on ``mock_pin_factory``, disconnected
  (safe state applied) after the test.

Loaded by the ``clawseed_edge`` pytest plugin; heavy imports happen inside the fixtures.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from clawseed_edge.peripherals.gpio import PiGpio

try:  # async fixtures work in pytest-asyncio's strict mode too
    import pytest_asyncio

    _async_fixture: Any = pytest_asyncio.fixture
except ImportError:  # pragma: no cover - without pytest-asyncio there are no async tests
    _async_fixture = pytest.fixture

__all__ = ["mock_pin_factory", "sim_board"]


@pytest.fixture
def mock_pin_factory() -> Iterator[Any]:
    """A fresh ``MockFactory(pin_class=MockPWMPin)``, closed after the test."""
    from clawseed_edge.peripherals.gpio import mock_pin_factory as make

    factory = make()
    try:
        yield factory
    finally:
        factory.close()


@_async_fixture  # type: ignore[untyped-decorator]
async def sim_board(mock_pin_factory: Any) -> AsyncIterator[Callable[..., Awaitable[PiGpio]]]:
    """Make connected simulated boards from TOML snippets; they are disconnected afterwards."""
    from clawseed_edge.testing.hardware import wired_sim_board

    boards: list[PiGpio] = []

    async def make(devices_toml: str, *, name: str = "pi") -> PiGpio:
        board = wired_sim_board(devices_toml, pin_factory=mock_pin_factory, name=name)
        await board.connect()
        boards.append(board)
        return board

    yield make
    for board in boards:
        await board.disconnect()
