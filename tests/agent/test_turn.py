"""The turn reads each model response once, and still serves dispatchers of the older protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from clawseed_edge.agent import AgentBuilder, NativeToolDispatcher, StaticApprover
from clawseed_edge.agent.toolcalls import prompt_guided
from clawseed_edge.agent.xml_dispatch import XmlToolDispatcher
from clawseed_edge.api import ChatMessage, ChatResponse, ToolCall
from clawseed_edge.testing import ScriptedProvider

from ._tools import EchoTool


def _agent(provider: ScriptedProvider, dispatcher: Any = None) -> Any:
    builder = AgentBuilder().provider(provider).tools([EchoTool()]).autonomy("full")
    builder = builder.approver(StaticApprover(True))
    if dispatcher is not None:
        builder = builder.dispatcher(dispatcher)
    return builder.build()


async def test_a_prompt_guided_response_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = prompt_guided.scan_tool_calls

    def counting(text: str) -> Any:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(prompt_guided, "scan_tool_calls", counting)
    markup = ScriptedProvider.tool_call_markup("echo", text="hi")
    provider = ScriptedProvider([f"Echoing.\n{markup}", "Done."], native_tools=False)
    agent = _agent(provider)
    assert isinstance(agent.dispatcher, XmlToolDispatcher)
    assert await agent.run("go") == "Done."
    # Two responses, two parses (it was four: parse_response, then assistant_message).
    assert len(seen) == 2
    kept = agent.history()[1]
    assert kept.role == "assistant" and markup in kept.content and "Echoing." in kept.content


class LegacyDispatcher(NativeToolDispatcher):
    """A third-party dispatcher written before ``read``: only the two-step protocol."""

    read = None  # type: ignore[assignment]

    def __init__(self) -> None:
        self.steps: list[str] = []

    def parse_response(self, response: ChatResponse) -> tuple[str, list[ToolCall]]:
        self.steps.append("parse_response")
        return super().parse_response(response)

    def assistant_message(
        self, response: ChatResponse, text: str, calls: Sequence[ToolCall]
    ) -> ChatMessage:
        self.steps.append("assistant_message")
        return super().assistant_message(response, text, calls)


async def test_a_dispatcher_without_read_still_works() -> None:
    dispatcher = LegacyDispatcher()
    provider = ScriptedProvider([ScriptedProvider.call("echo", text="hi"), "Done."])
    agent = _agent(provider, dispatcher)
    assert await agent.run("go") == "Done."
    assert dispatcher.steps == ["parse_response", "assistant_message"] * 2
    assert agent.history()[1].tool_calls[0].name == "echo"


def test_importing_the_agent_does_not_load_the_parser() -> None:
    # A model that calls tools natively never needs the text parser: it stays unloaded.
    import subprocess
    import sys

    code = (
        "import sys, clawseed_edge.agent; "
        "print(sorted(m for m in sys.modules if m.startswith('clawseed_edge.agent.toolcalls.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (
        "['clawseed_edge.agent.toolcalls.dispatch', 'clawseed_edge.agent.toolcalls.parsed']"
    )
