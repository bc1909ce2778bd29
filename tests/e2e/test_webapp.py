"""The phone web app in headless Chromium against a running gateway (simulated pins, a scripted
model): pairing, streamed chat with tool cards, approvals, the dashboard, estop, resume, a
rejected token, an unreachable model or gateway, screenshots and accessible names."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import (
    ChatResponse,
    ProviderUnreachable,
    SessionStore,
    StopReason,
    ToolCall,
    ToolContext,
)
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import mock_pin, pin_level

from .conftest import GatewayThread

pytestmark = pytest.mark.slow

PHONE = {"width": 360, "height": 780}
DESKTOP = {"width": 1280, "height": 800}
OUTPUTS = ("red_led", "pump", "fan")
#: Roles a person operates; each must have an accessible name.
CONTROL_ROLES = (
    "button",
    "link",
    "textbox",
    "switch",
    "slider",
    "combobox",
    "checkbox",
    "spinbutton",
    "radio",
    "tab",
    "menuitem",
    "searchbox",
)


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def open_app(
    browser: Any, gateway: GatewayThread, viewport: dict[str, int] = PHONE, **options: Any
) -> Any:
    context = browser.new_context(viewport=viewport, base_url=gateway.url, **options)
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.goto("/")
    return page


def open_paired(browser: Any, gateway: GatewayThread, viewport: dict[str, int] = PHONE) -> Any:
    """The app with a token already in the browser (paired over HTTP: the pairing screen has
    tests of its own), connected."""
    assert gateway.gateway is not None
    token = gateway.run(gateway.gateway.pair("e2e-browser"))
    context = browser.new_context(viewport=viewport, base_url=gateway.url)
    context.set_default_timeout(10_000)
    context.add_init_script(
        f"if (!localStorage.getItem('clawseed.token')) localStorage.setItem('clawseed.token', {json.dumps(token)})"
    )
    page = context.new_page()
    page.goto("/")
    expect(page.locator("#link-state")).to_have_text("Connected")
    return page


def pair(page: Any, gateway: GatewayThread) -> None:
    code = page.get_by_label("Pairing code")
    expect(code).to_be_visible()
    code.fill(gateway.new_code())
    page.get_by_role("button", name="Pair", exact=True).click()
    expect(page.get_by_role("navigation", name="Screens")).to_be_visible()
    expect(page.locator("#link-state")).to_have_text("Connected")


def gpio(gateway: GatewayThread) -> Any:
    return gateway.service.runtime.peripherals[0]


def level(gateway: GatewayThread, device: str) -> float:
    board = gpio(gateway)
    return gateway.call(lambda: pin_level(board, device))


def switch_directly(gateway: GatewayThread, device: str, on: bool) -> None:
    """Set an output as the board would see it, without asking anyone (test setup only)."""
    tool = gateway.service.runtime.agent.registry.get("gpio_switch")
    result = gateway.run(tool.execute({"device": device, "on": on}, ToolContext(session_id="t")))
    assert result.success, result.error


def approve(page: Any, device: str) -> None:
    dialog = page.get_by_role("dialog", name="Approve this action?")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#approval-device")).to_have_text(device)
    expect(page.locator("#deny")).to_be_focused()  # the safe answer has the focus
    dialog.get_by_role("button", name="Approve").click()
    expect(dialog).to_be_hidden()


def device_state(page: Any, device: str) -> Any:
    return page.locator(f'#devices li[data-name="{device}"] .device-state')


def unnamed_controls(page: Any) -> list[str]:
    """Lines of the page's accessibility tree (Chromium's own) for a control with no name."""
    snapshot = page.locator("body").aria_snapshot()
    pattern = re.compile(rf"^\s*- ({'|'.join(CONTROL_ROLES)})(\s*\[[^\]]*\])*\s*(:.*)?$")
    return [line for line in snapshot.splitlines() if pattern.match(line)]


def shoot(page: Any, artifacts: Path, name: str) -> Path:
    size = page.viewport_size
    path = artifacts / f"{name}-{size['width']}x{size['height']}.png"
    path.write_bytes(page.screenshot())  # not path=: Playwright would write from a thread pool
    assert path.stat().st_size > 1000
    return path


def test_pair_then_a_streamed_answer_with_thinking_and_a_tool_card(
    browser: Any, gateway: GatewayThread, artifacts: Path
) -> None:
    page = open_app(browser, gateway)
    frames: list[dict[str, Any]] = []
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda payload: frames.append(json.loads(payload))),
    )
    pair(page, gateway)
    gateway.script(
        ChatResponse(
            text="",
            thinking="The user wants the state of the devices.",
            tool_calls=(ToolCall("hardware_status", {}),),
            stop_reason=StopReason.TOOL_USE,
        ),
        "All quiet: the red LED and the pump are off.",
    )
    page.get_by_label("Message").fill("what is switched on?")
    page.get_by_label("Message").press("Enter")

    answer = page.locator("#messages li.assistant").last
    expect(answer.locator(".text")).to_have_text("All quiet: the red LED and the pump are off.")
    card = answer.get_by_role("article", name="Tool call hardware_status")
    # A short summary on the card; the raw result is folded away under "Details".
    expect(card.locator(".tool-summary")).to_contain_text("Done")
    expect(card.locator(".tool-result")).to_be_hidden()
    assert len(card.locator(".tool-summary").inner_text()) <= 110
    card.get_by_text("Details").click()
    expect(card.locator(".tool-args")).to_have_text("{}")
    expect(card.locator(".tool-result")).to_contain_text("red_led: led on GPIO17")
    thinking = answer.locator("details.thinking")
    expect(thinking).not_to_have_attribute("open", re.compile(".*"))  # collapsed
    expect(thinking.locator("pre")).to_have_text("The user wants the state of the devices.")
    chunks = [f for f in frames if f["type"] == "chunk"]
    assert len(chunks) > 1, "the answer arrived in pieces (streamed), not as one frame"
    expect(page.locator("#regenerate")).to_be_enabled()
    shoot(page, artifacts, "chat")
    page.set_viewport_size(DESKTOP)
    shoot(page, artifacts, "chat")
    page.context.close()


def test_approving_a_switch_from_chat_changes_the_dashboard(
    browser: Any, gateway: GatewayThread, artifacts: Path
) -> None:
    switch_directly(gateway, "red_led", False)
    page = open_paired(browser, gateway)
    gateway.script(
        ScriptedProvider.call("gpio_switch", device="red_led", on=True), "The red LED is on."
    )
    page.get_by_label("Message").fill("turn on the red led")
    page.get_by_role("button", name="Send").click()
    dialog = page.get_by_role("dialog", name="Approve this action?")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#approval-action")).to_contain_text("switch red_led")
    expect(dialog.locator("#approval-action")).to_contain_text("on")
    # Device, action and value, not internal ids (the tool's name, the session id).
    expect(dialog.locator("#approval-value")).to_have_text("on")
    expect(dialog).not_to_contain_text("gpio_switch")
    expect(dialog).not_to_contain_text("ws-")
    expect(page.get_by_role("button", name=re.compile("^Emergency stop"))).to_be_enabled()
    assert level(gateway, "red_led") == 0, "nothing switched before the answer"
    shoot(page, artifacts, "approval")
    approve(page, "red_led")

    answer = page.locator("#messages li.assistant").last
    expect(answer.locator(".text")).to_have_text("The red LED is on.")
    expect(answer.get_by_role("article", name="Tool call gpio_switch")).to_have_class(
        re.compile(r"\bok\b")
    )
    page.get_by_role("button", name="Devices").click()
    expect(device_state(page, "red_led")).to_have_text("State: on")
    assert level(gateway, "red_led") == 1
    page.context.close()


def test_an_approval_reaches_the_user_on_another_screen(
    browser: Any, gateway: GatewayThread
) -> None:
    switch_directly(gateway, "pump", False)
    page = open_paired(browser, gateway)
    page.get_by_role("button", name="Settings").click()
    gateway.script(ScriptedProvider.call("gpio_switch", device="pump", on=True), "Pump on.")
    board = gpio(gateway)
    gateway.call(lambda: mock_pin(board, "doorbell").drive_low())  # a button-triggered turn
    approve(page, "pump")
    gateway.call(lambda: mock_pin(board, "doorbell").drive_high())
    page.get_by_role("button", name="Devices").click()
    expect(device_state(page, "pump")).to_have_text("State: on")
    assert level(gateway, "pump") == 1
    page.context.close()


def test_stop_answer_aborts_the_turn_and_regenerate_replaces_the_answer(
    browser: Any, gateway: GatewayThread
) -> None:
    page = open_paired(browser, gateway)
    gateway.script("A first answer.")
    page.get_by_label("Message").fill("write me a haiku")
    page.get_by_role("button", name="Send").click()
    answers = page.locator("#messages li.assistant")
    expect(answers.last.locator(".text")).to_have_text("A first answer.")
    gateway.script("A better answer.")
    page.get_by_role("button", name="Regenerate").click()
    expect(answers).to_have_count(1)
    expect(answers.last.locator(".text")).to_have_text("A better answer.")

    provider = gateway.provider
    gateway.call(lambda: setattr(provider, "delay_s", 30.0))  # a model that takes its time
    try:
        page.get_by_label("Message").fill("and another one")
        page.get_by_role("button", name="Send").click()
        page.get_by_role("button", name="Stop answer").click()
        expect(answers.last.locator(".note")).to_contain_text("Stopped: aborted by the client")
        expect(page.get_by_role("button", name="Send")).to_be_enabled()
        expect(page.get_by_role("button", name="Stop answer")).to_be_disabled()
    finally:
        gateway.call(lambda: setattr(provider, "delay_s", 0.0))
    page.context.close()


def test_dashboard_switch_and_level_go_through_the_policy_and_show_live_state(
    browser: Any, gateway: GatewayThread, artifacts: Path
) -> None:
    switch_directly(gateway, "pump", False)
    page = open_paired(browser, gateway)
    page.get_by_role("button", name="Devices").click()
    # A switch control named for the device; its state is aria-checked, not a label.
    pump = page.get_by_role("switch", name="pump", exact=True)
    expect(pump).to_have_attribute("aria-checked", "false")
    expect(pump).to_have_text("")
    pump.click()
    # Supervised guards the model: a person's dashboard switch acts at once, no approval asked.
    expect(device_state(page, "pump")).to_have_text("State: on")
    expect(page.get_by_role("dialog", name="Approve this action?")).to_have_count(0)
    expect(page.get_by_role("switch", name="pump", exact=True)).to_have_attribute(
        "aria-checked", "true"
    )
    assert level(gateway, "pump") == 1

    page.get_by_role("slider", name="fan level").fill("0.5")
    expect(device_state(page, "fan")).to_have_text("State: level 0.50")
    assert level(gateway, "fan") == pytest.approx(0.5)

    # Live state from the event stream: a change made elsewhere shows up without a click.
    switch_directly(gateway, "pump", False)
    expect(device_state(page, "pump")).to_have_text("State: off")

    sensor = page.locator('#sensors li[data-name="greenhouse"]')
    expect(sensor).to_contain_text(re.compile(r"temperature: [-0-9.]+ °C"))
    expect(sensor).to_contain_text("hPa")
    expect(sensor.get_by_role("img", name=re.compile("greenhouse temperature"))).to_be_visible()
    expect(page.locator("#boards")).to_contain_text("Connected")
    shoot(page, artifacts, "devices")
    page.set_viewport_size(DESKTOP)
    shoot(page, artifacts, "devices")
    page.context.close()


def test_estop_sets_every_output_safe(
    browser: Any, gateway: GatewayThread, artifacts: Path
) -> None:
    switch_directly(gateway, "red_led", True)
    switch_directly(gateway, "pump", True)
    page = open_paired(browser, gateway)
    page.get_by_role("button", name="Devices").click()
    expect(device_state(page, "red_led")).to_have_text("State: on")
    expect(device_state(page, "pump")).to_have_text("State: on")

    page.get_by_role("button", name=re.compile("^Emergency stop")).click()
    expect(page.locator("#banner")).to_contain_text("every output is at its safe value")
    for device in ("red_led", "pump"):
        expect(device_state(page, device)).to_have_text("State: off")
    expect(device_state(page, "fan")).to_have_text("State: level 0.00")
    assert [level(gateway, d) for d in OUTPUTS] == [0, 0, 0]
    # The stop latches: a banner says so until a person resets it here.
    expect(page.locator("#latch")).to_contain_text("Emergency stop latched")
    shoot(page, artifacts, "estop")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Reset the emergency stop").click()
    expect(page.locator("#latch")).to_be_hidden()
    expect(page.locator("#banner")).to_contain_text("still at its safe level")
    assert [level(gateway, d) for d in OUTPUTS] == [0, 0, 0]  # the reset switched nothing
    page.context.close()


def test_reload_resumes_the_session_and_sessions_can_be_resumed(
    browser: Any, gateway: GatewayThread
) -> None:
    page = open_paired(browser, gateway)
    gateway.script("Noted: the seed is planted.")
    page.get_by_label("Message").fill("remember the seed")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#messages li.assistant").last.locator(".text")).to_have_text(
        "Noted: the seed is planted."
    )
    session_id = page.evaluate("localStorage.getItem('clawseed.session')")
    assert session_id
    wait_saved(gateway, session_id)

    page.reload()
    expect(page.locator("#chat-session")).to_contain_text("resumed, 2 messages")
    messages = page.locator("#messages li")
    expect(messages).to_have_count(2)
    expect(messages.first).to_contain_text("remember the seed")
    expect(messages.last).to_contain_text("Noted: the seed is planted.")

    page.get_by_role("button", name="Sessions").click()
    page.get_by_role("button", name="New chat").click()
    expect(page.locator("#messages li")).to_have_count(0)
    expect(page.locator("#chat-session")).not_to_contain_text("resumed")
    page.get_by_role("button", name="Sessions").click()
    page.get_by_role("button", name="Resume remember the seed").click()
    expect(page.locator("#messages li")).to_have_count(2)
    assert page.evaluate("localStorage.getItem('clawseed.session')") == session_id
    page.context.close()


def wait_saved(gateway: GatewayThread, session_id: str) -> None:
    """Until the finished turn's history is stored (it is saved just after 'done')."""
    store = gateway.service.runtime.agent.session_store
    assert isinstance(store, SessionStore)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if len(gateway.run(store.load_history(session_id))) >= 2:
            return
        time.sleep(0.05)
    raise AssertionError(f"session {session_id} was not saved")


