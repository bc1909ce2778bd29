"""A chat turn whose tools took pictures sends them with sendPhoto, after its answer.

The service runs a simulated camera; a scripted vision model calls ``camera_snapshot``; the fake
Bot API receives the upload, whose bytes must be the JPEG the camera's store kept.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from clawseed_edge.api import ChatResponse, ToolResult
from clawseed_edge.channels.telegram.client import BotApi
from clawseed_edge.channels.telegram.outbox import Outbox
from clawseed_edge.channels.telegram.photos import MAX_PHOTO_BYTES, TurnPhotos
from clawseed_edge.peripherals.camera.bank import CameraBank
from clawseed_edge.service import Service
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi

from .conftest import OWNER, TOKEN, config, running_bot

CAMERA = """
[[cameras]]
name = "porch_cam"
resolution = [160, 120]
max_per_minute = 10
"""


def snapshot(**arguments: object) -> ChatResponse:
    return ScriptedProvider.call("camera_snapshot", camera="porch_cam", **arguments)


def bank_of(service: Service) -> CameraBank:
    assert service.runtime is not None
    return next(p for p in service.runtime.peripherals if isinstance(p, CameraBank))


async def test_a_turn_sends_the_snapshot_its_tool_took(
    clawseed_home: Path, bot: FakeBotApi
) -> None:
    provider = ScriptedProvider([snapshot(), "A porch, nobody there."], streaming=True, vision=True)
    async with running_bot(clawseed_home, bot, provider, config(bot) + CAMERA) as service:
        bot.push_message(OWNER, "what does the porch look like?")
        answer = await bot.wait_for_message(OWNER, "A porch, nobody there.")
        (photo,) = await bot.wait_until(lambda: bot.photos, what="the photo")
        stored = bank_of(service).latest("porch_cam")
    assert stored is not None
    assert photo.chat_id == OWNER
    assert photo.photo == stored.read_bytes(), "the stored JPEG, byte for byte"
    assert photo.photo[:2] == b"\xff\xd8"
    assert photo.caption == "Picture from camera porch_cam"
    assert photo.message_id > answer.message_id, "the answer first, then its picture"
    assert "camera_snapshot" in answer.text


async def test_a_turn_without_pictures_sends_none(clawseed_home: Path, bot: FakeBotApi) -> None:
    # A tool without pictures, and a snapshot refused to a model that cannot see.
    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="porch_light", on=True), snapshot(), "On."],
        streaming=True,
    )
    async with running_bot(clawseed_home, bot, provider, config(bot) + CAMERA):
        bot.push_message(OWNER, "porch light on")
        await bot.wait_for_message(OWNER, "On.")
        # A later reply: had the turn sent a photo, it would have gone before this.
        bot.push_message(OWNER, "/status")
        await bot.wait_for_message(OWNER, "Devices:")
    assert bot.photos == []
    assert bot.calls_of("sendPhoto") == []
    assert "cannot see images" in str(provider.requests[-1].messages[-1].content)


async def test_a_refused_upload_is_told_and_the_answer_still_arrives(
    clawseed_home: Path, bot: FakeBotApi, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    bot.fail("sendPhoto", 400, "Bad Request: IMAGE_PROCESS_FAILED")
    provider = ScriptedProvider([snapshot(), "Here it is."], streaming=True, vision=True)
    async with running_bot(clawseed_home, bot, provider, config(bot) + CAMERA) as service:
        bot.push_message(OWNER, "show me the porch")
        await bot.wait_for_message(OWNER, "Here it is.")
        told = await bot.wait_for_message(OWNER, "could not be sent")
        stored = bank_of(service).latest("porch_cam")
    assert told.text == (
        "Picture from camera porch_cam\n"
        "(the photo could not be sent: Telegram said: Bad Request: IMAGE_PROCESS_FAILED)"
    )
    assert bot.photos == [] and len(bot.calls_of("sendPhoto")) == 1
    assert stored is not None
    jpeg = stored.read_bytes()
    for record in caplog.records:  # the bytes are never logged, as bytes or as text
        assert not any(isinstance(a, bytes | bytearray) for a in (record.args or ()))
        assert repr(jpeg[:24])[2:-1] not in record.getMessage()


async def test_at_most_four_photos_a_turn_the_rest_named(
    clawseed_home: Path, bot: FakeBotApi
) -> None:
    provider = ScriptedProvider(
        [*(snapshot(width=64 + 8 * i) for i in range(5)), "Five pictures."],
        streaming=True,
        vision=True,
    )
    async with running_bot(clawseed_home, bot, provider, config(bot) + CAMERA) as service:
        bot.push_message(OWNER, "take five")
        await bot.wait_for_message(OWNER, "Five pictures.")
        rest = await bot.wait_for_message(OWNER, "1 more picture(s)")
        files = bank_of(service)._cameras["porch_cam"].store.files()
    assert len(files) == 5
    assert [p.photo for p in bot.photos] == [f.read_bytes() for f in files[:4]]
    assert f"snapshots/porch_cam/{files[4].name}" in rest.text
    assert rest.message_id > bot.photos[-1].message_id


class _Store:
    """Stands in for the camera bank: one camera, one stored file (or none)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def camera_names(self) -> list[str]:
        return ["porch_cam"]

    def stored(self, camera: str, file: str) -> Path | None:
        return self.path if self.path is not None and self.path.name == file else None


def _taken(file: str) -> ToolResult:
    return ToolResult.ok("taken", {"camera": "porch_cam", "path": f"/x/{file}"}, images=("AA==",))


async def test_a_picture_gone_or_too_large_is_told_in_text(tmp_path: Path, bot: FakeBotApi) -> None:
    big = tmp_path / "porch_cam-big.jpg"
    big.write_bytes(b"\xff\xd8" + bytes(MAX_PHOTO_BYTES))
    photos = TurnPhotos()
    photos.add(_taken("porch_cam-gone.jpg"))
    photos.add(_taken(big.name))
    photos.add(ToolResult.ok("taken", {"camera": "porch_cam", "path": "/x/../etc"}, images=("A",)))
    assert len(photos.pictures) == 2, "a name that is not a stored snapshot's is no picture"
    api = BotApi(TOKEN, bot.url)
    try:
        await photos.send(Outbox(api, {"send_errors": 0}), OWNER, [_Store(big)])
    finally:
        await api.aclose()
    gone, large = bot.texts_to(OWNER)
    assert "no longer keeps snapshots/porch_cam/porch_cam-gone.jpg" in gone
    assert large.endswith(
        "(the photo could not be sent: the photo is over Telegram's 10,000,000 bytes)"
    )
    assert bot.calls_of("sendPhoto") == []
