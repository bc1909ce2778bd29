"""Approvers: who says yes or no to a call that needs a human.

* :class:`StaticApprover` always answers the same (tests, trusted setups).
* :class:`CallbackApprover` asks an async function.
* :class:`CliApprover` asks y/n on the terminal, reading through :class:`TerminalLines` (one
  reader thread shared with ``chat``'s prompt) so the loop keeps running; with no terminal it
  refuses and says why.
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
from dataclasses import dataclass
from typing import IO, Any

from clawseed_edge.api import ApprovalDecision, ApprovalRequest
from clawseed_edge.api.wording import DO_NOT_RETRY

__all__ = [
    "CallbackApprover",
    "CliApprover",
    "NoAnswer",
    "QueueApprover",
    "StaticApprover",
    "announce_approval_request",
    "approval_listener",
]

#: The current turn's listener for approval requests (set by the engine for each turn).
approval_listener: contextvars.ContextVar[Callable[[ApprovalRequest], None] | None] = (
    contextvars.ContextVar("clawseed_approval_listener", default=None)
)


@dataclass(frozen=True, slots=True)
class NoAnswer(ApprovalDecision):
    """A refusal that no person gave: there was no one to ask, or no one answered.

    Approvers return it (instead of a plain :class:`ApprovalDecision`) when they could not put
    the question to anyone (no terminal) or the question went unanswered (input closed), so
    the policy tells the model what really happened instead of "the user refused".

    Attributes:
        asked: Whether the question was shown to someone (False: no one could be asked).
    """

    approved: bool = False
    asked: bool = False


def refusal_text(summary: str, decision: ApprovalDecision) -> str:
    """What a negative decision means, in words that do not claim a person said no when no one
    was asked (no terminal) or no one answered (input closed)."""
    why = f" ({decision.reason})" if decision.reason else ""
    if isinstance(decision, NoAnswer):
        what = (
            "no one answered the approval question for"
            if decision.asked
            else "no one was asked to approve"
        )
        return f"{what} {summary!r}{why}, so it did not run"
    return f"approval for {summary!r} was refused{why}; it did not run. {DO_NOT_RETRY}"


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
        return ApprovalDecision(
            bool(answer),
            "approved by the approval callback" if answer else "refused by the approval callback",
        )


class TerminalLines:
    """The one reader of the terminal's lines, shared by ``chat``'s prompt and the approver.

    A line is read on a daemon thread (a blocking ``readline`` cannot be cancelled), so the
    event loop keeps running. A caller that is cancelled while waiting (an approval question
    that timed out, a turn aborted with Ctrl-C) leaves the read in place, and the next caller,
    whoever it is, gets that line: nothing typed is swallowed by a reader nobody waits for.

    Args:
        stdin: Where lines come from (default ``sys.stdin`` at the time of each read).
    """

    def __init__(self, stdin: IO[str] | None = None) -> None:
        self._stdin = stdin
        self._pending: concurrent.futures.Future[str] | None = None

    @property
    def stdin(self) -> IO[str]:
        """The stream lines are read from."""
        return self._stdin if self._stdin is not None else sys.stdin

    async def readline(self) -> str:
        """The next line (with its newline; ``""`` at end of input). Safe to cancel: the line
        then goes to the next caller.

        Raises:
            OSError, ValueError: The terminal went away.
        """
        fut = self._pending
        if fut is None:
            fut = self._pending = self._start_read(self.stdin)
        # Shielded: cancelling this caller must not cancel the read the next caller takes over.
        try:
            line = await asyncio.shield(asyncio.wrap_future(fut))
        except asyncio.CancelledError:
            raise  # the read (or the line it got) stays for the next caller
        except BaseException:
            self._forget(fut)  # the terminal went away: a later call may try again
            raise
        self._forget(fut)
        return line

    def _forget(self, fut: concurrent.futures.Future[str]) -> None:
        if self._pending is fut:
            self._pending = None

    @staticmethod
    def _start_read(stdin: IO[str]) -> concurrent.futures.Future[str]:
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

        threading.Thread(target=reader, name="clawseed-stdin", daemon=True).start()
        return fut


class CliApprover:
    """Asks ``Allow <summary>? [y/N]`` on the terminal.

    Answers are read through a :class:`TerminalLines`; give it the one ``chat`` reads its
    prompt from, so a line typed after a question timed out (or was interrupted) goes to the
    prompt instead of being taken by the abandoned question.

    Args:
        stdin: Where answers come from (default ``sys.stdin``); must be a TTY.
        stdout: Where the question goes (default ``sys.stderr``).
        lines: The shared line reader (default: one of its own on ``stdin``).
    """

    def __init__(
        self,
        stdin: IO[str] | None = None,
        stdout: IO[str] | None = None,
        *,
        lines: TerminalLines | None = None,
    ) -> None:
        self._stdout = stdout
        self.lines = lines if lines is not None else TerminalLines(stdin)
        self._lock = asyncio.Lock()

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        stdin = self.lines.stdin
        stdout = self._stdout if self._stdout is not None else sys.stderr
        try:
            is_tty = stdin is not None and stdin.isatty()
        except (ValueError, OSError):
            is_tty = False
        if not is_tty:
            return NoAnswer(
                False,
                "no terminal to ask for approval on (stdin is not a TTY); run it "
                "interactively (clawseed-edge chat), or set [autonomy].level to 'full' "
                "(devices with approval = true still ask)",
            )
        async with self._lock:
            summary = request.summary or f"{request.tool}({request.arguments})"
            stdout.write(f"\nAllow [{request.risk}] {summary}? [y/N] ")
            stdout.flush()
            try:
                line = await self.lines.readline()
            except asyncio.CancelledError:
                # Timed out or interrupted: end the question's line, so what is printed next
                # (and a line typed now, which goes to the prompt) does not look like an answer.
                stdout.write("(no answer)\n")
                stdout.flush()
                raise
        if line == "":
            return NoAnswer(False, "end of input while waiting for approval", asked=True)
        approved = line.strip().lower() in {"y", "yes"}
        return ApprovalDecision(
            approved, "approved on the terminal" if approved else "refused on the terminal"
        )


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
            # Someone answered (through the gateway): say so, the policy repeats it to the model.
            ApprovalDecision(
                approved, reason or ("approved by the user" if approved else "refused by the user")
            )
        )
        return True
