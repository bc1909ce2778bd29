"""``clawseed-edge fleet list``: the nodes on the MQTT broker, their state and their devices.

Connects to the broker of ``[mqtt]`` (the table need not be enabled: only its host, port,
account and TLS settings are used), reads every node's retained description and availability
for ``--wait-s`` seconds, and prints them. Each node running ``clawseed-edge run`` with
``[mqtt] enabled = true`` publishes both; a node whose process died shows ``offline`` (its
last will). See docs/mqtt.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from typing import Any

from .common import described, load_from_args, run_async

__all__ = ["register"]


def register(sub: Any) -> None:
    fleet = sub.add_parser(
        "fleet",
        help="the nodes on the MQTT broker",
        description=described(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = fleet.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="every node, its state and its devices")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument(
        "--wait-s", type=float, default=1.5, help="seconds to collect (default 1.5)"
    )
    listing.set_defaults(func=_list)


def _list(args: argparse.Namespace) -> int:
    async def main() -> int:
        import asyncio

        from clawseed_edge.api import ConfigInvalid
        from clawseed_edge.config.packages import PackageNeed

        loaded = load_from_args(args)
        need = PackageNeed("`fleet list`", ("aiomqtt",), "mqtt")
        if need.missing():
            raise ConfigInvalid(f"`fleet list` needs aiomqtt: run {need.install_command()}")
        import aiomqtt

        from clawseed_edge.channels.mqtt.connection import mqtt_client, mqtt_password
        from clawseed_edge.channels.mqtt.fleet import DESCRIPTION_TOPICS, FleetView

        settings = loaded.config.mqtt
        view = FleetView(settings.nodes)
        client = mqtt_client(
            settings,
            password=mqtt_password(settings, loaded.home),
            identifier=f"clawseed-cli-{os.getpid()}",
        )
        try:
            async with client:
                for topic in DESCRIPTION_TOPICS:
                    await client.subscribe(topic, qos=1)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(0.1, min(args.wait_s, 60.0))):
                        async for message in client.messages:
                            payload = message.payload
                            if isinstance(payload, bytes):
                                view.take(str(message.topic.value), payload)
        except aiomqtt.MqttError as exc:
            raise ConfigInvalid(
                f"cannot reach the MQTT broker at {settings.host}:{settings.port} ({exc}); "
                "check [mqtt] host, port and account"
            ) from exc
        nodes = view.nodes()
        if args.json:
            print(json.dumps([_as_dict(n) for n in nodes], indent=2))
            return 0
        if not nodes:
            print(f"no nodes on {settings.host}:{settings.port}")
            return 0
        for node in nodes:
            devices = ", ".join(
                f"{d['name']} ({d['kind']}{', approval' if d['approval'] else ''})"
                for d in node.devices
            )
            sensors = ", ".join(s["name"] for s in node.sensors)
            print(f"{node.node}: {node.state}")
            print(f"  devices: {devices or 'none'}")
            print(f"  sensors: {sensors or 'none'}")
        return 0

    return run_async(args, main)


def _as_dict(node: Any) -> dict[str, Any]:
    return {
        "node": node.node,
        "state": node.state,
        "version": node.version,
        "devices": node.devices,
        "sensors": node.sensors,
    }
