"""Automations made by chat: the tools' round trip, state.db across restarts, prompt and notify
actions, input-event rules on a simulated button (MockFactory), persisted and bounded firings,
read_only refusing a chat-made rule; a fake clock, no sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest

from clawseed_edge.agent import AgentBuilder, SecurityPolicy
from clawseed_edge.api import ConfigInvalid, DeviceState, SensorReading, ToolContext
from clawseed_edge.channels.notifications import Notifications
from clawseed_edge.config.automations import AutomationConfig
from clawseed_edge.scheduler import automation_store
from clawseed_edge.scheduler.automation_spec import known_names, validate_automations
from clawseed_edge.scheduler.automation_store import AutomationStore, TooManyAutomations
from clawseed_edge.scheduler.automation_tools import add_automation, automation_tools
from clawseed_edge.scheduler.automations import Automations
from clawseed_edge.scheduler.tools import check_tool_job
from clawseed_edge.state import StateDB
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import press, release

from .test_automations import RULE, FanTool

KNOWN = {"greenhouse": ["temperature", "humidity"], "door": ["value", "open", "closed"]}
CTX = ToolContext(session_id="chat", channel="test")


def build(autonomy: str = "full", responses: list[Any] | None = None) -> tuple[Any, FanTool]:
    fan = FanTool()
    agent = (
        AgentBuilder()
        .provider(ScriptedProvider(responses or []))
        .tools([fan])
        .security_policy(SecurityPolicy(autonomy=autonomy, max_actions_per_hour=None))
        .platform("test")
        .build()
    )
    return agent, fan


def runner(agent: Any, db: StateDB, **kw: Any) -> Automations:
    return Automations(agent, store=AutomationStore(db), clock=lambda: 0.0, known=KNOWN, **kw)


def tools(auto: Automations, agent: Any, supervised: bool = False) -> dict[str, Any]:
    return {t.name: t for t in automation_tools(auto, agent, supervised=supervised)}


def feed(auto: Automations, value: float) -> None:
    auto.observe(SensorReading("sampler", "greenhouse", {"temperature": value}, {}, 0))


async def test_add_list_remove_round_trip_survives_a_restart(tmp_path: Path) -> None:
    agent, fan = build()
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db)
        t = tools(auto, agent)
        result = await t["automation_add"].execute(
            {k: v for k, v in RULE.items() if k != "notify"}, CTX
        )
        assert result.success, result.error
        assert result.output.startswith("Created automation 'too_hot'. When ")
        assert "for 120 s: call fan_switch" in result.output and "resets when" in result.output
        assert [r.config.name for r in auto.rules] == ["too_hot"]  # running at once
        again = await t["automation_add"].execute(RULE, CTX)
        assert not again.success and "exists" in (again.error or "")
    # a restart: a new store and runner over the same file
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db)
        await auto.load()
        assert [(r.config.name, r.origin) for r in auto.rules] == [("too_hot", "agent")]
        listed = await tools(auto, agent)["automation_list"].execute({}, CTX)
        assert "too_hot (agent): When greenhouse.temperature > 30" in listed.output
        feed(auto, 31)
        await auto.evaluate(0)
        assert len(await auto.evaluate(120)) == 1 and fan.calls == [True]
        removed = await tools(auto, agent)["automation_remove"].execute({"name": "too_hot"}, CTX)
        assert removed.success and auto.rules == []
        assert await auto.store.list() == [] and await auto.store.firings("too_hot") == []  # type: ignore[union-attr]


async def test_a_config_rule_is_synced_and_cannot_be_removed_by_chat(tmp_path: Path) -> None:
    agent, _ = build()
    config = msgspec.convert([RULE], list[AutomationConfig])
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db)
        assert auto.store is not None
        await auto.store.sync_declared(config, 0)
        await auto.load()
        refused = await tools(auto, agent)["automation_remove"].execute({"name": "too_hot"}, CTX)
        assert not refused.success and "[[automations]]" in (refused.error or "")
        assert await auto.store.sync_declared([], 1) == ["too_hot"]  # gone from the file


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"when": "greenhouse.temperature >"}, r"^when: 'too_hot': .*ends too early"),
        ({"when": "attic.temperature > 3"}, r"^when: 'attic.temperature': no sensor or device"),
        ({"until": "greenhouse.pressure < 3"}, r"^until: .*greenhouse has no 'pressure'"),
        ({"for": "soon"}, r"^for: .*duration"),
        ({"do": {"tool": "laser"}}, r"^do: tool: no tool is named 'laser'"),
        ({"do": {"tool": "fan_switch", "arguments": {"on": "yes"}}}, r"^do: arguments: "),
        ({"do": {"tool": "cron_add"}}, r"^do\.tool: 'cron_add'"),
        ({"do": {"tool": "fan_switch", "arguments": {"x": "a" * 5000}}}, r"do\.arguments: more"),
        ({"then": {"prompt": "x", "tool": "fan_switch"}}, r"^then: an action is"),
        ({"notify": ["pager"]}, r"^notify: .*pager"),
    ],
)
async def test_add_refuses_as_config_does_naming_the_field(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    agent, _ = build()
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db)
        result = await tools(auto, agent)["automation_add"].execute(RULE | change, CTX)
        assert not result.success
        assert result.error is not None
        import re

        assert re.search(message, result.error), result.error
        assert await auto.store.list() == []  # type: ignore[union-attr]
    # the config path says the same, with the file and the table's index
    bad = msgspec.convert([RULE | change], list[AutomationConfig])
    with pytest.raises(ConfigInvalid, match=r"^cfg: automations\[0\]\."):
        validate_automations(
            bad, "cfg", known=KNOWN, check_tool=lambda n, a: check_tool_job(agent, n, a)
        )


async def test_the_number_of_rules_is_bounded(tmp_path: Path) -> None:
    async with await StateDB.open(tmp_path / "state.db") as db:
        store = AutomationStore(db, max_automations=2)
        for i in range(2):
            await add_automation(
                store, RULE | {"name": f"r{i}"}, origin="cli", known=KNOWN, check_tool=None
            )
        with pytest.raises(TooManyAutomations, match="at most 2"):
            await add_automation(
                store, RULE | {"name": "r3"}, origin="cli", known=KNOWN, check_tool=None
            )


async def test_supervised_creation_of_an_acting_rule_asks_a_human(tmp_path: Path) -> None:
    agent, _ = build()
    async with await StateDB.open(tmp_path / "state.db") as db:
        add = tools(runner(agent, db), agent, supervised=True)["automation_add"]
        action = add.describe_action(RULE)
        assert action is not None and action.requires_approval
        assert "too_hot" in action.summary and "call fan_switch" in action.summary
        notify_only = {"name": "n", "when": "door.open", "notify": ["phones"]}
        assert add.describe_action(notify_only) is None


async def test_a_prompt_action_runs_a_turn_in_its_own_session(tmp_path: Path) -> None:
    agent, _ = build(responses=["The vents are open; 31 °C is fine for an hour."])
    published: list[dict[str, Any]] = []
    rule = {
        "name": "ask",
        "when": "greenhouse.temperature > 30",
        "do": {"prompt": "The greenhouse is hot. What now?"},
        "notify": ["telegram"],
    }
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db, publish=published.append)
        await add_automation(auto.store, rule, origin="agent", known=KNOWN, check_tool=None)  # type: ignore[arg-type]
        await auto.load()
        feed(auto, 31)
        (started,) = await auto.evaluate(0)
        assert "a turn runs in session automation-ask" in started["output"]
        await auto.drain()
        fired = auto.firings[-1]
        assert fired["action"] == "prompt" and fired["ok"], fired
        assert "vents are open" in fired["output"]
        provider = agent.provider
        assert "greenhouse is hot" in str(provider.requests[0].messages[-1].content)
        assert published[0]["to"] == ["telegram"] and "vents are open" in published[0]["text"]
        (stored,) = await auto.store.firings("ask")  # type: ignore[union-attr]
        assert stored.action == "prompt" and "vents" in stored.detail


class Sink:
    """A channel that keeps what it is delivered."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.frames: list[Mapping[str, Any]] = []

    def deliver(self, frame: Mapping[str, Any]) -> None:
        self.frames.append(frame)


