"""``doctor``'s broker check: on a broker others share, this node's account may publish on its
own topics only (docs/fleet.md shows the Mosquitto ACL that does it).

What a client can check is what its own account may do: it publishes a probe (QoS 1, never
retained, on an ``acl-probe`` topic nothing subscribes to) under its own node and under a node
that is not its own, over MQTT 5, whose PUBACK says ``Not authorized`` (reason code 135) when the
broker's ACL refuses a publish. (MQTT 3.1.1 acknowledges a refused publish like any other, so
the check always speaks MQTT 5.) A probe changes nothing: no node listens on that topic.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

from clawseed_edge.config.doctor_machine import CheckResult, DoctorContext

from .connection import default_node_id, mqtt_password

__all__ = ["NOT_AUTHORIZED", "check_broker_acl", "probe_publish"]

#: MQTT 5's PUBACK reason code for a publish the broker's ACL refused.
NOT_AUTHORIZED = 135
#: How long the whole probe may take.
PROBE_TIMEOUT_S = 5.0
_DOCS = "docs/fleet.md shows a Mosquitto ACL per node"


def probe_topics(node_id: str) -> tuple[str, str]:
    """(this node's probe topic, another node's): the other is no real node's id."""
    return (f"clawseed/{node_id}/acl-probe", f"clawseed/{node_id}-not-me/acl-probe")


def probe_publish(
    settings: Any, password: str | None, topics: tuple[str, ...], timeout_s: float
) -> list[int]:
    """Publish an empty QoS 1 probe on each of ``topics`` and return each PUBACK's reason code.

    Blocking (paho's own network thread; call it in a worker thread).

    Raises:
        ConnectionError: The broker refused the connection or did not answer in time.
    """
    import paho.mqtt.client as paho  # aiomqtt's client, a dependency of the mqtt extra
    from paho.mqtt.enums import CallbackAPIVersion

    client = paho.Client(
        CallbackAPIVersion.VERSION2,
        client_id=f"clawseed-doctor-{os.getpid()}",
        protocol=paho.MQTTv5,
    )
    if settings.username:
        client.username_pw_set(settings.username, password)
    if settings.tls:
        client.tls_set(ca_certs=settings.ca_file or None)
    connected, done = threading.Event(), threading.Event()
    refused: list[str] = []
    codes: dict[int, int] = {}

    def on_connect(c: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if reason.is_failure:
            refused.append(str(reason))
        connected.set()

    def on_publish(c: Any, userdata: Any, mid: int, reason: Any, props: Any) -> None:
        codes[mid] = int(reason.value)
        if len(codes) == len(topics):
            done.set()

    client.on_connect, client.on_publish = on_connect, on_publish
    try:
        client.connect(settings.host, settings.port, keepalive=max(5, int(timeout_s) + 5))
    except OSError as exc:
        raise ConnectionError(f"{settings.host}:{settings.port}: {exc}") from exc
    client.loop_start()
    try:
        if not connected.wait(timeout_s) or refused:
            raise ConnectionError(
                f"the broker refused the connection ({refused[0]})" if refused else "no CONNACK"
            )
        mids = [client.publish(t, b"", qos=1, retain=False).mid for t in topics]
        if not done.wait(timeout_s):
            raise ConnectionError("the broker did not acknowledge the probes")
        return [codes[m] for m in mids]
    finally:
        client.disconnect()
        client.loop_stop()


async def check_broker_acl(ctx: DoctorContext) -> CheckResult | list[CheckResult]:
    """This node's broker account may publish on its own topics and on no other node's."""
    settings = ctx.loaded.config.mqtt if ctx.loaded is not None else None
    if settings is None or not settings.enabled:
        return []
    assert ctx.loaded is not None
    node_id = settings.node_id or default_node_id()
    own, other = probe_topics(node_id)
    try:
        password = mqtt_password(settings, ctx.loaded.home)
        mine, theirs = await asyncio.to_thread(
            probe_publish, settings, password, (own, other), PROBE_TIMEOUT_S
        )
    except ImportError:
        return CheckResult("broker acl", "skip", "needs the mqtt extra")
    except (ConnectionError, ValueError) as exc:
        return CheckResult(
            "broker acl", "warn", f"could not probe the broker: {exc}",
            "check [mqtt] host, port and account",
        )  # fmt: skip
    if theirs != NOT_AUTHORIZED:
        who = f"account {settings.username!r}" if settings.username else "an anonymous client"
        return CheckResult(
            "broker acl", "fail",
            f"{who} may publish on other nodes' topics ({other}): anyone with it can describe "
            "fake nodes, switch their devices from Home Assistant's topics, press their estop",
            f"give each node its own account and an ACL that lets it write only clawseed/<node>/# "
            f"({_DOCS}); or, on a broker nobody else uses, ignore this",
        )  # fmt: skip
    if mine == NOT_AUTHORIZED:
        return CheckResult(
            "broker acl", "fail",
            f"the ACL refuses this node its own topics ({own})",
            f"let the account write clawseed/{node_id}/# ({_DOCS})",
        )  # fmt: skip
    return CheckResult(
        "broker acl", "ok", f"this node may publish on clawseed/{node_id}/# and not on another's"
    )
