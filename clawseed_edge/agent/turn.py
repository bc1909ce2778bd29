"""One turn, as a chain of small steps, httpx-style: each method owns one concern.

:meth:`TurnRunner.run` does the bookkeeping (ids, observer events, errors to events, saving the
history, after-turn listeners) -> :meth:`TurnRunner._tool_rounds` asks and repeats until a plain
answer or the iteration limit -> :meth:`TurnRunner._round` is one model response and its calls.
The Agent runs each turn in its own task (:mod:`clawseed_edge.agent.engine`); this module only
knows how a turn goes.

What the turn keeps is what the user and the model said: the user's message (with its time
prefix), the model's answers and calls, the tool results. Recalled memory is context for this
turn's requests only (:mod:`.recall`), and a call's arguments that were refused unread are kept
as a short placeholder, never as the payload (:mod:`.arguments`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from clawseed_edge.api import (
    AgentError,
    AgentIterationLimit,
    AgentMessageTooLong,
    ApprovalRequestEvent,
    ChatMessage,
    ChatRequest,
    ChunkEvent,
    ClawseedError,
    DoneEvent,
    ErrorEvent,
    ErrorObserved,
    Memory,
    ObserverEvent,
    Provider,
    ProviderError,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolResultEvent,
    TurnEnded,
    TurnStarted,
    Usage,
)

from . import offer
from .approval import approval_listener
from .arguments import SchemaValidator, argument_problem, bounded_call
from .history import History
from .hooks import HookRunner
from .intents import local_answer
from .model_call import ask_model
from .pictures import TurnPictures, vision_refusals
from .recall import recall_context, with_context
from .registry import ToolRegistry
from .sessions import Sessions
from .tool_run import run_tool_call
from .toolcalls import ParsedResponse, ToolDispatcher, read_response

__all__ = ["TurnDoneListener", "TurnHandle", "TurnParts", "TurnRunner"]

log = logging.getLogger(__name__)

#: The provider and model names a turn answered by the local stage reports.
LOCAL_PROVIDER, LOCAL_MODEL = "local", "intents"

#: How long an after-turn listener (memory upkeep) may take, in seconds.
LISTENER_TIMEOUT_S = 10.0


#: ``await listener(context, user_text, answer)`` after a completed turn.
TurnDoneListener = Callable[[ToolContext, str, str], Awaitable[None]]


class TurnParts(Protocol):
    """What a turn reads of the agent that runs it: its public parts and limits, nothing else.

    The Agent is one; a test or another runner can pass any object with these members.
    """

    provider: Provider
    registry: ToolRegistry
    hooks: HookRunner
    dispatcher: ToolDispatcher
    memory: Memory | None
    schema_validator: SchemaValidator
    scrub: Callable[[str], str]
    max_message_chars: int
    max_tool_iterations: int
    max_tool_argument_chars: int
    max_tool_output_chars: int
    memory_recall_limit: int
    max_recall_chars: int
    tool_timeout_s: float

    def refresh_dispatcher(self) -> None: ...

    def system_prompt(self) -> str: ...


@dataclass(slots=True, eq=False)
class TurnHandle:
    """What the Agent and the caller know of a running turn."""

    session_id: str
    task: asyncio.Task[None] | None = None
    abort_reason: str | None = None
    error: BaseException | None = None
    finished: bool = False
    new_messages: list[ChatMessage] = field(default_factory=list)


class TurnRunner:
    """Runs one turn for ``text``, sending its events to ``emit``.

    Args:
        parts: The provider, tools, hooks and limits the turn uses (the Agent's public parts).
        sessions: Where the session's history is opened and the turn's messages saved.
        record: The observer's ``record`` (never raises).
        text: The user's message.
        session_id: The session whose history the turn extends.
        turn_id: This turn's id.
        context: Channel and namespace (its session and turn ids are set here).
        handle: Where the turn leaves its error and its new messages.
        emit: Receives the turn's events (the Agent's queue).
        time_prefix: The time stamp put in front of the user's message.
        done_listeners: Awaited after a completed turn (memory upkeep).
    """

    def __init__(
        self,
        parts: TurnParts,
        sessions: Sessions,
        record: Callable[[ObserverEvent], None],
        text: str,
        session_id: str,
        turn_id: str,
        context: ToolContext | None,
        handle: TurnHandle,
        emit: Callable[[object], None],
        *,
        time_prefix: Callable[[], str],
        done_listeners: Sequence[TurnDoneListener] = (),
    ) -> None:
        self.parts = parts
        self.sessions = sessions
        self.record = record
        self.time_prefix = time_prefix
        self.done_listeners = done_listeners
        self.text = text
        self.session_id = session_id
        self.turn_id = turn_id
        if context is None:
            context = ToolContext(session_id=session_id, turn_id=self.turn_id)
        else:
            context = replace(context, session_id=session_id, turn_id=self.turn_id)
        self.context = context
        self.handle = handle
        self.emit = emit
        self.history: History | None = None
        self.usage = Usage()
        self.iterations = 0
        self.outcome = "error"
        self.answer = ""
        # Recalled memory for this turn's requests, and the user message it goes in front of.
        self.recall = ""
        self.user_message: ChatMessage | None = None
        self.pictures = TurnPictures()

    async def run(self) -> None:
        """The turn's bookkeeping; never raises but ``CancelledError`` (the turn was aborted).

        Cancel-safe: an abort still trims and saves the history and reports ``TurnEnded``.
        """
        emit = self.emit
        approval_listener.set(lambda request: emit(ApprovalRequestEvent(request)))
        started = time.perf_counter()
        self.record(TurnStarted(self.session_id, self.turn_id))
        try:
            self._check_size()
            session = await self.sessions.open(self.session_id)
            async with session.lock:  # turns of one session run one at a time
                self.history = session.history
                await self._tool_rounds()
        except asyncio.CancelledError:
            self.outcome = "aborted"
            raise
        except ClawseedError as exc:
            self.handle.error = exc
            component = "provider" if isinstance(exc, ProviderError) else "agent"
            self.record(ErrorObserved(component, str(exc), exc.code))
            emit(ErrorEvent(str(exc), exc.code))
        except Exception as exc:  # a bug (ours or a plugin's): say so, never as a provider error
            log.exception("turn %s of session %s failed", self.turn_id, self.session_id)
            self.handle.error = exc
            self.record(ErrorObserved("agent", str(exc), AgentError.code))
            emit(ErrorEvent(f"internal error: {type(exc).__name__}: {exc}", AgentError.code))
        finally:
            if self.history is not None:
                self.history.trim()
            self.record(
                TurnEnded(
                    self.session_id,
                    self.turn_id,
                    self.outcome,  # type: ignore[arg-type]
                    self.iterations,
                    (time.perf_counter() - started) * 1000.0,
                    self.usage,
                )
            )
            failure = await self.sessions.persist(self.session_id, self.handle.new_messages)
            if failure is not None:
                # Never silently dropped: the caller learns the turn ran but was not stored.
                code = failure.code if isinstance(failure, ClawseedError) else AgentError.code
                emit(
                    ErrorEvent(
                        f"the conversation was not saved: {str(failure)[:500]}. The answer "
                        "above stands, but later turns will not remember this one.",
                        code,
                    )
                )
            if self.outcome == "done":
                await self._notify_done()

    def _check_size(self) -> None:
        """Refuse a message over ``max_message_chars`` before anything runs or is stored."""
        limit = self.parts.max_message_chars
        if len(self.text) > limit:
            raise AgentMessageTooLong(
                f"the message is {len(self.text):,} characters long; the limit is {limit:,} "
                "([agent] max_message_chars). Nothing was sent to the model: shorten the "
                "message, put the text in a workspace file and refer to it, or raise the limit."
            )

    async def _tool_rounds(self) -> None:
        """Ask, run the calls, repeat: until a plain answer or ``max_tool_iterations``."""
        agent = self.parts
        self.recall = await recall_context(
            agent.memory,
            self.text,
            limit=agent.memory_recall_limit,
            budget=agent.max_recall_chars,
            namespace=self.context.namespace,
        )
        # History gets what the user said; the recall is added to each request's copy only.
        self.user_message = ChatMessage.user(self.time_prefix() + self.text)
        self._commit([self.user_message])
        history = self.history
        assert history is not None
        history.trim()
        agent.refresh_dispatcher()
        system_prompt = agent.system_prompt()
        specs = agent.registry.specs()
        # Local intents first: a simple command asked now runs without the model.
        stage = getattr(agent, "local_intents", None)
        local = stage.plan(self.text, specs) if stage is not None else ()
        if local:
            self.iterations = 1
            await self._local_round(local)
            return
        tools = agent.dispatcher.tools_for_request(offer.offered_tools(agent, self.text, specs))
        for self.iterations in range(1, agent.max_tool_iterations + 1):
            messages = with_context(
                history.for_request(system_prompt), self.user_message, self.recall
            )
            messages = self.pictures.attach(messages)  # this turn's snapshots, never stored
            if await self._round(ChatRequest(messages, tools)):
                return
        self.outcome = "limit"
        limit = agent.max_tool_iterations
        self.emit(
            ErrorEvent(
                f"Stopped after {limit} rounds of tool calls without a final answer "
                f"(max_tool_iterations={limit}). The tool results so far are kept; ask again "
                "to continue, or raise max_tool_iterations.",
                AgentIterationLimit.code,
            )
        )

    async def _round(self, request: ChatRequest) -> bool:
        """One round: ask the model, run its calls; True when it answered without a call."""
        agent = self.parts
        dispatcher = agent.dispatcher
        streaming = bool(getattr(agent.provider.capabilities, "streaming", False))
        response = await ask_model(
            agent.provider,
            request,
            stream=streaming,
            live_text=dispatcher.streams_text,
            emit=self.emit,
            record=self.record,
        )
        self.usage = self.usage + response.usage
        parsed = read_response(dispatcher, response)  # once: text, calls, history message
        if parsed.text and not (dispatcher.streams_text and streaming):
            self.emit(ChunkEvent(parsed.text))  # not already shown while it streamed
        if parsed.calls:
            await self._run_calls(parsed)
            return False
        self._commit([parsed.message])
        self.outcome = "done"
        self.answer = parsed.text
        self.emit(
            DoneEvent(
                parsed.text,
                self.usage,
                self.iterations,
                response.provider or agent.provider.name,
                response.model or agent.provider.model,
            )
        )
        return True

    async def _local_round(self, calls: Sequence[ToolCall]) -> None:
        """Run the local stage's calls as a model's (policy, approvals, events), then answer
        from their results."""
        named = tuple(replace(c, id=f"local_{i}") for i, c in enumerate(calls, start=1))
        parsed = ParsedResponse("", named, ChatMessage.assistant("", named))
        results: list[tuple[ToolCall, ToolResult]] = []
        emit = self.emit

        def keep(event: object) -> None:
            if isinstance(event, ToolResultEvent):
                results.append((event.call, event.result))  # what the answer is made from
            emit(event)

        self.emit = keep
        try:
            await self._run_calls(parsed)
        finally:
            self.emit = emit
        answer = local_answer(results)
        self.emit(ChunkEvent(answer))
        self._commit([ChatMessage.assistant(answer)])
        self.outcome = "done"
        self.answer = answer
        self.emit(DoneEvent(answer, self.usage, 1, LOCAL_PROVIDER, LOCAL_MODEL))

    async def _run_calls(self, parsed: ParsedResponse) -> None:
        """Run the response's calls in order and keep them, with their results, in history.

        Arguments are bounded first, for the whole response: if any call's arguments could not
        be decoded or are out of bounds, none of the response's calls runs (the model's output
        is broken; running the rest as if nothing happened could switch one relay of a pair)
        and each call's result says why, so the model can send them again.
        """
        agent = self.parts
        problems = [argument_problem(call, agent.max_tool_argument_chars) for call in parsed.calls]
        calls = [bounded_call(c, p) for c, p in zip(parsed.calls, problems, strict=True)]
        refusals = _refusals(calls, problems)
        # A tool that returns a picture is refused, in words, to a model that cannot see it.
        unseen = vision_refusals(calls, agent.registry, agent.provider)
        refusals = [r if r is not None else u for r, u in zip(refusals, unseen, strict=True)]
        results: list[tuple[ToolCall, ToolResult]] = []
        try:
            for call, refused in zip(calls, refusals, strict=True):
                results.append(
                    await run_tool_call(
                        agent,
                        call,
                        self.context,
                        record=self.record,
                        emit=self.emit,
                        refused=refused,
                    )
                )
        except asyncio.CancelledError:
            # Keep what ran (a relay may have switched): every call gets a result.
            results += [
                (c, ToolResult.fail("the turn was aborted before this call finished"))
                for c in calls[len(results) :]
            ]
            raise
        finally:
            message = parsed.message
            if any(p is not None for p in problems) and message.tool_calls:
                # History keeps the placeholder, not a 10 MB or 10,000-deep payload.
                message = replace(message, tool_calls=tuple(calls))
            replies = agent.dispatcher.result_messages(results)
            self.pictures.keep(replies, results)
            self._commit([message, *replies])

    def _commit(self, messages: list[ChatMessage]) -> None:
        """Add messages to the session's history and to what this turn saves."""
        assert self.history is not None
        self.history.extend(messages)
        self.handle.new_messages.extend(messages)

    async def _notify_done(self) -> None:
        scrub = self.parts.scrub
        # What goes on to memory is scrubbed: a pasted key must not be consolidated.
        text, answer = scrub(self.text), scrub(self.answer)
        for listener in self.done_listeners:
            try:
                async with asyncio.timeout(LISTENER_TIMEOUT_S):
                    await listener(self.context, text, answer)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("an after-turn listener failed (the turn itself succeeded)")


def _refusals(calls: list[ToolCall], problems: list[str | None]) -> list[str | None]:
    """Per call, why it is refused unread (None: run it): all of them when one is unreadable."""
    bad = [i for i, p in enumerate(problems) if p is not None]
    if not bad:
        return [None] * len(calls)
    named = ", ".join(f"#{i + 1} {calls[i].name!r}" for i in bad[:5])
    skipped = (
        f"not run: call(s) {named} of the same response had arguments that could not be "
        "used, so none of its calls ran; send the calls you still want again"
    )
    return [p if p is not None else skipped for p in problems]
