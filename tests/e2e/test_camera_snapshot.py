"""In headless Chromium: the devices screen shows each camera's newest stored picture, and the
chat shows the picture a turn took (loaded by URL, also after a reload)."""

from __future__ import annotations

from typing import Any

import pytest

from clawseed_edge.testing import ScriptedProvider

from .conftest import CONFIG, GatewayThread
from .test_webapp import expect, open_paired

pytestmark = pytest.mark.slow

GATEWAY_CONFIG = CONFIG + '[[cameras]]\nname = "porch_cam"\nresolution = [160, 120]\n'
GATEWAY_VISION = True  # the scripted model can see: camera_snapshot is not refused


def cameras(gateway: GatewayThread) -> Any:
    return next(p for p in gateway.service.runtime.peripherals if p.name == "cameras")


def test_the_latest_snapshot_is_shown_and_a_camera_without_one_says_so(
    browser: Any, gateway: GatewayThread
) -> None:
    page = open_paired(browser, gateway)
    page.get_by_role("button", name="Devices").click()
    card = page.locator('#cameras li[data-name="porch_cam"]')
    expect(card).to_contain_text("No picture yet")
    shot = gateway.run(cameras(gateway).snapshot("porch_cam"))
    page.reload()
    page.get_by_role("button", name="Devices").click()
    image = page.get_by_role("img", name="Latest picture from porch_cam")
    expect(image).to_be_visible()
    # The browser decoded the very JPEG the camera stored.
    page.wait_for_function(
        "() => { const i = document.querySelector('#cameras img'); return i && i.complete; }"
    )
    size = image.evaluate("(img) => [img.naturalWidth, img.naturalHeight]")
    assert size == [shot.width, shot.height] == [160, 120]
    page.context.close()


def natural_size(page: Any, selector: str) -> list[int]:
    """The decoded size of the first image ``selector`` finds, once it has loaded."""
    page.wait_for_function(
        f"() => {{ const i = document.querySelector({selector!r}); "
        "return i && i.complete && i.naturalWidth > 0; }"
    )
    return page.locator(selector).first.evaluate("(img) => [img.naturalWidth, img.naturalHeight]")


def test_a_turn_that_takes_a_snapshot_shows_the_picture_in_the_chat(
    browser: Any, gateway: GatewayThread
) -> None:
    page = open_paired(browser, gateway)
    gateway.script(
        ScriptedProvider.call("camera_snapshot", camera="porch_cam", width=96),
        "The porch is empty.",
    )
    page.get_by_label("Message").fill("what does the porch look like?")
    page.get_by_role("button", name="Send").click()
    answer = page.locator("#messages li.assistant").last
    expect(answer).to_contain_text("The porch is empty.")
    image = answer.get_by_role("img", name="Picture from porch_cam")
    expect(image).to_be_visible()
    # The browser decoded the very picture the turn took (96 wide: the width the model asked).
    assert natural_size(page, "#messages li.assistant img.snapshot") == [96, 72]
    latest = cameras(gateway).latest("porch_cam")
    assert image.get_attribute("src").startswith("data:image/jpeg;base64,")
    # After a reload the restored answer shows it again (from the snapshot store, by name).
    page.reload()
    expect(page.locator("#messages li.assistant").last).to_contain_text("The porch is empty.")
    assert natural_size(page, "#messages li.assistant img.snapshot") == [96, 72]
    assert cameras(gateway).latest("porch_cam") == latest  # viewing took no new picture
    page.context.close()
