"""With ``require_pairing = false`` (loopback development) the app skips the pairing screen."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import CONFIG, GatewayThread

pytestmark = pytest.mark.slow

GATEWAY_CONFIG = CONFIG.replace("[gateway]\n", "[gateway]\nrequire_pairing = false\n")


def test_without_pairing_the_app_opens_on_chat_and_answers(
    browser: Any, gateway: GatewayThread
) -> None:
    from playwright.sync_api import expect

    assert "require_pairing = false" in GATEWAY_CONFIG
    page = browser.new_page(viewport={"width": 360, "height": 780}, base_url=gateway.url)
    page.goto("/")
    expect(page.locator("#link-state")).to_have_text("Connected")
    expect(page.get_by_role("heading", name="Pair this browser")).to_be_hidden()
    gateway.script("No code needed here.")
    page.get_by_label("Message").fill("hello")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#messages li.assistant .text")).to_have_text("No code needed here.")
    page.context.close()
