"""A refusal has a model's wording and a person's: no person-facing surface shows the sentences
written for the model (the CLI, the web app's frames, Telegram, MCP error text, the HTTP API).

Each test first makes sure the model *did* get the sentence (so the test can fail), then reads
what a person gets.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from clawseed_edge.agent import AgentBuilder, StaticApprover
from clawseed_edge.api import (
    MODEL_ONLY_SENTENCES,
    ToolCall,
    ToolResult,
    ToolResultEvent,
    TurnEvent,
    for_people,
)
from clawseed_edge.api.wording import DO_NOT_RETRY, FIX_OR_TELL
from clawseed_edge.cli.main import main
from clawseed_edge.cli.render import EventPrinter as Renderer
from clawseed_edge.providers.demo import DemoProvider
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi

pytestmark = pytest.mark.local_intents  # the stage as configured by default

#: The model-facing phrases, as they appear in the package (and their older forms).
MODEL_PHRASES = (
    *MODEL_ONLY_SENTENCES,
    "unless the user asks",
    "tell the user what you cannot do",
    "tell the user",
    "SIGTERM or Ctrl-C stops",
)


def assert_for_people(text: str, where: str) -> None:
    for phrase in MODEL_PHRASES:
        assert phrase not in text, f"{where} shows the model's wording {phrase!r}:\n{text}"


WIRING = """
[[devices]]
name = "fan"
pin = "GPIO23"
kind = "relay"
approval = true
"""


def test_for_people_takes_out_exactly_the_model_sentences() -> None:
    text = f"approval for 'switch fan on' was refused (no); it did not run. {DO_NOT_RETRY}"
    assert for_people(text) == "approval for 'switch fan on' was refused (no); it did not run."
    assert for_people(f"{FIX_OR_TELL}") == ""
    assert for_people("nothing to take out.") == "nothing to take out."


async def test_a_persons_no_reaches_the_model_with_its_hint_and_people_without(
    sim_board: object,
) -> None:
    """The demo model (it answers a person), the CLI's lines, its --json events and the web
    app's frames, after a person refused the fan."""
    from clawseed_edge.channels.gateway.protocol import turn_event_frame

    board = await sim_board(WIRING)  # type: ignore[operator]
    provider = DemoProvider()
    seen: list[object] = []
    original = provider.chat

    async def recording_chat(request, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(request)
        return await original(request, *args, **kwargs)

    provider.chat = recording_chat  # type: ignore[method-assign]
    agent = (
        AgentBuilder().provider(provider).peripherals([board]).approver(StaticApprover(False))
    ).build()
    async with agent:
        events: list[TurnEvent] = [e async for e in agent.turn("switch the fan on")]
    model_read = "\n".join(m.content for r in seen for m in r.messages)  # type: ignore[attr-defined]
    assert DO_NOT_RETRY in model_read, "the model reads the hint"
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert results and not results[0].result.success
    out, err = io.StringIO(), io.StringIO()
    renderer = Renderer(out=out, err=err)
    json_out = io.StringIO()
    json_renderer = Renderer(out=json_out, err=io.StringIO(), json_lines=True)
    frames = []
    for event in events:
        renderer.handle(event)
        json_renderer.handle(event)
        frames.append(str(turn_event_frame(event)))
    assert "refused" in err.getvalue(), err.getvalue()
    assert_for_people(out.getvalue() + err.getvalue(), "the CLI")
    assert_for_people(json_out.getvalue(), "the CLI's --json events")
    assert_for_people("\n".join(frames), "the web app's frames")


def test_cron_add_with_bad_arguments_says_it_for_a_person(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["cron", "add", "x", "--every", "1h", "--tool", "gpio_switch",
                 "--args", '{"device": "red_led", "on": "maybe"}'])  # fmt: skip
    err = capsys.readouterr().err
    assert code != 0 and "do not match its schema" in err, err
    assert_for_people(err, "`cron add`")


async def test_mcp_error_text_is_for_people(sim_board: object) -> None:
    from clawseed_edge.channels.mcp.backend import LocalBackend

    board = await sim_board(WIRING)  # type: ignore[operator]
    agent = AgentBuilder().provider(ScriptedProvider([])).peripherals([board]).build()
    async with agent:
        answer = await LocalBackend(agent, [board]).call("gpio_switch", {"device": "fan"})
    assert not answer["ok"] and "do not match its schema" in answer["error"]
    assert_for_people(answer["error"], "MCP error text")


async def test_telegram_shows_the_persons_wording_and_status_no_signal_advice(
    clawseed_home: Path,
) -> None:
    from tests.channels.telegram.conftest import OWNER, TOKEN, config, running_bot

    async with FakeBotApi(token=TOKEN, max_poll_s=1.0) as bot:
        text = config(bot, level="supervised")
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
            async with running_bot(clawseed_home, bot, DemoProvider(), text):
                bot.push_message(OWNER, "turn on the porch light")
                ask = await bot.wait_for_message(OWNER, "Approval needed")
                row = ask.reply_markup["inline_keyboard"][0]  # type: ignore[index]
                deny = next(b["callback_data"] for b in row if "Deny" in b["text"])
                bot.push_callback(OWNER, ask.message_id, deny)
                await bot.wait_for_message(OWNER, "Not done")
                bot.push_message(OWNER, "/status")
                await bot.wait_for_message(OWNER, "porch_light")
        sent = "\n".join("\n".join([*m.history, m.text]) for m in bot.messages.values())
    assert "refused" in sent, sent
    assert_for_people(sent, "Telegram")


def test_a_results_text_for_the_model_keeps_the_hint() -> None:
    """The model's side is untouched: ``as_text`` (what the conversation carries) keeps it."""
    result = ToolResult.fail(f"Refused: no. {DO_NOT_RETRY}")
    assert DO_NOT_RETRY in result.as_text()
    event = ToolResultEvent(call=ToolCall("gpio_switch", {}), result=result)
    assert DO_NOT_RETRY not in str(event.to_dict())
