"""The scheduler inside the service: [[jobs]] synced at start, the cron tools on every agent
(the phones' too), state.db without the gateway, run-now over the control socket, and the
job's answer on the gateway's event stream."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.config.file import load_config
from clawseed_edge.scheduler import ManualClock
from clawseed_edge.service import Service, ServiceOptions
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.gateway import running_gateway

T0 = 1_796_083_200.0

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "full"
[hardware]
board = "sim"
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
[[jobs]]
name = "status"
every = "1h"
tool = "hardware_status"
"""


def service(home: Path, config: str, clock: ManualClock) -> Service:
    path = home / "config.toml"
    path.write_text(config, encoding="utf-8")
    return Service(
        load_config(path),
        ServiceOptions(
            sim=True,
            gateway=False,
            assemble={"provider": ScriptedProvider()},
            scheduler={"clock": clock},
            say=lambda line: None,
        ),
    )


async def test_declared_jobs_are_synced_and_run_now_goes_through_the_service(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = ManualClock(T0)
    async with service(clawseed_home, CONFIG, clock) as svc:
        assert svc.scheduler is not None and svc.state_db is not None  # no gateway needed
        assert {"cron_add", "cron_list", "cron_remove"} <= set(svc.runtime.agent.registry.names())
        job = await svc.scheduler.store.get("status")
        assert job is not None and job.origin == "config" and job.next_run == T0 + 3600
        code = await asyncio.to_thread(main, ["cron", "run-now", "status"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "porch_light" in out
        runs = await svc.scheduler.store.runs("status")
        assert [r.status for r in runs] == ["ok"]
        code = await asyncio.to_thread(main, ["cron", "run-now", "nope"])
        assert code == 1 and "no job is named 'nope'" in capsys.readouterr().err


async def test_a_job_dropped_from_the_config_goes_and_a_cli_job_stays(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = ManualClock(T0)
    async with service(clawseed_home, CONFIG, clock):
        pass
    cli = ["cron", "add", "mine", "--every", "5m", "--prompt", "hi"]
    assert await asyncio.to_thread(main, cli) == 0
    assert await asyncio.to_thread(main, ["cron", "remove", "status"]) == 1
    assert "declared in" in capsys.readouterr().err
    without = CONFIG.split("[[jobs]]")[0]
    async with service(clawseed_home, without, clock) as svc:
        assert svc.scheduler is not None
        names = [j.name for j in await svc.scheduler.store.list()]
    assert names == ["mine"]


async def test_a_job_answer_reaches_the_phones_event_stream(clawseed_home: Path) -> None:
    config = """
[provider]
name = "demo"
[gateway]
enabled = true
port = 0
"""
    clock = ManualClock(T0)
    provider = ScriptedProvider([ScriptedProvider.text("Good morning, it is 4 °C.")])
    async with running_gateway(clawseed_home, provider, config, scheduler={"clock": clock}) as gw:
        hub, sched = gw.service.hub, gw.service.scheduler
        assert hub is not None and sched is not None
        assert "cron_add" in hub.registry.names()  # the phones' agents get the tools too
        queue = hub.open_sse()
        cli = [
            "cron",
            "add",
            "hello",
            "--every",
            "1m",
            "--prompt",
            "morning?",
            "--deliver",
            "phones",
        ]
        assert await asyncio.to_thread(main, cli) == 0
        run = await sched.run_now("hello")
        assert run.status == "ok"
        frame = await asyncio.wait_for(queue.get(), 10)
    assert frame is not None
    assert (frame["type"], frame["job"], frame["text"]) == (
        "job_result",
        "hello",
        "Good morning, it is 4 °C.",
    )


async def test_an_estop_over_the_socket_pauses_jobs_until_a_person_resets_it(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = ManualClock(T0)
    async with service(clawseed_home, CONFIG, clock) as svc:
        sched = svc.scheduler
        assert sched is not None and sched.paused is None
        assert await asyncio.to_thread(main, ["estop"]) == 0
        assert sched.paused == "estop over the control socket"
        code = await asyncio.to_thread(main, ["cron", "run-now", "status"])
        assert code == 1 and "[estop_latched]" in capsys.readouterr().err
        assert await asyncio.to_thread(main, ["status"]) == 0
        out = capsys.readouterr().out
        assert "scheduler: paused (estop over the control socket)" in out
        assert "emergency stop: LATCHED" in out
        # `cron resume` restarts nothing while the stop holds; the reset does.
        assert await asyncio.to_thread(main, ["cron", "resume"]) == 1
        assert "[estop_latched]" in capsys.readouterr().err and sched.paused is not None
        assert await asyncio.to_thread(main, ["estop", "--reset"]) == 0
        assert "every output stays at its safe level" in capsys.readouterr().out
        assert sched.paused is None
        assert await asyncio.to_thread(main, ["cron", "resume"]) == 0
        assert "was not paused" in capsys.readouterr().out


async def test_the_phone_apps_estop_pauses_the_scheduler_too(clawseed_home: Path) -> None:
    config = '[provider]\nname = "demo"\n[gateway]\nenabled = true\nport = 0\n'
    clock = ManualClock(T0)
    async with running_gateway(
        clawseed_home, ScriptedProvider(), config, scheduler={"clock": clock}
    ) as gw:
        hub, sched = gw.service.hub, gw.service.scheduler
        assert hub is not None and sched is not None
        assert await hub.estop("estop from phone") == []
        assert sched.paused == "estop from phone"


async def _eventually(condition: Any, what: str) -> None:
    """Wait (bounded: a miss fails, it never hangs) until ``await condition()`` is true."""
    try:
        async with asyncio.timeout(30):
            while True:
                if await condition():
                    return
                await asyncio.sleep(0.01)
    except TimeoutError:
        pytest.fail(f"never happened: {what}")


async def test_cron_add_from_agent_is_picked_up_by_the_running_service(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import time

    from clawseed_edge.testing.fake_servers import FakeOllama, Reply

    clock = ManualClock(time.time())  # the agent's tool stamps the job with the real time
    with FakeOllama() as ollama:
        config = CONFIG.split("[[jobs]]")[0].replace(
            'name = "demo"', f'name = "ollama"\nmodel = "qwen2.5:3b"\nbase_url = "{ollama.url}"'
        )
        async with service(clawseed_home, config, clock) as svc:
            sched = svc.scheduler
            assert sched is not None
            await clock.wait_sleeping()  # no jobs: it sleeps an hour
            add = {"name": "porch_check", "every": "5m", "tool": "hardware_status"}
            ollama.queue(Reply.tool_call("cron_add", add), Reply.text("Scheduled."))
            code = await asyncio.to_thread(main, ["agent", "-m", "check the porch every 5m"])
            out, err = capsys.readouterr()
            assert code == 0, err
            assert "Scheduled." in out
            # Written to state.db as `cron add` writes it...
            job = await sched.store.get("porch_check")
            assert job is not None and job.origin == "agent" and job.next_run is not None
            # ...and the service was told: it sleeps until the new job's run, not the hour.
            due = job.next_run

            async def rescheduled() -> bool:
                return due in clock.deadlines

            await _eventually(rescheduled, "the service sleeping until the new job")
            clock.set(due)

            async def ran() -> bool:
                return bool(await sched.store.runs("porch_check"))

            await _eventually(ran, "the new job running in the service")
            await sched.wait_idle()
            # Removed from the agent: gone from the service's schedule too.
            ollama.queue(Reply.tool_call("cron_remove", {"name": "porch_check"}), Reply.text("ok"))
            assert await asyncio.to_thread(main, ["agent", "-m", "stop checking the porch"]) == 0
            assert await sched.store.get("porch_check") is None
            assert "porch_check" not in capsys.readouterr().out
