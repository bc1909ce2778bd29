"""Approval requests as messages with Approve / Deny buttons (:class:`ApprovalButtons`).

A button names its request (a random id, never a counter) and a hash of the request's id and
text, so a button from before a restart, or of another request, matches nothing: it answers
"Expired." and its message says so. The messages sent are remembered in state.db (``shown``), so
those a previous process left with buttons are edited to "expired" at start.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .outbox import Outbox

if TYPE_CHECKING:
    from clawseed_edge.channels.approvals import ApprovalBroker
    from clawseed_edge.state import ShownApprovals

__all__ = ["EXPIRED_LINE", "ApprovalButtons"]

log = logging.getLogger(__name__)

#: What a stale approval message (another request's, or one from before a restart) becomes.
EXPIRED_LINE = (
    "⌛ Expired: this request is gone (the service restarted or it was answered). Ask again."
)


@dataclass(eq=False, slots=True)
class _Approval:
    """An approval request shown in chats: where, its text, who decided."""

    request_id: str
    text: str
    messages: list[tuple[int, int]] = field(default_factory=list)
    decided: str = ""
    #: Binds a button to this request's action: a hash of its id and its text.
    digest: str = ""


class ApprovalButtons:
    """The approval requests shown in chats, and the presses of their buttons.

    Args:
        outbox: Where messages and button answers are sent.
        broker: The approvals broker that a press resolves (None: presses resolve nothing).
        shown: Where the messages sent are remembered across restarts (None: not remembered).
        allowed: Whether a user id may press a button (read at each press: pairing changes it).
    """

    def __init__(
        self,
        outbox: Outbox,
        broker: ApprovalBroker | None,
        shown: ShownApprovals | None,
        allowed: Callable[[Any], bool],
    ) -> None:
        self.outbox = outbox
        self.api = outbox.api
        self.broker = broker
        self.shown = shown
        self.allowed = allowed
        self._approvals: dict[str, _Approval] = {}

    def show(self, request_id: str, text: str, users: Iterable[int]) -> None:
        """Send the request ``text`` with Approve / Deny buttons to each of ``users``."""
        # The button names the request (its id is random, never a counter) and the action's
        # hash: a button from before a restart, or of another request, matches nothing.
        digest = hashlib.sha256(f"{request_id}\n{text}".encode()).hexdigest()[:12]
        approval = _Approval(request_id, text, digest=digest)
        self._approvals[request_id] = approval
        markup = {
            "inline_keyboard": [
                [
                    {"text": "✅ Approve", "callback_data": f"ap:{request_id}:{digest}:1"},
                    {"text": "❌ Deny", "callback_data": f"ap:{request_id}:{digest}:0"},
                ]
            ]
        }
        for user in users:
            self.outbox.spawn(self._send(approval, user, markup))

    async def _send(self, approval: _Approval, user: int, markup: dict[str, Any]) -> None:
        sent = await self.outbox.call(
            self.api.send_message, user, approval.text, reply_markup=markup
        )
        if isinstance(sent, dict) and isinstance(sent.get("message_id"), int):
            approval.messages.append((user, sent["message_id"]))
            if self.shown is not None:
                # Kept in state.db: after a restart this message is edited to "expired".
                await self.shown.add(
                    approval.request_id, str(user), str(sent["message_id"]), approval.text
                )

    async def expire_old(self) -> None:
        """Edit every approval message a previous process left with buttons to "expired"."""
        if self.shown is None:
            return
        for _, chat, message, text in await self.shown.take_all():
            if chat.lstrip("-").isdigit() and message.isdigit():
                await self.outbox.call(
                    self.api.edit_message_text, int(chat), int(message), f"{text}\n\n{EXPIRED_LINE}"
                )

    def on_callback(self, callback: Mapping[str, Any]) -> None:
        """A button was pressed: resolve its request (if it is live and the user allowed)."""
        query_id = str(callback.get("id", ""))
        user_id = (callback.get("from") or {}).get("id")
        data = str(callback.get("data", ""))
        answer_query = self.api.answer_callback_query
        if not self.allowed(user_id):
            log.warning("Telegram: ignored a button press from user id %s", user_id)
            self.outbox.spawn(self.outbox.call(answer_query, query_id, "Not allowed."))
            return
        kind, request_id, digest, answer = [*data.split(":"), "", "", "", ""][:4]
        approval = self._approvals.get(request_id)
        if (
            kind != "ap"
            or approval is None
            or not hmac.compare_digest(digest.encode(), approval.digest.encode())
            or answer not in ("0", "1")
        ):
            # A button of a request that is gone (before a restart) or of another one: it
            # does nothing, and its message says so.
            self.outbox.spawn(self.outbox.call(answer_query, query_id, "Expired."))
            if approval is None:  # the message of a live request keeps its own buttons
                self.outbox.spawn(self._expire_message(callback))
            return
        approved = answer == "1"
        who = f"Telegram user {user_id}"
        first = (callback.get("from") or {}).get("first_name")
        if isinstance(first, str) and first:
            who = f"{first[:40]} ({user_id})"
        if approval is not None:
            approval.decided = f"{'✅ Approved' if approved else '❌ Denied'} by {who}"
        ok = self.broker is not None and self.broker.resolve(request_id, approved, by=who)
        reply = ("Approved." if approved else "Denied.") if ok else "Already answered."
        self.outbox.spawn(self.outbox.call(answer_query, query_id, reply))

    async def _expire_message(self, callback: Mapping[str, Any]) -> None:
        message = callback.get("message") or {}
        chat_id = (message.get("chat") or {}).get("id")
        message_id = message.get("message_id")
        if isinstance(chat_id, int) and isinstance(message_id, int):
            text = str(message.get("text") or "")[:3000]
            await self.outbox.call(
                self.api.edit_message_text, chat_id, message_id, f"{text}\n\n{EXPIRED_LINE}"
            )

    async def show_resolution(self, frame: Mapping[str, Any]) -> None:
        """Edit a resolved request's messages to say who decided (or that time ran out)."""
        request_id = str(frame.get("id", ""))
        approval = self._approvals.pop(request_id, None)
        if approval is None:
            return
        if self.shown is not None:
            await self.shown.drop(request_id)
        outcome = str(frame.get("outcome", ""))
        if approval.decided:
            line = approval.decided
        elif outcome == "timeout":
            line = "⌛ No answer in time: refused."
        elif outcome == "cancelled":
            # The policy's own approval_timeout_s may end the wait first: a refusal too.
            line = "⌛ Not answered: refused (the time ran out, or the turn was stopped)."
        else:
            line = f"Answered elsewhere: {outcome}."
        text = f"{approval.text}\n\n{line}"
        for chat_id, message_id in approval.messages:
            await self.outbox.call(self.api.edit_message_text, chat_id, message_id, text)
