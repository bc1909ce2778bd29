"""The one connection of a process to the user's broker: the client, its password, the node id.

Used by the channel of ``run``, by the one-shot :class:`~.oneshot.FleetLink` and by
``clawseed-edge fleet list``. Imports aiomqtt (the ``mqtt`` extra) only when a client is made.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

__all__ = ["MAX_QUEUED_MESSAGES", "default_node_id", "mqtt_client", "mqtt_password"]

#: Messages aiomqtt queues before they are read (paho then holds the socket).
MAX_QUEUED_MESSAGES = 256


def default_node_id() -> str:
    """The host name, cut to what a node id may hold (``[A-Za-z0-9_-]``, 64 chars)."""
    name = "".join(c if c.isalnum() or c in "_-" else "_" for c in socket.gethostname())
    return name[:64] or "clawseed"


def mqtt_client(
    settings: Any, *, password: str | None, identifier: str, will_topic: str | None = None
) -> Any:
    """An (unconnected) ``aiomqtt.Client`` for the ``[mqtt]`` table; ``will_topic`` gets a
    retained ``offline`` last will. Imports aiomqtt (the ``mqtt`` extra)."""
    import aiomqtt

    s = settings
    tls = aiomqtt.TLSParameters(ca_certs=s.ca_file or None) if s.tls else None
    protocol = aiomqtt.ProtocolVersion.V5 if s.protocol == "5" else aiomqtt.ProtocolVersion.V311
    will = None
    if will_topic is not None:
        will = aiomqtt.Will(will_topic, "offline", qos=1, retain=True)
    return aiomqtt.Client(
        s.host,
        s.port,
        username=s.username or None,
        password=password if s.username else None,
        identifier=identifier,
        protocol=protocol,
        will=will,
        keepalive=s.keepalive_s,
        tls_params=tls,
        timeout=10.0,
        max_queued_incoming_messages=MAX_QUEUED_MESSAGES,
        # Small messages both ways: without it Nagle and delayed ACKs add ~40 ms to each.
        socket_options=((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),),
    )


def mqtt_password(settings: Any, home: Path) -> str | None:
    """The broker password named by ``password_env`` (environment, then the secrets file).

    Raises:
        ConfigInvalid: ``password_env`` is set but nothing holds it (says how to set it).
    """
    from clawseed_edge.api import ConfigInvalid
    from clawseed_edge.config.secrets import lookup_secret

    if not settings.password_env:
        return None
    password = lookup_secret(settings.password_env, home / "secrets")
    if password is None:
        raise ConfigInvalid(
            f"[mqtt] password_env = {settings.password_env!r}, but no such environment "
            f"variable or secret is set; run `clawseed-edge secrets set {settings.password_env}`"
        )
    return password
