"""ApprovalBroker without sockets: first answer wins, timeouts and cancellation are logged."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawseed_edge.api import ApprovalRequest
from clawseed_edge.channels.approvals import ApprovalBroker


class Inbox(list[dict[str, Any]]):
    """A subscriber that records frames and says when the first arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = asyncio.Event()

    def __call__(self, frame: dict[str, Any]) -> None:
        self.append(frame)
        self.arrived.set()


REQUEST = ApprovalRequest(
    "r1", "gpio_switch", {"device": "fan", "on": True}, "act", "switch fan on"
)


async def test_no_answer_in_time_is_a_refusal_with_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broker = ApprovalBroker(timeout_s=0.01)
    sent: list[dict[str, Any]] = []
    broker.subscribe("phone", sent.append)
    decision = await broker.request(REQUEST)
    assert not decision.approved and "no answer" in decision.reason
    assert sent[0]["type"] == "approval_request" and sent[0]["summary"] == "switch fan on"
    assert any("refused" in r.getMessage() for r in caplog.records)


async def test_a_cancelled_request_is_logged_as_refused(caplog: pytest.LogCaptureFixture) -> None:
    broker = ApprovalBroker(timeout_s=60)
    sent = Inbox()
    broker.subscribe("phone", sent)
    task = asyncio.create_task(broker.request(REQUEST))
    await sent.arrived.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert broker.pending() == []
    assert any("approval_timeout_s passed" in r.getMessage() for r in caplog.records)
    assert not broker.resolve("r1", True), "a withdrawn request cannot be answered"


async def test_a_client_connecting_while_a_request_waits_gets_it() -> None:
    broker = ApprovalBroker(timeout_s=60)
    early = Inbox()
    broker.subscribe("phone", early)
    task = asyncio.create_task(broker.request(REQUEST))
    await early.arrived.wait()
    late: list[dict[str, Any]] = []
    broker.subscribe("tablet", late.append)
    assert late and late[0]["id"] == "r1"
    assert broker.resolve("r1", False, by="tablet")
    decision = await task
    assert not decision.approved and "tablet" in decision.reason


async def test_a_subscriber_that_cannot_answer_is_not_waited_for() -> None:
    broker = ApprovalBroker(timeout_s=60)
    display: list[dict[str, Any]] = []
    broker.subscribe("kitchen-display", display.append, answers=False)
    decision = await asyncio.wait_for(broker.request(REQUEST), 5)  # at once, not after 60 s
    assert not decision.approved and "no paired client" in decision.reason
    assert broker.answerers == 0


async def test_any_channels_people_are_asked_and_the_first_answer_wins() -> None:
    broker = ApprovalBroker(timeout_s=60)
    phone, chat = Inbox(), Inbox()
    display: list[dict[str, Any]] = []
    broker.subscribe("gateway:phone", phone, resolutions=True)
    broker.subscribe("telegram:family", chat, resolutions=True)
    broker.subscribe("kitchen-display", display.append, resolutions=True, answers=False)
    task = asyncio.create_task(broker.request(REQUEST))
    await phone.arrived.wait()
    assert [f["id"] for f in chat] == ["r1"] and [f["id"] for f in display] == ["r1"]
    assert broker.resolve("r1", True, by="family")
    assert not broker.resolve("r1", False, by="phone"), "the second answer is too late"
    decision = await task
    assert decision.approved and "family" in decision.reason
    for inbox in (phone, chat, display):
        assert inbox[-1] == {"type": "approval_resolved", "id": "r1", "outcome": "approved"}
