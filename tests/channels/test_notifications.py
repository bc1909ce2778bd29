"""Notifications go to the channels that asked for their kind; none is lost without a trace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from clawseed_edge.api import Channel
from clawseed_edge.channels.notifications import Notifications


class FakeChannel:
    """A channel that keeps what it was given."""

    answerers = 0

    def __init__(self, name: str, *, broken: bool = False) -> None:
        self.name = name
        self.broken = broken
        self.got: list[dict[str, Any]] = []

    async def start(self) -> None:
        pass

    async def stop(self, reason: str) -> None:
        pass

    def deliver(self, frame: Mapping[str, Any]) -> None:
        if self.broken:
            raise OSError("the chat service is down")
        self.got.append(dict(frame))

    def ask(self, frame: Mapping[str, Any]) -> None:
        pass

    def abort_turns(self, reason: str) -> int:
        return 0


def test_a_job_answer_reaches_the_channels_that_asked_for_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    phone, family, broken = (
        FakeChannel("gateway"),
        FakeChannel("telegram"),
        FakeChannel("x", broken=True),
    )
    assert isinstance(phone, Channel)
    notifications = Notifications()
    notifications.subscribe(phone)  # everything
    stop_family = notifications.subscribe(family, kinds=["estop"])  # emergencies only
    notifications.subscribe(broken)
    answer = {"type": "job_result", "job": "water", "text": "Watered."}
    assert notifications.notify(answer) == 1  # the broken channel is logged, not counted
    assert notifications.notify({"type": "estop", "by": "phone", "failures": []}) == 2
    stop_family()
    assert notifications.notify({"type": "estop", "by": "again", "failures": []}) == 1
    assert [f["type"] for f in phone.got] == ["job_result", "estop", "estop"]
    assert [f["by"] for f in family.got] == ["phone"]
    assert any("could not take a job_result" in r.getMessage() for r in caplog.records)


def test_a_notification_no_channel_asked_for_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO")
    assert Notifications().notify({"type": "job_result", "text": "Watered."}) == 0
    assert any("no channel asked for it" in r.getMessage() for r in caplog.records)


def test_a_frame_with_to_reaches_only_those_places(caplog: pytest.LogCaptureFixture) -> None:
    notifications = Notifications()
    gateway, telegram, mqtt = FakeChannel("gateway"), FakeChannel("telegram"), FakeChannel("mqtt")
    for channel in (gateway, telegram, mqtt):
        notifications.subscribe(channel)
    frame = {"type": "notification", "text": "door open", "to": ["phones", "log"]}
    with caplog.at_level("INFO", logger="clawseed_edge.channels.notifications"):
        assert notifications.notify(frame) == 1
    assert [f["text"] for f in gateway.got] == ["door open"]  # phones: the gateway
    assert telegram.got == [] and mqtt.got == []
    assert "notification: door open" in caplog.text