async def test_a_message_reaches_only_the_notified_channels(tmp_path: Path) -> None:
    agent, _ = build()
    notifications = Notifications()
    phones, telegram, mqtt = Sink("gateway"), Sink("telegram"), Sink("mqtt")
    for channel in (phones, telegram, mqtt):
        notifications.subscribe(channel)  # type: ignore[arg-type]
    rule = {
        "name": "door_left_open",
        "when": "door.open",
        "for": "10m",
        "do": {"message": "The door has been open for 10 minutes"},
        "notify": ["phones", "telegram"],
    }
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db, publish=notifications.notify)
        await add_automation(auto.store, rule, origin="cli", known=KNOWN, check_tool=None)  # type: ignore[arg-type]
        await auto.load()
        auto.observe(DeviceState("pi", "door", "digital_in", "GPIO5", 1.0, "input"))
        assert await auto.evaluate(0) == [] and await auto.evaluate(599) == []
        (fired,) = await auto.evaluate(600)
        assert fired["action"] == "message"
    texts = [f["text"] for f in telegram.frames]
    assert texts == ["The door has been open for 10 minutes"]
    assert [f["type"] for f in phones.frames] == ["notification"]
    assert mqtt.frames == []  # not asked for


BUTTON = '[[devices]]\nname = "doorbell"\npin = "GPIO27"\nkind = "button"\n'


