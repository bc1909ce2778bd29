"""Test doubles and fixtures for clawseed-edge and for users' hardware-in-the-loop tests.

* :class:`ScriptedProvider` replays queued model responses and records the requests.
* The pytest fixtures ``scripted_provider`` and ``agent_builder`` come with the package's
  pytest plugin (no conftest needed).
"""

from .scripted import ScriptedProvider, ScriptExhausted, ScriptItem

__all__ = ["ScriptExhausted", "ScriptItem", "ScriptedProvider"]
