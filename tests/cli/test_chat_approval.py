"""After an approval question times out or is interrupted, the next line typed in `chat` is
read by chat (it used to go to a reader thread left blocked by the question).

`chat` runs in a subprocess on a pseudo-terminal, so stdin is a TTY as for a user."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "full"
approval_timeout_s = {timeout}
[hardware]
board = "sim"
[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"
[[devices]]
name = "fan"
pin = "GPIO23"
kind = "relay"
approval = true
"""


class Terminal:
    """A process on a pty: type lines, wait for text (bounded; a miss fails the test)."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        master, slave = pty.openpty()
        self.master = master
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
        )
        os.close(slave)
        self.seen = ""

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def expect(self, text: str, *, after: int = 0, limit_s: float = 30.0) -> int:
        """Wait until ``text`` appears after offset ``after``; returns the offset past it."""
        deadline = time.monotonic() + limit_s
        while True:
            found = self.seen.find(text, after)
            if found >= 0:
                return found + len(text)
            left = deadline - time.monotonic()
            if left <= 0 or (self.proc.poll() is not None and not self._ready(0)):
                pytest.fail(f"never saw {text!r}; the terminal shows:\n{self.seen[-3000:]}")
            if self._ready(min(left, 0.2)):
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the process ended and closed the pty
                    chunk = b""
                self.seen += chunk.decode(errors="replace")

    def _ready(self, wait_s: float) -> bool:
        return bool(select.select([self.master], [], [], wait_s)[0])

    def close(self) -> int:
        code = self.proc.wait(timeout=30)
        if self.master >= 0:
            os.close(self.master)
            self.master = -1
        return code


@pytest.fixture
def terminal(tmp_path: Path, clawseed_home: Path) -> Terminal:
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.format(timeout=1.0), encoding="utf-8")
    env = {**os.environ, "CLAWSEED_HOME": str(clawseed_home)}
    term = Terminal(
        [sys.executable, "-m", "clawseed_edge", "chat", "--sim", "--config", str(cfg)], env
    )
    yield term
    if term.proc.poll() is None:
        term.proc.kill()
    term.close()


def _next_line_reaches_chat(terminal: Terminal, at: int) -> None:
    terminal.type("turn on the red led")
    at = terminal.expect("[pin] GPIO17 (red_led): off -> on", after=at)
    terminal.type("/exit")
    assert terminal.close() == 0


def test_the_line_after_a_timed_out_question_reaches_chat(terminal: Terminal) -> None:
    terminal.type("turn on the fan")
    at = terminal.expect("Allow [")
    at = terminal.expect("[y/N] (no answer)\r\n", after=at)  # the question's line ends
    at = terminal.expect("<- refused", after=at)  # nobody answered within approval_timeout_s
    _next_line_reaches_chat(terminal, at)


def test_the_line_after_an_interrupted_question_reaches_chat(terminal: Terminal) -> None:
    terminal.type("turn on the fan")
    at = terminal.expect("Allow [")
    terminal.proc.send_signal(signal.SIGINT)
    at = terminal.expect("aborted", after=at)
    _next_line_reaches_chat(terminal, at)


def test_an_answer_still_approves(terminal: Terminal) -> None:
    terminal.type("turn on the fan")
    at = terminal.expect("Allow [")
    terminal.type("y")
    at = terminal.expect("[pin] GPIO23 (fan): off -> on", after=at)
    terminal.type("/exit")
    assert terminal.close() == 0
