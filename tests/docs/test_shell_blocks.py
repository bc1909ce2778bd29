"""Every shell block of the README and of the walk-through pages runs as written, in a fresh home.

A page is run top to bottom in its own ``$HOME`` (so ``~/.clawseed-edge`` is new): each
```` ```sh ```` block through ``bash -e``, in order, against a fake Telegram Bot API, a real
Mosquitto (:mod:`clawseed_edge.testing.mqtt`) and the simulated boards. The page says how a
block is run, in HTML comments just above it (invisible on GitHub):

* ``<!-- not-tested: reason -->``: skipped, with the reason (a ``sudo`` line, the install);
* ``<!-- background -->``: a long-running service, started, awaited until it says it runs, and
  stopped with SIGTERM after the page's last block (it must stop cleanly);
* ``<!-- expect: TEXT -->``: the block's output contains TEXT;
* ``<!-- append: ~/PATH -->`` above a ``toml`` block: the page asks the reader to add it to
  that file, so the test does.

The only things that differ from a reader's machine are addresses, given the way a user gives
them, through ``CLAWSEED__*`` environment overrides: the broker's port, the Bot API's address,
a free gateway port. A shell block with no marker that would start a service fails at once
(instead of hanging), and every ``sh`` block of a page must be run or carry a reason.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/telegram.md", "docs/home-assistant.md", "docs/fleet.md",
         "docs/getting-started.md"]  # fmt: skip
SHELL = {"sh", "bash", "shell", "console"}
#: What a block's ``secrets set NAME`` reads from stdin (the reader types it).
SECRETS = {"TELEGRAM_BOT_TOKEN": "123456:TEST-fake-bot-token-0000", "MQTT_PASSWORD": "pw"}
#: A service's line once it serves (``run``; ``gateway`` prints its address).
READY = re.compile(r"clawseed-edge running:|gateway listening on")
SERVICE = re.compile(r"clawseed-edge(?: --config \S+)? (?:run|gateway|sim nucleo)\b(?!.*--help)")
BLOCK_TIMEOUT_S = 120
READY_TIMEOUT_S = 60
EXPECT_RETRY_S = 15  # a channel's state converges after the service says it runs


@dataclass
class Block:
    """One fenced block and the markers above it."""

    page: str
    line: int
    lang: str
    text: str
    markers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: str | Path) -> list[Block]:
    """The fenced blocks of ``page`` (relative to the checkout) with their markers (indented
    fences included)."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    page = str(page)
    found: list[Block] = []
    markers: dict[str, str] = {}
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        marker = re.fullmatch(r"<!--\s*([\w-]+)\s*(?::\s*(.*?))?\s*-->", stripped)
        fence = re.fullmatch(r"(\s*)```(\w*)\s*", lines[i])
        if marker:
            markers[marker.group(1)] = marker.group(2) or ""
        elif fence:
            indent, lang, start = fence.group(1), fence.group(2), i
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
                i += 1
            found.append(Block(page, start + 1, lang, "\n".join(body) + "\n", markers))
            markers = {}
        elif stripped:
            markers = {}
        i += 1
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def bot_api() -> Iterator[str]:
    from clawseed_edge.testing.fake_servers import FakeBotApi

    with FakeBotApi(max_poll_s=1.0) as api:
        yield api.url


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[int]:
    """A broker per page: retained messages of one page's nodes must not reach the next."""
    from clawseed_edge.testing.mqtt import MosquittoBroker, require_mosquitto

    require_mosquitto()
    with MosquittoBroker(tmp_path / "broker") as running:
        yield running.port


