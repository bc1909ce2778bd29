"""Test doubles and fixtures for clawseed-edge and for users' hardware-in-the-loop tests.

* :class:`ScriptedProvider` replays queued model responses and records the requests.
* :class:`EchoTool` echoes and records its calls; :class:`SlowTool` never finishes (aborts,
  timeouts, shutdown).
* :class:`RecordingObserver` keeps every observer event; :class:`FakeClock` is a monotonic clock
  (and an ``asyncio.sleep`` stand-in) that moves only when told, injected through constructors.
* The pytest fixtures ``scripted_provider``, ``agent_builder``, ``mock_pin_factory`` and
  ``sim_board`` come with the package's pytest plugin (no conftest needed);
  :mod:`clawseed_edge.testing.hardware` has the simulated-board helpers.
"""

from .observing import FakeClock, RecordingObserver
from .scripted import ScriptedProvider, ScriptExhausted, ScriptItem
from .tools import EchoTool, SlowTool

__all__ = [
    "EchoTool",
    "FakeClock",
    "RecordingObserver",
    "ScriptExhausted",
    "ScriptItem",
    "ScriptedProvider",
    "SlowTool",
]
