"""Home Assistant's device-based MQTT discovery, as pure data: no client, no I/O.

One retained message on ``<prefix>/device/<node_id>/config`` describes the whole node (HA
2024.11+): its ``dev`` (device) and ``o`` (origin) blocks, and in ``cmps`` one component per
wired device, per sensor quantity, per camera (an ``image``: its latest snapshot), the
emergency-stop button, the last refusal and the Pi's
health. Classes come from the device kind and its ``ha_device_class`` (never from a name), and
a sensor's class/unit pair is one HA documents (:mod:`.ha_classes`). Every component shares the node's availability topic, whose retained last will is
``offline``. :class:`Topics` names every topic of a node; :func:`discovery_config` builds the
payload from the devices' and sensors' latest states (the peripherals' state feeds).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from clawseed_edge.api import DeviceState, SensorReading

from .ha_classes import SWITCH_KINDS, sensor_class

__all__ = [
    "APPROVAL_NOTE",
    "ESTOP_PAYLOAD",
    "Topics",
    "brightness_of",
    "component_for_camera",
    "component_for_device",
    "components_for_reading",
    "discovery_config",
    "level_of",
    "object_id",
    "refusal_payload",
    "sensor_state_payload",
    "switch_payload",
]

#: What HA's emergency-stop button sends.
ESTOP_PAYLOAD = "PRESS"
#: Scale of a light's brightness on the wire (HA's default).
BRIGHTNESS_SCALE = 255

#: What an ``approval = true`` device says in HA (its attributes): why it is not a switch there.
APPROVAL_NOTE = (
    "needs approval: switch it from the paired phone (the web app or chat), where the "
    "approval is asked; Home Assistant shows its state only"
)
#: A refusal's reason as HA shows it (an entity's state holds at most 255 characters).
MAX_REFUSAL_CHARS = 255

_LIGHTS = frozenset({"led", "pwm_led"})
_INPUTS = frozenset({"button", "digital_in", "motion_sensor"})
_SAFE = re.compile(r"[^A-Za-z0-9_-]+")


def object_id(*parts: str) -> str:
    """A component id from names: letters, digits, ``_`` and ``-`` only, at most 64 chars."""
    return _SAFE.sub("_", "_".join(parts))[:64] or "x"


@dataclass(frozen=True, slots=True)
class Topics:
    """Every topic of one node.

    Attributes:
        prefix: HA's discovery prefix (``homeassistant``).
        node_id: This node on the broker.
        ha_estop: Offer Home Assistant the emergency-stop button and obey its topic
            (``[mqtt] estop_from_ha``); off, the button is removed and the topic not heard.
    """

    prefix: str
    node_id: str
    ha_estop: bool = True

    @property
    def base(self) -> str:
        return f"clawseed/{self.node_id}"

    @property
    def config(self) -> str:
        return f"{self.prefix}/device/{self.node_id}/config"

    @property
    def ha_status(self) -> str:
        return f"{self.prefix}/status"

    @property
    def availability(self) -> str:
        return f"{self.base}/availability"

    def device_state(self, device: str) -> str:
        return f"{self.base}/device/{device}/state"

    def device_command(self, device: str) -> str:
        return f"{self.base}/device/{device}/set"

    def level_state(self, device: str) -> str:
        return f"{self.base}/device/{device}/level"

    def level_command(self, device: str) -> str:
        return f"{self.base}/device/{device}/level/set"

    def device_attributes(self, device: str) -> str:
        return f"{self.base}/device/{device}/attributes"

    def sensor_state(self, sensor: str) -> str:
        return f"{self.base}/sensor/{sensor}/state"

    def camera_image(self, camera: str) -> str:
        """A camera's latest snapshot: the raw JPEG bytes (retained)."""
        return f"{self.base}/camera/{camera}/image"

    @property
    def refusal(self) -> str:
        """The last command HA sent that was refused, and why (retained JSON)."""
        return f"{self.base}/refusal/state"

    @property
    def estop(self) -> str:
        return f"{self.base}/estop/press"

    @property
    def estop_state(self) -> str:
        """The latch, retained: ``{"latched": bool, "why", "since", "how_to_reset"}``."""
        return f"{self.base}/estop/state"

    def device_refusal(self, device: str) -> str:
        """Why the last command for ``device`` was refused: ``{"code", "message"}``."""
        return f"{self.base}/device/{device}/refusal"

    @property
    def health(self) -> str:
        return f"{self.base}/health/state"

    @property
    def commands(self) -> tuple[str, ...]:
        """What the node subscribes to for commands (never retained state: see the channel)."""
        device = (f"{self.base}/device/+/set", f"{self.base}/device/+/level/set")
        return (*device, self.estop) if self.ha_estop else device


