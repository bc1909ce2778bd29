"""The web app on a 390x844 phone in Chromium: every turn's answer ends above the sticky
input box, and the screen tabs stay on screen however far the chat scrolls."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import ChatResponse, StopReason, ToolCall

from .conftest import CONFIG, GatewayThread
from .test_webapp import expect, open_paired, shoot, wait_saved

pytestmark = pytest.mark.slow

PHONE_390 = {"width": 390, "height": 844}
# The fan's level is capped: the slider must stop there.
GATEWAY_CONFIG = CONFIG.replace('kind = "pwm_led"\n', 'kind = "pwm_led"\nmax_level = 0.6\n', 1)
assert GATEWAY_CONFIG != CONFIG
LONG = " ".join(["The porch light is off and the pump is idle."] * 12)


def box(page: Any, selector: str) -> dict[str, float]:
    found = page.locator(selector).last.bounding_box()
    assert found is not None, f"{selector} is not rendered"
    return dict(found)


def test_every_answer_ends_above_the_input_and_the_tabs_stay_visible(
    browser: Any, gateway: GatewayThread, artifacts: Path
) -> None:
    page = open_paired(browser, gateway, PHONE_390)
    message = page.get_by_label("Message")
    for turn in range(1, 5):
        gateway.script(f"Answer {turn}. {LONG}")
        message.fill(f"question {turn}")
        message.press("Enter")
        answer = page.locator("#messages li.assistant").last
        expect(answer.locator(".text")).to_contain_text(f"Answer {turn}.")
        expect(page.locator("#regenerate")).to_be_enabled()  # the turn is done
        page.wait_for_timeout(100)  # let the last scroll land (layout, not a clock assert)
        answer_box = box(page, "#messages li.assistant")
        composer = box(page, "#composer")
        assert answer_box["y"] + answer_box["height"] <= composer["y"] + 1, (
            f"turn {turn}: the answer ends at {answer_box['y'] + answer_box['height']:.0f}px, "
            f"under the input box starting at {composer['y']:.0f}px"
        )
        tabs = box(page, "#tabs")
        assert tabs["y"] >= 0 and tabs["y"] + tabs["height"] <= PHONE_390["height"] / 3, (
            f"turn {turn}: the screen tabs scrolled away (top {tabs['y']:.0f}px)"
        )
        expect(page.get_by_role("navigation", name="Screens")).to_be_in_viewport()
    assert page.evaluate("window.scrollY") > 0, "the chat is long enough to scroll"
    stop = box(page, "#abort")
    assert stop["height"] < 60, "'Stop answer' stays on one line at 390 px"
    shoot(page, artifacts, "phone-chat")
    page.context.close()


def test_a_sensor_chart_spans_its_width_on_the_phone(
    browser: Any, gateway: GatewayThread, artifacts: Path
) -> None:
    page = open_paired(browser, gateway, PHONE_390)
    page.get_by_role("button", name="Devices").click()
    chart = page.locator('#sensors li[data-name="greenhouse"] svg.chart').first
    expect(chart.locator("polyline")).to_have_count(1)
    # Measured in one evaluation: a live reading redraws the chart, and three separate lookups
    # could each meet another drawing (or none, between two).
    boxes = chart.evaluate(
        """svg => {
            const size = e => e && (({width, height}) => ({width, height}))(e.getBoundingClientRect());
            return {svg: size(svg), line: size(svg.querySelector("polyline")),
                    plot: size(svg.querySelector("rect.plot"))};
        }"""
    )
    svg, line, plot = boxes["svg"], boxes["line"], boxes["plot"]  # plot: less the axis labels
    assert svg is not None and line is not None and plot is not None
    assert svg["height"] >= 48, "a chart tall enough to read"
    assert plot["width"] >= 0.8 * svg["width"], "the axis labels leave room for the readings"
    assert line["width"] >= 0.95 * plot["width"], (
        f"the readings line is {line['width']:.0f}px of a {plot['width']:.0f}px plot"
    )
    shoot(page, artifacts, "phone-devices")
    page.context.close()


def test_tool_cards_survive_a_reload(browser: Any, gateway: GatewayThread) -> None:
    page = open_paired(browser, gateway, PHONE_390)
    gateway.script(
        ChatResponse(
            text="", tool_calls=(ToolCall("hardware_status", {}),), stop_reason=StopReason.TOOL_USE
        ),
        "All quiet.",
    )
    page.get_by_label("Message").fill("status?")
    page.get_by_label("Message").press("Enter")
    answer = page.locator("#messages li.assistant").last
    expect(answer.locator(".text")).to_have_text("All quiet.")
    wait_saved(gateway, page.evaluate("localStorage.getItem('clawseed.session')"))
    page.reload()
    reloaded = page.locator("#messages li.assistant").last
    expect(reloaded.locator(".text")).to_have_text("All quiet.")
    card = reloaded.get_by_role("article", name="Tool call hardware_status")
    expect(card).to_have_class(re.compile(r"\bok\b"))
    expect(card.locator(".tool-summary")).to_contain_text("Done")
    page.context.close()


ABOVE_THE_INPUT = (
    "() => { const m = document.querySelector('#messages li:last-child');"
    " const c = document.getElementById('composer');"
    " return m && c && m.getBoundingClientRect().bottom <= c.getBoundingClientRect().top; }"
)


def test_after_a_reload_the_latest_answer_ends_above_the_input(
    browser: Any, gateway: GatewayThread
) -> None:
    """A conversation longer than the screen, with a tool card last: restored, its end is where
    a live answer's is, above the input (it was under it: y = 855 in an 844-pixel viewport)."""
    page = open_paired(browser, gateway, PHONE_390)
    for i in range(5):
        gateway.script(f"Answer {i}. " + "A long line of words about the greenhouse. " * 8)
        page.get_by_label("Message").fill(f"question {i}")
        page.get_by_label("Message").press("Enter")
        expect(page.locator("#messages li.assistant").last.locator(".text")).to_contain_text(
            f"Answer {i}."
        )
    gateway.script(
        ChatResponse(
            text="", tool_calls=(ToolCall("hardware_status", {}),), stop_reason=StopReason.TOOL_USE
        ),
        "All quiet.",
    )
    page.get_by_label("Message").fill("status?")
    page.get_by_label("Message").press("Enter")
    expect(page.locator("#messages li.assistant").last.locator(".text")).to_have_text("All quiet.")
    wait_saved(gateway, page.evaluate("localStorage.getItem('clawseed.session')"))
    page.reload()
    expect(page.locator("#messages li.assistant").last.locator(".text")).to_have_text("All quiet.")
    page.wait_for_function(ABOVE_THE_INPUT, timeout=5000)
    page.context.close()


def test_the_level_slider_stops_at_the_devices_cap(browser: Any, gateway: GatewayThread) -> None:
    page = open_paired(browser, gateway, PHONE_390)
    page.get_by_role("button", name="Devices").click()
    slider = page.get_by_role("slider", name="fan level")
    expect(slider).to_have_attribute("max", "0.6")
    slider.fill("1")  # a range input clamps to its max
    assert float(slider.input_value()) <= 0.6
    page.context.close()