class Reader:
    """Runs a page's blocks as a reader would, in one fresh home."""

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.home = home
        self.env = env
        self.services: list[tuple[Block, subprocess.Popen[bytes], Path]] = []
        self.skipped: list[str] = []

    def run(self, block: Block) -> None:
        if "not-tested" in block.markers:
            assert block.markers["not-tested"], f"{block}: not-tested needs a reason"
            self.skipped.append(f"{block}: {block.markers['not-tested']}")
        elif "append" in block.markers:
            target = Path(block.markers["append"].replace("~", str(self.home), 1))
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("a", encoding="utf-8") as fh:
                fh.write("\n" + block.text)
        elif block.lang in SHELL and "background" in block.markers:
            self.start(block)
        elif block.lang in SHELL:
            assert not SERVICE.search(block.text), (
                f"{block} starts a service: mark it <!-- background --> (or not-tested)"
            )
            self.once(block)

    def once(self, block: Block) -> None:
        names = re.findall(r"secrets set (\w+)", block.text)
        assert len(names) <= 1, f"{block}: one `secrets set` per block (stdin is its value)"
        stdin = SECRETS[names[0]] if names else ""
        expect = block.markers.get("expect")
        deadline = time.monotonic() + EXPECT_RETRY_S
        while True:
            proc = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", block.text],
                cwd=self.home, env=self.env, input=stdin.encode(), capture_output=True,
                timeout=BLOCK_TIMEOUT_S, check=False,
            )  # fmt: skip
            out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
            assert proc.returncode == 0, f"{block} exited {proc.returncode}:\n{block.text}\n{out}"
            assert "Traceback" not in out, f"{block}:\n{out}"
            if expect is None or expect in out or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert expect is None or expect in out, f"{block}: expected {expect!r} in:\n{out}"

    def start(self, block: Block) -> None:
        log = self.home / f"service-{block.line}.log"
        fh = log.open("wb")
        proc = subprocess.Popen(
            ["bash", "-e", "-c", block.text], cwd=self.home, env=self.env,
            stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self.services.append((block, proc, log))
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not READY.search(log.read_text("utf-8", "replace")):
            assert proc.poll() is None, f"{block} ended ({proc.returncode}):\n{log.read_text()}"
            assert time.monotonic() < deadline, f"{block} did not start:\n{log.read_text()}"
            time.sleep(0.2)

    def stop_all(self) -> list[str]:
        """SIGTERM every service, newest first; what went wrong, if anything."""
        problems = []
        for block, proc, log in reversed(self.services):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                code = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                code = proc.wait()
                problems.append(f"{block} did not stop within 30 s of SIGTERM")
            text = log.read_text("utf-8", "replace")
            if code != 0 or "Traceback" in text:
                problems.append(f"{block} stopped with {code}:\n{text[-3000:]}")
        return problems


@pytest.mark.parametrize("page", PAGES)
def test_every_shell_block_runs_as_written(
    page: str, tmp_path: Path, bot_api: str, broker: int
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAWSEED", "PYTEST_"))}
    env.update(
        HOME=str(home),
        CLAWSEED_HOME=str(home / ".clawseed-edge"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        CLAWSEED__GATEWAY__PORT=str(free_port()),
        CLAWSEED__MQTT__HOST="127.0.0.1",
        CLAWSEED__MQTT__PORT=str(broker),
        CLAWSEED__CHANNELS__TELEGRAM__API_BASE=bot_api,
    )
    reader = Reader(home, env)
    page_blocks = blocks(page)
    shell = [b for b in page_blocks if b.lang in SHELL]
    assert shell, f"{page} has no shell block"
    try:
        for block in page_blocks:
            if "append" in block.markers:
                assert block.lang == "toml", f"{block}: append is for toml blocks"
            reader.run(block)
    finally:
        problems = reader.stop_all()
    assert not problems, "\n".join(problems)
    ran = len(shell) - len(reader.skipped)
    assert ran > 0, f"{page}: every shell block is skipped"


def test_the_markers_are_read_as_meant(tmp_path: Path) -> None:
    """A reason-less skip, a service without its marker and the markers' reach are caught."""
    page = tmp_path / "example.md"
    text = (
        "<!-- not-tested: needs root -->\n```sh\nsudo true\n```\n\n"
        "<!-- expect: hi -->\nwords in between\n\n```sh\necho hi\n```\n\n"
        "   <!-- background -->\n   ```sh\n   clawseed-edge run --sim\n   ```\n"
    )
    page.write_text(text, encoding="utf-8")
    found = blocks(page)  # an absolute path: ROOT / page is page
    assert [b.markers for b in found] == [{"not-tested": "needs root"}, {}, {"background": ""}]
    assert found[2].text == "clawseed-edge run --sim\n"
    reader = Reader(Path("/nonexistent"), {})
    with pytest.raises(AssertionError, match="starts a service"):
        reader.run(Block("x.md", 1, "sh", "clawseed-edge run --sim\n"))
    with pytest.raises(AssertionError, match="needs a reason"):
        reader.run(Block("x.md", 1, "sh", "true\n", {"not-tested": ""}))