async def test_an_input_rule_fires_on_a_simulated_press_and_resets(
    sim_board: Any, tmp_path: Path
) -> None:
    board = await sim_board(BUTTON)
    agent, fan = build()
    rule = {
        "name": "bell_fan",
        "when": "doorbell.pressed",
        "do": {"tool": "fan_switch", "arguments": {"on": True}},
        "then": {"tool": "fan_switch", "arguments": {"on": False}},
    }
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = Automations(agent, store=AutomationStore(db), known=known_names([board]))
        assert auto.known is not None and "pressed" in auto.known["doorbell"]
        await add_automation(auto.store, rule, origin="cli", known=auto.known, check_tool=None)  # type: ignore[arg-type]
        await auto.load()
        seen = asyncio.Queue[Any]()

        def observe(update: Any) -> None:
            auto.observe(update)
            seen.put_nowait(update)

        board.states.subscribe(observe)
        press(board, "doorbell")  # the MockFactory pin, as a finger would
        assert (await asyncio.wait_for(seen.get(), 2)).value == 1.0
        (fired,) = await auto.evaluate(10.0)
        assert fired["event"] == "fire" and fan.calls == [True]
        assert await auto.evaluate(11.0) == []  # edge-triggered: held is not fired again
        release(board, "doorbell")
        assert (await asyncio.wait_for(seen.get(), 2)).value == 0.0
        (reset,) = await auto.evaluate(12.0)
        assert reset["event"] == "reset" and fan.calls == [True, False]


async def test_firings_survive_a_restart_and_are_pruned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(automation_store, "KEEP_FIRINGS", 3)
    agent, _ = build()
    rule = RULE | {"for": 0}
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db)
        await add_automation(auto.store, rule, origin="cli", known=KNOWN, check_tool=None)  # type: ignore[arg-type]
        await auto.load()
        for i in range(4):  # fire, reset, fire, reset ... 8 firings
            feed(auto, 31)
            await auto.evaluate(i * 10)
            feed(auto, 20)
            await auto.evaluate(i * 10 + 5)
    async with await StateDB.open(tmp_path / "state.db") as db:
        kept = await AutomationStore(db).firings("too_hot")
    assert [(f.event, f.at) for f in kept] == [("reset", 35), ("fire", 30), ("reset", 25)]
    assert kept[0].action == "tool fan_switch" and kept[0].ok and "fan off" in kept[0].detail


async def test_read_only_refuses_a_chat_made_rule_and_records_it(tmp_path: Path) -> None:
    agent, fan = build(autonomy="read_only")
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db)
        await add_automation(
            auto.store,  # type: ignore[arg-type]
            RULE | {"for": 0},
            origin="agent",
            known=KNOWN,
            check_tool=lambda n, a: check_tool_job(agent, n, a),
        )
        await auto.load()
        feed(auto, 31)
        (fired,) = await auto.evaluate(0)
        assert fan.calls == [] and fired["ok"] is False and "read_only" in fired["error"]
        (stored,) = await auto.store.firings()  # type: ignore[union-attr]
        assert not stored.ok and "read_only" in stored.detail


async def test_the_estop_pauses_a_chat_made_rule_until_resumed(tmp_path: Path) -> None:
    agent, fan = build()
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db)
        await add_automation(auto.store, RULE, origin="agent", known=KNOWN, check_tool=None)  # type: ignore[arg-type]
        await auto.load()
        feed(auto, 31)
        await auto.evaluate(0)
        auto.pause("estop", "estop_latched")  # what was held is forgotten
        assert await auto.evaluate(500) == [] and fan.calls == []
        await auto.load()  # a reload (another rule added) does not unpause
        assert await auto.evaluate(600) == [] and auto.paused == "estop"
        # Held 2 min while paused: the firing is recorded as refused, nothing runs.
        (refused,) = await auto.evaluate(620)
        assert not refused["ok"] and refused["code"] == "estop_latched" and fan.calls == []
        auto.resume()
        # The reset restarts nothing: the rule fired already; it acts after it has reset.
        assert await auto.evaluate(700) == [] and fan.calls == []


