"""Jobs through the assembled agent: a simulated sensor reading into memory, a scheduled switch
refused by the device's rate limit, a job the model creates with cron_add in a full turn, and
the approval a scheduled shell command needs in supervised autonomy."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import ToolCall, ToolContext
from clawseed_edge.config.assembly import Runtime, assemble
from clawseed_edge.config.file import load_config
from clawseed_edge.scheduler import (
    Job,
    ManualClock,
    Schedule,
    scheduler_for,
)
from clawseed_edge.state import StateDB
from clawseed_edge.testing import ScriptedProvider

from .conftest import T0

WIRING = """
[provider]
name = "demo"
[agent]
local_intents = false  # the scripted model answers the jobs
[autonomy]
level = "{level}"
auto_approve = ["memory_store", "cron_add"]
[scheduler]
timezone = "Europe/Berlin"
[hardware]
board = "sim"
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
max_switches_per_minute = 1
[[sensors]]
name = "greenhouse"
driver = "bme280"
"""


@pytest.fixture
async def runtime(clawseed_home: Path, request: pytest.FixtureRequest) -> AsyncIterator[Runtime]:
    level = getattr(request, "param", "full")
    path = clawseed_home / "config.toml"
    path.write_text(WIRING.replace("{level}", level), encoding="utf-8")
    provider = ScriptedProvider()
    async with await assemble(load_config(path), sim=True, provider=provider) as rt:
        yield rt


@pytest.fixture
async def state(clawseed_home: Path) -> AsyncIterator[StateDB]:
    async with await StateDB.open(clawseed_home / "state.db") as db:
        yield db


def pin_level(runtime: Runtime, device: str) -> Any:
    pi = next(p for p in runtime.peripherals if p.name == "pi")
    return pi.device(device).read()  # type: ignore[attr-defined]


async def test_a_tool_job_stores_a_simulated_sensor_reading_in_memory(
    runtime: Runtime, state: StateDB
) -> None:
    clock = ManualClock(T0)
    sched = await scheduler_for(runtime, state, clock=clock)
    job = Job.build(
        "greenhouse_log",
        Schedule.parse("every", "10m"),
        tool="sensor_read",
        arguments={"sensor": "greenhouse"},
        deliver=["memory"],
        created_at=T0,
    )
    await sched.store.add(job)
    await sched.prepare()
    clock.set(T0 + 600)
    assert await sched.run_due() == ["greenhouse_log"]
    await sched.wait_idle()
    run = (await sched.store.runs("greenhouse_log"))[0]
    assert run.status == "ok", run.error
    assert "°C" in run.output
    entry = await runtime.memory.get(f"job:greenhouse_log:{int(T0 + 600)}")
    assert entry is not None
    assert entry.content.startswith('call sensor_read {"sensor": "greenhouse"} -> ')
    assert "°C" in entry.content and "hPa" in entry.content


async def test_a_scheduled_switch_refused_by_the_rate_limit_is_recorded_as_failed(
    runtime: Runtime, state: StateDB
) -> None:
    clock = ManualClock(T0)
    sched = await scheduler_for(runtime, state, clock=clock)
    await sched.store.add(
        Job.build(
            "blink",
            Schedule.parse("every", "1s"),
            tool="gpio_switch",
            arguments={"device": "porch_light", "on": True},
            created_at=T0,
        )
    )
    await sched.prepare()
    for second in (1, 2):
        clock.set(T0 + second)
        await sched.run_due()
        await sched.wait_idle()
    first, second = reversed(await sched.store.runs("blink"))
    assert first.status == "ok", first.error
    assert second.status == "failed"
    assert "security policy" in (second.error or "")
    assert "reached its max_per_minute=1" in (second.error or "")
    assert pin_level(runtime, "porch_light") == 1  # from the first run only


async def test_the_model_schedules_a_switch_through_a_full_turn(
    runtime: Runtime, state: StateDB
) -> None:
    clock = ManualClock(T0)  # 2026-12-01 01:00 in Berlin
    sched = await scheduler_for(runtime, state, clock=clock)
    await sched.prepare()
    provider = runtime.provider
    assert isinstance(provider, ScriptedProvider)
    provider.add(
        ScriptedProvider.call(
            "cron_add",
            name="porch_off",
            cron="0 0 * * *",
            tool="gpio_switch",
            arguments={"device": "porch_light", "on": False},
        ),
        ScriptedProvider.text("Done: the porch light goes off at midnight."),
    )
    answer = await runtime.agent.run("turn the porch light off at midnight")
    assert answer == "Done: the porch light goes off at midnight."
    shown = provider.requests[-1].messages[-1].content
    assert "At 00:00 every day (Europe/Berlin)" in shown
    assert "Wed 2026-12-02 00:00 CET; Thu 2026-12-03 00:00 CET; Fri 2026-12-04 00:00 CET" in shown
    job = await sched.store.get("porch_off")
    assert job is not None and job.origin == "agent" and job.kind == "tool"
    # At midnight the job switches the light off, through the policy, with no model.
    switch = runtime.agent.registry.get("gpio_switch")
    assert switch is not None
    await switch.execute({"device": "porch_light", "on": True}, ToolContext(channel="test"))
    assert pin_level(runtime, "porch_light") == 1
    await sched.run_due()  # gives the new job its next run
    midnight = (await sched.store.get("porch_off")).next_run  # type: ignore[union-attr]
    assert midnight == T0 + 23 * 3600
    clock.set(midnight)
    assert await sched.run_due() == ["porch_off"]
    await sched.wait_idle()
    run = (await sched.store.runs("porch_off"))[0]
    assert run.status == "ok", run.error
    assert pin_level(runtime, "porch_light") == 0


@pytest.mark.parametrize("runtime", ["supervised"], indirect=True)
async def test_a_shell_job_needs_approval_in_supervised_even_when_cron_add_is_auto_approved(
    runtime: Runtime, state: StateDB
) -> None:
    sched = await scheduler_for(runtime, state, clock=ManualClock(T0))
    agent = runtime.agent
    tool = agent.registry.get("cron_add")
    assert tool is not None
    context = ToolContext(session_id="s", channel="test")
    shell = ToolCall("cron_add", {"name": "up", "every": "1h", "shell": "uptime"})
    refused = await agent.hooks.run_before(shell, tool, context)
    # No one can be asked here (no approver is set up): the shell job is not created.
    assert refused.cancelled and "needs approval" in refused.reason
    plain = ToolCall("cron_add", {"name": "p", "every": "1h", "prompt": "how warm is it?"})
    assert not (await agent.hooks.run_before(plain, tool, context)).cancelled
    outside = ToolCall("cron_add", {"name": "x", "every": "1h", "shell": "rm -rf /tmp/x"})
    denied = await agent.hooks.run_before(outside, tool, context)
    assert denied.cancelled and "shell allowlist" in denied.reason
    assert await sched.store.list() == []


async def test_a_prompt_job_runs_a_turn_in_its_own_session_and_reaches_the_phones(
    runtime: Runtime, state: StateDB
) -> None:
    frames: list[dict[str, Any]] = []
    clock = ManualClock(T0)
    sched = await scheduler_for(runtime, state, clock=clock, publish=frames.append)
    provider = runtime.provider
    assert isinstance(provider, ScriptedProvider)
    provider.add(ScriptedProvider.text("It is 21 °C in the greenhouse."))
    await sched.store.add(
        Job.build(
            "morning",
            Schedule.parse("cron", "0 7 * * *"),
            prompt="How warm is the greenhouse?",
            deliver=["phones", "log"],
            created_at=T0,
        )
    )
    await sched.prepare()
    seven = (await sched.store.get("morning")).next_run  # type: ignore[union-attr]
    clock.set(seven)  # type: ignore[arg-type]
    await sched.run_due()
    await sched.wait_idle()
    assert frames == [
        {
            "type": "job_result",
            "job": "morning",
            "text": "It is 21 °C in the greenhouse.",
            "at": seven,
        }
    ]
    assert runtime.agent.history("job-morning")[-1].content == "It is 21 °C in the greenhouse."
    assert runtime.agent.history("default") == ()


async def test_cron_list_and_remove_and_the_refusals_of_cron_add(
    runtime: Runtime, state: StateDB
) -> None:
    sched = await scheduler_for(runtime, state, clock=ManualClock(T0))
    registry = runtime.agent.registry
    add, listing, remove = (registry.get(n) for n in ("cron_add", "cron_list", "cron_remove"))
    assert add is not None and listing is not None and remove is not None
    ctx = ToolContext(channel="test")
    ok = await add.execute(
        {
            "name": "soil",
            "every": "10m",
            "tool": "sensor_read",
            "arguments": {"sensor": "greenhouse"},
        },
        ctx,
    )
    assert ok.success and "every 10 minutes" in ok.output
    refusals = {
        "no tool is named 'teleport'": {"name": "a", "every": "1m", "tool": "teleport"},
        "cannot schedule other jobs": {
            "name": "a",
            "every": "1m",
            "tool": "cron_remove",
            "arguments": {"name": "x"},
        },
        "greenhouse": {
            "name": "a",
            "every": "1m",
            "tool": "sensor_read",
            "arguments": {"sensor": "attic"},
        },
        "exactly one schedule": {"name": "a", "every": "1m", "cron": "* * * * *", "prompt": "x"},
        "has passed": {"name": "a", "at": "2020-01-01T00:00", "prompt": "x"},
        "exists": {"name": "soil", "every": "1m", "prompt": "x"},
    }
    for needle, arguments in refusals.items():
        result = await add.execute(arguments, ctx)
        assert not result.success and needle in (result.error or ""), (needle, result.error)
    shown = await listing.execute({}, ctx)
    assert "- soil: call sensor_read" in shown.output and "every 10 minutes" in shown.output
    await sched.store.add(
        Job.build(
            "declared", Schedule.parse("every", 60), prompt="x", origin="config", created_at=T0
        )
    )
    refused = await remove.execute({"name": "declared"}, ctx)
    assert not refused.success and "declared in the config file" in (refused.error or "")
    assert (await remove.execute({"name": "soil"}, ctx)).success
    assert [j.name for j in await sched.store.list()] == ["declared"]
