"""What a turn keeps and what it bounds: recall per request, size limits, capped echoes,
undecodable arguments, and the schema check before the policy (issues 14.1, 14.2, 14.10, 16.16)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from clawseed_edge.agent import AgentBuilder, BaseHook, StaticApprover
from clawseed_edge.agent.engine import Agent
from clawseed_edge.api import (
    AgentMessageTooLong,
    BaseTool,
    ChatMessage,
    ErrorEvent,
    HookDecision,
    MemoryEntry,
    RiskClass,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
)
from clawseed_edge.testing import EchoTool, ScriptedProvider

P = ScriptedProvider


class Mem:
    """A memory that recalls the given entries for every query."""

    def __init__(self, *entries: MemoryEntry) -> None:
        self.entries = list(entries)

    async def recall(self, query: str, **kw: Any) -> list[MemoryEntry]:
        return list(self.entries)


class Store:
    def __init__(self) -> None:
        self.data: dict[str, list[ChatMessage]] = {}

    async def load_history(self, session_id: str, **kw: Any) -> list[ChatMessage]:
        return list(self.data.get(session_id, []))

    async def append_history(self, session_id: str, messages: Sequence[ChatMessage]) -> None:
        self.data.setdefault(session_id, []).extend(messages)

    async def list_sessions(self, *, limit: int = 50) -> list[Any]:
        return []

    async def delete_session(self, session_id: str) -> bool:
        return False


class RecordingHook(BaseHook):
    name = "recording"

    def __init__(self) -> None:
        self.seen: list[ToolCall] = []

    async def before_tool(
        self, call: ToolCall, tool: Tool | None, context: ToolContext
    ) -> HookDecision:
        self.seen.append(call)
        return HookDecision.proceed()


class QuotingHook(BaseHook):
    """Denies every call, quoting its arguments (as a careless policy might)."""

    name = "quoting"

    async def before_tool(
        self, call: ToolCall, tool: Tool | None, context: ToolContext
    ) -> HookDecision:
        return HookDecision.cancel(f"refused {dict(call.arguments)}")


class SwitchTool(BaseTool):
    """A tool whose schema says exactly what it takes."""

    name = "switch"
    description = "Switch a device."
    risk = RiskClass.READ
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "device": {"type": "string", "enum": ["lamp", "fan"]},
            "on": {"type": "boolean"},
        },
        "required": ["device", "on"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        self.calls.append(dict(arguments))
        return ToolResult.ok("switched")


def build(provider: ScriptedProvider, *tools: Any, **options: Any) -> AgentBuilder:
    b = (
        AgentBuilder()
        .provider(provider)
        .tools(tools)
        .autonomy("full")
        .approver(StaticApprover(True))
        .platform("test")
    )
    for name, value in options.items():
        b = b.option(name, value)
    return b


def tool_texts(provider: ScriptedProvider, request: int) -> list[str]:
    return [m.content for m in provider.requests[request].messages if m.role == "tool"]


async def collect(agent: Agent, text: str, **kw: Any) -> list[Any]:
    return [e async for e in agent.turn(text, **kw)]


# --- 14.1: recalled memory is context for one request, never history -------------------------


async def test_recalled_memory_is_sent_but_never_stored_in_history() -> None:
    big = MemoryEntry("paste", "x" * 3000)
    provider = P(["one", "two", "three"])
    store = Store()
    agent = build(provider).memory(Mem(big)).session_store(store).build()  # type: ignore[arg-type]
    for text in ("first", "second", "third"):
        await agent.run(text, session_id="s")
    # Each request carries the recall once, in front of its own user message only.
    for i, request in enumerate(provider.requests):
        users = [m.content for m in request.messages if m.role == "user"]
        assert sum("[Memory:" in u for u in users) == 1, f"request {i}: {users}"
        assert "[Memory:" in users[-1]
    # What is kept is what the user said.
    kept = [m.content for m in agent.history("s") if m.role == "user"]
    assert all("[Memory:" not in u and "xxx" not in u for u in kept)
    assert all("[Memory:" not in m.content for m in store.data["s"])
    # So the requests do not grow by a recall block per turn.
    sizes = [sum(len(m.content) for m in r.messages) for r in provider.requests]
    assert abs((sizes[2] - sizes[1]) - (sizes[1] - sizes[0])) < 10  # answers differ by a letter
    assert sizes[2] - sizes[1] < 100


async def test_the_system_prompt_and_earlier_messages_stay_byte_identical() -> None:
    provider = P(["one", "two"])
    agent = build(provider).memory(Mem(MemoryEntry("k", "v"))).build()  # type: ignore[arg-type]
    await agent.run("first", session_id="s")
    await agent.run("second", session_id="s")
    first, second = provider.requests
    assert first.messages[0] == second.messages[0]  # the system prompt: no recall in it
    assert "- k: v" not in second.messages[0].content
    # The earlier turn's user message is sent as the user wrote it (prefix caching holds).
    assert second.messages[1].content.endswith("first")
    assert "- k: v" not in second.messages[1].content


async def test_recall_keeps_the_most_relevant_entries_within_the_budget() -> None:
    entries = (
        MemoryEntry("best", "the fan is on GPIO23"),
        MemoryEntry("long", "y" * 5000),
        MemoryEntry("third", "never reached"),
    )
    provider = P(["ok"])
    agent = build(provider, max_recall_chars=300).memory(Mem(*entries)).build()  # type: ignore[arg-type]
    await agent.run("where is the fan?")
    content = provider.requests[0].messages[-1].content
    block = content[: content.index("where is the fan?")]
    assert "- best: the fan is on GPIO23" in block
    assert "characters of this entry cut]" in block
    assert "third" not in block
    assert len(block) < 400


async def test_no_recall_with_a_zero_budget() -> None:
    provider = P(["ok"])
    agent = build(provider, max_recall_chars=0).memory(Mem(MemoryEntry("k", "v"))).build()  # type: ignore[arg-type]
    await agent.run("hi")
    assert "[Memory:" not in provider.requests[0].messages[-1].content


# --- 14.2: size limits and capped echoes ----------------------------------------------------


async def test_a_message_over_the_limit_is_refused_before_anything_runs() -> None:
    provider = P(["never"])
    store = Store()
    agent = build(provider, max_message_chars=100).session_store(store).build()
    events = await collect(agent, "z" * 150, session_id="s")
    assert isinstance(events[-1], ErrorEvent)
    assert events[-1].code == "agent_message_too_long"
    message = events[-1].message
    assert "150" in message and "100" in message and "max_message_chars" in message
    assert provider.requests == []
    assert agent.history("s") == () and store.data == {}
    with pytest.raises(AgentMessageTooLong, match="max_message_chars"):
        await agent.run("z" * 101)
    assert await build(P(["fine"]), max_message_chars=100).build().run("z" * 100) == "fine"


async def test_a_made_up_tool_name_is_echoed_capped() -> None:
    provider = P([P.calls(ToolCall("n" * 1_000_000, {})), "ok"])
    agent = build(provider, EchoTool()).build()
    await agent.run("go")
    (text,) = tool_texts(provider, 1)
    assert "unknown tool" in text and "more characters cut" in text
    assert len(text) < 1000


async def test_a_denial_that_quotes_a_big_argument_is_capped() -> None:
    provider = P([P.call("echo", text="q" * 60_000), "ok"])
    agent = build(provider, EchoTool()).hooks([QuotingHook()]).build()
    await agent.run("go")
    (text,) = tool_texts(provider, 1)
    assert "refused" in text and "more characters cut" in text
    assert len(text) < 1000


async def test_an_exception_quoting_the_arguments_is_capped() -> None:
    class Quoting(EchoTool):
        async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
            raise ValueError(f"bad text {arguments['text']}")

    provider = P([P.call("echo", text="q" * 60_000), "ok"])
    agent = build(provider, Quoting()).build()
    await agent.run("go")
    (text,) = tool_texts(provider, 1)
    assert "ValueError" in text and "more characters cut" in text
    assert len(text) < 1500


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"text": "a" * 100_000}, "more than 65,536 characters"),
        ({"text": "a" * 60_000, "more": ["b" * 10_000]}, "more than 65,536 characters"),
    ],
)
async def test_oversized_arguments_are_refused_before_any_hook(
    arguments: dict[str, Any], says: str
) -> None:
    echo, hook, store = EchoTool(), RecordingHook(), Store()
    provider = P([P.calls(ToolCall("echo", arguments)), "ok"])
    agent = build(provider, echo).hooks([hook]).session_store(store).build()
    await agent.run("go", session_id="s")
    assert hook.seen == [] and echo.calls == []
    (text,) = tool_texts(provider, 1)
    assert says in text
    # Neither the history nor the next request carries the payload.
    stored = store.data["s"]
    assert sum(len(m.content) for m in stored) < 2000
    assert all("a" * 1000 not in str(c.arguments) for m in stored for c in m.tool_calls)
    assert sum(len(str(m)) for m in provider.requests[1].messages) < 20_000


async def test_arguments_nested_10000_deep_are_refused_and_history_is_saved() -> None:
    deep: Any = "leaf"
    for _ in range(10_000):
        deep = {"d": deep}
    echo, hook, store = EchoTool(), RecordingHook(), Store()
    provider = P([P.calls(ToolCall("echo", {"text": deep})), "ok"])
    agent = build(provider, echo).hooks([hook]).session_store(store).build()
    assert await agent.run("go", session_id="s") == "ok"
    assert hook.seen == [] and echo.calls == []
    (text,) = tool_texts(provider, 1)
    assert "nest more than 32 levels" in text
    assert [m.role for m in store.data["s"]] == ["user", "assistant", "tool", "assistant"]


# --- 14.10: arguments the provider could not decode -----------------------------------------


async def test_undecodable_arguments_are_explained_and_no_call_of_the_response_runs() -> None:
    broken = ToolCall(
        "echo",
        {
            "_invalid_arguments": '{"text": "a',
            "_error": "the arguments of tool 'echo' are not valid JSON (Unterminated string "
            "starting at: line 1 column 10 (char 9)): send a JSON object",
        },
        "c1",
    )
    echo, hook = EchoTool(), RecordingHook()
    provider = P([P.calls(ToolCall("echo", {"text": "first"}, "c0"), broken), "ok"])
    agent = build(provider, echo).hooks([hook]).build()
    await agent.run("go")
    assert echo.calls == [] and hook.seen == []
    first, second = tool_texts(provider, 1)
    assert "not run" in first and "#2 'echo'" in first
    assert "Unterminated string" in second and '\'{"text": "a\'' in second
    assert "valid JSON object" in second


# --- 16.16: the tool's own schema, checked before the policy --------------------------------


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"device": "lamp", "on": True, "pin": 5}, "must not contain {'pin'} properties"),
        ({"device": "lamp", "on": "true"}, "arguments.on must be boolean"),
        ({"device": "heater", "on": True}, "arguments.device must be one of"),
        ({"device": "lamp"}, "arguments must contain ['on'] properties"),
    ],
)
async def test_arguments_that_do_not_match_the_schema_never_reach_the_policy(
    arguments: dict[str, Any], says: str
) -> None:
    switch, hook = SwitchTool(), RecordingHook()
    provider = P([P.calls(ToolCall("switch", arguments)), "ok"])
    agent = build(provider, switch).hooks([hook]).build()
    await agent.run("go")
    assert switch.calls == [] and hook.seen == []
    (text,) = tool_texts(provider, 1)
    assert says in text
    assert "Its arguments: device, on (required: device, on)" in text


async def test_valid_arguments_pass_and_each_schema_is_compiled_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import fastjsonschema

    compiled: list[Any] = []
    real = fastjsonschema.compile

    def counting(schema: Any, **kw: Any) -> Any:
        compiled.append(schema)
        return real(schema, **kw)

    monkeypatch.setattr(fastjsonschema, "compile", counting)
    switch = SwitchTool()
    calls = [ToolCall("switch", {"device": "lamp", "on": i % 2 == 0}) for i in range(5)]
    provider = P([P.calls(*calls), P.calls(*calls), "ok"])
    agent = build(provider, switch).build()
    await agent.run("go")
    assert len(switch.calls) == 10
    assert len(compiled) == 1
    switch.parameters = {**SwitchTool.parameters, "required": ["device"]}  # a rebuilt schema
    provider2 = P([P.calls(ToolCall("switch", {"device": "fan", "on": False})), "ok"])
    agent.provider = provider2
    await agent.run("again")
    assert len(compiled) == 2


async def test_a_hook_cannot_rewrite_arguments_past_the_schema() -> None:
    class AddPin(BaseHook):
        name = "add_pin"

        async def before_tool(
            self, call: ToolCall, tool: Tool | None, context: ToolContext
        ) -> HookDecision:
            return HookDecision.modify(ToolCall(call.name, {**call.arguments, "pin": 4}, call.id))

    switch = SwitchTool()
    provider = P([P.call("switch", device="lamp", on=True), "ok"])
    agent = build(provider, switch).hooks([AddPin()]).build()
    await agent.run("go")
    assert switch.calls == []
    (text,) = tool_texts(provider, 1)
    assert "after hook(s) add_pin" in text and "'pin'" in text


async def test_a_tool_with_a_broken_schema_refuses_its_calls() -> None:
    class Broken(EchoTool):
        parameters: Mapping[str, Any] = {"type": "object", "properties": {"text": {"type": 5}}}

    tool = Broken()
    provider = P([P.call("echo", text="hi"), "ok"])
    agent = build(provider, tool).build()
    await agent.run("go")
    assert tool.calls == []
    (text,) = tool_texts(provider, 1)
    assert "invalid parameter schema" in text and "bug in the tool" in text


async def test_a_prompt_guided_call_with_broken_json_is_explained_to_the_model() -> None:
    echo = EchoTool()
    broken = 'Echoing.\n<tool_call>{"name": "echo", "arguments": {"text": "hi"</tool_call>'
    good = '<tool_call>{"name": "echo", "arguments": {"text": "ok"}}</tool_call>'
    provider = P([broken + "\n" + good, "Resent."], native_tools=False)
    agent = build(provider, echo).build()
    events = await collect(agent, "echo hi")
    assert echo.calls == []  # neither the broken call nor its neighbour ran
    results = provider.requests[1].messages[-1].content
    assert "not valid JSON" in results and "call 'echo' again" in results
    assert "not run" in results
    assert events[-1].text == "Resent."
    shown = "".join(e.text for e in events if e.type == "chunk")
    assert "<tool_call>" not in shown  # the user is not shown the broken markup


async def test_a_made_up_name_is_not_sent_back_in_history() -> None:
    store = Store()
    provider = P([P.calls(ToolCall("n" * 100_000, {"text": "x"})), "ok"])
    agent = build(provider, EchoTool()).session_store(store).build()
    await agent.run("go", session_id="s")
    follow_up = provider.requests[1].messages
    assert sum(len(str(m)) for m in follow_up) < 20_000
    [call] = next(m for m in store.data["s"] if m.tool_calls).tool_calls
    assert call.name == "invalid_tool_name"


# --- 14.3: only the tail that is used is loaded ---------------------------------------------


async def test_a_session_loads_only_max_history_messages() -> None:
    asked: list[Any] = []

    class Big(Store):
        async def load_history(
            self, session_id: str, *, limit: int | None = None
        ) -> list[ChatMessage]:
            asked.append(limit)
            everything = [
                ChatMessage.user(f"q{i}") if i % 2 == 0 else ChatMessage.assistant(f"a{i}")
                for i in range(10_000)
            ]
            return everything if limit is None else everything[-limit:]

    provider = P(["ok"])
    agent = build(provider).session_store(Big()).max_history(20).build()
    await agent.run("hi", session_id="s")
    assert asked == [20]
    assert len(provider.requests[0].messages) <= 22  # system + at most 20 + this message
