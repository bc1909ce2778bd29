"""Real MicroPython (the webassembly port, under Node) behind a pseudo-terminal.

:class:`WasmBoard` starts ``wasm/board.mjs`` with pipes and pumps bytes between them and the
master side of a pty, so anything that opens :attr:`WasmBoard.path` (pyserial, mpremote's
transport, our deploy) sees a MicroPython REPL as it would on a USB serial port.

The npm package is installed by ``.ci/run`` into ``.ci/node`` (git-ignored). Where it is
missing the tests that need it are skipped -- except in CI (``CI`` set), where they fail, so a
broken install cannot pass as green.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import threading
import tty
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
MICROPYTHON_MJS = Path(
    os.environ.get(
        "CLAWSEED_MICROPYTHON_WASM",
        REPO
        / ".ci/node/node_modules/@micropython/micropython-webassembly-pyscript/micropython.mjs",
    )
)
BOARD_MJS = Path(__file__).with_name("wasm") / "board.mjs"


def require_wasm() -> None:
    """Skip (locally) or fail (in CI) when Node or the MicroPython package is missing."""
    missing = []
    if shutil.which("node") is None:
        missing.append("node")
    if not MICROPYTHON_MJS.is_file():
        missing.append(str(MICROPYTHON_MJS))
    if missing:
        message = (
            f"MicroPython webassembly port not available ({', '.join(missing)}); "
            "`bash .ci/run` installs it with npm into .ci/node"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


class WasmBoard:
    """One webassembly MicroPython behind a pty; a context manager."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self.config = config or {}
        self.path = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._master = self._slave = -1
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    def __enter__(self) -> WasmBoard:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        self.path = os.ttyname(self._slave)
        self._proc = subprocess.Popen(
            ["node", str(BOARD_MJS), str(MICROPYTHON_MJS), json.dumps(self.config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        for target in (self._to_node, self._from_node):
            thread = threading.Thread(target=target, daemon=True, name=f"wasm-{target.__name__}")
            thread.start()
            self._threads.append(thread)
        return self

    def _to_node(self) -> None:
        import select

        assert self._proc is not None and self._proc.stdin is not None
        while not self._stop.is_set():
            ready, _, _ = select.select([self._master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self._master, 4096)
            except OSError:
                continue  # nobody has the slave open right now
            try:
                self._proc.stdin.write(data)
                self._proc.stdin.flush()
            except (BrokenPipeError, ValueError):
                return

    def _from_node(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        while True:
            data = self._proc.stdout.read1(4096)
            if not data:
                return
            with contextlib.suppress(OSError):
                os.write(self._master, data)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(timeout=10)
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        for thread in self._threads:
            thread.join(timeout=5)
        for fd in (self._master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)
