"""A gateway (simulated pins and sensors, a scripted model) and headless Chromium, per module.

The gateway runs in a thread with its own event loop, so the tests can drive the browser with
Playwright's synchronous API. Chromium is Debian's ``/usr/bin/chromium`` (``.ci/run`` installs
it); where it or Playwright is missing the tests are skipped -- except in CI (``CI`` set), where
they fail, so a broken install cannot pass as green.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.gateway import RunningGateway, running_gateway

CHROMIUM = Path(os.environ.get("CLAWSEED_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
ARTIFACTS = Path(os.environ.get("CLAWSEED_E2E_ARTIFACTS", Path(__file__).with_name("artifacts")))

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "supervised"
approval_timeout_s = 30
[gateway]
enabled = true
port = 0
[hardware]
board = "sim"
[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"
[[devices]]
name = "pump"
pin = "GPIO27"
kind = "relay"
[[devices]]
name = "fan"
pin = "GPIO18"
kind = "pwm_led"
[[devices]]
name = "doorbell"
pin = "GPIO22"
kind = "button"
on_press = "the doorbell button was pressed"
[[sensors]]
name = "greenhouse"
driver = "bme280"
bus = 1
address = 0x76
"""

T = TypeVar("T")
EXECUTOR_PREFIX = "e2e-gateway-executor"


def require_browser() -> None:
    """Skip (locally) or fail (in CI) when Playwright or Chromium is missing."""
    missing = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package (pip install -e '.[dev]')")
    if not CHROMIUM.is_file():
        missing.append(f"{CHROMIUM} (apt-get install chromium; `bash .ci/run` does it)")
    if missing:
        message = "browser tests need " + " and ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


class GatewayThread:
    """``running_gateway`` in a thread of its own; :meth:`run` runs a coroutine on its loop."""

    def __init__(self, home: Path, provider: ScriptedProvider, config: str = CONFIG) -> None:
        self.home = home
        self.config = config
        self.provider = provider
        self.gateway: RunningGateway | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="e2e-gateway", daemon=True)

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        # Named, so the leak check below can tell them apart; asyncio.run joins them at exit.
        self._loop.set_default_executor(ThreadPoolExecutor(thread_name_prefix=EXECUTOR_PREFIX))
        self._stop = asyncio.Event()
        async with running_gateway(self.home, self.provider, self.config) as gateway:
            self.gateway = gateway
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> GatewayThread:
        self._thread.start()
        if not self._ready.wait(30) or self._error is not None or self.gateway is None:
            raise RuntimeError(f"the gateway did not start: {self._error!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(20)
        assert not self._thread.is_alive(), "the gateway did not stop within 20 s"
        left = [t.name for t in threading.enumerate() if t.name.startswith(EXECUTOR_PREFIX)]
        assert not left, f"the gateway left threads running: {left}"

    @property
    def url(self) -> str:
        assert self.gateway is not None
        return self.gateway.url

    @property
    def service(self) -> Any:
        assert self.gateway is not None
        return self.gateway.service

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def call(self, fn: Callable[[], T]) -> T:
        async def wrapped() -> T:
            return fn()

        return self.run(wrapped())

    def script(self, *responses: Any) -> None:
        """Queue the model's next answers."""
        self.call(lambda: self.provider.add(*responses))

    def new_code(self) -> str:
        return self.call(self.service.hub.pairing.new_code)


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    """As the suite's own check, but the module's gateway keeps its executor threads between
    tests (they are joined when the gateway stops, and checked there)."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 5.0
    while True:
        leaked = [
            t
            for t in threading.enumerate()
            if t not in before
            and t.is_alive()
            and not t.daemon
            and not t.name.startswith(EXECUTOR_PREFIX)
        ]
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not leaked, f"test left non-daemon threads running: {[t.name for t in leaked]}"


@pytest.fixture(scope="module")
def gateway(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GatewayThread]:
    """The module's gateway; a module sets ``GATEWAY_CONFIG`` for a config of its own (and
    ``GATEWAY_VISION`` for a scripted model that can see images)."""
    require_browser()
    home = tmp_path_factory.mktemp("e2e-home")
    config = getattr(request.module, "GATEWAY_CONFIG", CONFIG)
    # A module sets GATEWAY_VISION = True for a model that can see (camera_snapshot).
    vision = bool(getattr(request.module, "GATEWAY_VISION", False))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CLAWSEED_HOME", str(home))
        # The scripted model answers (module scope: made before tests/conftest.py's own switch).
        mp.setenv("CLAWSEED__AGENT__LOCAL_INTENTS", "false")
        provider = ScriptedProvider(streaming=True, vision=vision)
        with GatewayThread(home, provider, config) as running:
            yield running


@pytest.fixture(scope="module")
def browser(gateway: GatewayThread) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            with contextlib.suppress(Exception):
                launched.close()


@pytest.fixture(scope="module")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
