"""`hardware scan`'s engine: chips named by their ID registers, guesses said to be guesses,
1-Wire and USB from the sysfs tree, and never a register written on the way."""

from __future__ import annotations

import asyncio
from pathlib import Path

from clawseed_edge.peripherals.i2c.sim import (
    ADS1115Model,
    BH1750Model,
    BME280Model,
    SHT31Model,
    SimI2CBus,
    SSD1306Model,
)
from clawseed_edge.peripherals.i2c.sim.bus import ChipModel
from clawseed_edge.peripherals.scan import proposal_toml, scan_machine, scan_w1
from tests.fake_root import nucleo_on_usb, pi5_tree, write


class Recording(ChipModel):
    """A chip model that keeps every write transaction it receives."""

    def __init__(self, model: ChipModel, writes: list[tuple[int, bytes]], address: int) -> None:
        self.model, self.writes, self.address = model, writes, address

    def write(self, data: bytes) -> None:
        self.writes.append((self.address, bytes(data)))
        self.model.write(data)

    def read(self, length: int) -> bytes:
        return self.model.read(length)


def bus_with(chips: dict[int, ChipModel], writes: list[tuple[int, bytes]]) -> SimI2CBus:
    bus = SimI2CBus(1)
    for address, model in chips.items():
        bus.attach(address, Recording(model, writes, address))
    return bus


def scan(bus: SimI2CBus, root: Path, sim: bool = False):  # type: ignore[no-untyped-def]
    return asyncio.run(scan_machine(root, buses={1: bus.opener()}, sim=sim))


def test_chips_are_named_from_their_id_registers_and_nothing_is_written(tmp_path: Path) -> None:
    bmp = BME280Model()
    bmp.registers[0xD0] = 0x58  # a BMP280 answers 0x58 at the same register
    writes: list[tuple[int, bytes]] = []
    chips = {0x23: BH1750Model(), 0x3C: SSD1306Model(), 0x44: SHT31Model(),
             0x48: ADS1115Model(), 0x76: BME280Model(), 0x77: bmp}  # fmt: skip
    report = scan(bus_with(chips, writes), tmp_path)
    by_address = {f.address: f for f in report.findings}
    assert sorted(by_address) == sorted(chips)
    assert (by_address[0x76].driver, by_address[0x76].certain) == ("bme280", True)
    assert "0x60" in by_address[0x76].what
    assert by_address[0x77].driver is None and "BMP280" in by_address[0x77].what
    assert (by_address[0x44].driver, by_address[0x44].certain) == ("sht31", True)
    assert (by_address[0x48].driver, by_address[0x48].certain) == ("ads1115", True)
    assert (by_address[0x23].driver, by_address[0x23].certain) == ("bh1750", False)
    assert (by_address[0x3C].driver, by_address[0x3C].table) == ("ssd1306", "displays")
    # Quick writes (address only), register pointers (one byte) and the SHT3x's status command:
    # nothing that sets a register.
    for address, data in writes:
        assert len(data) <= 1 or (address, data) == (0x44, b"\xf3\x2d"), (address, data)
    # The chips are as they were: the BME280 took no measurement, the ADS1115 no conversion.
    assert chips[0x48].registers[1] == 0x8583  # type: ignore[attr-defined]


def test_a_chip_that_fails_its_id_read_is_reported_not_raised(tmp_path: Path) -> None:
    bus = bus_with({0x76: BME280Model()}, [])
    bus.inject(address=0x76, after=1, count=10)  # the probe answers, the id read does not
    report = scan(bus, tmp_path)
    assert [f.certain for f in report.findings] == [False]
    assert "did not answer its identification read" in report.findings[0].what
    assert proposal_toml(report.findings) == ""


def test_one_wire_usb_and_the_proposed_tables_load(tmp_path: Path) -> None:
    from clawseed_edge.config.file import load_config

    root = nucleo_on_usb(pi5_tree(tmp_path / "root"))
    write(root, "sys/bus/w1/devices/28-0316a2794d1f/w1_slave", "")
    write(root, "sys/bus/w1/devices/w1_bus_master1/x", "")
    assert [f.device for f in scan_w1(root)] == ["28-0316a2794d1f"]
    report = scan(bus_with({0x76: BME280Model()}, []), root)
    tables = proposal_toml(report.findings, taken=["bme280"])
    path = tmp_path / "config.toml"
    path.write_text('[hardware]\nboard = "rpi5"\n\n' + tables + "\n")
    config = load_config(path).config
    assert [(s.name, s.driver) for s in config.sensors] == [
        ("bme280_2", "bme280"),
        ("ds18b20", "ds18b20"),
    ]
    assert config.sensors[0].address == 0x76 and config.sensors[1].device == "28-0316a2794d1f"
    assert [(p["type"], p["board"]) for p in config.peripherals] == [("nucleo", "nucleo-f401re")]


def test_sim_reports_a_virtual_nucleo_only_when_none_is_on_usb(tmp_path: Path) -> None:
    bare = scan(bus_with({}, []), tmp_path, sim=True)
    assert [f.board for f in bare.findings] == ["nucleo-f401re"]
    assert bare.findings[0].where.startswith("virtual")
    root = nucleo_on_usb(pi5_tree(tmp_path / "root"))
    on_usb = scan(bus_with({}, []), root, sim=True)
    assert [f.where for f in on_usb.findings] == ["USB 1-1.2"]
