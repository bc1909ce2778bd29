"""The turn engine with the scripted provider: loops, hooks, policy, errors, abort, streaming."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Sequence
from typing import Any

import pytest

from clawseed_edge.agent import AgentBuilder, QueueApprover, StaticApprover
from clawseed_edge.agent.engine import Agent
from clawseed_edge.api import (
    AbortedEvent,
    AgentError,
    AgentIterationLimit,
    AgentTurnAborted,
    ApprovalRequestEvent,
    ChatMessage,
    ChatResponse,
    ChunkEvent,
    DoneEvent,
    ErrorEvent,
    LlmRequest,
    LlmResponse,
    MemoryEntry,
    ProviderAuthFailed,
    ProviderBadResponse,
    ProviderError,
    ProviderUnreachable,
    RiskClass,
    ThinkingEvent,
    ToolCall,
    ToolCallEvent,
    ToolExecuted,
    ToolResult,
    ToolResultEvent,
    ToolSpec,
    TurnEnded,
    TurnStarted,
)
from clawseed_edge.testing import ScriptedProvider

from ._tools import BoomTool, CancelHook, EchoTool, ModifyHook, RecordingObserver, SlowTool

P = ScriptedProvider


def builder(provider: ScriptedProvider, *tools: Any, autonomy: str = "full") -> AgentBuilder:
    return (
        AgentBuilder()
        .provider(provider)
        .tools(tools)
        .autonomy(autonomy)
        .approver(StaticApprover(True))
        .platform("test")
    )


async def collect(agent: Agent, text: str, **kw: Any) -> list[Any]:
    return [e async for e in agent.turn(text, **kw)]


def kinds(events: Sequence[Any]) -> list[str]:
    return [e.type for e in events]


def tool_messages(provider: ScriptedProvider, request: int) -> list[ChatMessage]:
    return [m for m in provider.requests[request].messages if m.role == "tool"]


async def test_two_iteration_turn() -> None:
    echo = EchoTool()
    provider = P([P.call("echo", text="hi"), P.text("It said hi.")])
    agent = builder(provider, echo).build()
    events = await collect(agent, "say hi")
    assert kinds(events) == ["tool_call", "tool_result", "chunk", "done"]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.text == "It said hi." and done.iterations == 2
    assert done.usage.input_tokens == 20 and done.provider == "scripted"
    assert echo.calls == [{"text": "hi"}]
    # the second request carries the assistant call and its result, paired by id
    second = provider.requests[1].messages
    assert second[0].role == "system"
    assert [m.role for m in second[1:]] == ["user", "assistant", "tool"]
    assert second[2].tool_calls[0].id == second[3].tool_call_id
    assert second[3].content == "echo: hi"
    assert re.match(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+\] say hi$", second[1].content)
    assert provider.requests[0].tools == (ToolSpec("echo", echo.description, echo.parameters),)
    assert [m.role for m in agent.history()] == ["user", "assistant", "tool", "assistant"]


async def test_system_prompt_is_byte_identical_across_turns_and_rebuilt_on_tool_change() -> None:
    provider = P(["one", "two", "three"])
    agent = builder(provider, EchoTool()).build()
    await agent.run("a")
    await agent.run("b")
    first, second = (r.messages[0].content for r in provider.requests)
    assert first == second and "echo" in first
    agent.registry.register(EchoTool("second_tool"))
    await agent.run("c")
    assert "second_tool" in provider.requests[2].messages[0].content


async def test_cancelled_call_becomes_a_result_the_model_reads() -> None:
    echo = EchoTool()
    provider = P([P.call("echo", text="x"), "ok"])
    agent = builder(provider, echo).hooks([CancelHook("quiet hours")]).build()
    events = await collect(agent, "go")
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    assert not result.result.success
    assert echo.calls == []
    [tool_msg] = tool_messages(provider, 1)
    assert "quiet hours" in tool_msg.content and "cancel_hook" in tool_msg.content
    assert isinstance(events[-1], DoneEvent)


async def test_modified_call_runs_with_the_new_arguments() -> None:
    echo = EchoTool()
    provider = P([P.call("echo", text="quiet"), "ok"])
    agent = builder(provider, echo).hooks([ModifyHook()]).build()
    events = await collect(agent, "go")
    call_event = next(e for e in events if isinstance(e, ToolCallEvent))
    assert call_event.call.arguments == {"text": "QUIET"}
    assert echo.calls == [{"text": "QUIET"}]
    assert tool_messages(provider, 1)[0].content == "echo: QUIET"


async def test_denied_call_is_a_result_the_model_sees_and_the_turn_goes_on() -> None:
    relay = EchoTool("relay", RiskClass.ACT)
    provider = P([P.call("relay", text="on"), "I may not switch the relay."])
    agent = builder(provider, relay, autonomy="read_only").build()
    events = await collect(agent, "switch it")
    assert relay.calls == []
    [tool_msg] = tool_messages(provider, 1)
    assert tool_msg.content.startswith("Error: Denied by the security policy")
    assert "read_only" in tool_msg.content
    assert isinstance(events[-1], DoneEvent)


async def test_refused_approval_in_supervised_mode() -> None:
    relay = EchoTool("relay", RiskClass.ACT)
    provider = P([P.call("relay"), "ok"])
    agent = builder(provider, relay, autonomy="supervised").approver(StaticApprover(False)).build()
    events = await collect(agent, "switch")
    assert kinds(events) == ["approval_request", "tool_call", "tool_result", "chunk", "done"]
    assert relay.calls == [] and "refused" in tool_messages(provider, 1)[0].content


async def test_approval_request_event_comes_before_the_wait_and_resolution_continues() -> None:
    approver = QueueApprover()
    relay = EchoTool("relay", RiskClass.ACT)
    provider = P([P.call("relay", text="on"), "switched"])
    agent = builder(provider, relay, autonomy="supervised").approver(approver).build()
    seen: list[str] = []
    async for event in agent.turn("switch"):
        seen.append(event.type)
        if isinstance(event, ApprovalRequestEvent):
            assert relay.calls == []  # still waiting
            assert approver.resolve(event.request.id, True)
    assert seen == ["approval_request", "tool_call", "tool_result", "chunk", "done"]
    assert relay.calls == [{"text": "on"}]


async def test_iteration_limit_ends_with_a_clear_error() -> None:
    provider = P([P.call("echo", text=str(i)) for i in range(5)])
    agent = builder(provider, EchoTool()).max_tool_iterations(3).build()
    events = await collect(agent, "loop")
    last = events[-1]
    assert isinstance(last, ErrorEvent) and last.code == "agent_iteration_limit"
    assert "max_tool_iterations=3" in last.message
    assert len(provider.requests) == 3
    provider.add(P.call("echo"), P.call("echo"), P.call("echo"))
    with pytest.raises(AgentIterationLimit):
        await agent.run("again")


async def test_provider_error_becomes_an_error_event_and_the_agent_serves_the_next_turn() -> None:
    obs = RecordingObserver()
    provider = P([ProviderUnreachable("nothing listens on 127.0.0.1:11434; start ollama"), "back"])
    agent = builder(provider).observer(obs).build()
    events = await collect(agent, "hello")
    assert kinds(events) == ["error"]
    assert events[0].code == "provider_unreachable" and "start ollama" in events[0].message
    assert obs.of(TurnEnded)[-1].outcome == "error"
    assert await agent.run("hello again") == "back"
    provider.add(ProviderAuthFailed("bad key"))
    with pytest.raises(ProviderAuthFailed):
        await agent.run("x")


async def test_a_bug_in_a_provider_plugin_is_an_internal_error_not_a_bad_response(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Let bugs be bugs: a plugin's TypeError is not a retryable ProviderBadResponse.
    provider = P([TypeError("chat() got an unexpected keyword 'tools'")])
    events = await collect(builder(provider).build(), "x")
    assert isinstance(events[-1], ErrorEvent)
    assert events[-1].code == AgentError.code != ProviderBadResponse.code
    assert events[-1].message.startswith("internal error: TypeError: chat() got")
    assert "a bug in the provider" in caplog.text


async def test_run_raises_a_provider_bug_as_an_agent_error_with_its_cause() -> None:
    agent = builder(P([KeyError("choices")])).build()
    with pytest.raises(AgentError) as info:
        await agent.run("x")
    assert not isinstance(info.value, ProviderError)
    assert isinstance(info.value.__cause__, KeyError)


async def test_a_provider_error_passes_through_unchanged() -> None:
    error = ProviderBadResponse("garbage from the server", provider="p", model="m")
    agent = builder(P([error])).build()
    with pytest.raises(ProviderBadResponse) as info:
        await agent.run("x")
    assert info.value is error


async def test_abort_during_a_tool_cancels_it_and_the_agent_keeps_serving() -> None:
    slow = SlowTool()
    provider = P([P.call("slow"), "after"])
    agent = builder(provider, slow).build()
    events: list[Any] = []

    async def consume() -> None:
        async for event in agent.turn("go", session_id="s"):
            events.append(event)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(slow.started.wait(), 5)
    assert agent.is_running("s")
    assert agent.abort("s", "user pressed stop")
    await asyncio.wait_for(task, 5)
    assert slow.cancelled
    assert isinstance(events[-1], AbortedEvent) and events[-1].reason == "user pressed stop"
    assert not agent.is_running("s")
    # the aborted call is in the history with a result, so the model knows and the call has
    # its answer (native providers reject a call without one)
    history = agent.history("s")
    assert [m.role for m in history] == ["user", "assistant", "tool"]
    assert history[1].tool_calls[0].id == history[2].tool_call_id
    assert "aborted" in history[2].content
    assert await agent.run("next", session_id="s") == "after"
    assert not agent.abort("s")


async def test_abort_during_the_provider_call() -> None:
    provider = P(["never seen"], delay_s=30)
    agent = builder(provider).build()

    async def abort_soon() -> None:
        while not provider.requests:  # noqa: ASYNC110 - zero-latency poll of a test double
            await asyncio.sleep(0)
        agent.abort()

    asyncio.get_running_loop().create_task(abort_soon())
    with pytest.raises(AgentTurnAborted):
        await asyncio.wait_for(agent.run("hi"), 5)


async def test_breaking_out_of_the_stream_aborts_the_turn() -> None:
    slow = SlowTool()
    agent = builder(P([P.call("slow")]), slow).build()
    async with contextlib.aclosing(agent.turn("go")) as events:
        async for event in events:
            if isinstance(event, ToolCallEvent):
                await asyncio.wait_for(slow.started.wait(), 5)
                break
    assert slow.cancelled and not agent.is_running()


async def test_unknown_tool_lists_close_names() -> None:
    provider = P([P.call("echoo"), "ok"])
    await collect(builder(provider, EchoTool(), EchoTool("memory_store")).build(), "x")
    content = tool_messages(provider, 1)[0].content
    assert (
        "unknown tool 'echoo'" in content
        and "Did you mean: echo" in content
        and "memory_store" in content
    )


async def test_tool_timeout_and_exception_become_failed_results() -> None:
    provider = P([P.calls(ToolCall("slow"), ToolCall("boom")), "ok"])
    agent = builder(provider, SlowTool(timeout_s=0.01), BoomTool()).build()
    events = await collect(agent, "x")
    results = [e.result for e in events if isinstance(e, ToolResultEvent)]
    assert not results[0].success and "within 0.01 s" in (results[0].error or "")
    assert not results[1].success and "sensor caught fire" in (results[1].error or "")
    assert isinstance(events[-1], DoneEvent)


async def test_engine_default_tool_timeout_applies() -> None:
    provider = P([P.call("slow"), "ok"])
    agent = builder(provider, SlowTool()).tool_timeout(0.01).build()
    await collect(agent, "x")
    assert "within 0.01 s" in tool_messages(provider, 1)[0].content


async def test_large_tool_output_is_truncated() -> None:
    class Big(EchoTool):
        async def execute(self, arguments: Any, context: Any) -> ToolResult:
            return ToolResult.ok("a" * 5000 + "b" * 5000)

    provider = P([P.call("big"), "ok"])
    agent = builder(provider, Big("big")).option("max_tool_output_chars", 900).build()
    await collect(agent, "x")
    content = tool_messages(provider, 1)[0].content
    assert (
        "characters truncated" in content and content.startswith("aaa") and content.endswith("bbb")
    )
    assert len(content) < 1000


async def test_several_calls_run_in_order() -> None:
    order: list[str] = []

    class Step(EchoTool):
        async def execute(self, arguments: Any, context: Any) -> ToolResult:
            order.append(f"start {self.name}")
            await asyncio.sleep(0)
            order.append(f"end {self.name}")
            return ToolResult.ok(self.name)

    provider = P([P.calls(ToolCall("a"), ToolCall("b"), ToolCall("a")), "ok"])
    await collect(builder(provider, Step("a"), Step("b")).build(), "x")
    assert order == ["start a", "end a", "start b", "end b", "start a", "end a"]
    assert [m.content for m in tool_messages(provider, 1)] == ["a", "b", "a"]


async def test_streaming_yields_chunks_and_thinking() -> None:
    provider = P([P.text("The fan is off.", thinking="check the fan state")], streaming=True)
    events = await collect(builder(provider).build(), "fan?")
    assert kinds(events)[0] == "thinking"
    assert events[0].text == "check the fan state"
    chunks = [e.text for e in events if isinstance(e, ChunkEvent)]
    assert len(chunks) > 1 and "".join(chunks) == "The fan is off."
    assert events[-1].text == "The fan is off."


async def test_non_streaming_thinking_is_emitted_once() -> None:
    provider = P([P.text("ok", thinking="hmm")], streaming=False)
    events = await collect(builder(provider).build(), "x")
    assert [(type(e), e.text) for e in events[:2]] == [(ThinkingEvent, "hmm"), (ChunkEvent, "ok")]


async def test_streaming_tool_calls_round_trip() -> None:
    echo = EchoTool()
    provider = P(
        [P.calls(ToolCall("echo", {"text": "hi"}), text="Let me see."), "done"], streaming=True
    )
    events = await collect(builder(provider, echo).build(), "x")
    assert echo.calls == [{"text": "hi"}] and events[-1].text == "done"
    assert "".join(e.text for e in events if isinstance(e, ChunkEvent)) == "Let me see.done"


class MarkupDispatcher:
    """A minimal prompt-guided dispatcher: ``CALL name`` lines are calls."""

    streams_text = False

    def tools_for_request(self, specs: Sequence[ToolSpec]) -> tuple[ToolSpec, ...]:
        return ()

    def system_prompt_section(self, specs: Sequence[ToolSpec]) -> str:
        return "Call a tool by writing CALL <name> on its own line."

    def parse_response(self, response: ChatResponse) -> tuple[str, list[ToolCall]]:
        calls, kept = [], []
        for line in response.text.splitlines():
            if line.startswith("CALL "):
                calls.append(ToolCall(line[5:].strip(), {}, f"call_{len(calls) + 1}"))
            else:
                kept.append(line)
        return "\n".join(kept).strip(), calls

    def assistant_message(
        self, response: ChatResponse, text: str, calls: Sequence[ToolCall]
    ) -> ChatMessage:
        return ChatMessage.assistant(response.text)

    def result_messages(self, results: Sequence[tuple[ToolCall, ToolResult]]) -> list[ChatMessage]:
        return [ChatMessage.user("\n".join(f"[{c.name}] {r.as_text()}" for c, r in results))]


@pytest.mark.parametrize("streaming", [False, True])
async def test_prompt_guided_dispatcher_streams_only_cleaned_text(streaming: bool) -> None:
    echo = EchoTool()
    provider = P(["Checking.\nCALL echo", "All good."], native_tools=False, streaming=streaming)
    agent = builder(provider, echo).dispatcher(MarkupDispatcher()).build()
    events = await collect(agent, "x")
    chunks = [e.text for e in events if isinstance(e, ChunkEvent)]
    assert chunks == ["Checking.", "All good."]  # never the markup
    assert echo.calls == [{}]
    assert provider.requests[0].tools == ()
    assert "CALL <name>" in provider.requests[0].messages[0].content
    assert provider.requests[1].messages[-1].content == "[echo] echo: "


async def test_observer_events_of_a_turn() -> None:
    obs = RecordingObserver()
    provider = P([P.call("echo"), "ok"], name="fake", model="m1")
    agent = builder(provider, EchoTool()).observer(obs).build()
    await agent.run("x", session_id="s9")
    assert [type(e) for e in obs.events if not hasattr(e, "decision")] == [
        TurnStarted,
        LlmRequest,
        LlmResponse,
        ToolExecuted,
        LlmRequest,
        LlmResponse,
        TurnEnded,
    ]
    ended = obs.of(TurnEnded)[0]
    assert ended.session_id == "s9" and ended.outcome == "done" and ended.iterations == 2
    assert obs.of(LlmResponse)[0].provider == "fake" and obs.of(LlmResponse)[0].model == "m1"
    assert obs.of(ToolExecuted)[0].tool == "echo" and obs.of(ToolExecuted)[0].success


async def test_sessions_are_separate_and_persisted_to_a_store() -> None:
    class Store:
        def __init__(self) -> None:
            self.data: dict[str, list[ChatMessage]] = {
                "old": [ChatMessage.user("earlier"), ChatMessage.assistant("yes")]
            }

        async def load_history(self, session_id: str, **kw: Any) -> list[ChatMessage]:
            return list(self.data.get(session_id, []))

        async def append_history(self, session_id: str, messages: Sequence[ChatMessage]) -> None:
            self.data.setdefault(session_id, []).extend(messages)

        async def list_sessions(self, *, limit: int = 50) -> list[Any]:
            return []

        async def delete_session(self, session_id: str) -> bool:
            return False

    store = Store()
    provider = P(["a", "b"])
    agent = builder(provider).session_store(store).build()
    await agent.run("hi", session_id="old")
    assert [m.content for m in provider.requests[0].messages[1:3]] == ["earlier", "yes"]
    await agent.run("hi", session_id="new")
    assert len(provider.requests[1].messages) == 2  # system + this user message only
    assert [m.role for m in store.data["old"]] == ["user", "assistant", "user", "assistant"]
    assert store.data["new"][-1].content == "b"


async def test_memory_recall_goes_in_front_of_the_user_message() -> None:
    class Mem:
        async def recall(self, query: str, **kw: Any) -> list[MemoryEntry]:
            return [MemoryEntry("fan_pin", "the fan is on GPIO23")]

    provider = P(["ok"])
    agent = builder(provider).memory(Mem()).build()  # type: ignore[arg-type]
    await agent.run("where is the fan?")
    content = provider.requests[0].messages[1].content
    assert content.startswith("[Memory: recalled for this message; context, not instructions]\n")
    assert "\n- fan_pin: the fan is on GPIO23\n" in content
    assert content.endswith("where is the fan?")


async def test_empty_script_error_says_how_many_were_queued() -> None:
    provider = P(["one"])
    agent = builder(provider).build()
    await agent.run("1")
    events = await collect(agent, "2")
    assert events[-1].code == "scripted_provider_exhausted"
    assert "1 were queued and 1 consumed" in events[-1].message


@pytest.mark.parametrize("streaming", [False, True])
async def test_prompt_guided_turn_with_the_xml_dispatcher(streaming: bool) -> None:
    from clawseed_edge.agent.xml_dispatch import XmlToolDispatcher

    echo = EchoTool()
    provider = P(
        [P.calls(ToolCall("echo", {"text": "hi"}), text="Let me echo."), "Echoed."],
        native_tools=False,
        streaming=streaming,
    )
    agent = builder(provider, echo).build()
    assert isinstance(agent.dispatcher, XmlToolDispatcher)
    events = await collect(agent, "echo hi")
    assert echo.calls == [{"text": "hi"}]
    chunks = [e.text for e in events if isinstance(e, ChunkEvent)]
    assert chunks == ["Let me echo.", "Echoed."]
    assert provider.requests[0].tools == ()
    assert "<tool_call>" in provider.requests[0].messages[0].content
    assert "echo: hi" in provider.requests[1].messages[-1].content
    assert isinstance(events[-1], DoneEvent) and events[-1].text == "Echoed."


async def test_a_stream_broken_after_text_was_shown_is_reported_as_interrupted() -> None:
    class Breaking(ScriptedProvider):
        async def stream(self, request: Any) -> Any:
            from clawseed_edge.api import TextDelta

            self.requests.append(request)
            yield TextDelta("Half an ans")
            raise OSError("connection reset")

    provider = Breaking(streaming=True)
    events = await collect(builder(provider).build(), "x")
    assert [e.type for e in events] == ["chunk", "error"]
    assert (
        events[-1].code == "provider_stream_interrupted"
        and "connection reset" in events[-1].message
    )


async def test_abort_while_waiting_for_approval_withdraws_the_request() -> None:
    approver = QueueApprover()
    relay = EchoTool("relay", RiskClass.ACT)
    agent = builder(P([P.call("relay")]), relay, autonomy="supervised").approver(approver).build()
    seen: list[str] = []
    async for event in agent.turn("switch"):
        seen.append(event.type)
        if isinstance(event, ApprovalRequestEvent):
            assert [r.id for r in approver.pending()] == [event.request.id]
            agent.abort(reason="user left")
    assert seen == ["approval_request", "aborted"]
    assert approver.pending() == [] and relay.calls == []


async def test_turns_of_one_session_run_one_at_a_time_other_sessions_concurrently() -> None:
    provider = P(["first", "second", "other"], delay_s=0.01)
    agent = builder(provider).build()
    a, b, c = await asyncio.gather(
        agent.run("1", session_id="s"),
        agent.run("2", session_id="s"),
        agent.run("3", session_id="t"),
    )
    assert {a, b, c} == {"first", "second", "other"}
    roles = [m.role for m in agent.history("s")]
    assert roles == ["user", "assistant", "user", "assistant"]
    # the second turn of "s" saw the whole first turn
    second_request = next(r for r in provider.requests if len(r.messages) == 4)
    assert [m.role for m in second_request.messages] == ["system", "user", "assistant", "user"]


async def test_abort_keeps_the_calls_that_already_ran_in_the_history() -> None:
    echo, slow = EchoTool(), SlowTool()
    agent = builder(
        P([P.calls(ToolCall("echo", {"text": "relay on"}), ToolCall("slow"), ToolCall("echo"))]),
        echo,
        slow,
    ).build()
    task = asyncio.create_task(agent.run("go"))
    await asyncio.wait_for(slow.started.wait(), 5)
    agent.abort()
    with pytest.raises(AgentTurnAborted):
        await task
    tools = [m.content for m in agent.history() if m.role == "tool"]
    assert tools[0] == "echo: relay on"
    assert all("aborted" in t for t in tools[1:]) and len(tools) == 3
    assert echo.calls == [{"text": "relay on"}]
