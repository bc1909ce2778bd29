"""`clawseed-edge run`: input events become agent turns; SIGTERM applies safe state and exits."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from clawseed_edge.config.assembly import assemble
from clawseed_edge.config.file import load_config
from clawseed_edge.service.inputs import consume_input_events
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import press, release

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "full"
[hardware]
board = "sim"
[[devices]]
name = "doorbell"
pin = "GPIO22"
kind = "button"
on_press = "the doorbell button was pressed"
events_per_minute = 1
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
"""


async def test_a_button_press_becomes_a_turn_that_switches_a_light(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="porch_light", on=True), "Light on."]
    )
    runtime = await assemble(load_config(path), sim=True, provider=provider)
    async with runtime:
        (gpio,) = runtime.peripherals
        consumer = asyncio.create_task(consume_input_events(runtime.agent, gpio))
        await asyncio.sleep(0.05)  # the consumer subscribes to events
        press(gpio, "doorbell")
        for _ in range(200):
            if gpio.pin_states()["GPIO17"]["value"]:
                break
            await asyncio.sleep(0.01)
        release(gpio, "doorbell")
        press(gpio, "doorbell")  # over events_per_minute = 1: no second turn
        await asyncio.sleep(0.1)
        consumer.cancel()
        await asyncio.gather(consumer, return_exceptions=True)
        assert gpio.pin_states()["GPIO17"]["value"] == 1
    first = provider.requests[0].messages[-1].content
    assert first.endswith("the doorbell button was pressed")
    assert len(provider.requests) == 2, "one turn: a call, then the answer"


def test_sigterm_applies_safe_state_and_exits_cleanly(tmp_path: Path) -> None:
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
        lines = []
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("clawseed-edge running"):
                break
        assert lines and lines[-1].startswith("clawseed-edge running"), "".join(lines)
        proc.send_signal(signal.SIGTERM)
        rest = proc.stderr.read()
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, rest
    assert "applying the safe state" in rest
    assert "outputs are in their safe state" in rest


async def test_the_start_line_counts_simulated_sensors_and_displays(tmp_path: Path) -> None:
    from clawseed_edge.service.process import runtime_summary

    path = tmp_path / "config.toml"
    path.write_text(
        CONFIG
        + '[[sensors]]\nname = "air"\ndriver = "bme280"\n'
        + '[[sensors]]\nname = "light"\ndriver = "bh1750"\n'
        + '[[displays]]\nname = "lcd"\ndriver = "hd44780"\n',
        encoding="utf-8",
    )
    runtime = await assemble(load_config(path), sim=True, provider=ScriptedProvider(["ok"]))
    async with runtime:
        line = runtime_summary(runtime)
    assert "pi: sim with 2 devices;" in line, line
    assert line.endswith("sensors: sim with 2 sensors and 1 display"), line
