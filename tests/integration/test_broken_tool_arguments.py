"""A model's broken tool-call arguments, through the real OpenAI-compatible provider and the
engine (issues 14.10 and 16.16): the model is told exactly what was wrong, nothing runs that
should not, and the next request says so."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawseed_edge.agent import AgentBuilder, StaticApprover
from clawseed_edge.providers import OpenAICompatProvider, ProviderConfig
from clawseed_edge.testing import EchoTool
from clawseed_edge.testing.fake_servers import FakeOpenAI, Reply


def tool_messages(server: FakeOpenAI, index: int) -> list[dict[str, Any]]:
    body = server.requests_to("/v1/chat/completions")[index].json
    return [m for m in body["messages"] if m["role"] == "tool"]


async def run(server: FakeOpenAI, *tools: Any) -> str:
    provider = OpenAICompatProvider(
        ProviderConfig(name="openai", api_key="sk-openai", base_url=server.url + "/v1")
    )
    agent = (
        AgentBuilder()
        .provider(provider)
        .tools(tools)
        .autonomy("full")
        .approver(StaticApprover(True))
        .platform("test")
        .build()
    )
    async with agent:
        return await agent.run("go")


async def test_invalid_json_arguments_are_explained_and_the_other_call_does_not_run() -> None:
    echo = EchoTool()
    async with FakeOpenAI(api_key="sk-openai") as server:
        server.queue(
            Reply.tool_calls([("echo", {"text": "first"}), ("echo", '{"text": "sec')]),
            Reply.text("Sorry, resending."),
        )
        assert await run(server, echo) == "Sorry, resending."
        first, second = tool_messages(server, 1)
        body = server.requests_to("/v1/chat/completions")[1].json
    assert echo.calls == []  # the half-broken response ran nothing
    assert "not run" in first["content"] and "#2 'echo'" in first["content"]
    assert "not valid JSON" in second["content"] and '{"text": "sec' in second["content"]
    assert "valid JSON object" in second["content"]
    # The next request carries a placeholder for the broken call, which the server accepts.
    calls = next(m for m in body["messages"] if m.get("tool_calls"))["tool_calls"]
    assert '"_omitted"' in calls[1]["function"]["arguments"]


async def test_an_unknown_argument_is_refused_by_the_schema_and_the_model_told_why() -> None:
    class StrictEcho(EchoTool):
        parameters: Mapping[str, Any] = {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        }

    echo = StrictEcho()
    async with FakeOpenAI(api_key="sk-openai") as server:
        server.queue(
            Reply.tool_calls([("echo", {"text": "hi", "pin": 4})]),
            Reply.text("I cannot choose a pin."),
        )
        assert await run(server, echo) == "I cannot choose a pin."
        [message] = tool_messages(server, 1)
    assert echo.calls == []
    assert "must not contain {'pin'} properties" in message["content"]
    assert "Its arguments: text (required: text)" in message["content"]
