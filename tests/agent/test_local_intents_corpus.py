"""The local-intent corpus on the embedded default, with the demo model and with a dead server.

Every simple command in ``data/local_intents_corpus.json`` must be carried out by the local
stage (calls with ``local_`` ids, through the SecurityPolicy, onto the mock pins), and no
must-not-act sentence may change a pin: the mock pins' history is compared, not the answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.agent import StaticApprover
from clawseed_edge.api import DoneEvent, ToolCallEvent
from clawseed_edge.config import assemble_agent

pytestmark = pytest.mark.local_intents  # the stage as configured by default

CORPUS = json.loads((Path(__file__).parent / "data" / "local_intents_corpus.json").read_text())
SENTENCES: list[dict[str, Any]] = CORPUS["sentences"]
ACT = [s for s in SENTENCES if s["calls"]]
NO_ACT = [s for s in SENTENCES if not s["calls"]]
PINS = {"red_led": "GPIO17", "lamp": "GPIO18", "fan": "GPIO23"}
ON_VALUE = {"red_led": 1, "lamp": 0.8, "fan": 1}  # the lamp's max_level caps "on"
DEFAULT = Path(__file__).parents[2] / "clawseed_edge" / "config" / "default.toml"


def test_the_corpus_is_big_enough_and_a_third_must_not_act() -> None:
    assert len(SENTENCES) >= 150
    assert len(NO_ACT) * 3 >= len(SENTENCES)
    assert {s["lang"] for s in SENTENCES} == {"en", "zh"}


def dead_server_config(tmp_path: Path) -> Path:
    """The embedded default with an Ollama provider on a port nothing listens on."""
    text = DEFAULT.read_text().replace(
        '[provider]\nname = "demo"',
        '[provider]\nname = "ollama"\nmodel = "qwen2.5:0.5b"\nbase_url = "http://127.0.0.1:9"\n'
        "timeout_s = 2\nmax_retries = 0",
    )
    assert 'name = "ollama"' in text
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def expected_pins(calls: list[list[Any]]) -> dict[str, float]:
    """The output values after ``calls`` from the all-off start."""
    values = {device: 0.0 for device in PINS}
    for name, args in calls:
        device = args.get("device")
        if name == "gpio_switch":
            values[device] = ON_VALUE[device] if args["on"] else 0
        elif name == "gpio_toggle":
            values[device] = 0 if values[device] else ON_VALUE[device]
        elif name == "gpio_set_level":
            values[device] = args["level"]
    return values


def pin_history(agent: Any) -> dict[str, list[Any]]:
    factory = agent.peripherals[0].pin_factory
    return {str(info.name): list(pin.states) for info, pin in factory.pins.items()}


async def run_one(config: Path | None, text: str) -> tuple[list[Any], DoneEvent, dict[str, Any]]:
    agent = await assemble_agent(config, sim=True, approver=StaticApprover(True))
    async with agent:
        events = [e async for e in agent.turn(text)]
        states = agent.peripherals[0].pin_states()  # type: ignore[attr-defined]
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    done = events[-1]
    assert isinstance(done, DoneEvent), (text, events[-1])
    return calls, done, {pin: state["value"] for pin, state in states.items()}


@pytest.mark.parametrize("dead_server", [False, True], ids=["demo", "dead-server"])
async def test_every_simple_command_acts_through_the_local_stage(
    dead_server: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = dead_server_config(tmp_path) if dead_server else None
    wrong: list[str] = []
    for i, sentence in enumerate(ACT):
        # A fresh home each time: the fan's 6 switches a minute (kept on disk) would refuse
        # the 7th sentence, which is the policy working, not the stage.
        monkeypatch.setenv("CLAWSEED_HOME", str(tmp_path / f"home{i}"))
        calls, done, pins = await run_one(config, sentence["text"])
        got = [[c.name, dict(c.arguments)] for c in calls]
        want = expected_pins(sentence["calls"])
        if (
            got != sentence["calls"]
            or not all(c.id.startswith("local_") for c in calls)
            or done.provider != "local"
            or any(pins[PINS[d]] != pytest.approx(v) for d, v in want.items())
        ):
            wrong.append(f"{sentence['text']!r}: calls {got}, pins {pins}, answer {done.text!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("dead_server", [False, True], ids=["demo", "dead-server"])
async def test_no_must_not_act_sentence_changes_a_pin(dead_server: bool, tmp_path: Path) -> None:
    config = dead_server_config(tmp_path) if dead_server else None
    agent = await assemble_agent(config, sim=True, approver=StaticApprover(True))
    async with agent:
        before = pin_history(agent)
        local: list[str] = []
        for sentence in NO_ACT:
            events = [e async for e in agent.turn(sentence["text"])]
            calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
            local += [sentence["text"] for c in calls if c.id.startswith("local_")]
        after = pin_history(agent)
    assert after == before  # not one write reached a pin, whatever the answers said
    assert not local, local
