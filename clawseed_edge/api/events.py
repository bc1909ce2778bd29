"""Events: what providers stream, what a turn yields, and what observers record.

Three families, each a small set of slotted dataclasses with a ``type`` tag:

* **Stream events** (provider -> engine): :class:`TextDelta`, :class:`ThinkingDelta`,
  :class:`ToolCallReady`, :class:`StreamDone`.
* **Turn events** (engine -> CLI, gateway, tests): :class:`ChunkEvent`, :class:`ThinkingEvent`,
  :class:`ToolCallEvent`, :class:`ToolResultEvent`, :class:`ApprovalRequestEvent`,
  :class:`DoneEvent`, :class:`AbortedEvent`, :class:`ErrorEvent`. Each has ``to_dict()``, the
  JSON shape the gateway sends.
* **Observer events** (anything -> Observer): :class:`TurnStarted`, :class:`TurnEnded`,
  :class:`LlmRequest`, :class:`LlmResponse`, :class:`ToolExecuted`, :class:`PolicyDecision`,
  :class:`ErrorObserved`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from .types import ChatResponse, ToolCall, ToolResult, Usage
from .urls import redact_url
from .wording import for_people

__all__ = [
    "AbortedEvent",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalRequestEvent",
    "ChunkEvent",
    "DoneEvent",
    "ErrorEvent",
    "ErrorObserved",
    "LlmRequest",
    "LlmResponse",
    "ObserverEvent",
    "PolicyDecision",
    "StreamDone",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingEvent",
    "ToolCallEvent",
    "ToolCallReady",
    "ToolExecuted",
    "ToolResultEvent",
    "TurnEnded",
    "TurnEvent",
    "TurnStarted",
]


# --- provider stream --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of visible text."""

    text: str
    type: ClassVar[str] = "text"


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of reasoning text (shown separately, never fed back as an answer)."""

    text: str
    type: ClassVar[str] = "thinking"


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A native tool call whose arguments are complete."""

    call: ToolCall
    type: ClassVar[str] = "tool_call"


@dataclass(frozen=True, slots=True)
class StreamDone:
    """The stream ended; ``response`` is the assembled whole (text, calls, usage, stop reason)."""

    response: ChatResponse
    type: ClassVar[str] = "done"


StreamEvent = TextDelta | ThinkingDelta | ToolCallReady | StreamDone


# --- approval ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A question to the user: may this call run?

    Attributes:
        id: Unique per request; the gateway's answer names it.
        tool: The tool's name.
        arguments: The call's arguments.
        risk: The tool's risk class value (``act``, ``dangerous``).
        summary: One line for a human: ``switch fan (GPIO23) on``.
        session_id: The session that made the call.
    """

    id: str
    tool: str
    arguments: dict[str, Any]
    risk: str
    summary: str
    session_id: str = "default"


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    """The user's answer to an :class:`ApprovalRequest`."""

    approved: bool
    reason: str = ""


# --- turn events ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChunkEvent:
    """Visible answer text, streamed."""

    text: str
    type: ClassVar[str] = "chunk"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True)
class ThinkingEvent:
    """Reasoning text, streamed."""

    text: str
    type: ClassVar[str] = "thinking"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """The engine is about to run a call (after hooks may have modified it)."""

    call: ToolCall
    type: ClassVar[str] = "tool_call"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "id": self.call.id,
            "name": self.call.name,
            "arguments": dict(self.call.arguments),
        }


@dataclass(frozen=True, slots=True)
class ToolResultEvent:
    """A call finished (or was refused); ``result`` is what the model reads."""

    call: ToolCall
    result: ToolResult
    duration_ms: float = 0.0
    type: ClassVar[str] = "tool_result"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "id": self.call.id,
            "name": self.call.name,
            "success": self.result.success,
            # Events go to people (CLI, web app, Telegram, clients): the person's wording.
            "output": for_people(self.result.output),
            "error": None if self.result.error is None else for_people(self.result.error),
            "duration_ms": round(self.duration_ms, 3),
        }


@dataclass(frozen=True, slots=True)
class ApprovalRequestEvent:
    """The turn waits for a user's approval of a call."""

    request: ApprovalRequest
    type: ClassVar[str] = "approval_request"

    def to_dict(self) -> dict[str, Any]:
        r = self.request
        return {
            "type": self.type,
            "id": r.id,
            "tool": r.tool,
            "arguments": r.arguments,
            "risk": r.risk,
            "summary": r.summary,
        }


@dataclass(frozen=True, slots=True)
class DoneEvent:
    """The turn finished with a plain-text answer."""

    text: str
    usage: Usage = field(default_factory=Usage)
    iterations: int = 1
    provider: str | None = None
    model: str | None = None
    type: ClassVar[str] = "done"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "text": self.text,
            "iterations": self.iterations,
            "provider": self.provider,
            "model": self.model,
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
                "cached_input_tokens": self.usage.cached_input_tokens,
            },
        }


@dataclass(frozen=True, slots=True)
class AbortedEvent:
    """The turn was aborted by its caller; ``reason`` says by whom or why."""

    reason: str = "aborted"
    type: ClassVar[str] = "aborted"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """The turn failed; ``code`` is a :class:`ClawseedError` code, ``message`` is for humans."""

    message: str
    code: str = "error"
    type: ClassVar[str] = "error"

    def __post_init__(self) -> None:
        # Every channel shows this message (CLI, webhook JSON, WebSocket frame): a URL's
        # password in it (a provider's base_url inside an exception) is hidden here, once.
        object.__setattr__(self, "message", redact_url(self.message))

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "code": self.code, "message": self.message}


TurnEvent = (
    ChunkEvent
    | ThinkingEvent
    | ToolCallEvent
    | ToolResultEvent
    | ApprovalRequestEvent
    | DoneEvent
    | AbortedEvent
    | ErrorEvent
)


# --- observer events --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnStarted:
    session_id: str
    turn_id: str
    kind: ClassVar[str] = "turn_started"


@dataclass(frozen=True, slots=True)
class TurnEnded:
    session_id: str
    turn_id: str
    outcome: Literal["done", "aborted", "error", "limit"]
    iterations: int
    duration_ms: float
    usage: Usage = field(default_factory=Usage)
    kind: ClassVar[str] = "turn_ended"


@dataclass(frozen=True, slots=True)
class LlmRequest:
    provider: str
    model: str
    messages: int
    tools: int
    kind: ClassVar[str] = "llm_request"


@dataclass(frozen=True, slots=True)
class LlmResponse:
    provider: str
    model: str
    latency_ms: float
    usage: Usage = field(default_factory=Usage)
    success: bool = True
    error: str | None = None
    kind: ClassVar[str] = "llm_response"


@dataclass(frozen=True, slots=True)
class ToolExecuted:
    tool: str
    duration_ms: float
    success: bool
    error: str | None = None
    kind: ClassVar[str] = "tool_executed"


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """A SecurityPolicy decision: ``allowed``, ``denied``, ``approved`` or ``refused``."""

    tool: str
    decision: Literal["allowed", "denied", "approved", "refused"]
    reason: str = ""
    device: str | None = None
    session_id: str = "default"
    kind: ClassVar[str] = "policy_decision"


@dataclass(frozen=True, slots=True)
class ErrorObserved:
    component: str
    message: str
    code: str = "error"
    kind: ClassVar[str] = "error"


ObserverEvent = (
    TurnStarted
    | TurnEnded
    | LlmRequest
    | LlmResponse
    | ToolExecuted
    | PolicyDecision
    | ErrorObserved
)
