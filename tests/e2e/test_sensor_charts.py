"""The devices screen's sensor charts in headless Chromium: they load the stored history from
``/api/sensors/{name}/history`` (seeded through the real history store), draw axes with tick
labels and the unit, switch between an hour, a day and a week, survive a reload, and say what
is missing (no history yet, a failed request) while the live readings keep coming."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.state import HistoryPoint

from .conftest import CONFIG, GatewayThread
from .test_webapp import PHONE, expect, open_paired, unnamed_controls

pytestmark = pytest.mark.slow

GATEWAY_CONFIG = (
    CONFIG
    + """update_interval = "30s"
[[sensors]]
name = "shed"
driver = "ds18b20"
update_interval = "never"
[history]
flush_s = 1
"""
)
WEEKDAY = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)$")
CLOCK = re.compile(r"^\d{1,2}:\d{2}( [AP]M)?$")
#: Six days of a stored value every 10 minutes.
SEEDED = 6 * 24 * 6


@pytest.fixture(scope="module", autouse=True)
def seeded(gateway: GatewayThread) -> None:
    """Six days of greenhouse temperatures, 5..9 °C (the simulation reads about 21), through the
    service's own history store."""
    history = gateway.service.recorder.history
    assert history is not None

    async def seed() -> None:
        now = time.time()
        for i in range(SEEDED):
            t = now - 6 * 86400 + i * 600
            history.record(HistoryPoint("greenhouse", "temperature", "°C", t, 5 + i % 5))
        await history.flush()

    gateway.run(seed())


def temperature_chart(page: Any) -> Any:
    return page.locator('#sensors li[data-name="greenhouse"]').get_by_role(
        "img", name=re.compile("^greenhouse temperature")
    )


def points(chart: Any) -> int:
    return int(chart.get_attribute("data-points"))


def labels(chart: Any, axis: str) -> list[str]:
    return [t.strip() for t in chart.locator(f"text.{axis}").all_text_contents()]


def test_charts_load_history_switch_ranges_and_survive_a_reload(
    browser: Any, gateway: GatewayThread, artifacts: Path
) -> None:
    page = open_paired(browser, gateway, PHONE)
    page.get_by_role("button", name="Devices").click()
    chart = temperature_chart(page)
    expect(chart).to_have_attribute("data-range", "1h")
    # An hour of stored points (5..9 °C), not only the live ones (about 21 °C).
    expect(chart).to_have_attribute(
        "aria-label", re.compile(r"last hour: \d+ points from [5-9]\.0 ")
    )
    assert points(chart) >= 6
    assert chart.locator("text.unit").text_content() == "°C"
    assert len(labels(chart, "y")) >= 2 and all(
        re.fullmatch(r"-?\d+(\.\d+)?", v) for v in labels(chart, "y")
    )
    assert labels(chart, "x") and all(CLOCK.match(t) for t in labels(chart, "x")), labels(
        chart, "x"
    )
    expect(page.get_by_role("button", name="Hour")).to_have_attribute("aria-pressed", "true")
    assert unnamed_controls(page) == []

    # The keyboard alone picks a range; the request and the drawn range follow.
    week = page.get_by_role("button", name="Week")
    week.focus()
    with page.expect_request(re.compile(r"/api/sensors/greenhouse/history\?window=7d")):
        page.keyboard.press("Enter")
    expect(week).to_have_attribute("aria-pressed", "true")
    expect(chart).to_have_attribute("data-range", "7d")
    expect(chart).to_have_attribute("aria-label", re.compile(r"last week: \d+ points"))
    expect(chart.locator("text.x").first).to_have_text(WEEKDAY)
    week_points = points(chart)
    card = page.locator('#sensors li[data-name="greenhouse"]')
    (artifacts / "sensor-chart-week-390.png").write_bytes(card.screenshot())
    assert 60 <= week_points <= 130, week_points  # bucketed by the route, not 864 raw points

    with page.expect_request(re.compile(r"window=24h")):
        page.get_by_role("button", name="Day").click()
    # Drawn at once from what is kept, then from the day's stored points.
    expect(chart).to_have_attribute("aria-label", re.compile(r"last day: 1[0-3]\d points"))
    assert all(CLOCK.match(t) for t in labels(chart, "x"))

    # After a reload the stored points are drawn again (and the picked range is kept).
    page.reload()
    page.get_by_role("button", name="Devices").click()
    chart = temperature_chart(page)
    expect(page.get_by_role("button", name="Day")).to_have_attribute("aria-pressed", "true")
    expect(chart).to_have_attribute("aria-label", re.compile(r"last day: \d{3} points"))
    assert points(chart) >= 100
    page.context.close()


def test_no_history_yet_and_a_failed_request_keep_the_live_chart(
    browser: Any, gateway: GatewayThread
) -> None:
    assert gateway.gateway is not None
    token = gateway.run(gateway.gateway.pair("e2e-charts"))
    # No service worker: Playwright's routes do not see what a worker fetches.
    context = browser.new_context(viewport=PHONE, base_url=gateway.url, service_workers="block")
    context.set_default_timeout(10_000)
    context.add_init_script(f"localStorage.setItem('clawseed.token', {json.dumps(token)})")
    context.route(
        re.compile(r"/api/sensors/greenhouse/history"),
        lambda route: route.fulfill(
            status=500,
            content_type="application/json",
            body='{"error": {"code": "internal", "message": "disk full"}}',
        ),
    )
    page = context.new_page()
    page.goto("/")
    page.get_by_role("button", name="Devices").click()
    greenhouse = page.locator('#sensors li[data-name="greenhouse"]')
    expect(greenhouse.locator(".chart-note")).to_have_text(
        "History could not be loaded (disk full); showing live readings."
    )
    # The live reading is still drawn.
    expect(temperature_chart(page)).to_have_attribute("aria-label", re.compile(r"\d+ points? from"))
    expect(greenhouse).to_contain_text(re.compile(r"temperature: [-0-9.]+ °C"))

    shed = page.locator('#sensors li[data-name="shed"]')
    expect(shed.locator(".chart-note")).to_have_text(
        "Nothing stored yet: the service writes readings every few seconds while it runs (none "
        'for a sensor with update_interval = "never").'
    )
    expect(shed.get_by_role("img", name=re.compile("^shed temperature"))).to_be_visible()
    page.context.close()
