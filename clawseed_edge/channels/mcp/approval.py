"""Approvals asked of the MCP client by elicitation, in both protocol eras.

Handshake era (2025-06-18, 2025-11-25): the server sends ``elicitation/create`` mid-call and
waits for the answer (:func:`legacy_asker`). 2026 era (2026-07-28): no request goes from the
server to the client; the call answers ``input_required`` with the question and a sealed
``requestState``, and the client calls again with its answer (:class:`RoundTrip`). The state is
bound to the client, the tool, its arguments and the question, expires, and is used once: a
replayed or edited answer asks again instead of approving.

Only the JSON boolean ``true`` of :data:`APPROVE_SCHEMA`, in an ``accept``, approves
(:func:`approved`): "no", "false", "0", a missing field and a decline all refuse.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["APPROVE_SCHEMA", "RequestStates", "RoundTrip", "approved", "legacy_asker"]

log = logging.getLogger(__name__)

#: How long the person at the MCP host has to answer.
ELICIT_TIMEOUT_S = 120.0
#: How long a 2026-era question stays answerable, and how many answered ones are remembered.
STATE_TTL_S = 600.0
MAX_USED_STATES = 4096
#: The key of our one question in ``inputRequests``/``inputResponses``.
INPUT_KEY = "approve"

APPROVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Run it", "default": False}},
    "required": ["approve"],
}


def approved(answer: Any) -> bool:
    """Whether an ``ElicitResult`` approves: ``accept`` with ``approve`` the JSON ``true``."""
    if not isinstance(answer, dict) or answer.get("action") != "accept":
        return False
    content = answer.get("content")
    return isinstance(content, dict) and content.get("approve") is True


def elicitation(message: str) -> dict[str, Any]:
    """The ``elicitation/create`` params of an approval question."""
    return {"mode": "form", "message": message[:1000], "requestedSchema": APPROVE_SCHEMA}


def legacy_asker(
    request: Callable[[str, dict[str, Any], float], Awaitable[Any]],
) -> Callable[[str], Awaitable[bool | None]]:
    """An asker over a handshake-era session: ``request(method, params, timeout_s)`` sends a
    request to the client and returns its result (raising when it cannot be asked)."""

    async def ask(message: str) -> bool | None:
        try:
            answer = await request("elicitation/create", elicitation(message), ELICIT_TIMEOUT_S)
        except TimeoutError:
            return False  # asked, and no one answered: a refusal
        except Exception as exc:  # the client could not be asked after all
            log.warning("MCP elicitation failed (%s); asking the approvals broker", exc)
            return None
        return approved(answer)

    return ask


class RequestStates:
    """Seals and opens 2026-era ``requestState`` tokens (HMAC with a key of this process)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._key = os.urandom(32)
        self._clock = clock
        self._used: dict[str, float] = {}

    def seal(self, owner: str, tool: str, arguments: Any, message: str) -> str:
        payload = {
            "n": base64.urlsafe_b64encode(os.urandom(12)).decode(),
            "b": _binding(owner, tool, arguments, message),
            "e": self._clock() + STATE_TTL_S,
        }
        body = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()
        return f"{body}.{self._mac(body)}"

    def open(self, state: Any, owner: str, tool: str, arguments: Any, message: str) -> bool:
        """Whether ``state`` was sealed here for exactly this question, unexpired, unused; it
        is used up by this call."""
        if not isinstance(state, str) or len(state) > 2000 or "." not in state:
            return False
        body, mac = state.rsplit(".", 1)
        if not hmac.compare_digest(mac, self._mac(body)):
            return False
        try:
            payload = json.loads(base64.urlsafe_b64decode(body.encode()))
        except ValueError:
            return False
        now = self._clock()
        self._used = {n: e for n, e in self._used.items() if e > now}  # forget the expired
        nonce = str(payload.get("n"))
        if payload.get("e", 0) <= now or nonce in self._used:
            return False
        if payload.get("b") != _binding(owner, tool, arguments, message):
            return False
        if len(self._used) >= MAX_USED_STATES:
            return False  # too many answers at once: ask again later rather than forget one
        self._used[nonce] = float(payload["e"])
        return True

    def _mac(self, body: str) -> str:
        digest = hmac.new(self._key, body.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _binding(owner: str, tool: str, arguments: Any, message: str) -> str:
    text = json.dumps([owner, tool, arguments, message], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class RoundTrip:
    """The asker of one 2026-era call: answers from the client's ``inputResponses`` when they
    carry a valid state for this question; otherwise records the question (and refuses, so
    nothing runs) for the server to answer ``input_required``.
    """

    def __init__(
        self, states: RequestStates, owner: str, tool: str, arguments: Any, params: dict[str, Any]
    ) -> None:
        self.states = states
        self.owner, self.tool, self.arguments = owner, tool, arguments
        self.state = params.get("requestState")
        responses = params.get("inputResponses")
        self.response = responses.get(INPUT_KEY) if isinstance(responses, dict) else None
        self.question: str | None = None

    async def __call__(self, message: str) -> bool | None:
        if self.state is not None:
            state, self.state = self.state, None  # one answer, for the first question only
            if self.states.open(state, self.owner, self.tool, self.arguments, message):
                return approved(self.response)
        self.question = message
        return False

    def input_required(self) -> dict[str, Any]:
        """The ``input_required`` result that asks :attr:`question`."""
        assert self.question is not None
        return {
            "resultType": "input_required",
            "inputRequests": {
                INPUT_KEY: {"method": "elicitation/create", "params": elicitation(self.question)}
            },
            "requestState": self.states.seal(self.owner, self.tool, self.arguments, self.question),
        }
