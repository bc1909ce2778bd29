"""Request round trip to a Nucleo over a pty at 115200 baud, next to the wire time.

The virtual board runs the real firmware (its UART loop and protocol core) behind a pty and
paces its side at the emulated rate (10 bits per byte, 8N1), so a round trip includes the time
the request and the reply need on a 115200-baud cable. In the same run, for each request, the
wire time is computed from the exact bytes sent and received; the difference is what the host
(pyserial, the protocol object) and the firmware add.

Requests: ``ping`` (shortest), ``pin.write`` (a typical tool call), ``hello`` (longest reply),
first with pyserial and the protocol object on the calling thread, then ``pin.write`` through
``BoardLink`` (asyncio, reader and writer threads): what a tool call pays.
Usage::

    python benchmarks/bench_serial_roundtrip.py [--n 300] [--baud 115200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import serial

from clawseed_edge.peripherals.boards import default_registry
from clawseed_edge.peripherals.serial.link import BoardLink, LinkOptions
from clawseed_edge.peripherals.serial.protocol import Reply, SerialProtocol
from clawseed_edge.peripherals.serial.virtual import VirtualBoard

REQUESTS = {
    "ping": ("ping", {}),
    "pin.write": ("pin.write", {"pin": "PA5", "value": 1}),
    "hello": ("hello", {}),
}


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[18]


def round_trips(
    link: serial.Serial, op: str, args: dict[str, object], n: int
) -> tuple[list[float], int, int]:
    """Times of n round trips in seconds, with the request and reply sizes in bytes."""
    proto = SerialProtocol()
    samples = []
    sent = received = 0
    for i in range(n):
        if op == "pin.write":
            args = {**args, "value": i % 2}
        rid, line = proto.encode(op, args)
        t0 = time.perf_counter()
        link.write(line)
        raw = b""
        reply = None
        while reply is None:
            chunk = link.read(link.in_waiting or 1)
            if not chunk:
                raise SystemExit(f"no reply to {op} within the read timeout")
            raw += chunk
            for item in proto.feed(chunk):
                if isinstance(item, Reply) and item.id == rid:
                    reply = item
        samples.append(time.perf_counter() - t0)
        assert reply.ok, reply
        sent, received = len(line), len(raw)
    return samples, sent, received


async def link_round_trips(path: str, n: int) -> list[float]:
    """Times of n ``pin.write`` requests through BoardLink, in seconds."""
    link = BoardLink(
        default_registry().get("nucleo-f401re"), path, options=LinkOptions(watchdog_ms=0)
    )
    await link.open()
    samples = []
    try:
        for i in range(n):
            t0 = time.perf_counter()
            await link.request("pin.write", {"pin": "PA5", "value": i % 2})
            samples.append(time.perf_counter() - t0)
    finally:
        await link.aclose()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="round trips per request kind")
    parser.add_argument("--baud", type=int, default=115200, help="emulated line rate")
    args = parser.parse_args()
    print(f"virtual nucleo-f401re over a pty at {args.baud} baud (8N1), {args.n} round trips each")
    print(
        f"{'request':<10} {'bytes out/in':>12} {'wire ms':>8} {'median ms':>10} {'p95 ms':>8} {'overhead ms':>12}"
    )
    with VirtualBoard("nucleo-f401re", baud=args.baud) as board:
        with serial.Serial(board.path, args.baud, timeout=5) as link:
            round_trips(link, "ping", {}, 20)  # warm up: imports, first allocations
            write_wire_ms = 0.0
            for name, (op, op_args) in REQUESTS.items():
                samples, sent, received = round_trips(link, op, op_args, args.n)
                wire_ms = (sent + received) * 10 / args.baud * 1000
                median_ms = statistics.median(samples) * 1000
                print(
                    f"{name:<10} {f'{sent}/{received}':>12} {wire_ms:8.2f} {median_ms:10.2f} "
                    f"{_p95(samples) * 1000:8.2f} {median_ms - wire_ms:12.2f}"
                )
                if op == "pin.write":
                    write_wire_ms = wire_ms
        samples = asyncio.run(link_round_trips(board.path, args.n))
        median_ms = statistics.median(samples) * 1000
        print(
            f"{'BoardLink':<10} {'pin.write':>12} {write_wire_ms:8.2f} {median_ms:10.2f} "
            f"{_p95(samples) * 1000:8.2f} {median_ms - write_wire_ms:12.2f}"
        )


if __name__ == "__main__":
    main()
