"""The protocols every layer implements or consumes.

They are :class:`typing.Protocol` classes checked structurally: a third-party provider, tool or
peripheral does not need to inherit anything from us. :class:`BaseTool` is offered as a
convenience for tool authors who want the defaults.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from .events import ApprovalDecision, ApprovalRequest, ObserverEvent, StreamEvent
from .types import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    DeviceAction,
    ResourceAccess,
    RiskClass,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolSpec,
)

__all__ = [
    "ActionLedger",
    "Approver",
    "BaseTool",
    "EmbeddingProvider",
    "HealthStatus",
    "Hook",
    "HookDecision",
    "HookOutcome",
    "Memory",
    "MemoryEntry",
    "Observer",
    "Peripheral",
    "Provider",
    "ProviderCapabilities",
    "Redactor",
    "SessionInfo",
    "SessionStore",
    "Tool",
    "ToolRegistry",
]


# --- providers --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProviderCapabilities:
    """What a provider (with its configured model) can do.

    Attributes:
        native_tools: It takes tool specs and returns structured tool calls. Without it the
            engine describes tools in the prompt and parses calls from text.
        vision: It accepts images on user messages.
        streaming: ``stream()`` yields text as it is produced (otherwise one final chunk).
        embeddings: It implements :class:`EmbeddingProvider`.
    """

    native_tools: bool = True
    vision: bool = False
    streaming: bool = True
    embeddings: bool = False


@runtime_checkable
class Provider(Protocol):
    """A model that answers chat requests.

    Implementations raise :class:`~clawseed_edge.api.errors.ProviderError` subclasses, never
    library exceptions.
    """

    name: str
    model: str

    @property
    def capabilities(self) -> ProviderCapabilities: ...

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer one request. Safe to cancel: the HTTP request is abandoned."""
        ...

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Answer one request as events; the last event is a ``StreamDone``."""
        ...

    async def aclose(self) -> None:
        """Release connections. Idempotent."""
        ...


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into vectors (Ollama ``/api/embed``, OpenAI ``/v1/embeddings``)."""

    @property
    def embedding_dimensions(self) -> int | None:
        """The vector length, once known (None before the first call)."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...


# --- tools ------------------------------------------------------------------------------------


@runtime_checkable
class Tool(Protocol):
    """Something the model can call.

    Attributes:
        name: Matches ``^[a-zA-Z0-9_-]{1,64}$`` (what every provider accepts).
        description: What it does, for the model.
        parameters: JSON schema of the arguments (an ``object`` schema).
        risk: The SecurityPolicy's class for it.
        timeout_s: Per-call timeout in seconds, or None for the engine's default.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    risk: RiskClass
    timeout_s: float | None

    def spec(self) -> ToolSpec: ...

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction | None:
        """What the call would do to hardware, or None for non-hardware tools."""
        ...

    def describe_access(self, arguments: Mapping[str, Any]) -> ResourceAccess | None:
        """Which files/commands/hosts the call would touch, or None if none."""
        ...

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        """Run the call. Return a failed ToolResult for expected failures; exceptions are
        caught by the engine and turned into failed results."""
        ...


class BaseTool:
    """Defaults for a tool: subclass, set the class attributes and implement ``execute``.

    ``external_content`` (optional on any tool, read with ``getattr``): True for a tool whose
    result is text from outside the device and its user (a web page, an HTTP answer, a remote
    or MCP tool). Once such a tool ran in a turn, the SecurityPolicy auto-approves nothing more
    in that turn: a fetched page cannot make the model store a standing instruction in memory
    or switch a device on its own.

    ``schema_revision`` and ``offered`` (optional, read with ``getattr``): a tool whose schema
    changes while it is registered (a device tool whose enum follows other nodes' devices)
    has an int ``schema_revision`` that grows on every change, and the registry rebuilds its
    specs then; while ``offered`` is False it is left out of the list the model sees.
    """

    name: str = ""
    description: str = ""
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
    risk: RiskClass = RiskClass.READ
    timeout_s: float | None = None
    external_content: bool = False

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction | None:
        return None

    def describe_access(self, arguments: Mapping[str, Any]) -> ResourceAccess | None:
        return None

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        raise NotImplementedError(f"tool {self.name!r} does not implement execute()")


@runtime_checkable
class ToolRegistry(Protocol):
    """Tools by name, with cached specs."""

    def get(self, name: str) -> Tool | None: ...

    def names(self) -> list[str]: ...

    def specs(self) -> tuple[ToolSpec, ...]: ...

    def __contains__(self, name: object) -> bool: ...

    def __len__(self) -> int: ...


# --- hooks ------------------------------------------------------------------------------------

HookOutcome = Literal["continue", "modify", "cancel"]


@dataclass(frozen=True, slots=True)
class HookDecision:
    """What a before-hook decided: continue, continue with a modified call, or cancel.

    Use the constructors :meth:`proceed`, :meth:`modify` and :meth:`cancel`.
    """

    outcome: HookOutcome
    call: ToolCall | None = None
    reason: str = ""
    #: A stable code for a cancel (``"estop_latched"``); it becomes the result's ``code``.
    code: str | None = None

    @classmethod
    def proceed(cls) -> HookDecision:
        return _CONTINUE

    @classmethod
    def modify(cls, call: ToolCall, reason: str = "") -> HookDecision:
        return cls("modify", call, reason)

    @classmethod
    def cancel(cls, reason: str, code: str | None = None) -> HookDecision:
        return cls("cancel", None, reason, code)


_CONTINUE = HookDecision("continue")


