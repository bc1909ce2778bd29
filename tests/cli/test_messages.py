"""What the CLI prints says what happened: plurals, refusals as refusals, pin logic and line."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawseed_edge.api import MemoryEntry
from clawseed_edge.cli.main import main
from clawseed_edge.memory.sqlite import SqliteMemory

ONE_RELAY = """
[provider]
name = "demo"
[autonomy]
level = "full"
[hardware]
board = "sim"
[[devices]]
name = "fan"
pin = "GPIO23"
kind = "relay"
active_high = false
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def one_relay(tmp_path: Path) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(ONE_RELAY, encoding="utf-8")
    return path


def test_an_active_low_relay_shows_its_state_and_its_line(
    one_relay: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys, "agent", "--config", str(one_relay), "--sim", "-m", "turn on the fan"
    )
    assert code == 0, err
    assert "[pin] GPIO23 (fan): off -> on (line 1 -> 0)" in err


def test_a_led_shows_on_and_the_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "agent", "--sim", "-m", "turn on the red led")
    assert code == 0, err
    assert "[pin] GPIO17 (red_led): off -> on (line 0 -> 1)" in err


def test_a_denied_call_is_not_reported_as_done(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "agent", "--sim", "-m", "set the lamp to 90%")
    assert code == 0, err
    assert "<- denied" in err and "refused/failed" not in err
    assert not out.startswith("Done")
    assert "Not done" in out and "Error:" not in out


def test_a_failed_tool_is_reported_as_failed(capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from clawseed_edge.api import ToolCall, ToolResult, ToolResultEvent
    from clawseed_edge.cli.render import EventPrinter

    err = io.StringIO()
    printer = EventPrinter(out=io.StringIO(), err=err)
    call = ToolCall("gpio_read", {}, "1")
    printer.handle(ToolResultEvent(call, ToolResult.fail("the board did not answer")))
    printer.handle(ToolResultEvent(call, ToolResult.fail("Refused by the security policy: no")))
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("<- failed") and lines[1].startswith("<- refused")


def test_estop_counts_one_output(one_relay: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "estop", "--sim", "--config", str(one_relay))
    assert code == 0, err
    assert "estop: 1 output on" in out + err


def test_export_counts_one_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.db"

    async def fill() -> None:
        async with SqliteMemory.open(db) as memory:
            await memory.store(MemoryEntry("k", "v"))

    asyncio.run(fill())
    target = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "memory", "export", "--db", str(db), "-o", str(target))
    assert code == 0, err
    assert "exported 1 entry to" in err


def test_run_summary_counts_one_device() -> None:
    from types import SimpleNamespace

    from clawseed_edge.service.process import runtime_summary as _summary

    gpio = SimpleNamespace(name="pi", board_type="sim", hardware=SimpleNamespace(devices=[1]))
    runtime = SimpleNamespace(provider=SimpleNamespace(name="demo", model="m"), peripherals=[gpio])
    assert _summary(runtime).endswith("sim with 1 device")  # type: ignore[arg-type]


def test_the_safe_state_log_counts_one_peripheral(caplog: pytest.LogCaptureFixture) -> None:
    import signal

    from clawseed_edge.peripherals import install_signal_handlers

    async def go() -> None:
        loop = asyncio.get_running_loop()
        stopped = asyncio.Event()
        remove = install_signal_handlers(
            loop, [_Quiet()], stop=stopped.set, stop_signals=(signal.SIGUSR2,), estop_signal=None
        )
        try:
            signal.raise_signal(signal.SIGUSR2)
            await asyncio.wait_for(stopped.wait(), 10)
        finally:
            remove()

    with caplog.at_level("WARNING"):
        asyncio.run(go())
    assert "safe state of 1 peripheral" in caplog.text
    assert "1 peripherals" not in caplog.text


class _Quiet:
    name = "pi"
    board_type = "sim"

    async def apply_safe_state(self) -> None:
        pass
