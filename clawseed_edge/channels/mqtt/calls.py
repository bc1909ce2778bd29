"""Fleet calls: another node's device tool, run by that node under its own policy.

A caller publishes (QoS 1, never retained) on ``clawseed/<owner>/call``::

    {"id": "c1a2", "from": "greenhouse", "tool": "gpio_switch",
     "arguments": {"device": "fan", "on": true}}

The owner checks the tool is one of :data:`FLEET_TOOLS`, runs it through its own
SecurityPolicy and approvals (the host's ``act``, the caller a ``fleet`` actor), and answers
on ``clawseed/<from>/reply`` with ``{"id", "ok", "output", "error"}``; a request with
``"reply": "<token>"`` (a one-shot ``agent`` beside its node's service) is answered on
``clawseed/<from>/reply/<token>`` instead. The caller matches the
answer by its id (:class:`PendingCalls`, bounded) and gives up after its timeout. Pure data
and futures: no client here.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from clawseed_edge.api import ToolResult

__all__ = [
    "FLEET_TOOLS",
    "MAX_PENDING_CALLS",
    "CallRequest",
    "PendingCalls",
    "call_topic",
    "encode_reply",
    "encode_request",
    "parse_reply",
    "parse_request",
    "reply_topic",
]

#: What another node may call here: the device tools, nothing else (no shell, no files).
FLEET_TOOLS = frozenset(
    {"gpio_switch", "gpio_set_level", "gpio_toggle", "gpio_read", "sensor_read", "hardware_status"}
)
#: Calls one node waits for at once; one more fails at once.
MAX_PENDING_CALLS = 16
#: Characters of a tool's output or error sent back.
MAX_REPLY_CHARS = 4000
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ID = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def call_topic(node_id: str) -> str:
    return f"clawseed/{node_id}/call"


def reply_topic(node_id: str, token: str = "") -> str:
    return f"clawseed/{node_id}/reply" + (f"/{token}" if token else "")


@dataclass(frozen=True, slots=True)
class CallRequest:
    """One fleet call, as the owner received it."""

    id: str
    sender: str
    tool: str
    arguments: dict[str, Any]
    #: Answer on ``clawseed/<sender>/reply/<reply>`` ("": on ``clawseed/<sender>/reply``).
    reply: str = ""


def encode_request(request: CallRequest) -> str:
    data = {
        "id": request.id,
        "from": request.sender,
        "tool": request.tool,
        "arguments": request.arguments,
    }
    if request.reply:
        data["reply"] = request.reply
    return json.dumps(data)


def parse_request(payload: bytes) -> CallRequest:
    """Raises ValueError naming what is wrong (the caller logs it and drops the message)."""
    data = json.loads(payload)
    if not isinstance(data, dict):
        raise ValueError("a call is a JSON object")
    call_id, sender, tool = data.get("id"), data.get("from"), data.get("tool")
    arguments = data.get("arguments", {})
    if not isinstance(call_id, str) or not _ID.match(call_id):
        raise ValueError("'id' must be 1..40 letters, digits, '_' or '-'")
    if not isinstance(sender, str) or not _NAME.match(sender):
        raise ValueError("'from' must be a node id")
    if not isinstance(tool, str) or not _NAME.match(tool):
        raise ValueError("'tool' must be a tool name")
    if not isinstance(arguments, dict):
        raise ValueError("'arguments' must be an object")
    reply = data.get("reply", "")
    if not isinstance(reply, str) or (reply and not _ID.match(reply)):
        raise ValueError("'reply' must be 1..40 letters, digits, '_' or '-'")
    return CallRequest(call_id, sender, tool, arguments, reply)


def encode_reply(call_id: str, result: ToolResult) -> str:
    return json.dumps(
        {
            "id": call_id,
            "ok": result.success,
            "output": result.output[:MAX_REPLY_CHARS],
            "error": (result.error or "")[:MAX_REPLY_CHARS],
            "code": (result.code or "")[:64],  # a refusal's stable code (estop_latched)
        }
    )


def parse_reply(payload: bytes) -> tuple[str, ToolResult]:
    """(call id, result). Raises ValueError for a malformed reply."""
    data = json.loads(payload)
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        raise ValueError("a reply is a JSON object with an 'id'")
    output = str(data.get("output", ""))[:MAX_REPLY_CHARS]
    if data.get("ok") is True:
        return data["id"], ToolResult.ok(output)
    error = str(data.get("error", "") or "refused")[:MAX_REPLY_CHARS]
    # The other node's stable code (estop_latched, policy_refused ...), else a plain failure.
    code = str(data.get("code") or "")[:64] or "tool_failed"
    return data["id"], ToolResult.fail(error, output, code)


class PendingCalls:
    """The calls this node waits for, by id (at most ``limit``)."""

    def __init__(self, limit: int = MAX_PENDING_CALLS) -> None:
        self.limit = limit
        self._waiting: dict[str, asyncio.Future[ToolResult]] = {}
        self._ids = itertools.count(1)
        self._prefix = os.urandom(4).hex()

    def __len__(self) -> int:
        return len(self._waiting)

    def open(self) -> tuple[str, asyncio.Future[ToolResult]]:
        """A new id and the future its reply resolves.

        Raises:
            RuntimeError: ``limit`` calls are waiting already.
        """
        if len(self._waiting) >= self.limit:
            raise RuntimeError(f"{self.limit} fleet calls are waiting already; try again later")
        call_id = f"{self._prefix}-{next(self._ids)}"
        future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        self._waiting[call_id] = future
        return call_id, future

    def resolve(self, call_id: str, result: ToolResult) -> bool:
        """False for an id nobody waits for (late, unknown, or not ours)."""
        future = self._waiting.pop(call_id, None)
        if future is None or future.done():
            return False
        future.set_result(result)
        return True

    def close(self, call_id: str) -> None:
        self._waiting.pop(call_id, None)