@runtime_checkable
class Hook(Protocol):
    """A step of the hook pipeline around every tool call.

    ``before_tool`` runs in order before the call; the first ``cancel`` stops the chain and the
    call becomes a failed result carrying the reason. ``after_tool`` observes only.
    """

    name: str

    async def before_tool(
        self, call: ToolCall, tool: Tool | None, context: ToolContext
    ) -> HookDecision: ...

    async def after_tool(
        self, call: ToolCall, result: ToolResult, context: ToolContext
    ) -> None: ...


@runtime_checkable
class Approver(Protocol):
    """Asks a human whether a call may run (the CLI on the terminal, the gateway on the phone).

    ``request`` must be safe to cancel; the engine bounds it with a timeout and treats a
    timeout as a refusal.
    """

    async def request(self, request: ApprovalRequest) -> ApprovalDecision: ...


# --- observer ---------------------------------------------------------------------------------


@runtime_checkable
class Redactor(Protocol):
    """Hides credentials in text before it is stored or shown (the agent's ``Scrubber``).

    Stores take one so that nothing they write to disk holds a configured secret, without
    depending on the layer that builds it.
    """

    def scrub(self, text: str) -> str:
        """``text`` with every credential it finds redacted."""
        ...

    def scrub_data(self, value: Any) -> Any:
        """A copy of JSON-like ``value`` with every string in it scrubbed."""
        ...


@runtime_checkable
class Observer(Protocol):
    """Receives events; ``record`` must be cheap and must not raise or block."""

    def record(self, event: ObserverEvent) -> None: ...


# --- memory -----------------------------------------------------------------------------------


@dataclass(slots=True)
class MemoryEntry:
    """One remembered fact.

    Attributes:
        key: Unique within its namespace; storing the same key again updates it.
        content: The text.
        category: ``core`` (never pruned), ``daily``, ``conversation`` or a custom name.
        namespace: Isolation scope (one per user or application).
        session_id: The session that wrote it, if scoped to one.
        importance: 0..1.
        created_at: Unix seconds.
        updated_at: Unix seconds.
        metadata: Free-form JSON-able data.
        score: Relevance, set on recall results only.
    """

    key: str
    content: str
    category: str = "core"
    namespace: str = "default"
    session_id: str | None = None
    importance: float = 0.5
    created_at: float = 0.0
    updated_at: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)
    score: float | None = None


@runtime_checkable
class Memory(Protocol):
    """A store of facts that survives restarts."""

    async def store(self, entry: MemoryEntry) -> MemoryEntry:
        """Insert or update by (namespace, key); returns the stored entry with its times."""
        ...

    async def recall(
        self,
        query: str,
        *,
        limit: int = 5,
        namespace: str = "default",
        session_id: str | None = None,
        category: str | None = None,
    ) -> list[MemoryEntry]:
        """The most relevant entries for ``query``, best first, each with ``score`` set."""
        ...

    async def get(self, key: str, *, namespace: str = "default") -> MemoryEntry | None: ...

    async def list(
        self,
        *,
        namespace: str | None = "default",
        category: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
    ) -> list[MemoryEntry]: ...

    async def forget(self, key: str, *, namespace: str = "default") -> bool:
        """Delete by key; returns whether something was deleted."""
        ...

    async def count(self, *, namespace: str | None = None) -> int: ...

    async def health_check(self) -> bool: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A stored conversation."""

    session_id: str
    title: str
    message_count: int
    updated_at: float


@runtime_checkable
class SessionStore(Protocol):
    """Conversation history per session, so a reconnecting client resumes its conversation."""

    async def load_history(self, session_id: str, *, limit: int | None = None) -> list[ChatMessage]:
        """The session's messages, oldest first; with ``limit``, only the newest ``limit``."""
        ...

    async def append_history(self, session_id: str, messages: Sequence[ChatMessage]) -> None: ...

    async def list_sessions(self, *, limit: int = 50) -> list[SessionInfo]: ...

    async def delete_session(self, session_id: str) -> bool: ...


# --- peripherals ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HealthStatus:
    """The result of a health check."""

    healthy: bool
    detail: str = ""


@runtime_checkable
class Peripheral(Protocol):
    """A board or bus whose capabilities become tools.

    Attributes:
        name: Unique among configured peripherals (``pi``, ``nucleo``).
        board_type: The board id from ``boards/*.toml`` (``rpi4b``, ``nucleo-f401re``, ``sim``).
    """

    name: str
    board_type: str

    async def connect(self) -> None:
        """Open the hardware. Raises HardwareError subclasses with what to check."""
        ...

    async def disconnect(self) -> None:
        """Apply safe values and release the hardware. Idempotent."""
        ...

    async def health_check(self) -> HealthStatus: ...

    async def apply_safe_state(self) -> None:
        """Drive every output to its declared safe value (shutdown, estop)."""
        ...

    def describe(self) -> str:
        """A few lines for the system prompt's hardware section: board, devices, pin aliases."""
        ...

    def tools(self) -> Sequence[Tool]: ...


# --- rate limits ------------------------------------------------------------------------------


@runtime_checkable
class ActionLedger(Protocol):
    """Recent actions on hardware, kept where every process that drives it can see them.

    The SecurityPolicy charges each device write here, so a limit that protects hardware (a
    pump switched at most once a minute) holds across one-shot ``agent`` runs, ``chat`` and the
    service. Keys are opaque strings (the policy uses ``peripheral/device``); times are seconds
    on the caller's clock (Unix time when the ledger outlives the process).
    """

    async def recent(self, key: str, since: float) -> list[float]:
        """The times of the actions charged to ``key`` after ``since``, oldest first; an action
        of cost n appears n times."""
        ...

    async def charge(self, key: str, at: float, cost: int, *, limit: int, since: float) -> bool:
        """Record ``cost`` actions at ``at`` if, with those after ``since``, they stay within
        ``limit``; returns whether they were recorded. Check and record are one atomic step,
        also against other processes."""
        ...
