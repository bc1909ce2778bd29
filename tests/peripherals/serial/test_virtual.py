"""The virtual board: the firmware's own UART loop behind a pty, reached through pyserial."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import serial

from clawseed_edge.api import HardwareError
from clawseed_edge.peripherals.serial.virtual import VirtualBoard


@pytest.fixture
def board() -> Iterator[VirtualBoard]:
    with VirtualBoard("nucleo-f401re") as vb:
        yield vb


def _read_json(link: serial.Serial) -> dict[str, Any]:
    line = link.readline()
    assert line.endswith(b"\n"), f"no complete line within the timeout: {line!r}"
    return json.loads(line)  # type: ignore[no-any-return]


def test_requests_over_the_pty_drive_the_simulated_pins(board: VirtualBoard) -> None:
    with serial.Serial(board.path, 115200, timeout=10) as link:
        link.write(b'{"id":1,"op":"pin.write","args":{"pin":"led1","value":1}}\n')
        assert _read_json(link) == {"id": 1, "ok": True, "result": {"value": 1}}
    assert board.state.history == [("PA5", 1)]


def test_garbage_and_noise_then_a_good_request(board: VirtualBoard) -> None:
    with serial.Serial(board.path, 115200, timeout=10) as link:
        link.write(b"\x00\x13garbage\r\n" + b"x" * 2000 + b"\n" + b'{"id":7,"op":"ping"}\n')
        assert _read_json(link)["error"]["code"] == "protocol"
        assert _read_json(link)["error"]["code"] == "line_too_long"
        assert _read_json(link) == {"id": 7, "ok": True, "result": {"pong": True}}


def test_input_edge_arrives_as_an_unsolicited_event(board: VirtualBoard) -> None:
    with serial.Serial(board.path, 115200, timeout=10) as link:
        link.write(
            b'{"id":1,"op":"pin.mode","args":{"pin":"PC13","mode":"in","edges":"falling","bounce_ms":0}}\n'
        )
        assert _read_json(link)["ok"]
        board.state.drive_input("PC13", 1)
        # Two round trips: the loop has ticked (and seen the high level) before the second.
        for rid in (2, 3):
            link.write(b'{"id":%d,"op":"ping"}\n' % rid)
            assert _read_json(link)["id"] == rid
        board.state.drive_input("PC13", 0)
        event = _read_json(link)
    assert event == {"event": "edge", "pin": "PC13", "value": 0}


def test_watchdog_event_after_silence(board: VirtualBoard) -> None:
    with serial.Serial(board.path, 115200, timeout=10) as link:
        link.write(
            b'{"id":1,"op":"pin.write","args":{"pin":"PA5","value":1}}\n'
            b'{"id":2,"op":"watchdog","args":{"period_ms":100}}\n'
        )
        assert _read_json(link)["ok"] and _read_json(link)["ok"]
        event = _read_json(link)  # waits for the silence to pass (bounded by the timeout)
    assert event == {"event": "watchdog", "period_ms": 100, "safe": ["PA5"]}
    assert board.state.level("PA5") == 0


def test_unknown_board_table_is_a_clear_error() -> None:
    with pytest.raises(HardwareError, match="pintable"):
        VirtualBoard("rpi4b")


def test_close_is_idempotent() -> None:
    board = VirtualBoard().start()
    board.close()
    board.close()
    assert board.error is None


def test_the_sensors_chip_models_sit_on_the_virtual_i2c_bus() -> None:
    from clawseed_edge.peripherals.i2c.sim.bme280 import BME280Model

    with VirtualBoard("nucleo-f401re") as board:
        board.state.i2c[0x76] = BME280Model()
        with serial.Serial(board.path, 115200, timeout=10) as link:
            link.write(
                b'{"id":1,"op":"i2c.scan"}\n{"id":2,"op":"i2c.read","args":{"addr":118,"reg":208,"n":1}}\n'
            )
            assert _read_json(link)["result"] == {"addresses": [0x76]}
            assert _read_json(link)["result"] == {"data": "60"}  # the BME280's chip id
