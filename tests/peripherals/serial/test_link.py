"""The host driver's link against the virtual board over a pty (and a few scripted boards)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import threading
import tty
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import serial

from clawseed_edge.api import BoardCommandFailed, BoardDisconnected, BoardProtocolError
from clawseed_edge.peripherals.boards import default_registry
from clawseed_edge.peripherals.serial.link import BoardLink, BoardTimeout, LinkOptions
from clawseed_edge.peripherals.serial.pintable import FIRMWARE_DIR
from clawseed_edge.peripherals.serial.protocol import BoardEvent
from clawseed_edge.peripherals.serial.sim_machine import SimI2CDevice
from clawseed_edge.peripherals.serial.virtual import VirtualBoard

BOARD = default_registry().get("nucleo-f401re")
FAST = LinkOptions(request_timeout_s=2.0, hello_timeout_s=5.0, backoff_s=(0.05, 0.2), watchdog_ms=0)


async def until(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    """Poll ``condition`` every 10 ms; fail after ``timeout_s`` (a bound, not a measurement)."""
    for _ in range(int(timeout_s / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"condition not met within {timeout_s} s")


@pytest.fixture
def virtual() -> Iterator[VirtualBoard]:
    with VirtualBoard(BOARD.id) as board:
        yield board


@pytest.fixture
async def link(virtual: VirtualBoard) -> AsyncIterator[BoardLink]:
    link = BoardLink(BOARD, virtual.path, options=FAST, lister=virtual.lister)
    await link.open()
    yield link
    await link.aclose()


async def test_every_op_through_the_link(link: BoardLink, virtual: VirtualBoard) -> None:
    virtual.state.adc["PA0"] = 65535
    virtual.state.i2c[0x40] = SimI2CDevice()
    assert link.hello["board"] == BOARD.id and link.serial_number == virtual.serial_number
    assert await link.request("ping") == {"pong": True}
    assert await link.request("pin.mode", {"pin": "D2", "mode": "in", "pull": "up"}) == {
        "pin": "PA10", "mode": "in", "value": 1,
    }  # fmt: skip
    assert await link.request("pin.read", {"pin": "D2"}) == {"value": 1}
    assert await link.request("pin.write", {"pin": "led1", "value": 1}) == {"value": 1}
    assert await link.request("pin.toggle", {"pin": "PA5"}) == {"value": 0}
    assert (await link.request("pwm.set", {"pin": "D3", "freq": 500, "duty": 0.5}))["pin"] == "PB3"
    assert await link.request("adc.read", {"pin": "A0"}) == {"raw": 65535, "volts": 3.3}
    assert await link.request("i2c.scan") == {"addresses": [0x40]}
    assert await link.request("i2c.write", {"addr": 0x40, "data": "0155"}) == {"written": 2}
    assert await link.request("i2c.read", {"addr": 0x40, "reg": 1, "n": 1}) == {"data": "55"}
    assert await link.request("safe") == {"safe": ["PA5", "PB3"]}
    assert await link.request("watchdog", {"period_ms": 0}) == {"period_ms": 0, "hardware_ms": 0}
    assert virtual.state.history[:2] == [("PA5", 1), ("PA5", 0)]


async def test_reserved_pin_refused_by_the_firmware(link: BoardLink) -> None:
    with pytest.raises(BoardCommandFailed, match="SWDIO") as info:
        await link.request("pin.write", {"pin": "PA13", "value": 1})
    assert info.value.board_code == "pin_reserved"


async def test_events_reach_the_callback(virtual: VirtualBoard) -> None:
    events: list[BoardEvent] = []
    link = BoardLink(BOARD, virtual.path, options=FAST, on_event=events.append)
    await link.open()
    try:
        await link.request(
            "pin.mode", {"pin": "PC13", "mode": "in", "edges": "both", "bounce_ms": 0}
        )
        virtual.state.drive_input("PC13", 1)
        await until(lambda: bool(events))
    finally:
        await link.aclose()
    assert events[0] == BoardEvent("edge", {"pin": "PC13", "value": 1})


async def test_unplugged_reports_disconnected_then_reconnects(virtual: VirtualBoard) -> None:
    connects = 0

    async def on_connect() -> None:
        nonlocal connects
        connects += 1

    # No port given: the link finds the board by its ST-LINK USB id, then by serial number.
    link = BoardLink(BOARD, None, options=FAST, lister=virtual.lister, on_connect=on_connect)
    await link.open()
    try:
        virtual.unplug()
        await until(lambda: not link.connected)
        with pytest.raises(BoardDisconnected, match="disconnected"):
            await link.request("ping")
        virtual.replug()
        await until(lambda: link.connected and connects == 2)
        assert await link.request("ping") == {"pong": True}
        assert connects == 2
    finally:
        await link.aclose()


def _stale_firmware(tmp_path: Path) -> Path:
    copy = tmp_path / "firmware"
    shutil.copytree(FIRMWARE_DIR, copy)
    core = copy / "clawseed_core.py"
    core.write_text(core.read_text().replace('FW_VERSION = "', 'FW_VERSION = "0.0.0-old-'))
    return copy


async def test_stale_firmware_says_run_deploy(tmp_path: Path) -> None:
    with VirtualBoard(BOARD.id, firmware_dir=_stale_firmware(tmp_path)) as old:
        link = BoardLink(BOARD, old.path, options=FAST)
        with pytest.raises(BoardProtocolError, match="clawseed-edge deploy --board nucleo-f401re"):
            await link.open()
        await link.aclose()


async def test_board_at_the_repl_is_soft_reset_into_the_firmware(virtual: VirtualBoard) -> None:
    with serial.Serial(virtual.path, 115200, timeout=5) as raw:
        raw.write(b"\x03")
        assert raw.read_until(b">>> ").endswith(b">>> ")
    link = BoardLink(BOARD, virtual.path, options=FAST)
    await link.open()
    try:
        assert await link.request("ping") == {"pong": True}
        assert virtual.resets == 1
    finally:
        await link.aclose()


class ScriptedBoard:
    """A pty whose far end answers hello like the firmware and then follows ``script``."""

    def __init__(self, script: Callable[[dict[str, Any]], bytes]) -> None:
        self.script = script
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import select

        from clawseed_edge.peripherals.serial.bundle import firmware_version
        from clawseed_edge.peripherals.serial.pintable import table_hash

        buf = b""
        while not self._stop:
            if not select.select([self.master], [], [], 0.05)[0]:
                continue
            try:
                buf += os.read(self.master, 4096)
            except OSError:
                return
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                req = json.loads(line)
                if req["op"] == "hello":
                    result = {"fw": firmware_version(), "proto": 1, "board": BOARD.id,
                              "pins_hash": table_hash(BOARD)}  # fmt: skip
                    os.write(
                        self.master,
                        json.dumps({"id": req["id"], "ok": True, "result": result}).encode()
                        + b"\n",
                    )
                else:
                    os.write(self.master, self.script(req))

    def close(self) -> None:
        self._stop = True
        self._thread.join(timeout=5)
        os.close(self.master)
        os.close(self.slave)


async def test_request_timeout_when_the_board_stays_silent() -> None:
    def silent_but_for_ping(req: dict[str, Any]) -> bytes:
        if req["op"] != "ping":
            return b""
        return json.dumps({"id": req["id"], "ok": True, "result": {"pong": True}}).encode() + b"\n"

    board = ScriptedBoard(silent_but_for_ping)
    link = BoardLink(BOARD, board.path, options=LinkOptions(request_timeout_s=0.3, watchdog_ms=0))
    try:
        await link.open()
        with pytest.raises(BoardTimeout, match=r"did not answer pin\.write within 0\.3 s"):
            await link.request("pin.write", {"pin": "PA5", "value": 1})
        assert link.connected  # a slow board is not an unplugged one
    finally:
        await link.aclose()
        board.close()


async def test_garbage_and_a_banner_before_the_reply_are_skipped() -> None:
    def noisy(req: dict[str, Any]) -> bytes:
        reply = json.dumps({"id": req["id"], "ok": True, "result": {"pong": True}}).encode()
        return b"\xff\xfe garbage\r\nMicroPython v1.27.0 on 2025-12-10\r\n" + reply + b"\n"

    board = ScriptedBoard(noisy)
    link = BoardLink(BOARD, board.path, options=FAST)
    try:
        await link.open()
        assert await link.request("ping") == {"pong": True}
        assert "MicroPython v1.27.0 on 2025-12-10" in link.noise
    finally:
        await link.aclose()
        board.close()


async def test_nothing_answering_names_flash_and_deploy() -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    link = BoardLink(
        BOARD, os.ttyname(slave), options=LinkOptions(hello_timeout_s=0.5, watchdog_ms=0)
    )
    try:
        with pytest.raises(BoardProtocolError, match="clawseed-edge flash nucleo-f401re"):
            await link.open()
    finally:
        await link.aclose()
        os.close(master)
        os.close(slave)


async def test_malformed_events_in_a_chunk_do_not_lose_the_reply(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # What a noisy or buggy board may send before the reply, all in one write.
    bad = (
        b'{"event": "edge", "pin": "PC13", "value": "abc"}\n'
        b'{"event": "edge", "pin": "PC13", "value": null}\n'
        b'{"event": "edge", "pin": "PC13", "value": 1e999}\n'
        b'{"event": "edge", "pin": "PC13", "value": NaN}\n'
    )

    def script(req: dict[str, Any]) -> bytes:
        if req["op"] in ("pin.mode", "pin.read"):
            result: dict[str, Any] = {"pin": "PC13", "mode": "in", "value": 1}  # not pressed
        else:
            result = {"pong": True}
        return bad + json.dumps({"id": req["id"], "ok": True, "result": result}).encode() + b"\n"

    from clawseed_edge.peripherals.serial import SerialBoard
    from clawseed_edge.peripherals.wired import DeviceConfig

    scripted = ScriptedBoard(script)
    board = SerialBoard(
        BOARD,
        [DeviceConfig(name="button", pin="PC13", kind="button")],
        port=scripted.path,
        options=FAST,
    )
    try:
        await board.connect()
        assert board.link is not None
        assert await board.link.request("ping") == {"pong": True}
        assert await board.read("button") == 0.0
    finally:
        await board.disconnect()
        scripted.close()
    assert "Exception in callback" not in caplog.text
    assert caplog.text.count("dropped a malformed line") >= 4


async def test_the_hardware_watchdog_resets_a_board_left_at_the_repl(
    virtual: VirtualBoard,
) -> None:
    from dataclasses import replace

    from clawseed_edge.peripherals.serial.deploy import hello_over_serial

    options = replace(FAST, hardware_watchdog_ms=500)
    link = BoardLink(BOARD, virtual.path, options=options, lister=virtual.lister)
    await link.open()
    try:
        await link.request("pin.write", {"pin": "D13", "value": 1})
        assert virtual.state.wdt is not None and virtual.state.wdt[0] == 500
    finally:
        await link.aclose()
    with serial.Serial(virtual.path, 115200, timeout=5) as raw:
        raw.write(b"\x03")  # to the REPL: the firmware no longer feeds the watchdog
        assert raw.read_until(b">>> ").endswith(b">>> ")
        await until(lambda: virtual.hard_resets == 1)
    hello = await asyncio.to_thread(hello_over_serial, virtual.path)
    assert hello["hw_watchdog_ms"] == 0  # a reset stopped it; the firmware runs again
    assert virtual.state.modes["PA5"] == "in"  # and the pins are in their reset state


async def test_a_board_at_the_repl_whose_prompt_was_missed_is_found_by_the_heartbeat(
    virtual: VirtualBoard, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Ctrl-C on the line leaves the board at the REPL; the host misses that first prompt. The heartbeat's ping gets no answer, presses Enter, and the prompt that
    # follows restarts the firmware.
    from clawseed_edge.peripherals.serial.protocol import ReplPrompt

    options = LinkOptions(request_timeout_s=0.3, backoff_s=(0.05, 0.2), watchdog_ms=600)
    link = BoardLink(BOARD, virtual.path, options=options, lister=virtual.lister)
    await link.open()
    try:
        dispatch, missed = link._dispatch, []

        def lose_the_first_prompt(item: Any) -> None:
            if isinstance(item, ReplPrompt) and not missed:
                missed.append(item)
                return
            dispatch(item)

        monkeypatch.setattr(link, "_dispatch", lose_the_first_prompt)
        await link._write(b"\x03")  # a stray Ctrl-C on the line (another program, a terminal)
        await until(lambda: bool(missed))
        await until(lambda: link.repl_recoveries == 1 and not link.restarted_from_repl)
        assert await link.request("ping") == {"pong": True}
        assert virtual.resets == 1
    finally:
        await link.aclose()
