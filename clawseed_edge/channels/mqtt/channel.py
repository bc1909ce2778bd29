"""MqttChannel: this node on the user's MQTT broker, as Home Assistant sees and drives it.

One connection per process. aiomqtt does not reconnect by itself, so :meth:`MqttChannel._run`
does: connect (with a retained last will ``offline`` on the availability topic), publish
``online``, the discovery config and every latest state, then serve messages until the
connection drops; wait (1 s, doubling up to ``reconnect_max_s``) and connect again.

State goes out from the peripherals' state feeds (a change from any source -- the model, the
web app, a button, HA itself -- is published at once); sensors are refreshed at least every
``state_interval_s`` by the channels' one refresh schedule (no polling of its own), and the
Pi's CPU temperature read as often.

What comes in is bounded and never trusted: a payload over ``max_payload_bytes``, a topic that is
not ours, a retained message on a command topic (state left on the broker is not a command) and
a malformed payload are logged and dropped; at most ``max_commands_per_minute`` commands are
taken and :data:`MAX_PENDING_COMMANDS` run at once. A command is a person's direct command
through the host's one door (:meth:`~clawseed_edge.channels.host.ChannelHost.act`, actor
``person`` via ``mqtt``): bounds, schema, caps, rates and read_only apply; ``supervised``
does not ask a phone for it (someone pressed the switch), but a device with ``approval = true``
asks the service's approver -- with nobody to approve it is refused.

The fleet: the channel publishes this node's retained description, reads the others' into
:attr:`MqttChannel.fleet` and the runtime's :class:`~clawseed_edge.api.RemoteDevices` (the
device tools list them as ``<node>.<name>``), and carries and answers fleet calls
(:mod:`.fleet_calls`: a token bucket per calling node first). Other modules by noun:
:mod:`.connection` (the client), :mod:`.discovery`, :mod:`.fleet`, :mod:`.calls` (the wire
format), :mod:`.health`, :mod:`.oneshot` (``agent``/``chat``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import (
    ESTOP_RESET_HINT,
    Actor,
    DeviceState,
    RemoteDevices,
    SensorReading,
    StateSource,
    StateUpdate,
    ToolResult,
)

from ..refresh import RefreshSchedule
from .calls import call_topic
from .connection import default_node_id, mqtt_client, mqtt_password
from .discovery import (
    APPROVAL_NOTE,
    BRIGHTNESS_SCALE,
    ESTOP_PAYLOAD,
    Topics,
    brightness_of,
    discovery_config,
    level_of,
    refusal_payload,
    sensor_state_payload,
    switch_payload,
)
from .fleet import (
    DESCRIPTION_TOPICS,
    FleetView,
    description_topic,
    node_description,
    sync_remote,
)
from .fleet_calls import FleetAnswerer, FleetCaller
from .health import read_health
from .images import SnapshotImages, camera_banks

if TYPE_CHECKING:
    from clawseed_edge.channels.host import ChannelHost

__all__ = [
    "MAX_PENDING_COMMANDS",
    "MqttChannel",
    "default_node_id",
    "mqtt_channel",
    "mqtt_client",
    "mqtt_password",
]

log = logging.getLogger(__name__)

#: Commands running at once; one more is dropped (logged).
MAX_PENDING_COMMANDS = 8
#: Our own retained discovery config read back at connect (it is larger than any command).
MAX_OWN_CONFIG_BYTES = 256 * 1024
#: How long to wait for our own retained config after subscribing (to find removed entities).
RETAINED_WAIT_S = 0.5


class MqttChannel:
    """The MQTT channel; its people cannot answer approvals (``answerers`` is 0).

    Args:
        settings: The ``[mqtt]`` table (:class:`~clawseed_edge.config.schema.MqttSettings`).
        act: The host's one path to a tool (``await act(tool, arguments, actor)``): HA's
            commands run as a person's, the fleet's calls as the calling node's.
        peripherals: Whose state feeds are published.
        estop: The service's one emergency stop (``await estop(why)``).
        password: The broker account's password (read from the secrets by the caller).
        approvals: Device name -> ``approval = true`` (shown with a lock icon in HA).
        version: This package's version, for the discovery's ``o``/``dev`` blocks.
        state_interval_s: Seconds between sensor samples and health readings.
        refresh: The channels' one refresh schedule (default: one of its own).
        sys_root: Where ``class/thermal`` and the throttling flags are read (tests give a fake
            tree).
        vcgencmd: The program asked for the throttling flags where sysfs has none (None: never).
        remote: Filled with the other nodes' devices (the device tools list them as
            ``<node>.<name>``); its calls go out through this channel.
    """

    name = "mqtt"

    def __init__(
        self,
        settings: Any,
        *,
        act: Callable[[str, dict[str, Any], Actor], Awaitable[ToolResult]],
        peripherals: Sequence[Any],
        estop: Callable[[str], Awaitable[Any]],
        password: str | None = None,
        approvals: Mapping[str, bool] | None = None,
        version: str = "",
        state_interval_s: float = 60.0,
        sys_root: str | Path = "/sys",
        vcgencmd: str | None = "vcgencmd",
        remote: RemoteDevices | None = None,
        refresh: RefreshSchedule | None = None,
        latch: Any = None,
    ) -> None:
        self.settings = settings
        self.topics = Topics(
            settings.discovery_prefix,
            settings.node_id or default_node_id(),
            ha_estop=settings.estop_from_ha,
        )
        self.act = act
        self.peripherals = list(peripherals)
        self._estop = estop
        #: The emergency stop's latch (an ``EstopLatch``), shown as a binary sensor.
        self._latch = latch if latch is not None else getattr(estop, "latch", None)
        self._password = password
        self.approvals = dict(approvals or {})
        # Each wired device's ha_device_class, from the peripherals' validated wiring.
        self.classes = {
            w.config.name: w.config.ha_device_class
            for p in self.peripherals
            for w in getattr(p, "wired", ())
            if getattr(w.config, "ha_device_class", None)
        }
        self.version = version
        self.state_interval_s = state_interval_s
        self.refresh = refresh if refresh is not None else RefreshSchedule(self.peripherals)
        self.sys_root = Path(sys_root)
        self.vcgencmd = vcgencmd
        self.connected = asyncio.Event()
        #: How many times a connection was made (tests: a reconnect happened).
        self.connections = 0
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._unsubscribe: list[Callable[[], None]] = []
        # Latest update per device/sensor not yet published: bounded by the number of them.
        self._dirty: dict[tuple[str, str], StateUpdate] = {}
        self._wake = asyncio.Event()
        self._commands: set[asyncio.Task[None]] = set()
        self._latch_publishes: set[asyncio.Task[None]] = set()
        self._command_times: collections.deque[float] = collections.deque()
        self._published: dict[str, str] = {}  # component id -> platform, as last published
        self._announced: set[str] | None = None  # devices in the last config (None: not yet)
        self._stopping = False
        #: The other nodes on the broker (and this one), from their retained descriptions.
        self.fleet = FleetView(settings.nodes)
        self.caller = FleetCaller(self.topics.node_id, self.fleet)
        self.answerer = FleetAnswerer(
            self.topics.node_id,
            act,
            per_node_per_minute=settings.max_calls_per_node_per_minute,
        )
        #: Each camera's newest snapshot, for its Home Assistant ``image`` entity.
        self.images = SnapshotImages(
            self.topics,
            camera_banks(self.peripherals),
            enabled=getattr(settings, "camera_images", True),
            wake=self._wake.set,
        )
        self.remote = remote
        if remote is not None:
            remote.own_node = self.topics.node_id
            remote.bind(self.call)

    # --- Channel ---------------------------------------------------------------------------

    @property
    def answerers(self) -> int:
        return 0  # Home Assistant is not a person: it never approves

    async def start(self) -> None:
        """Subscribe to the state feeds and start connecting (in the background: a broker that
        is down at start delays nothing; the channel connects when it comes up)."""
        import aiomqtt  # noqa: F401  (the `mqtt` extra; a clear error here, not in the loop)

        for p in self.peripherals:
            if isinstance(p, StateSource):
                self._unsubscribe.append(p.states.subscribe(self._on_update))
        self._unsubscribe.extend(self.images.subscribe())
        # Fresh sensor readings at least every state_interval_s, from the one schedule.
        self._unsubscribe.append(self.refresh.want(self.state_interval_s))
        latch = self._latch
        if latch is not None:
            self._unsubscribe.append(latch.subscribe(lambda _: self._publish_latch_soon()))
        self._task = asyncio.create_task(self._run(), name="mqtt")

    async def stop(self, reason: str) -> None:
        """Publish ``offline``, disconnect, stop the commands. Idempotent."""
        self._stopping = True
        if self.remote is not None:
            self.remote.bind(None)
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        client = self._client
        if client is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await client.publish(self.topics.availability, "offline", qos=1, retain=True)
        for task in [
            *self._commands,
            *self._latch_publishes,
            *([self._task] if self._task else []),
        ]:
            task.cancel()
        # Bounded: a broker that stopped answering must not hold the service's stop.
        tasks = [*self._commands, *([self._task] if self._task else [])]
        try:
            async with asyncio.timeout(5.0):
                await asyncio.gather(*tasks, return_exceptions=True)
        except TimeoutError:
            log.warning("MQTT: the connection did not close within 5 s; leaving it")
        self._task = None

    def deliver(self, frame: Mapping[str, Any]) -> None:
        """Nothing: HA learns of changes through the state topics."""

    def ask(self, frame: Mapping[str, Any]) -> None:
        """Nothing: HA cannot answer an approval."""

    def abort_turns(self, reason: str) -> int:
        """Cancel the commands still running (an emergency stop)."""
        for task in self._commands:
            task.cancel()
        return len(self._commands)

    # --- the connection --------------------------------------------------------------------

    async def _run(self) -> None:
        import aiomqtt

        delay = 1.0
        while not self._stopping:
            try:
                async with self._client_for(aiomqtt) as client:
                    self._client = self.caller.client = client
                    self.connections += 1
                    delay = 1.0
                    log.info(
                        "MQTT: connected to %s:%s as %s",
                        self.settings.host,
                        self.settings.port,
                        self.topics.node_id,
                    )
                    await self._serve(client)
            except aiomqtt.MqttError as exc:
                if self._stopping:
                    break
                log.warning(
                    "MQTT: no connection to %s:%s (%s); trying again in %.0f s",
                    self.settings.host,
                    self.settings.port,
                    exc,
                    delay,
                )
            finally:
                self._client = self.caller.client = None
                self.connected.clear()
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.settings.reconnect_max_s)

    def _client_for(self, aiomqtt: Any) -> Any:
        return mqtt_client(
            self.settings,
            password=self._password,
            identifier=f"clawseed-{self.topics.node_id}",
            will_topic=self.topics.availability,
        )

    async def _serve(self, client: Any) -> None:
        topics = self.topics
        await client.subscribe(topics.config, qos=1)  # our own retained config: what was there
        await client.subscribe(topics.ha_status, qos=1)
        own_calls = (call_topic(topics.node_id), self.caller.reply_topic)
        for topic in (*topics.commands, *DESCRIPTION_TOPICS, *own_calls):
            await client.subscribe(topic, qos=1)
        await client.publish(topics.availability, "online", qos=1, retain=True)
        self.connected.set()
        background = [
            asyncio.create_task(self._announce_soon(client), name="mqtt-announce"),
            asyncio.create_task(self._publisher(client), name="mqtt-publish"),
            asyncio.create_task(self._sampler(client), name="mqtt-sample"),
        ]
        try:
            async for message in client.messages:
                self._on_message(client, message)
        finally:
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)

    # --- discovery and state ---------------------------------------------------------------

    async def _announce_soon(self, client: Any) -> None:
        await asyncio.sleep(RETAINED_WAIT_S)  # our retained config (if any) arrives first
        await self.announce(client)

    async def announce(self, client: Any | None = None) -> None:
        """Publish the discovery config (retained) and every latest state."""
        client = client or self._client
        if client is None:
            return
        devices, readings = self._latest()
        self._announced = {d.device for d in devices}
        config = discovery_config(
            self.topics,
            devices=devices,
            readings=readings,
            approvals=self.approvals,
            classes=self.classes,
            cameras=self.images.cameras(),
            version=self.version,
            expire_after_s=max(60, int(self.state_interval_s * 3)),
            removed=self._published,
        )
        # A component that is only {"p": ...} is a deletion: not published any more after.
        components = {k: v for k, v in config["cmps"].items() if len(v) > 1}
        await client.publish(self.topics.config, json.dumps(config), qos=1, retain=True)
        self._published = {k: str(v["p"]) for k, v in components.items()}
        description = node_description(
            self.topics.node_id,
            devices=devices,
            readings=readings,
            approvals=self.approvals,
            version=self.version,
        )
        await client.publish(
            description_topic(self.topics.node_id), json.dumps(description), qos=1, retain=True
        )
        await self._publish_latch(client)
        await self.images.announce(client)
        for state in devices:
            if self.approvals.get(state.device):
                attributes = {"approval": APPROVAL_NOTE}
                await client.publish(
                    self.topics.device_attributes(state.device),
                    json.dumps(attributes),
                    qos=1,
                    retain=True,
                )
        updates: list[StateUpdate] = [*devices, *readings]
        for update in updates:
            self._dirty[update.key] = update
        self._wake.set()
        # Every state again, health included: a restarted HA shows none of it until then.
        await self._publish_health(client)

    def _publish_latch_soon(self) -> None:
        # Not one of the commands: the stop's abort_turns cancels those, never this.
        task = asyncio.get_running_loop().create_task(self._publish_latch())
        self._latch_publishes.add(task)
        task.add_done_callback(self._latch_publishes.discard)

    async def _publish_latch(self, client: Any | None = None) -> None:
        """The latch's state, retained, for the binary sensor (and its reset hint)."""
        client = client or self._client
        latch = self._latch
        if client is None or latch is None:
            return
        state = latch.state.to_dict()
        if latch.latched:
            state["how_to_reset"] = ESTOP_RESET_HINT
        try:
            await client.publish(self.topics.estop_state, json.dumps(state), qos=1, retain=True)
        except Exception as exc:  # the next connection's announce publishes it again
            log.warning("MQTT: the emergency-stop state was not published: %s", exc)

    def _latest(self) -> tuple[list[DeviceState], list[SensorReading]]:
        devices: list[DeviceState] = []
        readings: list[SensorReading] = []
        for p in self.peripherals:
            if isinstance(p, StateSource):
                devices.extend(p.states.devices())
                readings.extend(r for r in p.states.readings() if r.ok)
        return devices, readings

    def _on_update(self, update: StateUpdate) -> None:
        # From the state feed, on our loop: kept until the publisher sends it (latest wins).
        self._dirty[update.key] = update
        self._wake.set()
        announced = self._announced
        if isinstance(update, DeviceState) and announced is not None:
            if update.device not in announced and self._client is not None:
                # A device whose first state came after the config went out (a camera's
                # motion, its first frame after connect): announce again, once per device.
                announced.add(update.device)
                self._spawn(self.announce(self._client))

    async def _publisher(self, client: Any) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._dirty:
                _, update = self._dirty.popitem()
                await self._publish_state(client, update)
            await self.images.publish_pending(client)

    async def _publish_state(self, client: Any, update: StateUpdate) -> None:
        if isinstance(update, DeviceState):
            topic = self.topics.device_state(update.device)
            if update.kind == "distance_sensor":
                payload = "" if update.value is None else f"{update.value:.3f}"
            else:
                payload = switch_payload(update.value)
            await client.publish(topic, payload, qos=1, retain=True)
            if update.kind == "pwm_led" and update.value is not None:
                level = brightness_of(update.value, update.range)
                await client.publish(
                    self.topics.level_state(update.device), str(level), qos=1, retain=True
                )
        elif update.ok:
            payload = json.dumps(sensor_state_payload(update))
            await client.publish(
                self.topics.sensor_state(update.sensor), payload, qos=1, retain=True
            )

    async def _sampler(self, client: Any) -> None:
        """The CPU temperature read every ``state_interval_s``; the sensors are refreshed as
        often by the one refresh schedule (their readings come back through the feeds)."""
        while True:
            await self._publish_health(client)
            await asyncio.sleep(self.state_interval_s)

    async def _publish_health(self, client: Any) -> None:
        # Retained: HA (re)subscribing finds it at once, not after the next interval.
        health = await self.health()
        await client.publish(self.topics.health, json.dumps(health), qos=1, retain=True)

    async def health(self) -> dict[str, Any]:
        """The health entities' state (:func:`.health.read_health`)."""
        return await read_health(self.sys_root, self.vcgencmd)

    # --- what comes in ---------------------------------------------------------------------

    def _on_message(self, client: Any, message: Any) -> None:
        topic = str(message.topic.value)
        payload = message.payload if isinstance(message.payload, bytes) else b""
        if topic == self.topics.config:
            if len(payload) <= MAX_OWN_CONFIG_BYTES:
                self._remember_published(payload)
            return
        if topic.endswith(("/description", "/availability")):
            if self.fleet.take(topic, payload) and self.remote is not None:  # bounded there
                sync_remote(self.fleet, self.remote, topic)
            return
        if len(payload) > self.settings.max_payload_bytes:
            log.warning(
                "MQTT: dropped %d bytes on %s (max_payload_bytes is %d)",
                len(payload),
                topic[:200],
                self.settings.max_payload_bytes,
            )
            return
        if topic == self.topics.ha_status:
            if payload == b"online":
                log.info("MQTT: Home Assistant came online; announcing again")
                self._spawn(self.announce(client))
            return
        if message.retain:
            # State someone left on the broker is not a person's command now.
            log.warning("MQTT: ignored a retained message on command topic %s", topic[:200])
            return
        if topic == self.caller.reply_topic:
            self.caller.take_reply(payload)
            return
        if topic == call_topic(self.topics.node_id):
            # Per calling node first (a flooding node is throttled), then the channel's bound.
            request = self.answerer.take(payload)
            if request is not None and self._admit(topic):
                self._spawn(self.answerer.answer(client, request))
            return
        command = self._parse_command(topic, payload)
        if command is not None and self._admit(topic):
            self._spawn(self._run_command(*command))

    def _admit(self, topic: str) -> bool:
        """Whether a command may run now (``max_commands_per_minute``, and at most
        :data:`MAX_PENDING_COMMANDS` at once); logged when not."""
        now = time.monotonic()
        while self._command_times and now - self._command_times[0] > 60.0:
            self._command_times.popleft()
        if len(self._command_times) >= self.settings.max_commands_per_minute:
            log.warning("MQTT: dropped a command on %s (max_commands_per_minute)", topic[:200])
            return False
        if len(self._commands) >= MAX_PENDING_COMMANDS:
            log.warning(
                "MQTT: dropped a command on %s (%d still running)",
                topic[:200],
                MAX_PENDING_COMMANDS,
            )
            return False
        self._command_times.append(now)
        return True

    # --- fleet calls (both ends in .fleet_calls) -------------------------------------------

    async def call(
        self, node: str, tool: str, arguments: dict[str, Any], *, timeout_s: float = 10.0
    ) -> ToolResult:
        """Run ``tool(arguments)`` on ``node``, decided by that node's own policy (see
        :meth:`.fleet_calls.FleetCaller.call`). Safe to cancel."""
        return await self.caller.call(node, tool, arguments, timeout_s=timeout_s)

    def _remember_published(self, payload: bytes) -> None:
        """Our retained config from before (another run): its components, to delete the gone."""
        if self._published or not payload:
            return
        try:
            previous = json.loads(payload)
            components = previous["cmps"]
            self._published = {
                str(k)[:64]: str(v["p"])[:32]
                for k, v in list(components.items())[:512]
                if isinstance(v, dict) and "p" in v
            }
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning(
                "MQTT: our retained discovery config on the broker is malformed; "
                "it will be replaced"
            )

    def _parse_command(self, topic: str, payload: bytes) -> tuple[str, str, dict[str, Any]] | None:
        """(what, tool, arguments) for a command, or None (logged) for anything else."""
        text = payload.decode("utf-8", errors="replace").strip()
        base = self.topics.base + "/"
        if topic == self.topics.estop and self.topics.ha_estop:
            if text != ESTOP_PAYLOAD:
                log.warning("MQTT: dropped %r on %s (expected %s)", text[:40], topic, ESTOP_PAYLOAD)
                return None
            return ("estop", "", {})
        if not topic.startswith(base + "device/"):
            log.warning("MQTT: dropped a message on an unknown topic %s", topic[:200])
            return None
        parts = topic[len(base) :].split("/")
        device = parts[1] if len(parts) > 2 else ""
        if not device or len(device) > 64:
            return None
        if "." in device:
            # Home Assistant drives this node's own devices: a dotted name is another node's,
            # and a command on our topic is not passed on to it.
            log.warning("MQTT: dropped a command for %r on %s (not ours)", device, topic[:200])
            return None
        if parts[2:] == ["set"]:
            if text not in ("ON", "OFF"):
                log.warning("MQTT: dropped %r on %s (expected ON or OFF)", text[:40], topic[:200])
                return None
            return (device, "gpio_switch", {"device": device, "on": text == "ON"})
        if parts[2:] == ["level", "set"]:
            try:
                level = int(text)
            except ValueError:
                level = -1
            if not 0 <= level <= BRIGHTNESS_SCALE:
                log.warning(
                    "MQTT: dropped %r on %s (expected 0..%d)",
                    text[:40],
                    topic[:200],
                    BRIGHTNESS_SCALE,
                )
                return None
            # 255 is the device's allowed maximum (its max_level): HA's plain turn-on sends it.
            state = self._device_state(device)
            allowed = state.range if state is not None else None
            return (device, "gpio_set_level", {"device": device, "level": level_of(level, allowed)})
        log.warning("MQTT: dropped a message on an unknown topic %s", topic[:200])
        return None

    async def _run_command(self, what: str, tool: str, arguments: dict[str, Any]) -> None:
        if what == "estop":
            await self._estop("the emergency-stop button in Home Assistant (MQTT)")
            return
        result = await self.act(tool, arguments, Actor("person", "mqtt", "home-assistant"))
        if result.success:
            log.info("MQTT: %s %s done", tool, what)
        else:
            log.warning("MQTT: %s %s refused: %s", tool, what, str(result.error)[:300])
            if self._client is not None:  # the reason, for an automation or a person in HA
                refusal = {"code": result.code or "refused", "message": str(result.error)[:500]}
                await self._client.publish(
                    self.topics.device_refusal(what), json.dumps(refusal), qos=1
                )
            self._spawn(self._publish_refusal(what, str(result.error)))
            # HA shows what it asked for until told otherwise: publish the real state again.
            for p in self.peripherals:
                if isinstance(p, StateSource):
                    for state in p.states.devices():
                        if state.device == what:
                            self._dirty[state.key] = state
            self._wake.set()

    def _device_state(self, device: str) -> DeviceState | None:
        for p in self.peripherals:
            if isinstance(p, StateSource):
                for state in p.states.devices():
                    if state.device == device:
                        return state
        return None

    async def _publish_refusal(self, device: str, reason: str) -> None:
        """Where HA shows it: the last-refusal entity (retained, capped)."""
        client = self._client
        if client is not None:
            payload = refusal_payload(device, reason, time.time())
            await client.publish(self.topics.refusal, json.dumps(payload), qos=1, retain=True)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._commands.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._commands.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("MQTT: a command failed: %s", task.exception())


def mqtt_channel(settings: Any, host: ChannelHost) -> MqttChannel:
    """The ``[mqtt]`` channel built from its table and the host (the ``mqtt`` factory).

    Raises:
        ConfigInvalid: The broker password is named but not set (says how to set it).
    """
    from clawseed_edge import __version__

    runtime = host.runtime
    channel = MqttChannel(
        settings,
        act=host.act,
        peripherals=host.peripherals,
        estop=host.stop,
        latch=host.emergency_stop.latch,
        password=mqtt_password(settings, host.home),
        approvals={d.name: d.approval for d in runtime.loaded.config.devices},
        version=__version__,
        remote=runtime.remote,
        refresh=host.refresh_schedule(),
        **host.channel_options("mqtt"),
    )
    host.say(
        f"MQTT: node {channel.topics.node_id} on {settings.host}:{settings.port} "
        f"(Home Assistant prefix {settings.discovery_prefix})"
    )
    return channel