def switch_payload(value: float | None) -> str:
    """``ON``/``OFF`` for a device's value (``OFF`` for unknown or 0)."""
    return "ON" if value else "OFF"


def brightness_of(value: float, allowed: tuple[float, float] | None) -> int:
    """HA's 0..255 brightness of a level: 255 is the device's allowed maximum (``max_level``)."""
    top = allowed[1] if allowed and allowed[1] > 0 else 1.0
    return max(0, min(BRIGHTNESS_SCALE, round(value / top * BRIGHTNESS_SCALE)))


def level_of(brightness: int, allowed: tuple[float, float] | None) -> float:
    """The level for HA's 0..255 brightness: 255 is the device's allowed maximum, so HA's plain
    turn-on (255) is never above a ``max_level`` cap."""
    top = allowed[1] if allowed and allowed[1] > 0 else 1.0
    return round(brightness / BRIGHTNESS_SCALE * top, 6)


def sensor_state_payload(reading: SensorReading) -> dict[str, Any]:
    """The JSON state of a sensor: its values by quantity (rounded to 3 decimals)."""
    return {q: round(float(v), 3) for q, v in reading.values.items()}


def refusal_payload(device: str, reason: str, when: float) -> dict[str, Any]:
    """What the last-refusal entity shows: the reason (capped), the device, when (Unix s)."""
    return {"reason": reason[:MAX_REFUSAL_CHARS], "device": device[:64], "time": round(when)}


def entity_name(node_id: str, *parts: str) -> str | None:
    """An entity's name without the node's name in front (HA puts the device's name there
    already: no "greenhouse greenhouse temperature"); None when nothing else is left, which
    HA shows as the device's name alone."""
    name = " ".join(parts).replace("_", " ").strip()
    node = node_id.replace("_", " ").strip()
    if name == node:
        return None
    if node and name.startswith(node + " "):
        return name[len(node) + 1 :]
    return name


def _named(topics: Topics, platform: str, oid: str, name: str | None) -> dict[str, Any]:
    # object_id too: HA before 2025.10 reads only that; later ones take default_entity_id.
    return {
        "p": platform,
        "name": name,
        "unique_id": oid,
        "object_id": oid,
        "default_entity_id": f"{platform}.{oid}",
    }


def component_for_device(
    topics: Topics,
    state: DeviceState,
    *,
    approval: bool = False,
    ha_class: str | None = None,
) -> tuple[str, dict[str, Any]] | None:
    """(component id, component) for a wired device, or None for a kind HA is not offered.

    Lights (``led``; ``pwm_led`` with brightness, 255 at the device's maximum), switches
    (``relay``, ``digital_out``, ``buzzer``: class ``switch`` unless ``ha_class`` says
    ``outlet``), binary sensors (``button``, ``digital_in``, ``motion_sensor``: a PIR is
    ``motion``; otherwise ``ha_class``, never a guess from the name), a distance sensor. An
    ``approval`` output is a binary sensor with an attribute that says where it is switched:
    HA cannot answer an approval, so it must not look like a switch that silently does nothing.
    """
    name, kind = state.device, state.kind
    oid = object_id(topics.node_id, name)
    label = entity_name(topics.node_id, name)
    if (kind in _LIGHTS or kind in SWITCH_KINDS) and approval:
        component = {
            **_named(topics, "binary_sensor", oid, label),
            "state_topic": topics.device_state(name),
            "payload_on": "ON",
            "payload_off": "OFF",
            "json_attributes_topic": topics.device_attributes(name),
            "icon": "mdi:shield-lock",
        }
    elif kind in _LIGHTS or kind in SWITCH_KINDS:
        platform = "light" if kind in _LIGHTS else "switch"
        component = {
            **_named(topics, platform, oid, label),
            "state_topic": topics.device_state(name),
            "command_topic": topics.device_command(name),
            "payload_on": "ON",
            "payload_off": "OFF",
            # Why the last command was refused (estop_latched ...), as the entity's attributes.
            "json_attributes_topic": topics.device_refusal(name),
        }
        if platform == "switch":
            component["state_on"] = "ON"
            component["state_off"] = "OFF"
            component["device_class"] = ha_class or "switch"
        if kind == "pwm_led":
            component["brightness_state_topic"] = topics.level_state(name)
            component["brightness_command_topic"] = topics.level_command(name)
            component["brightness_scale"] = BRIGHTNESS_SCALE
            component["on_command_type"] = "brightness"
    elif kind in _INPUTS:
        component = {
            **_named(topics, "binary_sensor", oid, label),
            "state_topic": topics.device_state(name),
            "payload_on": "ON",
            "payload_off": "OFF",
        }
        device_class = ha_class or ("motion" if kind == "motion_sensor" else None)
        if device_class:
            component["device_class"] = device_class
    elif kind == "distance_sensor":
        component = {
            **_named(topics, "sensor", oid, label),
            "state_topic": topics.device_state(name),
            "device_class": "distance",
            "unit_of_measurement": "m",
            "state_class": "measurement",
        }
    else:
        return None
    return oid, component


