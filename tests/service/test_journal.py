"""Log lines for journald: ``<N>`` priorities when stderr is the journal, one line per event,
secrets scrubbed."""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

from clawseed_edge.agent.redact import Scrubber, install_log_redaction
from clawseed_edge.service.journal import JournalFormatter, priority, stream_is_journal


def test_levels_map_to_syslog_priorities() -> None:
    assert [priority(x) for x in (50, 40, 30, 20, 10)] == [2, 3, 4, 6, 7]


def test_stream_is_journal_only_when_journal_stream_names_that_stream(tmp_path: Path) -> None:
    with open(tmp_path / "f", "w") as fh:
        st = os.fstat(fh.fileno())
        assert stream_is_journal(fh, {"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"})
        assert not stream_is_journal(fh, {"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino + 1}"})
        assert not stream_is_journal(fh, {})
        assert not stream_is_journal(fh, {"JOURNAL_STREAM": "garbage"})


def test_one_line_per_event_with_its_priority_and_no_secret() -> None:
    out = io.StringIO()
    logger = logging.getLogger("test_journal.isolated")
    logger.propagate = False
    handler = logging.StreamHandler(out)
    handler.setFormatter(JournalFormatter(journal=True))
    logger.addHandler(handler)
    install_log_redaction(Scrubber(["sk-verysecretvalue123"]), logger=logger)
    try:
        logger.warning("provider said no\nfor key sk-verysecretvalue123")
        try:
            raise ValueError("boom")
        except ValueError:
            logger.exception("a turn failed")
    finally:
        logger.removeHandler(handler)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("<4>test_journal.isolated: provider said no | for key ")
    assert "sk-verysecretvalue123" not in out.getvalue()
    assert lines[1].startswith("<3>") and "ValueError: boom" in lines[1]


def test_gateway_under_a_journal_stream_prefixes_its_log_lines_and_hides_the_code(
    tmp_path: Path,
) -> None:
    read_end, write_end = os.pipe()
    st = os.fstat(write_end)
    env = {
        **os.environ,
        "CLAWSEED_HOME": str(tmp_path),
        "JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawseed_edge", "gateway", "--sim", "--port", "0"],
        stderr=write_end,
        stdout=subprocess.DEVNULL,
        env=env,
    )
    os.close(write_end)
    with os.fdopen(read_end, encoding="utf-8") as stderr:
        try:
            head = []
            for line in stderr:
                head.append(line)
                if line.startswith("clawseed-edge running"):
                    break
            proc.send_signal(signal.SIGTERM)
            rest = stderr.read()
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    # The safe-state line is a WARNING record of the service's logger.
    assert "<4>clawseed_edge.run: SIGTERM: applying the safe state" in rest, rest
    # A pairing code works until used: it stays out of the journal.
    assert "pairing code:" not in "".join(head) + rest
    assert any("sudo clawseed-edge pair" in line for line in head), head
