"""A real MQTT broker for tests: Debian's ``mosquitto`` on a free port of 127.0.0.1.

:class:`MosquittoBroker` writes a temporary config (``listener PORT 127.0.0.1``,
``allow_anonymous``, optionally a password file), starts the ``mosquitto`` binary, waits until
it accepts connections, and stops it (``restart`` keeps the port: a client must survive it).
The ``mosquitto`` pytest fixture (:mod:`~clawseed_edge.testing.mqtt_fixtures`) gives a started
one to a test; where the binary is missing the test is skipped, or fails when ``CI`` is set.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "MosquittoBroker",
    "MosquittoMissing",
    "MqttRecorder",
    "find_mosquitto",
    "require_mosquitto",
]

#: Where Debian's package puts the broker (it is not on a normal user's PATH).
DEBIAN_PATH = Path("/usr/sbin/mosquitto")


class MosquittoMissing(RuntimeError):
    """The ``mosquitto`` binary is not installed."""


def find_mosquitto() -> Path | None:
    """The ``mosquitto`` binary: ``$CLAWSEED_MOSQUITTO``, the PATH, or Debian's place."""
    given = os.environ.get("CLAWSEED_MOSQUITTO")
    if given:
        return Path(given) if Path(given).is_file() else None
    found = shutil.which("mosquitto")
    if found:
        return Path(found)
    return DEBIAN_PATH if DEBIAN_PATH.is_file() else None


