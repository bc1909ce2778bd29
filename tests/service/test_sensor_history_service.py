"""The running service samples its sensors into history.db; `sim set` drives a simulated sensor
over the control socket; the CLI, the gateway and the model's tool read the history."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.testing import ScriptedProvider
from tests.channels.gateway.conftest import base_url, pair_token, running_service

CONFIG = """
[provider]
name = "demo"
model = "demo-rules"
[gateway]
enabled = true
port = 0
[history]
flush_s = 1
[[sensors]]
name = "greenhouse"
driver = "ds18b20"
update_interval = "1s"
filters = [{ offset = -0.5 }]
[[sensors]]
name = "shed"
driver = "dht22"
update_interval = "never"
"""


async def wait_for_value(service: Any, value: float) -> None:
    """Until the history holds ``value`` (a bound on attempts, not a timing assertion)."""
    history = service.recorder.history
    for _ in range(200):
        await history.flush()
        s = await history.summary("greenhouse", "temperature", 0, 4e9, points=1)
        if s is not None and s.last == value:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{value} never reached the history")


async def test_sim_set_sample_record_and_read_back(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_service(clawseed_home, ScriptedProvider([]), CONFIG) as service:
        assert service.recorder is not None and service.recorder.sampler is not None
        assert service.recorder.sampler.sampled == ["greenhouse"]  # "never" is not sampled
        assert "sensor_history" in service.runtime.agent.registry.names()  # type: ignore[union-attr]

        # The CLI runs its own event loop: run it on a thread while this loop serves.
        code = await asyncio.to_thread(main, ["sim", "set", "greenhouse.temperature", "31.5"])
        assert code == 0
        assert "greenhouse.temperature = 31.5 (simulated)" in capsys.readouterr().out
        await wait_for_value(service, 31.0)  # after the offset filter

        bad = await asyncio.to_thread(main, ["sim", "set", "greenhouse.humidity", "3"])
        assert bad == 1
        assert "greenhouse measures temperature, not 'humidity'" in capsys.readouterr().err

        token = await pair_token(service)
        async with httpx.AsyncClient(
            base_url=base_url(service), headers={"Authorization": f"Bearer {token}"}
        ) as http:
            r = await http.get("/api/sensors/greenhouse/history", params={"window": "1h"})
            assert r.status_code == 200, r.text
            (temperature,) = r.json()["quantities"]
            assert temperature["quantity"] == "temperature" and temperature["unit"] == "°C"
            assert temperature["last"] == 31.0 and temperature["resolution"] == "raw"
            assert (await http.get("/api/sensors/nope/history")).status_code == 404
            too_many = await http.get("/api/sensors/greenhouse/history", params={"points": 9999})
            assert too_many.status_code == 400 and "1..500" in too_many.text
            bad_window = await http.get("/api/sensors/greenhouse/history", params={"window": "x y"})
            assert bad_window.status_code == 400 and "not a window" in bad_window.text
            unpaired = await httpx.AsyncClient(base_url=base_url(service)).get(
                "/api/sensors/greenhouse/history"
            )
            assert unpaired.status_code == 401

        code = await asyncio.to_thread(
            main, ["sensors", "history", "greenhouse", "--since", "10m", "--json"]
        )
        out = capsys.readouterr().out
        assert code == 0, out
        (summary,) = json.loads(out)
        assert summary["last"] == 31.0 and summary["max"] == 31.0
        code = await asyncio.to_thread(
            main,
            ["sensors", "history", "greenhouse", "--since", "10m", "--points", "2000", "--csv"],
        )
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == "sensor,quantity,unit,time,iso_time,value"
        assert lines[-1].startswith("greenhouse,temperature,°C,") and lines[-1].endswith(",31")
        code = await asyncio.to_thread(main, ["sensors", "list"])
        out = capsys.readouterr().out
        assert "greenhouse: ds18b20, every 1s: temperature (°C)" in out
        assert "shed: dht22, every never" in out
        assert "last temperature: 31 °C" in out


async def test_sim_set_refuses_a_service_without_sensors(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = '[provider]\nname = "demo"\n[gateway]\nenabled = false\n'
    async with running_service(clawseed_home, ScriptedProvider([]), config) as service:
        assert service.recorder is None
        code = await asyncio.to_thread(main, ["sim", "set", "greenhouse.temperature", "1"])
    assert code == 1
    assert "has no [[sensors]]" in capsys.readouterr().err


AUTOMATION = """
[provider]
name = "demo"
model = "demo-rules"
[autonomy]
level = "full"
[gateway]
enabled = false
[hardware]
board = "sim"
[[devices]]
name = "fan"
pin = "GPIO17"
kind = "relay"
[[sensors]]
name = "greenhouse"
driver = "ds18b20"
update_interval = "1s"
[[automations]]
name = "too_hot"
when = "greenhouse.temperature > 30"
do = { tool = "gpio_switch", arguments = { device = "fan", on = true } }
until = "greenhouse.temperature < 28"
then = { tool = "gpio_switch", arguments = { device = "fan", on = false } }
"""


async def firings(service: Any, count: int) -> list[dict[str, Any]]:
    """Until ``count`` firings are recorded (a bound on attempts, not a timing assertion)."""
    for _ in range(200):
        if len(service.automations.firings) >= count:
            return list(service.automations.firings)
        await asyncio.sleep(0.05)
    raise AssertionError(f"fewer than {count} firings: {list(service.automations.firings)}")


async def test_an_automation_switches_the_fan_and_the_estop_pauses_it(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_service(clawseed_home, ScriptedProvider([]), AUTOMATION) as service:
        assert service.automations is not None
        assert await asyncio.to_thread(main, ["sim", "set", "greenhouse.temperature", "31"]) == 0
        (fired,) = await firings(service, 1)
        assert fired["event"] == "fire" and fired["ok"], fired
        assert await asyncio.to_thread(main, ["estop"]) == 0
        assert service.automations.paused is not None
        # Paused by the latched stop: a firing is recorded as refused, its action not run.
        assert await asyncio.to_thread(main, ["sim", "set", "greenhouse.temperature", "31"]) == 0
        _, refused = await firings(service, 2)
        assert refused["event"] == "fire" and not refused["ok"]
        assert refused["code"] == "estop_latched"
        assert await asyncio.to_thread(main, ["automations", "list"]) == 0
        out = capsys.readouterr().out
        assert "paused: " in out and "too_hot fire: tool gpio_switch ok" in out
        assert await asyncio.to_thread(main, ["status"]) == 0
        assert "  automations: 1 rule, paused (estop" in capsys.readouterr().out
        assert await asyncio.to_thread(main, ["automations", "resume"]) == 1  # the latch holds
        assert service.automations.paused is not None
        assert await asyncio.to_thread(main, ["estop", "--reset"]) == 0
        assert service.automations.paused is None


async def test_automations_add_and_remove_go_through_the_running_service(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_service(clawseed_home, ScriptedProvider([]), AUTOMATION) as service:
        auto = service.automations
        assert auto is not None
        argv = ["automations", "add", "cold", "--when", "greenhouse.temperature < 25"]
        argv += ["--tool", "gpio_switch", "--args", '{"device": "fan", "on": false}']
        assert await asyncio.to_thread(main, argv) == 0
        out = capsys.readouterr().out
        assert "added cold: When greenhouse.temperature < 25: call gpio_switch" in out
        assert "no service runs" not in out  # the service took it
        assert [(r.config.name, r.origin) for r in auto.rules] == [
            ("cold", "cli"),
            ("too_hot", "config"),
        ]
        bad = ["automations", "add", "x", "--when", "greenhouse.wind > 1", "--message", "m"]
        assert await asyncio.to_thread(main, bad) == 1
        assert "greenhouse has no 'wind'" in capsys.readouterr().err
        assert await asyncio.to_thread(main, ["sim", "set", "greenhouse.temperature", "20"]) == 0
        (fired,) = await firings(service, 1)
        assert fired["automation"] == "cold" and fired["ok"], fired
        assert await asyncio.to_thread(main, ["automations", "firings", "cold"]) == 0
        assert "cold fire: tool gpio_switch ok" in capsys.readouterr().out
        assert await asyncio.to_thread(main, ["automations", "remove", "too_hot"]) == 1
        assert "declared in the config file" in capsys.readouterr().err
        assert await asyncio.to_thread(main, ["automations", "remove", "cold"]) == 0
        assert [r.config.name for r in auto.rules] == ["too_hot"]


DOORBELL = (
    AUTOMATION
    + """
[[devices]]
name = "doorbell"
pin = "GPIO27"
kind = "button"
[[automations]]
name = "bell_fan"
when = "doorbell.pressed"
do = { tool = "gpio_switch", arguments = { device = "fan", on = true } }
then = { message = "the doorbell was released" }
notify = ["log"]
"""
)


async def test_a_button_press_in_the_running_service_fires_and_its_release_resets(
    clawseed_home: Path,
) -> None:
    from clawseed_edge.peripherals import PiGpio
    from clawseed_edge.testing.hardware import mock_pin, press, release

    async with running_service(clawseed_home, ScriptedProvider([]), DOORBELL) as service:
        assert service.runtime is not None and service.automations is not None
        board = next(p for p in service.runtime.peripherals if isinstance(p, PiGpio))
        press(board, "doorbell")  # the same gpiozero path as a finger on real hardware
        (fired,) = await firings(service, 1)
        assert (fired["automation"], fired["event"], fired["ok"]) == ("bell_fan", "fire", True)
        assert mock_pin(board, "fan").state == 1
        release(board, "doorbell")
        reset = (await firings(service, 2))[1]
        assert (reset["event"], reset["action"], reset["output"]) == (
            "reset",
            "message",
            "the doorbell was released",
        )