def test_a_wrong_token_leads_back_to_pairing(browser: Any, gateway: GatewayThread) -> None:
    context = browser.new_context(viewport=PHONE, base_url=gateway.url)
    context.add_init_script("localStorage.setItem('clawseed.token', 'not-a-token-of-this-device')")
    page = context.new_page()
    page.goto("/")
    expect(page.get_by_role("heading", name="Pair this browser")).to_be_visible()
    expect(page.locator("#pair-error")).to_contain_text("token was rejected")
    expect(page.get_by_role("navigation", name="Screens")).to_be_hidden()
    expect(page.locator("#estop")).to_be_hidden()
    assert page.evaluate("localStorage.getItem('clawseed.token')") is None
    context.close()


def test_a_model_that_cannot_be_reached_leaves_devices_and_estop_working(
    browser: Any, gateway: GatewayThread
) -> None:
    page = open_paired(browser, gateway)
    gateway.script(
        ProviderUnreachable(
            "nothing answered at 127.0.0.1:11434", provider="ollama", model="llama3"
        )
    )
    page.get_by_label("Message").fill("hello?")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#banner")).to_contain_text("The model cannot be reached")
    expect(page.locator("#banner")).to_contain_text("STOP button still work")
    expect(page.locator("#messages li.assistant").last).to_contain_text("Error:")
    expect(page.locator("#send")).to_be_enabled()
    page.get_by_role("button", name="Devices").click()
    expect(device_state(page, "red_led")).to_be_visible()
    page.get_by_role("button", name=re.compile("^Emergency stop")).click()
    expect(page.locator("#banner")).to_contain_text("every output is at its safe value")
    page.context.close()


