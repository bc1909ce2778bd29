"""SIGTERM and SIGHUP to `chat` (and `run`) apply every output's safe value, then the process
exits cleanly: `chat --sim` in a subprocess switches outputs on, is signalled, and prints the
pins it left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# No memory: the offline demo model would match its rules against recalled earlier commands.
CONFIG = """
[provider]
name = "demo"
[memory]
backend = "none"
[autonomy]
level = "full"
[hardware]
board = "sim"
[[devices]]
name = "heater"
pin = "GPIO17"
kind = "led"
[[devices]]
name = "lamp"
pin = "GPIO18"
kind = "pwm_led"
[[devices]]
name = "relay"
pin = "GPIO23"
kind = "relay"
active_high = false
"""


def _read_until(stream: object, marker: str) -> str:
    seen = []
    for line in stream:  # type: ignore[attr-defined]
        seen.append(line)
        if marker in line:
            return "".join(seen)
    pytest.fail(f"the process ended before {marker!r}:\n{''.join(seen)}")


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name
)
def test_a_signal_to_chat_leaves_every_output_safe(tmp_path: Path, sig: signal.Signals) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG, encoding="utf-8")
    env = {**os.environ, "CLAWSEED_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawseed_edge", "chat", "--sim", "--config", str(cfg)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdin is not None and proc.stderr is not None
        proc.stdin.write("turn on the heater\nset the lamp to 70%\nturn on the relay\n")
        proc.stdin.flush()  # stdin stays open: chat waits at its prompt, as for a user
        before = _read_until(proc.stderr, "[pin] GPIO23 (relay): off -> on (line 1 -> 0)")
        assert "[pin] GPIO18 (lamp): 0 -> 0.7" in before
        assert "[pin] GPIO17 (heater): off -> on" in before
        proc.send_signal(sig)
        rest = proc.stderr.read()
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in rest
    assert f"stopped by {sig.name}" in rest
    assert "[pin] GPIO17 (heater): off (line 0)" in rest
    assert "[pin] GPIO18 (lamp): 0 (line 0)" in rest
    assert "[pin] GPIO23 (relay): off (line 1)" in rest
    assert code == 128 + sig, rest


def test_sighup_stops_the_service_in_its_safe_state(tmp_path: Path) -> None:
    env = {**os.environ, "CLAWSEED_HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawseed_edge", "run", "--sim"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr is not None
        _read_until(proc.stderr, "clawseed-edge running")
        proc.send_signal(signal.SIGHUP)
        rest = proc.stderr.read()
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, rest
    assert "applying the safe state" in rest
    assert "outputs are in their safe state" in rest


AGENT_CONFIG = """
[provider]
name = "demo"
[memory]
backend = "none"
[hardware]
board = "sim"
[[devices]]
name = "heater"
pin = "GPIO17"
kind = "led"
initial = "on"
[[devices]]
name = "fan"
pin = "GPIO23"
kind = "relay"
approval = true
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_to_a_one_shot_waiting_for_approval_leaves_outputs_safe(
    tmp_path: Path, sig: signal.Signals
) -> None:
    from tests.cli.test_chat_approval import Terminal

    cfg = tmp_path / "c.toml"
    cfg.write_text(AGENT_CONFIG, encoding="utf-8")
    env = {**os.environ, "CLAWSEED_HOME": str(tmp_path / "home")}
    argv = ["agent", "--sim", "--config", str(cfg), "-m", "turn on the fan"]
    terminal = Terminal([sys.executable, "-m", "clawseed_edge", *argv], env)
    try:
        at = terminal.expect("Allow [")  # the heater is on (initial), the fan waits for a yes
        terminal.proc.send_signal(sig)
        terminal.expect(f"stopped by {sig.name}", after=at)
        terminal.expect("[pin] GPIO23 (fan): off (line 0)", after=at)
        terminal.expect("[pin] GPIO17 (heater): off (line 0)", after=at)
        assert terminal.close() == 128 + sig
    finally:
        if terminal.proc.poll() is None:
            terminal.proc.kill()
            terminal.close()
    assert "Traceback" not in terminal.seen
