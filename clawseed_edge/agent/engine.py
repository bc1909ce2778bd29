"""The turn engine: one message in, a stream of events out.

A turn: the user message (with a time prefix) joins the session's history; the provider is asked
with the stable system prompt; the dispatcher reads the tool calls; each call goes through the
hook pipeline (SecurityPolicy first), runs with a timeout, and its result goes back to the model;
this repeats until the model answers in plain text or ``max_tool_iterations`` is reached.

Each turn runs in its own task; :meth:`Agent.turn` yields its events as they happen and
:meth:`Agent.abort` cancels it, including an in-flight provider call, tool or approval wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import itertools
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from clawseed_edge.api import (
    AbortedEvent,
    AgentError,
    AgentIterationLimit,
    AgentTurnAborted,
    ApprovalRequestEvent,
    ChatMessage,
    ChatRequest,
    ChatResponse,
    ChunkEvent,
    ClawseedError,
    DoneEvent,
    ErrorEvent,
    ErrorObserved,
    LlmRequest,
    LlmResponse,
    Memory,
    Observer,
    Peripheral,
    Provider,
    ProviderBadResponse,
    ProviderError,
    ProviderStreamInterrupted,
    SessionStore,
    StreamDone,
    TextDelta,
    ThinkingDelta,
    ThinkingEvent,
    Tool,
    ToolCall,
    ToolCallEvent,
    ToolCallReady,
    ToolContext,
    ToolExecuted,
    ToolResult,
    ToolResultEvent,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    Usage,
)

from .approval import approval_listener
from .dispatch import ToolDispatcher, select_dispatcher
from .history import History, time_prefix, truncate_tool_output
from .hooks import HookRunner
from .observer import NoopObserver
from .prompt import SystemPromptBuilder
from .registry import ToolRegistry

__all__ = ["Agent"]

log = logging.getLogger(__name__)

#: ``await listener(context, user_text, answer)`` after a completed turn.
TurnDoneListener = Callable[[ToolContext, str, str], Awaitable[None]]

_END = object()


@dataclass(slots=True)
class _Session:
    history: History
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass(slots=True, eq=False)
class _TurnHandle:
    session_id: str
    task: asyncio.Task[None] | None = None
    abort_reason: str | None = None
    error: BaseException | None = None
    finished: bool = False
    new_messages: list[ChatMessage] = field(default_factory=list)


class Agent:
    """Runs turns against a provider with tools, hooks and per-session history.

    Build one with :class:`~clawseed_edge.agent.builder.AgentBuilder`. One Agent serves many
    sessions; turns of the same session run one at a time, turns of different sessions run
    concurrently. A failed turn (provider error, iteration limit) ends with an ``ErrorEvent``
    and the Agent keeps serving later turns.

    Args:
        provider: The model.
        registry: The tools.
        dispatcher: How tools reach the model (default: chosen by the provider's capability).
        hooks: The hook pipeline, SecurityPolicy first (default: no hooks, no policy).
        observer: Receives observer events.
        prompt_builder: Builds the system prompt (default: a builder with no workspace).
        peripherals: Their ``describe()`` lines go in the prompt's hardware section.
        memory: If given, the best ``memory_recall_limit`` entries for the user's message are
            put in front of it (a failed or slow recall is skipped).
        session_store: If given, history is loaded from it on a session's first turn and each
            turn's new messages are appended to it.
        max_tool_iterations: Tool-call rounds per turn before the turn stops with
            ``agent_iteration_limit``.
        tool_timeout_s: Timeout of a tool that does not set its own ``timeout_s``.
        max_history: Messages kept per session.
        max_tool_output_chars: Longer tool outputs are cut (head and tail kept).
        clock: Wall clock for the time prefix (tests pass a fixed one).
    """

    def __init__(
        self,
        *,
        provider: Provider,
        registry: ToolRegistry | None = None,
        dispatcher: ToolDispatcher | None = None,
        hooks: HookRunner | None = None,
        observer: Observer | None = None,
        prompt_builder: SystemPromptBuilder | None = None,
        peripherals: Sequence[Peripheral] = (),
        memory: Memory | None = None,
        session_store: SessionStore | None = None,
        max_tool_iterations: int = 10,
        tool_timeout_s: float = 30.0,
        max_history: int = 50,
        max_tool_output_chars: int = 8000,
        memory_recall_limit: int = 3,
        clock: Callable[[], str] = time_prefix,
    ) -> None:
        if max_tool_iterations < 1:
            raise ValueError(f"max_tool_iterations must be at least 1, got {max_tool_iterations}")
        self.provider = provider
        self.registry = registry if registry is not None else ToolRegistry()
        self.dispatcher = dispatcher if dispatcher is not None else select_dispatcher(provider)
        self.hooks = hooks if hooks is not None else HookRunner()
        self.observer: Observer = observer if observer is not None else NoopObserver()
        self.prompt_builder = (
            prompt_builder if prompt_builder is not None else SystemPromptBuilder()
        )
        self.peripherals = tuple(peripherals)
        self.memory = memory
        self.session_store = session_store
        self.max_tool_iterations = max_tool_iterations
        self.tool_timeout_s = tool_timeout_s
        self.max_history = max_history
        self.max_tool_output_chars = max_tool_output_chars
        self.memory_recall_limit = memory_recall_limit
        self._time_prefix = clock
        self._sessions: dict[str, _Session] = {}
        self._running: dict[str, set[_TurnHandle]] = {}
        self._prompt: tuple[int, str] | None = None
        self._turn_ids = itertools.count(1)
        self._closers: list[Callable[[], Awaitable[None]]] = []
        self._done_listeners: list[TurnDoneListener] = []

    # --- public --------------------------------------------------------------------------

    @property
    def workspace_dir(self) -> Path | None:
        return self.prompt_builder.workspace_dir

    def system_prompt(self) -> str:
        """The system prompt for the current tool set (built once per registry version)."""
        cached = self._prompt
        version = self.registry.version
        if cached is not None and cached[0] == version:
            return cached[1]
        specs = self.registry.specs()
        hardware: list[str] = []
        for p in self.peripherals:
            describe = getattr(p, "describe", None)
            if callable(describe):
                try:
                    hardware.extend(str(describe()).splitlines())
                except Exception:
                    log.exception("peripheral %s failed to describe itself", p.name)
        prompt = self.prompt_builder.build(
            tool_specs=specs,
            tool_instructions=self.dispatcher.system_prompt_section(specs),
            hardware=hardware,
        )
        self._prompt = (version, prompt)
        return prompt

    def invalidate_prompt(self) -> None:
        """Rebuild the system prompt on the next turn (after editing workspace files)."""
        self._prompt = None

    def history(self, session_id: str = "default") -> tuple[ChatMessage, ...]:
        """The in-memory history of a session (empty if it has not run a turn)."""
        session = self._sessions.get(session_id)
        return session.history.messages if session is not None else ()

    def reset(self, session_id: str = "default") -> None:
        """Forget a session's in-memory history (the session store is not touched)."""
        self._sessions.pop(session_id, None)

    def is_running(self, session_id: str = "default") -> bool:
        return bool(self._running.get(session_id))

    def abort(self, session_id: str = "default", reason: str = "aborted by the caller") -> bool:
        """Abort the session's running turn(s); returns whether one was running.

        The turn's in-flight provider call, tool or approval wait is cancelled and the turn's
        stream ends with an ``AbortedEvent(reason)``.
        """
        handles = self._running.get(session_id)
        if not handles:
            return False
        for handle in list(handles):
            if handle.task is not None and not handle.task.done():
                handle.abort_reason = reason
                handle.task.cancel()
        return True

    def turn(
        self, text: str, *, session_id: str = "default", context: ToolContext | None = None
    ) -> AsyncGenerator[TurnEvent, None]:
        """Run one turn, yielding its events; the last is Done, Aborted or Error.

        ``context`` (channel, namespace) is passed to hooks and tools with its ``session_id``
        and ``turn_id`` set to this turn's.

        Closing the iterator early aborts the turn: after a ``break``, call its ``aclose()``
        (or iterate inside ``contextlib.aclosing(agent.turn(...))``); otherwise the turn runs on
        until the generator is garbage-collected.
        """
        return self._turn(text, session_id, context, _TurnHandle(session_id))

    async def run(
        self, text: str, *, session_id: str = "default", context: ToolContext | None = None
    ) -> str:
        """Run one turn and return the answer text.

        Raises:
            ProviderError: The provider failed (the original error).
            AgentIterationLimit: The model kept calling tools past the limit.
            AgentTurnAborted: The turn was aborted.
        """
        handle = _TurnHandle(session_id)
        last: TurnEvent | None = None
        async for event in self._turn(text, session_id, context, handle):
            last = event  # read to the end: the turn also persists its history
        if isinstance(last, DoneEvent):
            return last.text
        if isinstance(last, AbortedEvent):
            raise AgentTurnAborted(f"the turn was aborted: {last.reason}")
        if isinstance(handle.error, ClawseedError):
            raise handle.error
        if isinstance(last, ErrorEvent):
            if last.code == AgentIterationLimit.code:
                raise AgentIterationLimit(last.message)
            raise AgentError(last.message)
        raise AgentError("the turn ended without an answer")

    def on_turn_done(self, listener: TurnDoneListener) -> None:
        """Register ``await listener(context, user_text, answer)`` after every completed turn.

        Runs in the turn's task after its history is saved (the caller already has the
        ``DoneEvent``); each listener is bounded by 10 s and its failures are logged, never
        raised. The assembler uses it for memory consolidation and hygiene.
        """
        self._done_listeners.append(listener)

    def on_close(self, closer: Callable[[], Awaitable[None]]) -> None:
        """Register a resource closer that :meth:`aclose` awaits (last registered, first run).

        The assembler registers the peripherals (safe state, disconnect) and memory here.
        """
        self._closers.append(closer)

    async def aclose(self) -> None:
        """Abort running turns, close the provider, then run the registered closers.

        Idempotent: closers run once; a failing closer is logged and the rest still run.
        """
        tasks: list[asyncio.Task[None]] = []
        for session_id, handles in list(self._running.items()):
            self.abort(session_id, "the agent is closing")
            tasks.extend(h.task for h in handles if h.task is not None)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        await self.provider.aclose()
        closers, self._closers = self._closers, []
        for closer in reversed(closers):
            try:
                await closer()
            except Exception:
                log.exception("a resource closer failed while the agent was closing")

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- the turn task -------------------------------------------------------------------

    async def _turn(
        self, text: str, session_id: str, context: ToolContext | None, handle: _TurnHandle
    ) -> AsyncGenerator[TurnEvent, None]:
        queue: asyncio.Queue[object] = asyncio.Queue()
        task = asyncio.create_task(
            self._run_turn(text, session_id, context, handle, queue.put_nowait)
        )
        handle.task = task
        task.add_done_callback(lambda _t: queue.put_nowait(_END))
        running = self._running.setdefault(session_id, set())
        running.add(handle)
        try:
            while True:
                event = await queue.get()
                if event is _END:
                    break
                if isinstance(event, DoneEvent | ErrorEvent):
                    handle.finished = True
                yield event  # type: ignore[misc]
            if task.cancelled():
                yield AbortedEvent(handle.abort_reason or "cancelled")
            elif (exc := task.exception()) is not None:  # a bug in the engine itself
                yield ErrorEvent(f"internal error: {type(exc).__name__}: {exc}", AgentError.code)
        finally:
            running.discard(handle)
            if not running:
                self._running.pop(session_id, None)
            if not task.done():
                if not handle.finished:
                    handle.abort_reason = handle.abort_reason or "the caller stopped reading"
                    task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task  # a finished turn is only saving its history

    async def _run_turn(
        self,
        text: str,
        session_id: str,
        context: ToolContext | None,
        handle: _TurnHandle,
        emit: Callable[[object], None],
    ) -> None:
        approval_listener.set(lambda request: emit(ApprovalRequestEvent(request)))
        turn_id = str(next(self._turn_ids))
        if context is None:
            context = ToolContext(session_id=session_id, turn_id=turn_id)
        else:
            context = replace(context, session_id=session_id, turn_id=turn_id)
        started = time.perf_counter()
        self._record(TurnStarted(session_id, turn_id))
        usage = Usage()
        iterations = 0
        outcome: str = "error"
        final_answer = ""
        session: _Session | None = None
        try:
            session = await self._session(session_id)
            async with session.lock:
                history = session.history

                def commit(messages: Sequence[ChatMessage]) -> None:
                    history.extend(messages)
                    handle.new_messages.extend(messages)

                commit([ChatMessage.user(await self._user_content(text, context))])
                history.trim()
                system_prompt = self.system_prompt()
                tools = self.dispatcher.tools_for_request(self.registry.specs())
                for iterations in range(1, self.max_tool_iterations + 1):
                    request = ChatRequest(history.for_request(system_prompt), tools)
                    response = await self._ask(request, emit)
                    usage = usage + response.usage
                    answer, calls = self.dispatcher.parse_response(response)
                    if answer and not (self.dispatcher.streams_text and self._streaming()):
                        emit(ChunkEvent(answer))
                    if not calls:
                        commit([self.dispatcher.assistant_message(response, answer, ())])
                        outcome = "done"
                        final_answer = answer
                        emit(
                            DoneEvent(
                                answer,
                                usage,
                                iterations,
                                response.provider or self.provider.name,
                                response.model or self.provider.model,
                            )
                        )
                        return
                    results: list[tuple[ToolCall, ToolResult]] = []
                    try:
                        for call in calls:
                            results.append(await self._run_call(call, context, emit))
                    except asyncio.CancelledError:
                        # Keep what ran (a relay may have switched): every call gets a result.
                        results += [
                            (c, ToolResult.fail("the turn was aborted before this call finished"))
                            for c in calls[len(results) :]
                        ]
                        raise
                    finally:
                        commit(
                            [
                                self.dispatcher.assistant_message(response, answer, calls),
                                *self.dispatcher.result_messages(results),
                            ]
                        )
                outcome = "limit"
                emit(
                    ErrorEvent(
                        f"Stopped after {self.max_tool_iterations} rounds of tool calls without "
                        f"a final answer (max_tool_iterations={self.max_tool_iterations}). The "
                        "tool results so far are kept; ask again to continue, or raise "
                        "max_tool_iterations.",
                        AgentIterationLimit.code,
                    )
                )
        except asyncio.CancelledError:
            outcome = "aborted"
            raise
        except ClawseedError as exc:
            handle.error = exc
            code = getattr(exc, "code", "error")
            component = "provider" if isinstance(exc, ProviderError) else "agent"
            self._record(ErrorObserved(component, str(exc), code))
            emit(ErrorEvent(str(exc), code))
        except Exception as exc:
            log.exception("turn %s of session %s failed", turn_id, session_id)
            handle.error = exc
            self._record(ErrorObserved("agent", str(exc), AgentError.code))
            emit(ErrorEvent(f"internal error: {type(exc).__name__}: {exc}", AgentError.code))
        finally:
            if session is not None:
                session.history.trim()
            self._record(
                TurnEnded(
                    session_id,
                    turn_id,
                    outcome,  # type: ignore[arg-type]
                    iterations,
                    (time.perf_counter() - started) * 1000.0,
                    usage,
                )
            )
            await self._persist(session_id, handle.new_messages)
            if outcome == "done":
                await self._notify_done(context, text, final_answer)

    async def _notify_done(self, context: ToolContext, text: str, answer: str) -> None:
        for listener in self._done_listeners:
            try:
                async with asyncio.timeout(10.0):
                    await listener(context, text, answer)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("an after-turn listener failed (the turn itself succeeded)")

    def _streaming(self) -> bool:
        return bool(getattr(self.provider.capabilities, "streaming", False))

    async def _user_content(self, text: str, context: ToolContext) -> str:
        content = self._time_prefix() + text
        memory = self.memory
        if memory is None or self.memory_recall_limit <= 0 or not text.strip():
            return content
        try:
            async with asyncio.timeout(2.0):
                entries = await memory.recall(
                    text, limit=self.memory_recall_limit, namespace=context.namespace
                )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("memory recall failed (%s); answering without it", exc)
            return content
        if not entries:
            return content
        lines = "\n".join(f"- {e.key}: {e.content}" for e in entries)
        return f"[Memory]\n{lines}\n\n{content}"

    # --- provider ------------------------------------------------------------------------

    async def _ask(self, request: ChatRequest, emit: Callable[[object], None]) -> ChatResponse:
        provider = self.provider
        self._record(
            LlmRequest(provider.name, provider.model, len(request.messages), len(request.tools))
        )
        started = time.perf_counter()
        try:
            if self._streaming():
                response = await self._stream(request, emit)
            else:
                response = await provider.chat(request)
                if response.thinking:
                    emit(ThinkingEvent(response.thinking))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            latency = (time.perf_counter() - started) * 1000.0
            self._record(
                LlmResponse(provider.name, provider.model, latency, success=False, error=str(exc))
            )
            if isinstance(exc, ProviderError):
                raise
            raise ProviderBadResponse(
                f"provider {provider.name!r} failed: {type(exc).__name__}: {exc}",
                provider=provider.name,
                model=provider.model,
            ) from exc
        latency = (time.perf_counter() - started) * 1000.0
        self._record(
            LlmResponse(
                response.provider or provider.name,
                response.model or provider.model,
                latency,
                response.usage,
            )
        )
        return response

    async def _stream(self, request: ChatRequest, emit: Callable[[object], None]) -> ChatResponse:
        live = self.dispatcher.streams_text
        text: list[str] = []
        calls: list[ToolCall] = []
        saw_thinking = False
        stream = self.provider.stream(request)
        try:
            async for event in stream:
                if isinstance(event, TextDelta):
                    text.append(event.text)
                    if live and event.text:
                        emit(ChunkEvent(event.text))
                elif isinstance(event, ThinkingDelta):
                    saw_thinking = True
                    emit(ThinkingEvent(event.text))
                elif isinstance(event, ToolCallReady):
                    calls.append(event.call)
                elif isinstance(event, StreamDone):
                    if event.response.thinking and not saw_thinking:
                        emit(ThinkingEvent(event.response.thinking))
                    return event.response
        except (asyncio.CancelledError, ProviderError):
            raise
        except Exception as exc:
            if not text:
                raise
            raise ProviderStreamInterrupted(
                f"the stream from {self.provider.name!r} broke after text was shown "
                f"({type(exc).__name__}: {exc}); ask again",
                provider=self.provider.name,
                model=self.provider.model,
            ) from exc
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        # A stream that ended without StreamDone: assemble what arrived.
        return ChatResponse(text="".join(text), tool_calls=tuple(calls))

    # --- tools ---------------------------------------------------------------------------

    async def _run_call(
        self, call: ToolCall, context: ToolContext, emit: Callable[[object], None]
    ) -> tuple[ToolCall, ToolResult]:
        started = time.perf_counter()
        tool = self.registry.get(call.name)
        if tool is None:
            emit(ToolCallEvent(call))
            result = ToolResult.fail(self._unknown_tool(call.name))
        else:
            outcome = await self.hooks.run_before(call, tool, context)
            call = outcome.call
            emit(ToolCallEvent(call))
            if outcome.cancelled:
                reason = outcome.reason
                if outcome.hook != getattr(self.hooks.policy, "name", None):
                    reason = f"Cancelled by hook {outcome.hook!r}: {reason}"
                result = ToolResult.fail(reason)
            else:
                result = await self._execute(tool, call, context)
            await self.hooks.run_after(call, result, context)
        duration = (time.perf_counter() - started) * 1000.0
        self._record(ToolExecuted(call.name, duration, result.success, result.error))
        emit(ToolResultEvent(call, result, duration))
        return call, result

    async def _execute(self, tool: Tool, call: ToolCall, context: ToolContext) -> ToolResult:
        timeout = getattr(tool, "timeout_s", None) or self.tool_timeout_s
        try:
            async with asyncio.timeout(timeout) as scope:
                result = await tool.execute(call.arguments, context)
        except asyncio.CancelledError:
            raise
        except TimeoutError as exc:
            if scope.expired():
                return ToolResult.fail(
                    f"tool {call.name!r} did not finish within {timeout:g} s and was stopped; "
                    "try again with a smaller request, or raise the tool's timeout"
                )
            return ToolResult.fail(f"tool {call.name!r} timed out: {exc}")
        except ClawseedError as exc:
            return ToolResult.fail(f"{exc} [{exc.code}]")
        except Exception as exc:
            log.warning("tool %s raised %s", call.name, exc, exc_info=True)
            return ToolResult.fail(f"tool {call.name!r} failed: {type(exc).__name__}: {exc}")
        if not isinstance(result, ToolResult):
            return ToolResult.fail(
                f"tool {call.name!r} returned {type(result).__name__} instead of a ToolResult "
                "(a bug in the tool)"
            )
        limit = self.max_tool_output_chars
        if len(result.output) > limit:
            result = replace(result, output=truncate_tool_output(result.output, limit))
        if result.error is not None and len(result.error) > limit:
            result = replace(result, error=truncate_tool_output(result.error, limit))
        return result

    def _unknown_tool(self, name: str) -> str:
        names = self.registry.names()
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        listed = ", ".join(names[:30]) + (" ..." if len(names) > 30 else "")
        return f"unknown tool {name!r}.{hint} Available tools: {listed or 'none'}."

    # --- sessions ------------------------------------------------------------------------

    async def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is not None:
            return session
        loaded: list[ChatMessage] = []
        if self.session_store is not None:
            try:
                loaded = [
                    m
                    for m in await self.session_store.load_history(session_id)
                    if m.role != "system"
                ]
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("could not load history of session %s: %s", session_id, exc)
                self._record(ErrorObserved("session_store", str(exc)))
        session = self._sessions.get(session_id)  # another turn may have created it meanwhile
        if session is None:
            history = History(self.max_history, loaded)
            history.trim()
            session = self._sessions[session_id] = _Session(history)
        return session

    async def _persist(self, session_id: str, messages: list[ChatMessage]) -> None:
        if self.session_store is None or not messages:
            return
        try:
            await self.session_store.append_history(session_id, list(messages))
        except Exception as exc:
            log.warning("could not save history of session %s: %s", session_id, exc)
            self._record(ErrorObserved("session_store", str(exc)))

    def _record(self, event: object) -> None:
        try:
            self.observer.record(event)  # type: ignore[arg-type]
        except Exception:
            log.exception("observer failed")
