"""In headless Chromium: "send me a photo when the door opens", end to end.

The running gateway (sim pins, a simulated camera whose scene is the door contact, an automation
on its motion that takes a snapshot and notifies Telegram) is given a door that opens; the fake
Bot API receives the photo, and the web app's devices screen shows the very same JPEG.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

import pytest

from clawseed_edge.testing.fake_servers import FakeBotApi
from clawseed_edge.testing.hardware import press

from .conftest import CONFIG, GatewayThread
from .test_webapp import expect, open_paired

pytestmark = pytest.mark.slow

TOKEN = "987654321:AAH-e2e-door-photo-token-value"
OWNER = 4242

EXTRA = """
[channels.telegram]
enabled = true
allowed_users = [{owner}]
api_base = "{url}"
poll_timeout_s = 1
[[devices]]
name = "front_door"
pin = "GPIO5"
kind = "button"
[[cameras]]
name = "porch_cam"
resolution = [160, 120]
fps = 5
motion_min_area = 0.05
sim_door = "front_door"
[[automations]]
name = "door_photo"
when = "porch_cam.motion"
do = {{ tool = "camera_snapshot", arguments = {{ camera = "porch_cam" }} }}
notify = ["telegram"]
"""

#: Set by the ``bot`` fixture before the module's gateway starts (it needs the fake's URL).
GATEWAY_CONFIG = CONFIG


@pytest.fixture(scope="module", autouse=True)
def bot(request: pytest.FixtureRequest) -> Iterator[FakeBotApi]:
    # Autouse: made before the module's gateway, which reads GATEWAY_CONFIG when it starts.
    pytest.importorskip("PIL.Image")  # the motion detector's thumbnails
    with FakeBotApi(token=TOKEN) as fake, pytest.MonkeyPatch.context() as mp:
        mp.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
        mp.setattr(
            request.module, "GATEWAY_CONFIG", CONFIG + EXTRA.format(owner=OWNER, url=fake.url)
        )
        yield fake


def until(check: Any, what: str, timeout_s: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def test_the_door_opens_the_phone_gets_the_photo_and_the_web_app_shows_it(
    browser: Any, gateway: GatewayThread, bot: FakeBotApi
) -> None:
    peripherals = gateway.service.runtime.peripherals
    pi = next(p for p in peripherals if p.name == "pi")
    cameras = next(p for p in peripherals if p.name == "cameras")
    # The detector's first frame (door closed) is its reference; then the door opens.
    until(lambda: cameras.motion("porch_cam") is not None, "the motion detector's first frame")
    until(lambda: cameras.states.devices(), "the first motion state")
    press(pi, "front_door")
    (photo,) = until(lambda: list(bot.photos), "a photo sent to the fake Bot API")
    assert photo.chat_id == OWNER
    assert photo.caption.startswith("Automation door_photo fired")
    stored = cameras.latest("porch_cam")
    assert stored is not None and photo.photo == stored.read_bytes()

    page = open_paired(browser, gateway)
    page.get_by_role("button", name="Devices").click()
    image = page.get_by_role("img", name="Latest picture from porch_cam")
    expect(image).to_be_visible()
    page.wait_for_function(
        "() => { const i = document.querySelector('#cameras img'); "
        "return i && i.complete && i.naturalWidth > 0; }"
    )
    assert image.evaluate("(img) => [img.naturalWidth, img.naturalHeight]") == [160, 120]
    # The browser shows the bytes the phone got: the snapshot the automation took.
    src = image.get_attribute("src") or ""
    assert src.startswith("data:image/jpeg;base64,")
    assert base64.b64decode(src.split(",", 1)[1]) == photo.photo
    page.context.close()