async def test_the_book_of_an_agent_process_writes_state_db_and_tells_the_service(
    tmp_path: Path,
) -> None:
    from clawseed_edge.scheduler.automation_tools import AutomationBook

    agent, _ = build()
    told: list[bool] = []

    async def notify() -> bool:
        told.append(True)
        return False  # no service runs

    async with await StateDB.open(tmp_path / "state.db") as db:
        book = AutomationBook(AutomationStore(db), notify=notify, known=KNOWN)
        add = tools(book, agent)["automation_add"]  # type: ignore[arg-type]
        result = await add.execute(RULE, CTX)
        assert result.success and "No service runs now" in result.output and told == [True]
        assert [a.origin for a in await AutomationStore(db).list()] == ["agent"]


async def test_adding_another_rule_keeps_what_a_rule_holds(tmp_path: Path) -> None:
    agent, fan = build()
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db)
        add = tools(auto, agent)["automation_add"]
        assert (await add.execute(RULE, CTX)).success
        feed(auto, 31)
        await auto.evaluate(0)
        assert (
            await add.execute({"name": "bell", "when": "door.open", "notify": ["log"]}, CTX)
        ).success
        assert auto.deadline() == 120  # held since 0, not since the reload
        assert len(await auto.evaluate(120)) == 1 and fan.calls == [True]


async def test_a_slow_prompt_does_not_hold_back_other_rules_and_the_estop_stops_it(
    tmp_path: Path,
) -> None:
    agent, fan = build()
    gate, started = asyncio.Event(), asyncio.Event()

    async def slow_run(text: str, **kw: Any) -> str:  # a slow local model
        started.set()
        await gate.wait()
        return "done"

    agent.run = slow_run
    ask = {"name": "ask", "when": "greenhouse.temperature > 30", "do": {"prompt": "hot?"}}
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db)
        for rule in (ask, RULE | {"for": 0}):
            await add_automation(auto.store, rule, origin="agent", known=KNOWN, check_tool=None)  # type: ignore[arg-type]
        await auto.load()
        feed(auto, 31)
        fired = await asyncio.wait_for(auto.evaluate(0), 5)  # returns, the turn still runs
        assert [f["automation"] for f in fired] == ["ask", "too_hot"] and fan.calls == [True]
        await asyncio.wait_for(started.wait(), 2)
        auto.pause("estop from the phone")
        await auto.drain()
        (stopped,) = await auto.store.firings("ask")  # type: ignore[union-attr]
        assert not stopped.ok and "stopped: estop from the phone" in stopped.detail


async def test_a_chat_turn_creates_an_automation_through_the_policy(tmp_path: Path) -> None:
    """ "Turn the fan on when the greenhouse passes 30 °C": the model calls automation_add in a
    turn (through the hook pipeline), and the rule is in state.db and running."""
    rule = {k: v for k, v in RULE.items() if k != "notify"}
    provider_items = [
        ScriptedProvider.call("automation_add", **rule),
        ScriptedProvider.text("Done: the fan goes on above 30 °C held 2 minutes."),
    ]
    agent, fan = build(responses=provider_items)
    async with await StateDB.open(tmp_path / "state.db") as db:
        auto = runner(agent, db)
        agent.registry.register_many(automation_tools(auto, agent, supervised=False))
        answer = await agent.run("turn the fan on when the greenhouse passes 30", session_id="c")
        assert answer.startswith("Done")
        tool_message = agent.provider.requests[1].messages[-1]
        assert "Created automation 'too_hot'. When greenhouse.temperature > 30" in str(
            tool_message.content
        )
        assert [(a.config.name, a.origin) for a in await AutomationStore(db).list()] == [
            ("too_hot", "agent")
        ]
        feed(auto, 31)
        await auto.evaluate(0)
        assert len(await auto.evaluate(120)) == 1 and fan.calls == [True]


def test_device_words_and_an_unknown_value() -> None:
    from clawseed_edge.scheduler.automation_spec import device_values
    from clawseed_edge.scheduler.rules import parse_condition

    pressed = device_values("bell", "button", 1.0)
    assert pressed["bell.pressed"] == 1.0 and pressed["bell.released"] == 0.0
    assert device_values("hall", "motion_sensor", 0.0)["hall.quiet"] == 1.0
    assert device_values("fan", "relay", 1.0)["fan.on"] == 1.0
    closed = device_values("bell", "button", None)
    for text in ("bell.pressed", "bell.released", "bell.value == 0", "bell.value != 0"):
        assert parse_condition(text).holds(closed.get) is False, text
