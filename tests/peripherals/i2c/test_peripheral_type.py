"""Sensors as a [[peripherals]] type on the peripheral factory registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.config import assemble_agent
from clawseed_edge.testing import ScriptedProvider

CONFIG = """
[provider]
name = "demo"

[autonomy]
level = "full"

[[peripherals]]
name = "shed_sensors"
type = "sensors"
board = "sim"

[[peripherals.sensors]]
name = "shed"
driver = "sht31"
"""


async def test_a_sensors_peripheral_table_reads_through_a_turn(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    provider = ScriptedProvider([ScriptedProvider.call("sensor_read", sensor="shed"), "ok"])
    agent = await assemble_agent(path, provider=provider)
    async with agent:
        assert await agent.run("how is the shed?") == "ok"
        (bank,) = agent.peripherals
        assert bank.name == "shed_sensors"
    assert (
        "shed: temperature 21.0 °C, humidity 45.0 %RH" in provider.requests[1].messages[-1].content
    )


async def test_errors_in_a_sensors_table_name_the_peripherals_key(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG.replace('driver = "sht31"', 'driver = "sht99"'), encoding="utf-8")
    with pytest.raises(ConfigInvalid) as info:
        await assemble_agent(path, provider=ScriptedProvider())
    assert str(info.value).startswith(
        f"{path}: peripherals[0].sensors[0].driver: unknown sensor driver 'sht99'"
    )


async def test_a_sensor_name_used_twice_across_tables_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG + '\n[[sensors]]\nname = "shed"\ndriver = "bme280"\n', encoding="utf-8")
    with pytest.raises(ConfigInvalid, match="device name 'shed' is used twice"):
        await assemble_agent(path, provider=ScriptedProvider())
