"""Shared fixtures: every test gets its own $CLAWSEED_HOME, so nothing touches ~/.clawseed-edge."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def clawseed_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("clawseed-home")
    monkeypatch.setenv("CLAWSEED_HOME", str(home))
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(autouse=True)
def scripted_models_decide(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Most tests script a model's replies to test what a channel or the policy does with them:
    the local-intent stage, on by default, would answer "turn on the led" before the scripted
    model is asked. It is off here (the environment override, so processes a test starts are
    alike) unless a test is marked ``local_intents``: the stage's own tests, the docs' shell
    blocks (what a user sees by default) and the person-wording checks."""
    if request.node.get_closest_marker("local_intents") is None:
        monkeypatch.setenv("CLAWSEED__AGENT__LOCAL_INTENTS", "false")


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    """Fail a test that leaves a non-daemon thread running (an unclosed sqlite worker, an
    executor): such a thread keeps the process from exiting, as a service would at shutdown."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 5.0
    while True:
        leaked = [
            t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon
        ]
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not leaked, f"test left non-daemon threads running: {[t.name for t in leaked]}"


#: Test folders whose tests carry a marker of their own, so a run can pick or skip the group.
_GROUP_MARKERS = {"e2e": "browser", "firmware": "firmware", "docs": "local_intents"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the browser and firmware groups by folder (``-m 'not browser'`` skips Chromium)."""
    tests_dir = Path(__file__).parent
    for item in items:
        try:
            group = item.path.relative_to(tests_dir).parts[0]
        except ValueError:
            continue
        marker = _GROUP_MARKERS.get(group)
        if marker is not None:
            item.add_marker(getattr(pytest.mark, marker))
