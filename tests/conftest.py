"""Shared fixtures: every test gets its own $CLAWSEED_HOME, so nothing touches ~/.clawseed-edge."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def clawseed_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("clawseed-home")
    monkeypatch.setenv("CLAWSEED_HOME", str(home))
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return home
