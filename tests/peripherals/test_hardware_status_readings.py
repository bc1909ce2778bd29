"""The model's ``hardware_status`` lists each sensor's latest reading (value, unit, age) from the
sensor bank's state feed -- what the sampler and ``sensor_read`` published -- never reading the
sensor itself."""

from __future__ import annotations

import time
from pathlib import Path

from clawseed_edge.api import SensorReading, ToolContext
from clawseed_edge.config.file import load_config
from clawseed_edge.config.hardware import build_peripherals
from clawseed_edge.peripherals.wired import HardwareStatus

CONFIG = """
[hardware]
board = "sim"
[[devices]]
name = "fan"
pin = "GPIO18"
kind = "relay"
[[sensors]]
name = "greenhouse"
driver = "bme280"
bus = 1
address = 0x76
[[sensors]]
name = "shed"
driver = "ds18b20"
"""


async def test_the_latest_readings_come_from_the_feed_with_their_age(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    loaded = load_config(path)
    pi, bank = build_peripherals(loaded.config, loaded.source)
    status = next(t for t in pi.tools() if t.name == "hardware_status")
    assert isinstance(status, HardwareStatus)
    await pi.connect()
    await bank.connect()
    try:
        before = await status.execute({}, ToolContext())
        assert "fan: relay on GPIO18, off" in before.output
        assert "Sensors: no reading yet" in before.output

        now = time.time()
        # Values no simulated sensor produces: they can only come from the feed.
        bank.states.publish(
            SensorReading(
                "sensors",
                "greenhouse",
                {"temperature": 99.25, "humidity": 41.0},
                {"temperature": "°C", "humidity": "%"},
                now - 125,
            )
        )
        bank.states.publish(SensorReading("sensors", "shed", {}, {}, now - 5, "no answer on w1"))
        result = await status.execute({}, ToolContext())
    finally:
        await pi.disconnect()
        await bank.disconnect()
    assert result.success
    lines = result.output.splitlines()
    assert "Sensors (latest readings, not read now):" in lines
    assert "greenhouse: temperature 99.25 °C, humidity 41 % (read 2 min ago)" in lines
    assert "shed: the last read failed (5 s ago): no answer on w1" in lines
    assert result.data == [s.as_dict() for s in pi.states.devices()]  # devices, as before


async def test_without_sensors_nothing_about_readings_is_said(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG.split("[[sensors]]")[0], encoding="utf-8")
    loaded = load_config(path)
    (pi,) = build_peripherals(loaded.config, loaded.source)
    status = next(t for t in pi.tools() if t.name == "hardware_status")
    await pi.connect()
    try:
        result = await status.execute({}, ToolContext())
    finally:
        await pi.disconnect()
    assert result.output == "fan: relay on GPIO18, off"