def require_mosquitto() -> Path:
    """The binary, or a pytest skip (locally) / failure (``CI`` set) that says how to install it."""
    import pytest

    path = find_mosquitto()
    if path is None:
        message = "MQTT tests need mosquitto (apt-get install mosquitto; `bash .ci/run` does it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MosquittoBroker:
    """One mosquitto process on 127.0.0.1, configured in ``directory``.

    Args:
        directory: Where its config, password file and log go.
        users: ``{username: password}``; when given, anonymous clients are refused.
        tls: ``(certfile, keyfile)`` of the server: the listener speaks TLS only.
        tcp_nodelay: ``set_tcp_nodelay`` (no Nagle delay on small messages; mosquitto's
            default is off).
        acl: The text of a Mosquitto ACL file (``acl_file``): what each account may publish
            and subscribe to (docs/fleet.md).
        binary: The broker (default: :func:`find_mosquitto`).

    Usable as a context manager; :meth:`stop` is idempotent.
    """

    def __init__(
        self,
        directory: Path,
        *,
        users: dict[str, str] | None = None,
        tls: tuple[Path, Path] | None = None,
        tcp_nodelay: bool = True,
        acl: str | None = None,
        binary: Path | None = None,
    ) -> None:
        found = binary or find_mosquitto()
        if found is None:
            raise MosquittoMissing("mosquitto is not installed (apt-get install mosquitto)")
        self.binary = found
        self.directory = Path(directory)
        self.users = dict(users or {})
        self.tls = tls
        self.tcp_nodelay = tcp_nodelay
        self.acl = acl
        self.host = "127.0.0.1"
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = self.directory / "mosquitto.log"

    def _write_config(self) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        lines = [
            f"listener {self.port} {self.host}",
            f"allow_anonymous {'false' if self.users else 'true'}",
            "persistence false",
            f"set_tcp_nodelay {'true' if self.tcp_nodelay else 'false'}",
            f"log_dest file {self.log_path}",
            "log_type error",
            "log_type warning",
            "log_type notice",
        ]
        if self.tls is not None:
            lines += [f"certfile {self.tls[0]}", f"keyfile {self.tls[1]}"]
        if os.geteuid() == 0:
            # As root mosquitto drops to its own user, who cannot read our temp directory.
            lines.append("user root")
        if self.users:
            passwords = self.directory / "passwords"
            passwords.write_text("".join(f"{u}:{p}\n" for u, p in self.users.items()))
            passwords.chmod(0o600)
            # Hash the plain file in place (mosquitto_passwd -U); without the tool mosquitto
            # refuses plain passwords, so a test with users needs it.
            tool = self.binary.parent.parent / "bin" / "mosquitto_passwd"
            subprocess.run(
                [str(tool) if tool.is_file() else "mosquitto_passwd", "-U", str(passwords)],
                check=True,
                capture_output=True,
            )
            lines.append(f"password_file {passwords}")
        if self.acl is not None:
            acl = self.directory / "acl"
            acl.write_text(self.acl)
            lines.append(f"acl_file {acl}")
        path = self.directory / "mosquitto.conf"
        path.write_text("\n".join(lines) + "\n")
        return path

    def start(self, timeout_s: float = 10.0) -> MosquittoBroker:
        """Start it and wait until it accepts a TCP connection.

        Raises:
            RuntimeError: It exited or did not listen within ``timeout_s`` (its log is quoted).
        """
        if self.process is not None and self.process.poll() is None:
            return self
        config = self._write_config()
        self.process = subprocess.Popen(
            [str(self.binary), "-c", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = (
                    self.process.stderr.read().decode(errors="replace")
                    if self.process.stderr
                    else ""
                )
                raise RuntimeError(f"mosquitto exited at start: {err or self.log()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(
            f"mosquitto did not listen on {self.port} in {timeout_s:g} s: {self.log()}"
        )

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL after 5 s). Idempotent."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5.0)
        if process.stderr is not None:
            process.stderr.close()

    def restart(self) -> None:
        """Stop and start again on the same port (retained messages are lost: no persistence)."""
        self.stop()
        self.start()

    def log(self) -> str:
        """The last 2,000 characters of its log."""
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def __enter__(self) -> MosquittoBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class MqttRecorder:
    """A client on the broker that keeps the last message of every topic it subscribed to
    (what Home Assistant would see), for tests. Needs the ``mqtt`` extra.

    ``async with MqttRecorder(broker, "homeassistant/#", "clawseed/#") as ha:`` then
    ``await ha.wait_for(topic, lambda payload: ...)``, ``await ha.publish(topic, payload)``.
    ``username``/``password``: its account on a broker with ``users``.
    """

    def __init__(
        self,
        broker: MosquittoBroker,
        *topics: str,
        username: str | None = None,
        password: str | None = None,
    ) -> None:
        self.broker = broker
        self.username, self.password = username, password
        self.topics = topics or ("#",)
        self.last: dict[str, bytes] = {}
        self.retained: dict[str, bool] = {}
        self.history: list[tuple[str, bytes]] = []
        self._changed: Any = None
        self._client: Any = None
        self._task: Any = None

    async def __aenter__(self) -> MqttRecorder:
        import asyncio

        import aiomqtt

        self._changed = asyncio.Condition()
        # A broker with accounts (no anonymous clients): log in with the account given, else
        # with its first one, as Home Assistant would.
        first_user, first_password = next(iter(self.broker.users.items()), (None, None))
        self._client = aiomqtt.Client(
            self.broker.host,
            self.broker.port,
            username=self.username or first_user,
            password=self.password if self.username else first_password,
        )
        await self._client.__aenter__()
        for topic in self.topics:
            await self._client.subscribe(topic, qos=1)
        self._task = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        async for message in self._client.messages:
            topic = str(message.topic.value)
            payload = message.payload if isinstance(message.payload, bytes) else b""
            async with self._changed:
                self.last[topic] = payload
                self.retained[topic] = bool(message.retain)
                self.history.append((topic, payload))
                self._changed.notify_all()

    async def wait_for(
        self, topic: str, check: Callable[[bytes], bool] = lambda p: True, timeout_s: float = 10.0
    ) -> bytes:
        """The last payload of ``topic`` once ``check(payload)`` holds.

        Raises:
            TimeoutError: Not within ``timeout_s`` (the message says what was last seen).
        """
        import asyncio

        try:
            async with asyncio.timeout(timeout_s), self._changed:
                await self._changed.wait_for(lambda: topic in self.last and check(self.last[topic]))
        except TimeoutError:
            raise TimeoutError(f"{topic}: last seen {self.last.get(topic)!r}") from None
        return self.last[topic]

    def count(self, topic: str) -> int:
        """How many messages came on ``topic``."""
        return sum(1 for t, _ in self.history if t == topic)

    async def publish(self, topic: str, payload: str | bytes, *, retain: bool = False) -> None:
        await self._client.publish(topic, payload, qos=1, retain=retain)

    async def __aexit__(self, *exc: object) -> None:
        import asyncio

        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._client is not None:
            await self._client.__aexit__(None, None, None)
