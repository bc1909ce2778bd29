"""Approvers: static, callback, CLI (with and without a terminal), queue for the gateway."""

from __future__ import annotations

import asyncio
import io
import os

import pytest

from clawseed_edge.agent.approval import (
    CallbackApprover,
    CliApprover,
    NoAnswer,
    QueueApprover,
    StaticApprover,
    announce_approval_request,
    approval_listener,
)
from clawseed_edge.api import ApprovalDecision, ApprovalRequest

REQ = ApprovalRequest("r1", "relay", {"on": True}, "act", "switch relay on")


class TtyPipe(io.TextIOWrapper):
    """The read end of a pipe that claims to be a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def tty() -> tuple[TtyPipe, int]:
    r, w = os.pipe()
    reader = TtyPipe(io.FileIO(r, "r"))
    yield reader, w
    reader.close()
    try:
        os.close(w)
    except OSError:
        pass


async def test_static_approver() -> None:
    assert (await StaticApprover(True).request(REQ)).approved
    assert not (await StaticApprover(False).request(REQ)).approved


async def test_callback_approver_accepts_bool_or_decision() -> None:
    async def yes(r: ApprovalRequest) -> bool:
        return r.tool == "relay"

    async def decision(r: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(False, "it is night")

    assert (await CallbackApprover(yes).request(REQ)).approved
    d = await CallbackApprover(decision).request(REQ)
    assert not d.approved and d.reason == "it is night"


async def test_cli_approver_without_a_terminal_refuses_with_a_reason() -> None:
    out = io.StringIO()
    d = await CliApprover(stdin=io.StringIO("y\n"), stdout=out).request(REQ)
    assert not d.approved and "not a TTY" in d.reason
    assert out.getvalue() == ""  # nothing asked


@pytest.mark.parametrize(
    ("line", "approved"), [(b"y\n", True), (b"YES\n", True), (b"n\n", False), (b"\n", False)]
)
async def test_cli_approver_reads_the_answer_in_a_thread(
    tty: tuple[TtyPipe, int], line: bytes, approved: bool
) -> None:
    reader, w = tty
    out = io.StringIO()
    approver = CliApprover(stdin=reader, stdout=out)
    task = asyncio.create_task(approver.request(REQ))
    await asyncio.sleep(0.01)
    assert not task.done()  # waiting on the terminal, the loop keeps running
    os.write(w, line)
    d = await asyncio.wait_for(task, 5)
    assert d.approved is approved
    assert "switch relay on" in out.getvalue() and "[y/N]" in out.getvalue()


async def test_cli_approver_end_of_input_refuses(tty: tuple[TtyPipe, int]) -> None:
    reader, w = tty
    os.close(w)
    d = await asyncio.wait_for(CliApprover(stdin=reader, stdout=io.StringIO()).request(REQ), 5)
    assert not d.approved and "end of input" in d.reason


async def test_cli_approver_after_a_timeout_reuses_the_waiting_reader(
    tty: tuple[TtyPipe, int],
) -> None:
    reader, w = tty
    approver = CliApprover(stdin=reader, stdout=io.StringIO())
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.02):
            await approver.request(REQ)
    task = asyncio.create_task(approver.request(REQ))
    await asyncio.sleep(0.01)
    os.write(w, b"y\n")
    assert (await asyncio.wait_for(task, 5)).approved


async def test_queue_approver_publishes_and_resolves() -> None:
    seen: list[ApprovalRequest] = []
    approver = QueueApprover(on_request=seen.append)
    task = asyncio.create_task(approver.request(REQ))
    published = await asyncio.wait_for(approver.requests.get(), 5)
    assert published is REQ and seen == [REQ]
    assert [r.id for r in approver.pending()] == ["r1"]
    assert not approver.resolve("unknown", True)
    assert approver.resolve("r1", True, "ok from phone")
    d = await task
    assert d.approved and d.reason == "ok from phone"
    assert approver.pending() == []
    assert not approver.resolve("r1", False)  # already answered


async def test_queue_approver_cancelled_request_is_forgotten() -> None:
    approver = QueueApprover()
    task = asyncio.create_task(approver.request(REQ))
    await approver.requests.get()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert approver.pending() == [] and not approver.resolve("r1", True)


def test_announce_goes_to_the_current_listener_only() -> None:
    got: list[ApprovalRequest] = []
    announce_approval_request(REQ)  # no listener: nothing happens
    token = approval_listener.set(got.append)
    try:
        announce_approval_request(REQ)
    finally:
        approval_listener.reset(token)
    announce_approval_request(REQ)
    assert got == [REQ]


async def test_refusals_no_person_gave_are_marked_no_answer(tty: tuple[TtyPipe, int]) -> None:
    no_tty = await CliApprover(stdin=io.StringIO("y\n"), stdout=io.StringIO()).request(REQ)
    assert isinstance(no_tty, NoAnswer) and not no_tty.asked and not no_tty.approved
    reader, w = tty
    os.close(w)
    closed = await asyncio.wait_for(CliApprover(stdin=reader, stdout=io.StringIO()).request(REQ), 5)
    assert isinstance(closed, NoAnswer) and closed.asked and not closed.approved


async def test_default_reasons_say_who_decided() -> None:
    async def no(r: ApprovalRequest) -> bool:
        return False

    assert (await CallbackApprover(no).request(REQ)).reason == "refused by the approval callback"
    approver = QueueApprover()
    task = asyncio.create_task(approver.request(REQ))
    await approver.requests.get()
    approver.resolve("r1", False)
    assert (await task).reason == "refused by the user"
