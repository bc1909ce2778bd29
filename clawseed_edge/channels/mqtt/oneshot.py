"""FleetLink: a one-shot ``agent``/``chat`` process on the fleet. It calls; it is not called.

A process that lives for one turn is no node the others can use, so it publishes nothing
retained: no Home Assistant discovery, no description, no availability, no last will (``fleet
list`` does not show it). It connects, subscribes to the nodes' retained descriptions and to
a reply topic of its own (``clawseed/<node>/reply/<token>``: the node's running service, if
any, keeps ``clawseed/<node>/reply``), waits until the broker has sent the retained
descriptions (a marker it publishes to itself comes back after them; at most
``[mqtt] fleet_wait_s``), and binds :class:`~clawseed_edge.api.RemoteDevices` to its caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import Any

from clawseed_edge.api import RemoteDevices, ToolResult

from .connection import default_node_id, mqtt_client
from .fleet import DESCRIPTION_TOPICS, FleetView, sync_remote
from .fleet_calls import FleetCaller

__all__ = ["FleetLink"]

log = logging.getLogger(__name__)

_SYNC = b'{"sync": true}'


class FleetLink:
    """The one-shot process's connection to the fleet; ``async with`` it around the turns.

    Args:
        settings: The ``[mqtt]`` table.
        remote: Filled with the other nodes' devices; bound to this link's calls while open.
        password: The broker account's password.

    Raises (on enter):
        aiomqtt.MqttError: The broker cannot be reached (the caller says so and goes on
            without the fleet).
    """

    def __init__(self, settings: Any, remote: RemoteDevices, *, password: str | None) -> None:
        self.settings = settings
        self.remote = remote
        self.node_id = settings.node_id or default_node_id()
        self.fleet = FleetView(settings.nodes)
        self.caller = FleetCaller(self.node_id, self.fleet, reply_token=os.urandom(6).hex())
        self._password = password
        self._stack = contextlib.AsyncExitStack()
        self._synced = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> FleetLink:
        remote = self.remote
        remote.own_node = self.node_id
        client = mqtt_client(
            self.settings,
            password=self._password,
            identifier=f"clawseed-{self.node_id}-{self.caller.reply_token}",
        )
        await self._stack.enter_async_context(client)
        try:
            for topic in (*DESCRIPTION_TOPICS, self.caller.reply_topic):
                await client.subscribe(topic, qos=1)
            self._reader = asyncio.create_task(self._read(client), name="fleet-link")
            # The broker sends a subscription's retained messages before it handles what we
            # publish next: when our own marker comes back, the descriptions are in.
            await client.publish(self.caller.reply_topic, _SYNC, qos=1)
            try:
                async with asyncio.timeout(self.settings.fleet_wait_s):
                    await self._synced.wait()
            except TimeoutError:
                log.info(
                    "fleet: no marker back within %.1f s; going on", self.settings.fleet_wait_s
                )
        except BaseException:
            await self.aclose()
            raise
        self.caller.client = client
        remote.bind(self.call)
        return self

    @property
    def synced(self) -> bool:
        """Whether the marker came back: every retained description was in before the turn."""
        return self._synced.is_set()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Unbind the devices (calls fail saying so) and disconnect. Idempotent."""
        self.remote.bind(None)
        self.caller.client = None
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
            self._reader = None
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2.0):
                await self._stack.aclose()

    async def call(self, node: str, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Run ``tool(arguments)`` on ``node``; the owner decides. Safe to cancel."""
        return await self.caller.call(node, tool, arguments)

    async def _read(self, client: Any) -> None:
        import aiomqtt

        try:
            await self._serve(client)
        except aiomqtt.MqttError as exc:
            log.warning("fleet: lost the broker (%s); other nodes are out of reach now", exc)
            self.caller.client = None

    async def _serve(self, client: Any) -> None:
        limit = self.settings.max_payload_bytes
        async for message in client.messages:
            topic = str(message.topic.value)
            payload = message.payload if isinstance(message.payload, bytes) else b""
            if topic == self.caller.reply_topic:
                if message.retain or len(payload) > limit:
                    continue  # a reply is never retained; nor this large
                if payload == _SYNC:
                    self._synced.set()
                else:
                    self.caller.take_reply(payload)
            elif self.fleet.take(topic, payload):  # bounded and checked there
                sync_remote(self.fleet, self.remote, topic)