def test_an_unreachable_gateway_greys_the_last_values_and_the_app_recovers(
    browser: Any, gateway: GatewayThread
) -> None:
    page = open_paired(browser, gateway)
    page.get_by_role("button", name="Devices").click()
    expect(device_state(page, "red_led")).to_be_visible()
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")  # the shell is cached
    page.context.set_offline(True)
    page.reload()  # the shell comes from the service worker's cache
    expect(page.locator("#link-state")).to_contain_text("Offline, retrying")
    expect(page.locator("#banner")).to_contain_text("cannot be reached")
    expect(page.locator("body")).to_have_class(re.compile(r"\boffline\b"))
    # The last known values stay on screen, greyed, and say they are not live.
    page.get_by_role("button", name="Devices").click()
    expect(device_state(page, "red_led")).to_be_visible()
    assert page.locator("#devices").evaluate("e => getComputedStyle(e).opacity") == "0.45"
    expect(page.locator("#devices-note")).to_contain_text("Last known values")
    page.context.set_offline(False)
    expect(page.locator("#link-state")).to_have_text("Connected", timeout=20_000)
    expect(page.locator("body")).not_to_have_class(re.compile(r"\boffline\b"))
    expect(page.locator("#devices-note")).to_have_text("")
    page.context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_every_screen_has_named_controls_and_is_screenshotted(
    browser: Any, gateway: GatewayThread, artifacts: Path, viewport: dict[str, int]
) -> None:
    scheme = "dark" if viewport is PHONE else "light"
    page = open_app(browser, gateway, viewport, color_scheme=scheme)
    assert unnamed_controls(page) == []
    shoot(page, artifacts, f"pair-{scheme}")
    pair(page, gateway)
    for screen in ("Chat", "Devices", "Sessions", "Settings"):
        page.get_by_role("button", name=screen, exact=True).click()
        expect(page.get_by_role("button", name=screen, exact=True)).to_have_attribute(
            "aria-current", "page"
        )
        if screen == "Devices":
            expect(page.locator('#sensors li[data-name="greenhouse"]')).to_be_visible()
        if screen == "Settings":
            expect(page.locator("#personality-status")).not_to_have_text("Loading…")
        assert unnamed_controls(page) == [], screen
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport["width"], f"{screen} scrolls sideways: {width} px"
        shoot(page, artifacts, f"{screen.lower()}-{scheme}")
    page.context.close()


