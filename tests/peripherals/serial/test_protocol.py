"""The JSON-lines protocol without a port."""

from __future__ import annotations

import json

from clawseed_edge.peripherals.serial.protocol import (
    MAX_ID,
    BoardEvent,
    Malformed,
    Noise,
    ReplPrompt,
    Reply,
    SerialProtocol,
)


def test_encode_gives_fresh_ids_and_one_line() -> None:
    proto = SerialProtocol()
    rid, line = proto.encode("pin.write", {"pin": "PA5", "value": 1})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"id": rid, "op": "pin.write", "args": {"pin": "PA5", "value": 1}}
    assert proto.encode("ping")[0] == rid + 1


def test_ids_wrap_before_the_firmware_limit() -> None:
    proto = SerialProtocol()
    proto._next_id = MAX_ID - 1
    assert [proto.next_id() for _ in range(3)] == [MAX_ID, 1, 2]


def test_decode_replies_errors_and_events() -> None:
    proto = SerialProtocol()
    items = proto.feed(
        b'{"id": 8, "ok": true, "result": {"value": 1}}\r\n'
        b'{"id": 9, "ok": false, "error": {"code": "pin_reserved", "message": "no"}}\n'
        b'{"event": "edge", "pin": "PC13", "value": 0}\n'
    )
    assert items == [
        Reply(8, True, {"value": 1}),
        Reply(9, False, None, "pin_reserved", "no"),
        BoardEvent("edge", {"pin": "PC13", "value": 0}),
    ]


def test_a_reply_split_across_reads() -> None:
    proto = SerialProtocol()
    assert proto.feed(b'{"id": 1, "ok": tr') == []
    assert proto.feed(b'ue, "result": null}\n') == [Reply(1, True, None)]


def test_garbage_then_resync() -> None:
    proto = SerialProtocol()
    items = proto.feed(b'\xff\xfe}{garbage\n[1]\n{"id": 2, "ok": true, "result": 5}\n')
    assert [type(i) for i in items] == [Noise, Noise, Reply]
    assert items[-1] == Reply(2, True, 5)


def test_repl_banner_and_prompt_are_recognised() -> None:
    proto = SerialProtocol()
    items = proto.feed(b"MicroPython v1.27.0 on 2025-12-10; NUCLEO-F401RE with STM32F401xE\r\n")
    assert items == [Noise("MicroPython v1.27.0 on 2025-12-10; NUCLEO-F401RE with STM32F401xE")]
    assert proto.feed(b'Type "help()" for more information.\r\n>>> ') == [
        Noise('Type "help()" for more information.'),
        ReplPrompt(">>>"),
    ]
    assert proto.feed(b'{"id": 3, "ok": true, "result": {}}\n') == [Reply(3, True, {})]


def test_overlong_line_dropped_whole() -> None:
    proto = SerialProtocol(max_line=64)
    items = proto.feed(b'{"id": 1, "ok": true, "result": "' + b"x" * 200 + b'"}\n')
    assert items == [Noise("dropped a line longer than 64 bytes")]
    assert proto.feed(b'{"id": 2, "ok": true}\n') == [Reply(2, True, None)]


def test_reply_without_usable_id_and_malformed_error() -> None:
    proto = SerialProtocol()
    items = proto.feed(
        b'{"id": null, "ok": false, "error": {"code": "protocol", "message": "m"}}\n'
        b'{"id": 4, "ok": false}\n'
    )
    assert items[0] == Reply(None, False, None, "protocol", "m")
    # A reply to a known request that breaks the shape fails that request at once.
    assert items[1].code == "bad_reply" and items[1].id == 4


def test_malformed_events_and_replies_are_dropped_and_the_rest_kept() -> None:
    proto = SerialProtocol()
    items = proto.feed(
        b'{"event": "edge", "pin": "PC13", "value": "abc"}\n'
        b'{"event": "edge", "pin": "PC13", "value": null}\n'
        b'{"event": "edge", "pin": "PC13", "value": 1e999}\n'
        b'{"event": "edge", "pin": "PC13", "value": NaN}\n'
        b'{"event": "edge", "pin": "PC13", "value": true}\n'
        b'{"event": "watchdog", "period_ms": 500, "safe": "PA5"}\n'
        b'{"id": 7, "ok": true, "result": {"volts": Infinity}}\n'
        b'{"id": 5, "ok": true, "result": {"pong": true}}\n'
    )
    assert [type(i) for i in items] == [Malformed] * 7 + [Reply]
    assert "'abc' is not 0 or 1" in items[0].reason and "not finite" in items[2].reason
    assert items[-1] == Reply(5, True, {"pong": True})
    # A REPL echoing a request line is noise, not a reply that fails request 3.
    assert proto.feed(b'{"id": 3, "op": "hello", "args": {}}\r\n') == [
        Noise('{"id": 3, "op": "hello", "args": {}}')
    ]


def test_reset_forgets_a_partial_line() -> None:
    proto = SerialProtocol()
    proto.feed(b'{"id": 1, "ok"')
    proto.reset()
    assert proto.feed(b'{"id": 2, "ok": true}\n') == [Reply(2, True, None)]
