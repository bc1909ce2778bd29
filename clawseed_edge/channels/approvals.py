"""Approvals go to people, in whichever channel they are.

:class:`ApprovalBroker` is the Approver of the running service, shared by every channel. A
request is sent to every subscriber (in the gateway: each connected paired WebSocket client,
each SSE listener; later a Telegram chat, ...); the first answer wins and the others are told
it was resolved. A subscriber that said it cannot answer (``answers=False``: a display, a
client with no approval handler) still sees the request but is not waited for: with no one
subscribed who can answer, or no answer within the timeout, the request is refused at once,
and a log line says why.

The approver chain lives here too: :class:`CallerFirstApprover` asks the person behind the
call itself when its way in can ask them (an MCP host's elicitation, set with :func:`asking`
for the call's task), otherwise the broker. :func:`describe_approval` is the one function that
says what a request would do (``device``/``action``/``value``), for every channel's text.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from clawseed_edge.agent.approval import NoAnswer
from clawseed_edge.api import ApprovalDecision, ApprovalRequest, Approver, Channel, DeviceAction

__all__ = [
    "ApprovalBroker",
    "Ask",
    "CallerFirstApprover",
    "asking",
    "current_asker",
    "describe_approval",
]

log = logging.getLogger(__name__)

Send = Callable[[dict[str, Any]], None]


class ApprovalBroker:
    """Routes approval requests to connected people.

    Args:
        timeout_s: How long a request waits for an answer before it is refused.
        tools: Where a request's tool is looked up to describe it (:func:`describe_approval`:
            ``device``/``action``/``value`` in its frame); None sends the request as it is.
    """

    def __init__(self, timeout_s: float = 120.0, tools: Any = None) -> None:
        self.timeout_s = timeout_s
        self.tools = tools
        self._subscribers: dict[int, tuple[str, Send, bool]] = {}
        self._answering: set[int] = set()
        self._channels: list[Channel] = []
        self._trusted: dict[str, set[str]] = {}
        self._keys = itertools.count(1)
        self._waiting: dict[str, tuple[ApprovalRequest, asyncio.Future[ApprovalDecision]]] = {}

    def subscribe(
        self, who: str, send: Send, *, resolutions: bool = False, answers: bool = True
    ) -> Callable[[], None]:
        """Send every request to ``send`` until the returned function is called.

        ``resolutions``: also send ``approval_resolved`` frames (the SSE stream; the Android
        client's protocol has no such frame, so WebSocket clients do not get it).
        ``answers``: the subscriber can answer (a WebSocket client with ``approval_response``,
        an SSE listener through ``POST /api/approvals/{id}``); one that cannot is sent the
        requests but never waited for.
        """
        key = next(self._keys)
        self._subscribers[key] = (who, send, resolutions)
        if answers:
            self._answering.add(key)
        # Requests already waiting reach a client that connects while they wait.
        for request, _ in self._waiting.values():
            self._send_one(send, self._frame(request))

        def unsubscribe() -> None:
            self._subscribers.pop(key, None)
            self._answering.discard(key)

        return unsubscribe

    def add_channel(self, channel: Channel) -> Callable[[], None]:
        """Ask ``channel``'s people too (its ``ask``; ``approval_resolved`` through its
        ``deliver``); returns the function that stops it."""
        self._channels.append(channel)

        def remove() -> None:
            if channel in self._channels:
                self._channels.remove(channel)

        return remove

    def trust(self, session_id: str, tools: set[str]) -> Callable[[], None]:
        """Approve calls of ``tools`` in ``session_id`` without asking: the client that runs
        its own (remote) tool decides about it. The set is read live; returns the remover."""
        self._trusted[session_id] = tools

        def remove() -> None:
            if self._trusted.get(session_id) is tools:
                del self._trusted[session_id]

        return remove

    @property
    def answerers(self) -> int:
        """How many people can answer a request now (subscribers and channels' people)."""
        return len(self._answering) + sum(self._channel_answerers(c) for c in self._channels)

    def pending(self) -> list[ApprovalRequest]:
        return [request for request, _ in self._waiting.values()]

    def waiting_frames(self) -> list[dict[str, Any]]:
        """The ``approval_request`` frames still waiting (for a person who joins a channel)."""
        return [self._frame(request) for request, _ in self._waiting.values()]

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask every subscriber; the first answer wins.

        Cancel-safe: a cancelled request is withdrawn (clients are told it was resolved).
        """
        summary = request.summary or request.tool
        if request.tool in self._trusted.get(request.session_id, ()):
            # Read-only autonomy still refused it before this point (the policy checks first).
            return ApprovalDecision(True, "a tool of the client itself")
        if not self.answerers:
            reason = (
                "no paired client is connected to approve it; open the phone app (or "
                "`clawseed-edge chat`) and ask again"
            )
            log.warning("approval of %r refused: %s", summary, reason)
            return NoAnswer(False, reason, asked=False)  # no person refused: none was asked
        fut: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._waiting[request.id] = (request, fut)
        frame = self._frame(request)
        for _, send, _ in list(self._subscribers.values()):
            self._send_one(send, frame)
        for channel in list(self._channels):
            self._send_one(channel.ask, frame)
        outcome = "cancelled"
        started = asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(self.timeout_s):
                decision = await fut
            outcome = "approved" if decision.approved else "refused"
            return decision
        except asyncio.CancelledError:
            # The policy bounds the wait with the same approval_timeout_s and may cancel us
            # first; either way the call is refused and the log must say why.
            waited = asyncio.get_running_loop().time() - started
            log.warning(
                "approval of %r refused: no answer after %.0f s (approval_timeout_s passed, or "
                "the turn was aborted)",
                summary,
                waited,
            )
            raise
        except TimeoutError:
            outcome = "timeout"
            reason = (
                f"no answer from {self.answerers} connected client(s) within {self.timeout_s:g} s"
            )
            log.warning("approval of %r refused: %s", summary, reason)
            return NoAnswer(False, reason, asked=True)
        finally:
            self._waiting.pop(request.id, None)
            done = {"type": "approval_resolved", "id": request.id, "outcome": outcome}
            for _, send, wants in list(self._subscribers.values()):
                if wants:
                    self._send_one(send, done)
            for channel in list(self._channels):
                self._send_one(channel.deliver, done)

    def resolve(self, request_id: str, approved: bool, reason: str = "", by: str = "") -> bool:
        """Answer a waiting request; False if it is not waiting (answered, timed out, unknown)."""
        entry = self._waiting.get(request_id)
        if entry is None or entry[1].done():
            return False
        who = f" by {by}" if by else ""
        text = reason or (f"approved{who}" if approved else f"refused{who}")
        entry[1].set_result(ApprovalDecision(approved, text))
        log.info("approval %s %s%s", request_id, "approved" if approved else "refused", who)
        return True

    def _frame(self, request: ApprovalRequest) -> dict[str, Any]:
        frame: dict[str, Any] = {
            "type": "approval_request",
            "id": request.id,
            "tool": request.tool,
            "arguments": request.arguments,
            "risk": request.risk,
            "summary": request.summary,
            "session_id": request.session_id,
            "device": None,
            "action": request.tool,
            "value": None,
        }
        if self.tools is not None:
            try:
                frame.update(describe_approval(self.tools, request))
            except Exception:  # a frame without device details still asks the question
                log.debug("could not describe approval %s", request.id, exc_info=True)
        return frame

    @staticmethod
    def _channel_answerers(channel: Channel) -> int:
        try:
            return int(channel.answerers)
        except Exception:  # a channel's bug must not refuse every approval
            log.exception("channel %s could not say who can answer", channel.name)
            return 0

    @staticmethod
    def _send_one(send: Send, frame: dict[str, Any]) -> None:
        try:
            send(frame)
        except Exception:
            log.debug("an approval subscriber could not take a frame", exc_info=True)


def describe_approval(tools: Any, request: ApprovalRequest) -> dict[str, Any]:
    """``device``, ``action`` and ``value`` of ``request``, from its tool's ``describe_action``
    in ``tools`` (a registry: ``get(name)``); empty when the tool describes no device action.

    Raises whatever the tool's ``describe_action`` raises (the broker logs it and asks anyway).
    """
    tool = tools.get(request.tool)
    describe = getattr(tool, "describe_action", None)
    action = describe(request.arguments) if describe is not None else None
    if not isinstance(action, DeviceAction):
        return {}
    return {
        "device": action.device,
        "action": action.summary or f"{action.operation} {action.device}",
        "value": action.value,
    }


#: Asks the person behind the current call ``(message) -> True/False``; None: cannot be asked.
Ask = Callable[[str], Awaitable[bool | None]]
_asker: contextvars.ContextVar[Ask | None] = contextvars.ContextVar(
    "clawseed_caller_asker", default=None
)


@contextlib.asynccontextmanager
async def asking(ask: Ask | None) -> AsyncIterator[None]:
    """Within this block, approvals of this task's calls go to ``ask`` (None: to the broker)."""
    token = _asker.set(ask)
    try:
        yield
    finally:
        _asker.reset(token)


def current_asker() -> Ask | None:
    """Who approvals of this task's calls go to (set by :func:`asking`; None: the broker)."""
    return _asker.get()


class CallerFirstApprover:
    """The service's approver chain: the caller's own asker first (an MCP host that can
    elicit), otherwise (or when it cannot answer) ``fallback`` (the broker, or a refusal).

    ``ask`` returns True (accepted), False (declined or cancelled) or None (the caller could
    not be asked after all: the request goes to ``fallback``).
    """

    def __init__(self, fallback: Approver | None) -> None:
        self.fallback = fallback

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        ask = _asker.get()
        if ask is not None:
            summary = request.summary or request.tool
            answer = await ask(f"Allow {summary}? (an {request.risk} call from an MCP client)")
            if answer is not None:
                why = "approved in the MCP client" if answer else "declined in the MCP client"
                return ApprovalDecision(answer, why)
        if self.fallback is None:
            return ApprovalDecision(False, "no approver is set up for this call")
        return await self.fallback.request(request)
