"""pytest plugin (entry point ``pytest11``) that offers clawseed-edge's fixtures to any test suite.

Installing clawseed-edge makes these fixtures available in every pytest run, with no conftest:
the agent fixtures (a scripted provider, an agent builder) and the hardware fixtures (a mock pin
factory, a wired simulated board, ``sim_i2c`` for simulated sensor banks).

An ``async def`` test that uses one of these fixtures runs on pytest-asyncio's loop without any
configuration: the plugin gives it the ``asyncio`` mark, so it works in pytest-asyncio's default
strict mode (``asyncio_mode = "auto"`` is not needed). Tests marked for another async library
(``anyio``, ``trio``) and tests that use none of these fixtures are left alone.

pytest-asyncio comes with the ``testing`` extra (``pip install -e '.[testing]'`` in a checkout).
When the project leaves ``asyncio_default_fixture_loop_scope`` unset, the plugin sets it to
``function`` (what these fixtures use, and pytest-asyncio's announced default), so a fresh
project does not get pytest-asyncio's deprecation warning on every run; a project's own
setting stands.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import Any

import pytest

pytest_plugins = [
    "clawseed_edge.testing.agent_fixtures",
    "clawseed_edge.testing.hardware_fixtures",
    "clawseed_edge.testing.sensor_fixtures",
    "clawseed_edge.testing.mqtt_fixtures",
]

#: pytest-asyncio's setting that warns on every run while it is unset.
LOOP_SCOPE = "asyncio_default_fixture_loop_scope"

#: The fixtures this plugin provides; an async test using any of them gets the asyncio mark.
FIXTURES = frozenset(
    {"scripted_provider", "agent_builder", "mock_pin_factory", "sim_board", "sim_i2c", "mosquitto"}
)
_OTHER_LOOPS = ("anyio", "trio")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before pytest-asyncio reads it: ``function`` loop scope where the project set none."""
    if not config.pluginmanager.hasplugin("asyncio"):
        return
    try:
        if config.getini(LOOP_SCOPE):
            return  # the project's own choice stands
    except ValueError:  # a pytest-asyncio without this setting
        return
    # pytest has no public way for a plugin to give another plugin's ini key a default;
    # getini() reads through this cache (should it move, the warning only comes back).
    cache = getattr(config, "_inicache", None)
    if isinstance(cache, dict):
        cache[LOOP_SCOPE] = "function"


# trylast makes this the innermost wrapper: the mark is added before pytest-asyncio's own
# wrapper looks at the collected items and turns marked coroutines into its test items.
@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> Generator[None, Any, None]:
    outcome = yield
    if not inspect.iscoroutinefunction(obj):
        return
    result = outcome.get_result()
    items = result if isinstance(result, list) else [result]
    if not collector.config.pluginmanager.hasplugin("asyncio"):
        return  # no loop to give it: pytest_runtest_setup below says what to install
    for item in items:
        if isinstance(item, pytest.Function) and _wants_our_loop(item):
            item.add_marker("asyncio")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Without pytest-asyncio an async test on these fixtures cannot run: say what to install
    (instead of pytest's "requested an async fixture ... with no plugin")."""
    if item.config.pluginmanager.hasplugin("asyncio") or not isinstance(item, pytest.Function):
        return
    if inspect.iscoroutinefunction(item.obj) and _wants_our_loop(item):
        pytest.fail(
            f"{item.name} is an async test on clawseed-edge's fixtures, which run on "
            "pytest-asyncio's loop, and pytest-asyncio is not installed: run "
            "pip install pytest-asyncio (or install clawseed-edge with its testing extra: "
            "pip install -e '/path/to/clawseed-edge[testing]')",
            pytrace=False,
        )


def _wants_our_loop(item: pytest.Function) -> bool:
    if not FIXTURES.intersection(item.fixturenames):
        return False
    return not any(item.get_closest_marker(name) for name in ("asyncio", *_OTHER_LOOPS))
