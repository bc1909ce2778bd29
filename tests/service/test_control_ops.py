"""``estop``, ``status`` and ``reload`` reach a running service over its control socket."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from clawseed_edge.api import AbortedEvent
from clawseed_edge.cli.main import main
from clawseed_edge.service import control_path, control_request
from clawseed_edge.service.inputs import EVENT_SESSION
from clawseed_edge.testing import ScriptedProvider
from tests.channels.gateway.conftest import pair_token, running_service

CONFIG = """
[provider]
name = "demo"
model = "demo-rules"
[autonomy]
level = "supervised"
[gateway]
enabled = true
port = 0
[hardware]
board = "sim"
[[devices]]
name = "heater"
pin = "GPIO17"
kind = "relay"
initial = "on"
"""


def _heater_level(service: object) -> int:
    runtime = service.runtime  # type: ignore[attr-defined]
    states = runtime.peripherals[0].pin_states()
    return int(states["GPIO17"]["level"])


async def test_estop_over_the_socket_aborts_turns_and_applies_the_safe_state(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    slow = ScriptedProvider(["never answered in time"], delay_s=60)
    async with running_service(clawseed_home, slow, CONFIG) as service:
        assert service.runtime is not None
        on_before = _heater_level(service)
        events = []

        async def turn() -> None:
            async for event in service.runtime.agent.turn("hello", session_id=EVENT_SESSION):
                events.append(event)

        task = asyncio.create_task(turn())
        for _ in range(1000):  # a bound, not a timing: the turn starts on the next steps
            if service.runtime.agent.is_running(EVENT_SESSION):
                break
            await asyncio.sleep(0.01)
        # The CLI runs its own event loop: run it on a thread while this loop serves.
        code = await asyncio.to_thread(main, ["estop"])
        await asyncio.wait_for(task, 10)
        level_after = _heater_level(service)
    out = capsys.readouterr().out
    assert on_before != level_after  # the relay was on; estop switched it to its safe value
    assert code == 0, out
    assert "the running service aborted its turns" in out
    assert isinstance(events[-1], AbortedEvent)
    assert "estop" in events[-1].reason


async def test_status_over_the_socket_names_model_autonomy_and_pid(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_service(clawseed_home, ScriptedProvider(), CONFIG):
        code = await asyncio.to_thread(main, ["status"])
    out = capsys.readouterr().out
    assert code == 0
    assert "running: model scripted/" in out
    assert "autonomy: supervised" in out
    assert "pid: " in out and "gateway: http://127.0.0.1:" in out


def test_status_without_a_service_fails_and_says_how_to_start_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["status"]) == 1
    assert "clawseed-edge run" in capsys.readouterr().err


async def test_reload_applies_provider_and_autonomy_and_names_what_needs_a_restart(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_service(clawseed_home, ScriptedProvider(), CONFIG) as service:
        assert service.runtime is not None
        changed = (
            CONFIG.replace('level = "supervised"', 'level = "read_only"')
            .replace('model = "demo-rules"', 'model = "demo-echo"')
            .replace("port = 0", "port = 0\nmax_connections = 7")
        )
        (clawseed_home / "config.toml").write_text(changed, encoding="utf-8")
        code = await asyncio.to_thread(main, ["reload"])
        out = capsys.readouterr().out
        policy = service.runtime.agent.hooks.policy
        provider = service.runtime.agent.provider
        prompt = service.runtime.agent.system_prompt()
        again = await control_request(control_path(clawseed_home), "reload")
    assert code == 0, out
    assert "reloaded: provider, autonomy (now demo/demo-echo, autonomy read_only)" in out
    assert "needs a restart to apply: gateway" in out
    assert policy.autonomy.value == "read_only"  # type: ignore[union-attr]
    assert (provider.name, provider.model) == ("demo", "demo-echo")
    assert "read-only" in prompt.lower() or "read_only" in prompt.lower()
    assert again["applied"] == [] and again["needs_restart"] == ["gateway"]


async def test_reload_of_a_broken_file_changes_nothing_and_says_why(
    clawseed_home: Path,
) -> None:
    async with running_service(clawseed_home, ScriptedProvider(), CONFIG) as service:
        assert service.runtime is not None
        (clawseed_home / "config.toml").write_text(
            CONFIG.replace('level = "supervised"', 'level = "yolo"'), encoding="utf-8"
        )
        with pytest.raises(Exception, match="autonomy"):
            await control_request(control_path(clawseed_home), "reload")
        status = await control_request(control_path(clawseed_home), "status")
    assert status["autonomy"] == "supervised"
    assert status["provider"].startswith("scripted/")


async def test_service_status_shows_systemd_and_the_running_service(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_service(clawseed_home, ScriptedProvider(), CONFIG):
        code = await asyncio.to_thread(main, ["service", "status", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["service"]["provider"].startswith("scripted/")
    # Here systemd is absent or not PID 1: said, not crashed.
    assert "ActiveState" in doc["systemd"] or "error" in doc["systemd"]


def test_service_status_without_a_service_exits_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["service", "status"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("systemd: ") and "service: no clawseed-edge service answers" in out


async def test_a_latched_estop_holds_across_a_reload_until_estop_reset(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = CONFIG.replace('level = "supervised"', 'level = "full"')
    async with running_service(clawseed_home, ScriptedProvider(), full) as service:
        assert service.runtime is not None and service.server is not None
        assert await asyncio.to_thread(main, ["estop"]) == 0
        # A reload that swaps the policy (a new autonomy) keeps the latch.
        (clawseed_home / "config.toml").write_text(
            full.replace('level = "full"', 'level = "supervised"\nauto_approve = ["gpio_*"]'),
            encoding="utf-8",
        )
        assert await asyncio.to_thread(main, ["reload"]) == 0
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=service.server.url) as http:
            headers = {"Authorization": f"Bearer {token}"}
            refused = await http.post("/api/peripherals/heater", json={"on": True}, headers=headers)
            shown = (await http.get("/api/estop", headers=headers)).json()["estop"]
            metrics = (await http.get("/metrics", headers=headers)).text
            reset = await http.post("/api/estop/reset", headers=headers)
            after = (await http.get("/api/estop", headers=headers)).json()["estop"]
            metrics_after = (await http.get("/metrics", headers=headers)).text
        level_after_reset = _heater_level(service)
        assert await asyncio.to_thread(main, ["hardware", "status"]) == 0
    out = capsys.readouterr().out
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "estop_latched"
    assert shown["latched"] is True and "estop --reset" in shown["how_to_reset"]
    assert "clawseed_estop_latched 1" in metrics and "clawseed_estop_latched 0" in metrics_after
    assert reset.json()["reset"] is True and after["latched"] is False
    assert after["reset_by"].endswith("(web app)")
    assert level_after_reset == 0  # the reset switched nothing back on
    assert "emergency stop: not latched" in out
