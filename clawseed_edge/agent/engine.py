"""The turn engine: one message in, a stream of events out.

A turn: the user message (with a time prefix, at most ``max_message_chars``) joins the
session's history; the provider is asked with the stable system prompt, and with recalled
memory in front of the user message in this turn's requests only; the dispatcher reads the
tool calls; each call's arguments are bounded and checked against the tool's schema, then it
goes through the hook pipeline (SecurityPolicy first), runs with a timeout, and its result goes
back to the model; this repeats until the model answers in plain text or
``max_tool_iterations`` is reached.

Each turn runs in its own task; :meth:`Agent.turn` yields its events as they happen and
:meth:`Agent.abort` cancels it, including an in-flight provider call, tool or approval wait.

Layout: this module holds the Agent (its sessions, its turn tasks, its lifecycle); how one turn
goes is :mod:`.turn` (bookkeeping -> tool rounds -> one round), one model request
:mod:`.model_call`, one tool call :mod:`.tool_run`, and reading a response :mod:`.toolcalls`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from pathlib import Path

from clawseed_edge.api import (
    AbortedEvent,
    AgentClosed,
    AgentError,
    AgentIterationLimit,
    AgentTurnAborted,
    ChatMessage,
    ClawseedError,
    DoneEvent,
    ErrorEvent,
    Lifecycle,
    Memory,
    Observer,
    ObserverEvent,
    Peripheral,
    Provider,
    SessionStore,
    ToolContext,
    TurnEvent,
)

from . import redact
from .arguments import SchemaValidator
from .history import time_prefix
from .hooks import HookRunner
from .intents import LocalIntents
from .observer import NoopObserver
from .prompt import SystemPromptBuilder
from .registry import ToolRegistry
from .sessions import Sessions
from .toolcalls import ToolDispatcher, select_dispatcher
from .turn import TurnDoneListener, TurnHandle, TurnRunner

__all__ = ["Agent"]

log = logging.getLogger(__name__)

_END = object()


def _is_open(peripheral: Peripheral) -> bool:
    """Whether ``peripheral`` holds hardware now (its ``state``, else ``connected``, else yes)."""
    state = getattr(peripheral, "state", None)
    if isinstance(state, str):
        return state == Lifecycle.OPEN
    connected = getattr(peripheral, "connected", None)
    return connected if isinstance(connected, bool) else True


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
            put in front of it in this turn's requests, within ``max_recall_chars`` (most
            relevant first), and never stored in history (a failed or slow recall is skipped).
        session_store: If given, history is loaded from it on a session's first turn and each
            turn's new messages are appended to it.
        max_tool_iterations: Tool-call rounds per turn before the turn stops with
            ``agent_iteration_limit``.
        tool_timeout_s: Timeout of a tool that does not set its own ``timeout_s``.
        max_history: Messages kept per session.
        max_tool_output_chars: Longer tool outputs are cut (head and tail kept).
        memory_recall_limit: How many memory entries to recall per turn (0: none).
        max_message_chars: Longer user messages are refused with
            :class:`~clawseed_edge.api.AgentMessageTooLong` before anything runs.
        max_recall_chars: The character budget of the recalled memory in one request.
        max_tool_argument_chars: The most characters (as JSON) one call's arguments may take;
            a bigger call, or one nested deeper than 32 levels, is refused unread.
        scrub: Redacts credentials in text: every tool result (output and error) passes it
            before it is shown, kept in history or sent to the model, and so do the user text
            and the answer handed to the after-turn listeners (memory consolidation). Default:
            :func:`~clawseed_edge.agent.redact.scrub` (known key shapes, bearer tokens,
            ``NAME=value`` secrets); the assembler passes a scrubber that also knows the
            configured secrets' values.
        clock: Wall clock for the time prefix (tests pass a fixed one).
        close_timeout_s: Bound of each step of :meth:`aclose` (the turns' abort, each
            peripheral's safe state, each closer, the provider), in seconds.
        local_intents: The local-intent stage (:class:`~.intents.LocalIntents`): a simple
            command it understands whole runs without the model, through the same policy.
        max_tools: At most this many tools offered per request (:mod:`.offer`); None: 8 for
            a provider running a small local model, all otherwise.
        prompt_from: An agent built from the same parts (a conversation's: the service's)
            whose system prompt this one uses while both have the same tools and dispatcher.

    Lifecycle: an Agent is ``OPEN`` when built (it has nothing to open); :meth:`aclose` takes it
    through ``CLOSING`` to ``CLOSED``, and from ``CLOSING`` on it refuses turns with
    :class:`~clawseed_edge.api.AgentClosed`.
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
        max_message_chars: int = 32_000,
        max_recall_chars: int = 4_000,
        max_tool_argument_chars: int = 65_536,
        scrub: Callable[[str], str] | None = None,
        clock: Callable[[], str] = time_prefix,
        close_timeout_s: float = 5.0,
        prompt_from: Agent | None = None,
        local_intents: LocalIntents | None = None,
        max_tools: int | None = None,
    ) -> None:
        if max_tool_iterations < 1:
            raise ValueError(f"max_tool_iterations must be at least 1, got {max_tool_iterations}")
        for name, value in (
            ("max_message_chars", max_message_chars),
            ("max_tool_argument_chars", max_tool_argument_chars),
        ):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        if max_recall_chars < 0:
            raise ValueError(
                f"max_recall_chars must be 0 (no recall) or more, got {max_recall_chars}"
            )
        if not close_timeout_s > 0:
            raise ValueError(f"close_timeout_s must be a positive number, got {close_timeout_s}")
        self.provider = provider
        self.local_intents = local_intents
        self.max_tools = max_tools
        self.registry = registry if registry is not None else ToolRegistry()
        self.dispatcher = dispatcher if dispatcher is not None else select_dispatcher(provider)
        # A chosen dispatcher follows the provider: a model found to lack tools at run time
        # (an Ollama "does not support tools" answer) flips ``native_tools``.
        self._dispatcher_follows_provider = dispatcher is None
        self._native_tools = _native_tools(provider)
        self.hooks = hooks if hooks is not None else HookRunner()
        self.observer: Observer = observer if observer is not None else NoopObserver()
        self.prompt_builder = (
            prompt_builder if prompt_builder is not None else SystemPromptBuilder()
        )
        self.peripherals = tuple(peripherals)
        self.memory: Memory | None = memory
        self.session_store = session_store
        self.max_tool_iterations = max_tool_iterations
        self.tool_timeout_s = tool_timeout_s
        self.max_tool_output_chars = max_tool_output_chars
        self.memory_recall_limit = memory_recall_limit
        self.max_message_chars = max_message_chars
        self.max_recall_chars = max_recall_chars
        self.max_tool_argument_chars = max_tool_argument_chars
        self.schema_validator = SchemaValidator()
        self.scrub: Callable[[str], str] = scrub if scrub is not None else redact.scrub
        self._time_prefix = clock
        #: Each session's history (loaded from ``session_store`` on first use).
        self.sessions = Sessions(session_store, max_history, self._record)
        self._running: dict[str, set[TurnHandle]] = {}
        self._prompt: tuple[int, str] | None = None
        self._turn_ids = itertools.count(1)
        self._closers: list[Callable[[], Awaitable[None]]] = []
        self._done_listeners: list[TurnDoneListener] = []
        self.close_timeout_s = close_timeout_s
        self._prompt_from = prompt_from
        self._state = Lifecycle.OPEN
        self._closed: asyncio.Event | None = None

    # --- public --------------------------------------------------------------------------

    @property
    def state(self) -> Lifecycle:
        """``OPEN`` until :meth:`aclose` starts, then ``CLOSING``, then ``CLOSED``."""
        return self._state

    @property
    def max_history(self) -> int:
        """Messages kept per session."""
        return self.sessions.max_history

    @max_history.setter
    def max_history(self, value: int) -> None:
        self.sessions.max_history = value

    @property
    def workspace_dir(self) -> Path | None:
        return self.prompt_builder.workspace_dir

    def system_prompt(self) -> str:
        """The system prompt for the current tool set (built once per registry version)."""
        source = self._prompt_from
        if source is not None and self._same_tools_as(source):
            return source.system_prompt()  # one prompt, built once, for every such conversation
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

    def _same_tools_as(self, other: Agent) -> bool:
        same_dispatcher = type(self.dispatcher) is type(other.dispatcher)
        return same_dispatcher and self.registry.names() == other.registry.names()

    def refresh_dispatcher(self) -> None:
        """Pick the dispatcher again if the provider's ``native_tools`` changed since the last
        pick (called at the start of every turn; a dispatcher given to the constructor stays)."""
        if not self._dispatcher_follows_provider:
            return
        native = _native_tools(self.provider)
        if native != self._native_tools:
            self._native_tools = native
            self.dispatcher = select_dispatcher(self.provider)
            self._prompt = None  # the tool instructions in the prompt change with it

    def invalidate_prompt(self) -> None:
        """Rebuild the system prompt on the next turn (after editing workspace files)."""
        self._prompt = None

    def history(self, session_id: str = "default") -> tuple[ChatMessage, ...]:
        """The in-memory history of a session (empty if it has not run a turn)."""
        return self.sessions.history(session_id)

    def reset(self, session_id: str = "default") -> None:
        """Forget a session's in-memory history (the session store is not touched)."""
        self.sessions.reset(session_id)

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

    def abort_every(self, reason: str = "aborted by the caller") -> int:
        """Abort the running turns of every session (an emergency stop); returns how many
        sessions had one. Does not wait for them to end."""
        return sum(self.abort(session_id, reason) for session_id in list(self._running))

    def turn(
        self, text: str, *, session_id: str = "default", context: ToolContext | None = None
    ) -> AsyncGenerator[TurnEvent, None]:
        """Run one turn, yielding its events; the last is Done, Aborted or Error.

        ``context`` (channel, namespace) is passed to hooks and tools with its ``session_id``
        and ``turn_id`` set to this turn's.

        Closing the iterator early aborts the turn: after a ``break``, call its ``aclose()``
        (or iterate inside ``contextlib.aclosing(agent.turn(...))``); otherwise the turn runs on
        until the generator is garbage-collected.

        Raises:
            AgentClosed: The agent is closing or closed (here, or on the first ``__anext__``
                if it closed in between).
        """
        self._check_open()
        return self._turn(text, session_id, context, TurnHandle(session_id))

    async def run(
        self, text: str, *, session_id: str = "default", context: ToolContext | None = None
    ) -> str:
        """Run one turn and return the answer text.

        Raises:
            ProviderError: The provider failed (the original error).
            AgentIterationLimit: The model kept calling tools past the limit.
            AgentTurnAborted: The turn was aborted.
            AgentClosed: The agent is closing or closed.

        Cancel-safe: cancelling aborts the turn (its history keeps what ran).
        """
        self._check_open()
        handle = TurnHandle(session_id)
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
            raise AgentError(last.message) from handle.error
        raise AgentError("the turn ended without an answer")

    def on_turn_done(self, listener: TurnDoneListener) -> None:
        """Register ``await listener(context, user_text, answer)`` after every completed turn.

        Runs in the turn's task after its history is saved (the caller already has the
        ``DoneEvent``); each listener is bounded by 10 s and its failures are logged, never
        raised. The assembler uses it for memory consolidation and hygiene.
        """
        self._done_listeners.append(listener)

    @property
    def turn_done_listeners(self) -> tuple[TurnDoneListener, ...]:
        """The after-turn listeners registered so far (an agent built from the same parts,
        a conversation's, registers the same ones)."""
        return tuple(self._done_listeners)

    def on_close(self, closer: Callable[[], Awaitable[None]]) -> None:
        """Register a resource closer that :meth:`aclose` awaits (last registered, first run).

        The assembler registers the peripherals (safe state, disconnect) and memory here.
        """
        self._closers.append(closer)

    async def aclose(self) -> None:
        """Close the agent: stop accepting, abort turns, safe state, then the rest.

        The order matters for hardware: new turns are refused first, running turns are aborted
        (a relay switched by a tool stays recorded in history), every peripheral drives its
        outputs to their safe values, and only then do the registered closers (last registered,
        first run: peripherals' disconnect, memory) and the provider close. Each step is
        bounded by ``close_timeout_s``; a step that fails or hangs is logged and the next one
        still runs, so a hanging closer never skips the safe state.

        Idempotent; a second caller waits for the first to finish. Not cancel-safe: cancelling
        it leaves later steps undone (the peripherals' own watchdogs still apply).
        """
        if self._state is not Lifecycle.OPEN:
            if self._closed is not None:
                await self._closed.wait()
            return
        self._state = Lifecycle.CLOSING
        self._closed = asyncio.Event()
        try:
            await self._bounded("abort the running turns", self._abort_all())
            for p in self.peripherals:
                if _is_open(p):  # one never connected has no output to make safe
                    await self._bounded(f"safe state of {p.name!r}", p.apply_safe_state())
            closers, self._closers = self._closers, []
            for closer in reversed(closers):
                await self._bounded("a resource closer", closer())
            await self._bounded(f"close provider {self.provider.name!r}", self.provider.aclose())
        finally:
            self._state = Lifecycle.CLOSED
            self._closed.set()

    async def _abort_all(self) -> None:
        tasks: list[asyncio.Task[None]] = []
        for session_id, handles in list(self._running.items()):
            self.abort(session_id, "the agent is closing")
            tasks.extend(h.task for h in handles if h.task is not None)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _bounded(self, step: str, work: Awaitable[None]) -> None:
        try:
            async with asyncio.timeout(self.close_timeout_s):
                await work
        except TimeoutError:
            log.error(
                "closing the agent: %s did not finish within %g s; going on without it",
                step,
                self.close_timeout_s,
            )
        except Exception:
            log.exception("closing the agent: %s failed; going on with the next step", step)

    def _check_open(self) -> None:
        if self._state is not Lifecycle.OPEN:
            raise AgentClosed(
                f"the agent is {self._state.value} and takes no more turns; "
                "assemble or build a new one"
            )

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- the turn task -------------------------------------------------------------------

    async def _turn(
        self, text: str, session_id: str, context: ToolContext | None, handle: TurnHandle
    ) -> AsyncGenerator[TurnEvent, None]:
        self._check_open()  # it may have closed between turn() and the first __anext__
        queue: asyncio.Queue[object] = asyncio.Queue()
        runner = TurnRunner(
            self,
            self.sessions,
            self._record,
            text,
            session_id,
            str(next(self._turn_ids)),
            context,
            handle,
            queue.put_nowait,
            time_prefix=self._time_prefix,
            done_listeners=self._done_listeners,
        )
        task = asyncio.create_task(runner.run())
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

    def _record(self, event: ObserverEvent) -> None:
        try:
            self.observer.record(event)
        except Exception:
            log.exception("observer failed")


def _native_tools(provider: Provider) -> bool:
    capabilities = getattr(provider, "capabilities", None)
    return capabilities is None or bool(getattr(capabilities, "native_tools", True))
