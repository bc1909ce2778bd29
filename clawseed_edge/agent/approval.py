"""Approvers: who says yes or no to a call that needs a human.

* :class:`StaticApprover` always answers the same (tests, trusted setups).
* :class:`CallbackApprover` asks an async function.
* :class:`CliApprover` asks y/n on the terminal, reading in a thread so the loop keeps running;
  with no terminal it refuses and says why.
* :class:`QueueApprover` publishes each request (for the gateway to send to a phone) and waits
  for :meth:`QueueApprover.resolve`.

The SecurityPolicy bounds every ``request`` with its approval timeout and treats a timeout as
a refusal, so every approver here is safe to cancel.

Before an approver is asked, the policy calls :func:`announce_approval_request`, which hands the
request to whoever is listening in the current context (the engine, which yields an
``ApprovalRequestEvent`` to the turn's consumer).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import IO, Any

from clawseed_edge.api import ApprovalDecision, ApprovalRequest

__all__ = [
    "CallbackApprover",
    "CliApprover",
    "QueueApprover",
    "StaticApprover",
    "announce_approval_request",
    "approval_listener",
]

#: The current turn's listener for approval requests (set by the engine for each turn).
approval_listener: contextvars.ContextVar[Callable[[ApprovalRequest], None] | None] = (
    contextvars.ContextVar("clawseed_approval_listener", default=None)
)


def announce_approval_request(request: ApprovalRequest) -> None:
    """Tell the current turn's listener (if any) that ``request`` is about to be asked."""
    listener = approval_listener.get()
    if listener is not None:
        listener(request)


class StaticApprover:
    """Always approves, or always refuses."""

    def __init__(self, approve: bool, reason: str = "") -> None:
        self.approve = approve
        self.reason = reason or (
            "approved by a static approver" if approve else "refused by a static approver"
        )
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return ApprovalDecision(self.approve, self.reason)


class CallbackApprover:
    """Asks an async function; it returns a bool or an :class:`ApprovalDecision`."""

    def __init__(
        self, callback: Callable[[ApprovalRequest], Awaitable[bool | ApprovalDecision]]
    ) -> None:
        self._callback = callback

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        answer = await self._callback(request)
        if isinstance(answer, ApprovalDecision):
            return answer
        return ApprovalDecision(bool(answer), "approved" if answer else "refused")


class CliApprover:
    """Asks ``Allow <summary>? [y/N]`` on the terminal.

    The line is read on a daemon thread so the event loop keeps running (the turn can still be
    aborted). If a question times out, the thread stays waiting for that line and hands it to
    the next question instead of starting a second reader.

    Args:
        stdin: Where answers come from (default ``sys.stdin``); must be a TTY.
        stdout: Where the question goes (default ``sys.stderr``).
    """

    def __init__(self, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._pending: concurrent.futures.Future[str] | None = None
        self._lock = asyncio.Lock()

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        stdin = self._stdin if self._stdin is not None else sys.stdin
        stdout = self._stdout if self._stdout is not None else sys.stderr
        try:
            is_tty = stdin is not None and stdin.isatty()
        except (ValueError, OSError):
            is_tty = False
        if not is_tty:
            return ApprovalDecision(
                False,
                "no terminal to ask for approval on (stdin is not a TTY); run it "
                "interactively (clawseed-edge chat), or set [autonomy].level to 'full' "
                "(devices with approval = true still ask)",
            )
        async with self._lock:
            summary = request.summary or f"{request.tool}({request.arguments})"
            stdout.write(f"\nAllow [{request.risk}] {summary}? [y/N] ")
            stdout.flush()
            # Shielded: a cancelled question must not cancel the reader's future, which the
            # next question takes over.
            line = await asyncio.shield(asyncio.wrap_future(self._read_line(stdin)))
        if line == "":
            return ApprovalDecision(False, "end of input while waiting for approval")
        approved = line.strip().lower() in {"y", "yes"}
        return ApprovalDecision(
            approved, "approved on the terminal" if approved else "refused on the terminal"
        )

    def _read_line(self, stdin: IO[str]) -> concurrent.futures.Future[str]:
        pending = self._pending
        if pending is not None and not pending.done():
            return pending
        fut: concurrent.futures.Future[str] = concurrent.futures.Future()

        def reader() -> None:
            try:
                line = stdin.readline()
            except Exception as exc:  # the terminal went away
                if not fut.done():
                    fut.set_exception(exc)
                return
            if not fut.done():
                fut.set_result(line)

        self._pending = fut
        threading.Thread(target=reader, name="clawseed-approval", daemon=True).start()
        return fut


class QueueApprover:
    """Publishes requests and waits for an answer from elsewhere (the gateway).

    Requests appear on :attr:`requests` (an ``asyncio.Queue``) and, if given, are passed to
    ``on_request``. :meth:`resolve` answers one by id. A request that is cancelled (timeout,
    abort) is forgotten; resolving it later returns False.
    """

    def __init__(self, on_request: Callable[[ApprovalRequest], Any] | None = None) -> None:
        self.requests: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
        self._on_request = on_request
        self._waiting: dict[str, tuple[ApprovalRequest, asyncio.Future[ApprovalDecision]]] = {}

    def pending(self) -> list[ApprovalRequest]:
        """Requests still waiting for an answer, oldest first."""
        return [req for req, _ in self._waiting.values()]

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        fut: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._waiting[request.id] = (request, fut)
        try:
            self.requests.put_nowait(request)
            if self._on_request is not None:
                result = self._on_request(request)
                if asyncio.iscoroutine(result):
                    await result
            return await fut
        finally:
            self._waiting.pop(request.id, None)

    def resolve(self, request_id: str, approved: bool, reason: str = "") -> bool:
        """Answer the request ``request_id``; returns False if nothing waits for it."""
        entry = self._waiting.get(request_id)
        if entry is None or entry[1].done():
            return False
        entry[1].set_result(
            ApprovalDecision(approved, reason or ("approved" if approved else "refused"))
        )
        return True
