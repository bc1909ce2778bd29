"""Message, tool and response types shared by every layer.

All types are plain slotted dataclasses (standard library only), cheap to create and to compare.
Collections inside them are tuples so that a value, once built, does not change under a caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

# These three lived here; still importable from here (api.kinds is their home).
from .kinds import Lifecycle as Lifecycle
from .kinds import RiskClass as RiskClass
from .kinds import StopReason as StopReason

__all__ = [
    "ACTOR_KINDS",
    "Actor",
    "ChatMessage",
    "ChatRequest",
    "ChatResponse",
    "DeviceAction",
    "ResourceAccess",
    "Role",
    "ToolCall",
    "ToolContext",
    "ToolResult",
    "ToolSpec",
    "Usage",
]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for.

    Attributes:
        name: The tool's name.
        arguments: The arguments, always a dict (providers that send a JSON string are decoded
            before a ToolCall is built).
        id: The provider's call id, or one the dispatcher made up (``call_1``).
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What the model is told about a tool: its name, description and JSON-schema parameters."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of a tool call as the model will read it.

    Attributes:
        success: Whether the tool did what was asked.
        output: The text fed back to the model (on failure, may be empty).
        error: Why it failed, in words the model and the user can act on.
        data: Optional structured data for programmatic consumers (not sent to the model).
        code: On failure, a stable machine-readable reason (``policy_refused``,
            ``unknown_tool``, ``bad_arguments``, ``timeout``, ``tool_failed``, an error's
            ``code`` ...): a route or a channel maps codes, never the words of ``error``.
        images: Base64 JPEG/PNG pictures for the model (``camera_snapshot``): sent with the
            next request of this turn only, never kept in history or memory.
    """

    success: bool
    output: str = ""
    error: str | None = None
    data: Any = None
    code: str | None = None
    images: tuple[str, ...] = ()

    @classmethod
    def ok(cls, output: str, data: Any = None, images: tuple[str, ...] = ()) -> ToolResult:
        """A successful result."""
        return cls(True, output, None, data, images=images)

    @classmethod
    def fail(cls, error: str, output: str = "", code: str = "tool_failed") -> ToolResult:
        """A failed result; ``error`` says what happened and what to do, ``code`` why, stably."""
        return cls(False, output, error, code=code)

    def as_text(self) -> str:
        """The text the model reads: the output, or ``Error: ...`` on failure."""
        if self.success:
            return self.output
        if self.output:
            return f"Error: {self.error}\n{self.output}"
        return f"Error: {self.error}"


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of a conversation.

    Attributes:
        role: ``system``, ``user``, ``assistant`` or ``tool``.
        content: The text.
        tool_calls: On an assistant message, the calls it made.
        tool_call_id: On a tool message, the id of the call it answers.
        name: On a tool message, the tool's name.
        images: Base64-encoded images attached to a user message (vision models).
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    images: tuple[str, ...] = ()

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        return cls("system", content)

    @classmethod
    def user(cls, content: str, images: tuple[str, ...] = ()) -> ChatMessage:
        return cls("user", content, images=images)

    @classmethod
    def assistant(cls, content: str, tool_calls: tuple[ToolCall, ...] = ()) -> ChatMessage:
        return cls("assistant", content, tool_calls=tool_calls)

    @classmethod
    def tool(cls, call_id: str, content: str, name: str | None = None) -> ChatMessage:
        return cls("tool", content, tool_call_id=call_id, name=name)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one model response."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
        )


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """What the engine asks a provider.

    Attributes:
        messages: The conversation, system prompt first.
        tools: Tool specs for providers with native tool calling (empty for prompt-guided).
        model: Overrides the provider's configured model, if set.
        temperature: Sampling temperature, if set.
        max_tokens: Upper bound on output tokens, if set.
    """

    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """A complete model response.

    Attributes:
        text: The visible text (for prompt-guided tools, still containing the call markup).
        tool_calls: Native tool calls.
        usage: Token counts.
        stop_reason: Why the model stopped.
        thinking: Reasoning text the model emitted separately, if any.
        provider: The provider that actually answered (after fallback).
        model: The model that actually answered.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = StopReason.END_TURN
    thinking: str | None = None
    provider: str | None = None
    model: str | None = None


#: Who can act (:attr:`Actor.kind`).
ACTOR_KINDS: tuple[str, ...] = ("person", "model", "automation", "schedule", "fleet")


@dataclass(frozen=True, slots=True)
class Actor:
    """Who is acting: every tool call outside a model turn says so, and the policy decides by it.

    Attributes:
        kind: ``person`` (a direct command: a web app button, a Home Assistant switch, a
            Telegram button, an MCP host's user), ``model`` (a tool call in a conversation),
            ``automation``, ``schedule`` or ``fleet`` (another node).
        channel: The way in (``gateway``, ``mqtt``, ``telegram``, ``mcp``, ``automations``).
        who: Which one, for the audit log: a client's token id, a Telegram user id, a rule or
            job name, a node id (empty when the channel cannot tell).

    Raises:
        ValueError: ``kind`` is not one of :data:`ACTOR_KINDS`.
    """

    kind: str
    channel: str
    who: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ACTOR_KINDS:
            raise ValueError(
                f"unknown actor kind {self.kind!r}; use one of: {', '.join(ACTOR_KINDS)}"
            )

    @property
    def is_person(self) -> bool:
        """A person's direct command (not the model, nor a rule acting for them)."""
        return self.kind == "person"

    def __str__(self) -> str:
        who = f" {self.who}" if self.who else ""
        return f"{self.kind}{who} via {self.channel}"


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Who is calling a tool, passed to hooks and to ``Tool.execute``.

    Attributes:
        session_id: The conversation's id (one per phone, CLI run, webhook source ...).
        namespace: The memory namespace of the caller.
        channel: Where the message came from: ``cli``, ``gateway``, ``webhook``, ``timer``, ``test``.
        turn_id: A counter or id of the current turn.
        actor: Who acts (None: the model in a conversation, the default of a turn).
    """

    session_id: str = "default"
    namespace: str = "default"
    channel: str = "cli"
    turn_id: str = ""
    actor: Actor | None = None


@dataclass(frozen=True, slots=True)
class DeviceAction:
    """What a hardware tool call would do to a device, described before it runs.

    Hardware tools return one from ``Tool.describe_action(arguments)`` so that the
    SecurityPolicy can enforce pin policy without importing the peripherals layer.

    Attributes:
        device: The configured device name (``red_led``).
        kind: The device kind (``led``, ``relay``, ``button`` ...).
        operation: ``read`` or ``write``.
        value: The value to be written (0..1 for levels, 1/0 for on/off), if a write.
        requires_approval: The device was configured with ``approval = true``.
        max_per_minute: The device's switch rate limit, if any.
        min_value: The lowest value the device accepts, if bounded.
        max_value: The highest value the device accepts (e.g. a PWM cap), if bounded.
        allowed: Whether the device allows this operation at all (e.g. writing an input).
        summary: A one-line description for approval prompts: ``switch fan (GPIO23) on``.
        peripheral: The peripheral that owns the device (``pi``); with ``device`` it keys the
            policy's rate windows, so two boards' devices never share a limit.
        switches: How many writes the call makes against ``max_per_minute`` (a blink of
            ``count`` 3 switches 6 times).
        repeats: How many repetitions ``switches`` is made of (the blink's ``count``); when the
            call can never fit the limit, the refusal names the repetitions that would fit.
    """

    device: str
    kind: str
    operation: Literal["read", "write"]
    value: float | None = None
    requires_approval: bool = False
    max_per_minute: int | None = None
    min_value: float | None = None
    max_value: float | None = None
    allowed: bool = True
    summary: str = ""
    peripheral: str = ""
    switches: int = 1
    repeats: int = 1


@dataclass(frozen=True, slots=True)
class ResourceAccess:
    """What files or commands a tool call would touch, described before it runs.

    Tools that read or write files or run commands return one from
    ``Tool.describe_access(arguments)``; the SecurityPolicy checks the paths against its
    forbidden paths (resolving symlinks) and the command against its allowlist.

    Attributes:
        paths: Filesystem paths the call reads or writes.
        write: Whether any of the paths is written.
        command: A shell command line the call would run, if any.
        hosts: Network hosts the call would contact, if any.
    """

    paths: tuple[str, ...] = ()
    write: bool = False
    command: str | None = None
    hosts: tuple[str, ...] = ()