def component_for_camera(topics: Topics, camera: str) -> tuple[str, dict[str, Any]]:
    """(component id, component): HA's MQTT ``image`` entity showing ``camera``'s latest
    snapshot, the raw JPEG on :meth:`Topics.camera_image` (its motion, when on, is a
    ``binary_sensor`` of its own, from the camera's state feed)."""
    oid = object_id(topics.node_id, camera, "snapshot")
    return oid, {
        **_named(topics, "image", oid, entity_name(topics.node_id, camera, "snapshot")),
        "image_topic": topics.camera_image(camera),
        "content_type": "image/jpeg",
        "icon": "mdi:camera",
    }


def components_for_reading(
    topics: Topics, reading: SensorReading, *, expire_after_s: int
) -> list[tuple[str, dict[str, Any]]]:
    """One ``sensor`` component per quantity of a sensor (``greenhouse`` -> temperature ...).

    Its class and unit are a pair HA accepts (``%RH`` is published as ``%``); a unit HA does
    not list for the quantity's class keeps the unit and drops the class.
    ``expire_after_s``: HA shows the value as unavailable when no new one came in that long.
    """
    out = []
    for quantity in reading.values:
        oid = object_id(topics.node_id, reading.sensor, quantity)
        device_class, unit = sensor_class(quantity, reading.units.get(quantity))
        component: dict[str, Any] = {
            **_named(topics, "sensor", oid, entity_name(topics.node_id, reading.sensor, quantity)),
            "state_topic": topics.sensor_state(reading.sensor),
            "value_template": "{{ value_json." + _template_key(quantity) + " }}",
            "state_class": "measurement",
            "expire_after": expire_after_s,
        }
        if device_class is not None:
            component["device_class"] = device_class
        if unit:
            component["unit_of_measurement"] = unit
        out.append((oid, component))
    return out


def _template_key(quantity: str) -> str:
    return _SAFE.sub("_", quantity) or "value"


def _estop_button(topics: Topics, expire_after_s: int) -> tuple[str, dict[str, Any]]:
    oid = object_id(topics.node_id, "emergency_stop")
    if not topics.ha_estop:
        # [mqtt] estop_from_ha = false: the platform alone, which is how device-based
        # discovery removes a published entity.
        return oid, {"p": "button"}
    return oid, {
        **_named(topics, "button", oid, "emergency stop"),
        "command_topic": topics.estop,
        "payload_press": ESTOP_PAYLOAD,
        "icon": "mdi:alert-octagon",
    }


def _estop_latched(topics: Topics, expire_after_s: int) -> tuple[str, dict[str, Any]]:
    # The latched stop: on until a person resets it (never from Home Assistant).
    oid = object_id(topics.node_id, "emergency_stop_latched")
    return oid, {
        **_named(topics, "binary_sensor", oid, "emergency stop latched"),
        "state_topic": topics.estop_state,
        "value_template": "{{ 'ON' if value_json.latched else 'OFF' }}",
        "json_attributes_topic": topics.estop_state,
        "device_class": "safety",
        "icon": "mdi:alert-octagon",
    }


