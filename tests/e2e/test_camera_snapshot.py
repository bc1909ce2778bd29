"""The devices screen shows each camera's newest stored picture, in headless Chromium."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import CONFIG, GatewayThread
from .test_webapp import expect, open_paired

pytestmark = pytest.mark.slow

GATEWAY_CONFIG = CONFIG + '[[cameras]]\nname = "porch_cam"\nresolution = [160, 120]\n'


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
