"""The stored latch without a service: ``estop`` latches it in state.db, a one-shot agent that
opens the pins honours it (outputs at their safe level, writes refused), ``estop --reset``
releases it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawseed_edge.cli.estop_reset import latch_offline
from clawseed_edge.cli.main import main
from clawseed_edge.config.assembly import assemble
from clawseed_edge.config.file import load_config
from clawseed_edge.state.latch import read_stored_latch
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import mock_pin

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "full"
[hardware]
board = "sim"
[[devices]]
name = "pump"
pin = "GPIO17"
kind = "relay"
initial = "on"
"""


async def pump_after_one_turn(home: Path) -> list[int]:
    """The pump's pin history over a one-shot agent's start and a turn that switches it on."""
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="pump", on=True), "ok"]
    )
    runtime = await assemble(load_config(home / "config.toml"), sim=True, provider=provider)
    try:
        await runtime.agent.run("pump on", session_id="cli")
        (pi,) = runtime.peripherals
        return [int(s.state) for s in mock_pin(pi, "pump").states]  # type: ignore[arg-type]
    finally:
        await runtime.aclose()


async def test_a_one_shot_agent_honours_the_stored_latch_until_estop_reset(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await asyncio.to_thread(latch_offline, clawseed_home, "clawseed-edge estop (no service)")
    assert read_stored_latch(clawseed_home / "state.db").latched
    assert set(await pump_after_one_turn(clawseed_home)) == {0}  # never at initial, never on
    assert await asyncio.to_thread(main, ["hardware", "status", "--sim"]) == 0
    assert "emergency stop: LATCHED" in capsys.readouterr().out  # no service: the stored one
    assert await asyncio.to_thread(main, ["estop", "--reset"]) == 0
    assert "the stored emergency stop is reset" in capsys.readouterr().out
    assert not read_stored_latch(clawseed_home / "state.db").latched
    assert (await pump_after_one_turn(clawseed_home))[-1] == 1  # switches again


def test_reset_with_nothing_stored_says_so(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["estop", "--reset"]) == 0
    assert "nothing to reset" in capsys.readouterr().out