def _last_refusal(topics: Topics, expire_after_s: int) -> tuple[str, dict[str, Any]]:
    # Where HA shows why a command it sent was refused (an approval device, a rate limit ...):
    # the reason as the state, the device and the time as attributes.
    oid = object_id(topics.node_id, "last_refusal")
    return oid, {
        **_named(topics, "sensor", oid, "last refusal"),
        "state_topic": topics.refusal,
        "value_template": "{{ value_json.reason }}",
        "json_attributes_topic": topics.refusal,
        "icon": "mdi:hand-back-left",
    }


def _health(
    topics: Topics, platform: str, key: str, name: str, expire_after_s: int, **fields: Any
) -> tuple[str, dict[str, Any]]:
    # A diagnostic entity on the node's health topic (retained, re-sent on HA's birth).
    oid = object_id(topics.node_id, key)
    return oid, {
        **_named(topics, platform, oid, name),
        "state_topic": topics.health,
        **fields,
        "entity_category": "diagnostic",
        "expire_after": expire_after_s,
    }


def _cpu_temperature(topics: Topics, expire_after_s: int) -> tuple[str, dict[str, Any]]:
    return _health(
        topics,
        "sensor",
        "cpu_temperature",
        "CPU temperature",
        expire_after_s,
        value_template="{{ value_json.cpu_temperature }}",
        device_class="temperature",
        unit_of_measurement="°C",
        state_class="measurement",
    )


def _throttled(topics: Topics, expire_after_s: int) -> tuple[str, dict[str, Any]]:
    # The Pi's get_throttled "now" bits: on while under-voltage, capped or throttled; the
    # flags in words (the "since boot" ones too) as its attributes.
    return _health(
        topics,
        "binary_sensor",
        "throttled",
        "throttled",
        expire_after_s,
        value_template="{{ 'ON' if value_json.throttled_now else 'OFF' }}",
        json_attributes_topic=topics.health,
        json_attributes_template="{{ {'flags': value_json.throttled_flags} | tojson }}",
        device_class="problem",
    )


#: The node's own entities, beside its devices and sensors: one builder each (add one here).
NODE_COMPONENTS = [_estop_button, _estop_latched, _last_refusal, _cpu_temperature, _throttled]


def _fixed_components(topics: Topics, *, expire_after_s: int) -> list[tuple[str, dict[str, Any]]]:
    return [build(topics, expire_after_s) for build in NODE_COMPONENTS]


def discovery_config(
    topics: Topics,
    *,
    devices: Iterable[DeviceState],
    readings: Iterable[SensorReading],
    approvals: Mapping[str, bool] | None = None,
    classes: Mapping[str, str] | None = None,
    cameras: Iterable[str] = (),
    version: str = "",
    expire_after_s: int = 600,
    removed: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The retained payload of ``<prefix>/device/<node_id>/config``.

    Args:
        topics: The node's topics.
        devices: The latest state of every wired device.
        readings: The latest reading of every sensor (its quantities become components).
        approvals: Device name -> whether it needs approval.
        classes: Device name -> its ``ha_device_class`` (where the user set one).
        cameras: The cameras whose snapshots are published (one ``image`` entity each).
        version: This package's version (the ``o`` and ``dev`` blocks).
        expire_after_s: For every sensor component.
        removed: Component id -> platform of components published before and gone now: each
            gets ``{"p": platform}`` only, which tells HA to delete that entity.
    """
    approvals = approvals or {}
    classes = classes or {}
    components: dict[str, dict[str, Any]] = {}
    for state in devices:
        found = component_for_device(
            topics,
            state,
            approval=approvals.get(state.device, False),
            ha_class=classes.get(state.device),
        )
        if found is not None:
            components[found[0]] = found[1]
    for reading in readings:
        if reading.ok:
            components.update(
                components_for_reading(topics, reading, expire_after_s=expire_after_s)
            )
    components.update(component_for_camera(topics, camera) for camera in cameras)
    components.update(_fixed_components(topics, expire_after_s=expire_after_s))
    for oid, platform in (removed or {}).items():
        if oid not in components:
            components[oid] = {"p": platform}
    return {
        "dev": {
            "ids": [f"clawseed_{topics.node_id}"],
            "name": topics.node_id,
            "mf": "clawseed-edge",
            "mdl": "clawseed-edge node",
            "sw": version,
        },
        "o": {"name": "clawseed-edge", "sw": version},
        "cmps": components,
        "availability_topic": topics.availability,
        "payload_available": "online",
        "payload_not_available": "offline",
        "qos": 1,
    }
