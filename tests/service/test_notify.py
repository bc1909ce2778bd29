"""sd_notify and the watchdog: what systemd would receive on its NOTIFY_SOCKET.

The tests bind the datagram socket systemd would bind and read what the service sends, in
process (a Service on simulated pins) and from a real ``clawseed-edge run --sim`` subprocess.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawseed_edge.config.file import load_config
from clawseed_edge.service import Service, ServiceOptions
from clawseed_edge.service.notify import Notifier, watchdog_interval_s
from clawseed_edge.testing import ScriptedProvider

CONFIG = """
[provider]
name = "demo"
[hardware]
board = "sim"
[[devices]]
name = "heater"
pin = "GPIO17"
kind = "relay"
initial = "on"
"""


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A datagram socket bound where systemd would bind it: (socket, NOTIFY_SOCKET value)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify.sock"
    sock.bind(str(path))
    try:
        yield sock, str(path)
    finally:
        sock.close()


def _messages(sock: socket.socket) -> list[dict[str, str]]:
    """Every datagram waiting now, each parsed into its KEY=value fields."""
    found = []
    sock.setblocking(False)
    while True:
        try:
            data = sock.recv(4096)
        except BlockingIOError:
            return found
        found.append(dict(line.split("=", 1) for line in data.decode().splitlines()))


def _wait_for(sock: socket.socket, key: str, timeout_s: float = 30.0) -> list[dict[str, str]]:
    """Read until a message with ``key`` arrives; returns everything read (a bound, not timing)."""
    seen: list[dict[str, str]] = []
    sock.settimeout(timeout_s)
    while True:
        sock.setblocking(True)
        sock.settimeout(timeout_s)
        data = sock.recv(4096)
        seen.append(dict(line.split("=", 1) for line in data.decode().splitlines()))
        if key in seen[-1]:
            return seen


# --- the protocol --------------------------------------------------------------------------


def test_no_notify_socket_means_nothing_is_sent() -> None:
    notifier = Notifier({})
    assert not notifier.enabled
    assert notifier.ready("running") is False


def test_messages_reach_a_path_socket_one_field_per_line(
    notify_socket: tuple[socket.socket, str],
) -> None:
    sock, path = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": path})
    assert notifier.ready("running:\nthree lines\nin one")
    assert notifier.stopping()
    first, second = _messages(sock)
    assert first == {"READY": "1", "STATUS": "running: three lines in one"}
    assert second["STOPPING"] == "1"


def test_an_abstract_socket_written_with_at_is_reached() -> None:
    name = f"clawseed-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    try:
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).status("hello")
        assert _messages(sock) == [{"STATUS": "hello"}]
    finally:
        sock.close()


def test_a_socket_that_went_away_is_not_an_error(tmp_path: Path) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone.sock")})
    assert notifier.enabled
    assert notifier.status("hello") is False  # logged once, never raised


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"WATCHDOG_USEC": "20000000"}, 20.0),
        ({"WATCHDOG_USEC": "20000000", "WATCHDOG_PID": str(os.getpid())}, 20.0),
        ({"WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "1"}, None),  # meant for another process
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
        ({}, None),
    ],
)
def test_watchdog_interval_honours_usec_and_pid(
    env: dict[str, str], expected: float | None
) -> None:
    assert watchdog_interval_s(env) == expected


# --- the service, in process ---------------------------------------------------------------


async def _service(home: Path, notifier: Notifier) -> Service:
    path = home / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    options = ServiceOptions(
        sim=True,
        gateway=False,
        assemble={"provider": ScriptedProvider()},
        say=lambda line: None,
        notifier=notifier,
    )
    return Service(load_config(path), options)


async def test_ready_status_watchdog_and_stopping_in_process(
    clawseed_home: Path, notify_socket: tuple[socket.socket, str]
) -> None:
    sock, path = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "100000"})
    service = await _service(clawseed_home, notifier)
    await service.start()
    try:
        assert notifier.watchdog_s == 0.1
        ready = _messages(sock)
        await asyncio.sleep(0.3)  # the pinger's turn on the loop (every 0.05 s)
        pings = _messages(sock)
    finally:
        await service.aclose()
    stopped = _messages(sock)
    assert ready[0]["READY"] == "1"
    assert "pi: sim with 1 device" in ready[0]["STATUS"] and ready[0]["STATUS"].startswith(
        "running: "
    )
    assert any(m.get("WATCHDOG") == "1" for m in pings), pings
    assert stopped[0]["STOPPING"] == "1"


async def test_a_blocked_event_loop_sends_no_watchdog_pings(
    clawseed_home: Path, notify_socket: tuple[socket.socket, str]
) -> None:
    sock, path = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "40000"})  # ping every 20 ms
    service = await _service(clawseed_home, notifier)
    await service.start()
    try:
        await asyncio.sleep(0.1)
        before = _messages(sock)
        # A bug that blocks the loop: the only sender of pings is a task on this loop, so
        # nothing can arrive while it is blocked, however long that is.
        time.sleep(0.5)  # noqa: ASYNC251 (blocking the loop is the point)
        during = _messages(sock)
        await asyncio.sleep(0.1)
        after = _messages(sock)
    finally:
        await service.aclose()
    assert any("WATCHDOG" in m for m in before), before
    assert during == []
    assert any("WATCHDOG" in m for m in after), "pings resume once the loop runs again"


async def test_reload_says_reloading_then_ready(
    clawseed_home: Path, notify_socket: tuple[socket.socket, str]
) -> None:
    sock, path = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": path})
    service = await _service(clawseed_home, notifier)
    async with service:
        _messages(sock)
        await service.reload()
        messages = _messages(sock)
    assert messages[0]["RELOADING"] == "1" and int(messages[0]["MONOTONIC_USEC"]) > 0
    assert messages[1]["READY"] == "1"


async def test_an_estop_over_the_socket_shows_in_the_status_line(
    clawseed_home: Path, notify_socket: tuple[socket.socket, str]
) -> None:
    from clawseed_edge.service import control_path, control_request

    sock, path = notify_socket
    service = await _service(clawseed_home, Notifier({"NOTIFY_SOCKET": path}))
    async with service:
        _messages(sock)
        await control_request(control_path(clawseed_home), "estop")
        messages = _messages(sock)
    assert "every output in its safe state" in messages[0]["STATUS"]


# --- the command, as systemd starts it -----------------------------------------------------


def test_run_sim_subprocess_notifies_ready_pings_and_stops_on_sigterm(tmp_path: Path) -> None:
    name = f"clawseed-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    env = {
        **os.environ,
        "CLAWSEED_HOME": str(home),
        "NOTIFY_SOCKET": "@" + name,
        "WATCHDOG_USEC": "200000",
    }
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawseed_edge", "run", "--sim"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        until_ready = _wait_for(sock, "READY")
        until_ping = _wait_for(sock, "WATCHDOG")
        proc.send_signal(signal.SIGTERM)
        until_stopping = _wait_for(sock, "STOPPING")
        code = proc.wait(timeout=30)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        sock.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "pi: sim with 1 device" in until_ready[-1]["STATUS"]
    assert until_ping[-1]["WATCHDOG"] == "1"
    assert "SIGTERM" in until_stopping[-1]["STATUS"]
    assert code == 0, err
    assert "applying the safe state" in err
