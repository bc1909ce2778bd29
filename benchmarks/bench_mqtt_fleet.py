"""Fleet calls over MQTT: latency against a local tool call, and broker messages per sensor update.

Starts a mosquitto (:class:`clawseed_edge.testing.mqtt.MosquittoBroker`) and ``--nodes``
simulated nodes (each a whole :class:`~clawseed_edge.service.Service` with ``--sim``, one
relay and one BME280, in this one process and loop). Node 0 then switches the relay of the
other nodes in turn, ``--calls`` times: each call goes to the owner as an MQTT request (QoS 1),
through the owner's SecurityPolicy and tool, and back; once as a bare ``MqttChannel.call``
("fleet call") and once as the agent makes it, ``gpio_switch`` of ``node<i>.relay`` through
node 0's own policy and tool first ("fleet gpio_switch"). Baseline in the same run: the same
``gpio_switch`` on node 0's own relay through its policy (the host's one door, ``host.act``). Last, one sensor
sample of node 1 and the messages it puts on the broker, counted by a subscriber to ``#``.

Run: ``python benchmarks/bench_mqtt_fleet.py [--nodes 20] [--calls 200]``; prints p50/p95.
Needs the ``mqtt`` extra and mosquitto.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from clawseed_edge.api import Actor
from clawseed_edge.config.file import load_config
from clawseed_edge.service import Service, ServiceOptions
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder

NODE = """
[provider]
name = "demo"
[autonomy]
level = "full"
max_actions_per_hour = 100000
[hardware]
board = "sim"
[[devices]]
name = "relay"
pin = "GPIO17"
kind = "relay"
[[sensors]]
name = "air"
driver = "bme280"
bus = 1
address = 0x76
[memory]
backend = "none"
[mqtt]
enabled = true
port = {port}
node_id = "node{i}"
max_commands_per_minute = 6000
max_calls_per_node_per_minute = 6000
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(args: argparse.Namespace) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        MosquittoBroker(Path(tmp) / "broker", tcp_nodelay=not args.broker_nagle) as broker,
    ):
        services: list[Service] = []
        async with contextlib.AsyncExitStack() as stack:
            for i in range(args.nodes):
                home = Path(tmp) / f"node{i}"
                home.mkdir()
                path = home / "config.toml"
                text = NODE.replace("{port}", str(broker.port)).replace("{i}", str(i))
                path.write_text(text)
                options = ServiceOptions(
                    sim=True,
                    gateway=False,
                    control_socket=False,
                    assemble={"provider": ScriptedProvider()},
                    mqtt={"state_interval_s": 3600.0},
                    say=lambda line: None,
                )
                services.append(
                    await stack.enter_async_context(Service(load_config(path), options))
                )
            caller: Any = next(c for c in services[0].channels if c.name == "mqtt")
            for _ in range(400):  # every other node's description has arrived
                if all(caller.fleet.get(f"node{i}") for i in range(1, args.nodes)):
                    break
                await asyncio.sleep(0.05)
            host = services[0].host
            assert host is not None
            bench = Actor("person", "bench")
            remote_devices = services[0].runtime.remote  # type: ignore[union-attr]
            for _ in range(400):  # and reached node 0's tools (its gpio_switch enum)
                if remote_devices is not None and len(remote_devices.devices()) >= min(
                    args.nodes - 1, remote_devices.limit
                ):
                    break
                await asyncio.sleep(0.05)
            local: list[float] = []
            remote: list[float] = []
            by_tool: list[float] = []
            for n in range(args.calls):
                on = n % 2 == 0
                t = time.perf_counter()
                result = await host.act("gpio_switch", {"device": "relay", "on": on}, bench)
                local.append((time.perf_counter() - t) * 1000)
                assert result.success, result.error
                target = f"node{1 + n % (args.nodes - 1)}"
                t = time.perf_counter()
                result = await caller.call(target, "gpio_switch", {"device": "relay", "on": on})
                remote.append((time.perf_counter() - t) * 1000)
                assert result.success, result.error
                # The agent's own path: gpio_switch of "<node>.relay", node 0's policy first.
                t = time.perf_counter()
                result = await host.act(
                    "gpio_switch", {"device": f"{target}.relay", "on": not on}, bench
                )
                by_tool.append((time.perf_counter() - t) * 1000)
                assert result.success, result.error
            async with MqttRecorder(broker, "#") as spy:
                await asyncio.sleep(1.5)  # retained messages first; past the BME280's 1 s interval
                before = len(spy.history)
                bank = next(p for p in services[1].runtime.peripherals if p.name != "pi")  # type: ignore[union-attr]
                await bank.refresh()
                await asyncio.sleep(1.0)
                after = spy.history[before:]
    nodelay = "false" if args.broker_nagle else "true"
    print(f"{args.nodes} nodes on one mosquitto (set_tcp_nodelay {nodelay}), {args.calls} calls")
    rows = (
        ("local gpio_switch", local),
        ("fleet call", remote),
        ("fleet gpio_switch", by_tool),
    )
    for name, values in rows:
        p50, p95 = statistics.median(values), percentile(values, 0.95)
        print(f"{name:<20} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms")
    print(f"broker messages for one sensor sample of node1: {len(after)} "
          f"({', '.join(sorted({t for t, _ in after}))})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument(
        "--broker-nagle", action="store_true", help="mosquitto's default set_tcp_nodelay false"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
