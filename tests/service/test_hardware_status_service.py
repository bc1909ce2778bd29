"""``clawseed-edge hardware status`` asks the running service for its live states (devices and
the latest sensor readings) over the control socket, and shows the configuration when no
service runs, saying which it shows."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import ToolContext
from clawseed_edge.cli.main import main
from clawseed_edge.testing import ScriptedProvider
from tests.channels.gateway.conftest import running_service

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "full"
[gateway]
enabled = false
[hardware]
board = "sim"
[[devices]]
name = "fan"
pin = "GPIO18"
kind = "relay"
[[sensors]]
name = "greenhouse"
driver = "ds18b20"
update_interval = "1s"
"""


async def wait_for_reading(service: Any, value: float) -> None:
    """Until the bank published ``value`` (a bound on attempts, not a timing assertion)."""
    bank = service.runtime.peripherals[-1]
    for _ in range(200):
        if any(r.values.get("temperature") == value for r in bank.states.readings()):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{value} was never published")


async def test_a_running_service_answers_with_its_live_states(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_service(clawseed_home, ScriptedProvider([]), CONFIG) as service:
        switch = service.runtime.agent.registry.get("gpio_switch")
        result = await switch.execute({"device": "fan", "on": True}, ToolContext(session_id="t"))
        assert result.success, result.error
        assert await asyncio.to_thread(main, ["sim", "set", "greenhouse.temperature", "31.5"]) == 0
        await wait_for_reading(service, 31.5)
        capsys.readouterr()

        assert await asyncio.to_thread(main, ["hardware", "status"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("live states from the running service (")
        assert "  fan: relay on GPIO18, on" in out  # the service's pin, not a fresh one (off)
        assert "sensors (latest readings, not read now):" in out
        assert "  greenhouse: temperature 31.5 °C (read " in out
        assert "no running service" not in out

        assert await asyncio.to_thread(main, ["hardware", "status", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["source"] == "service"
        assert {"device": "fan", "value": 1.0}.items() <= doc["devices"][0].items()
        (reading,) = doc["readings"]
        assert reading["sensor"] == "greenhouse" and reading["values"]["temperature"] == 31.5


def test_without_a_service_the_configuration_is_shown_and_says_so(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (clawseed_home / "config.toml").write_text(CONFIG, encoding="utf-8")
    # A socket file left by a stopped service: nothing listens there.
    (clawseed_home / "control.sock").write_text("", encoding="utf-8")
    assert main(["hardware", "status", "--sim"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no running service: the configured wiring and a fresh simulation's")
    assert "fan" in out and "live states from" not in out
    assert main(["hardware", "status", "--sim", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "config"