def test_the_personality_file_is_edited_from_settings(browser: Any, gateway: GatewayThread) -> None:
    page = open_paired(browser, gateway)
    page.get_by_role("button", name="Settings").click()
    page.get_by_label("Personality file").select_option("USER.md")
    page.get_by_label("Contents").fill("The user grows tomatoes.")
    page.get_by_role("button", name="Save file").click()
    expect(page.locator("#personality-status")).to_contain_text("USER.md: saved")
    saved = gateway.service.runtime.workspace_dir / "USER.md"
    assert saved.read_text("utf-8") == "The user grows tomatoes."
    page.context.close()


def test_keyboard_alone_reaches_the_composer_and_sends(
    browser: Any, gateway: GatewayThread
) -> None:
    page = open_app(browser, gateway)
    pair(page, gateway)
    gateway.script("Typed without a mouse.")
    page.reload()  # focus starts at the top of the page
    expect(page.locator("#link-state")).to_have_text("Connected")
    focused = []
    for _ in range(15):
        page.keyboard.press("Tab")
        focused.append(
            page.evaluate("document.activeElement.id || document.activeElement.textContent")
        )
        if focused[-1] == "message":
            break
    # The order a person meets them: skip link, STOP, the screens, then the conversation.
    assert focused[0] == "Skip to content", focused
    assert focused.index("estop") < focused.index("Chat") < focused.index("message"), focused
    page.keyboard.type("hello by keyboard")
    page.keyboard.press("Enter")
    expect(page.locator("#messages li.assistant").last.locator(".text")).to_have_text(
        "Typed without a mouse."
    )
    page.context.close()


def test_a_scheduled_jobs_answer_reaches_the_open_app(browser: Any, gateway: GatewayThread) -> None:
    from clawseed_edge.scheduler import Job, Schedule

    scheduler = gateway.service.scheduler
    assert scheduler is not None
    estop = gateway.service.emergency_stop
    gateway.run(estop.reset("the e2e test"))  # an earlier test's estop (module-wide gateway)
    gateway.call(scheduler.resume)
    page = open_paired(browser, gateway)
    page.get_by_role("button", name="Devices").click()  # the app listens on any screen
    expect(device_state(page, "red_led")).to_be_visible()
    job = Job.build(
        "wiring_report", Schedule.parse("every", 3600), tool="hardware_status", deliver=("phones",)
    )
    gateway.run(scheduler.store.add(job))
    run = gateway.run(scheduler.run_now("wiring_report"))
    assert run.status == "ok", run.error
    expect(page.get_by_role("alert")).to_contain_text("Scheduled job wiring_report: ")
    expect(page.get_by_role("alert")).to_contain_text("red_led")
    page.context.close()
