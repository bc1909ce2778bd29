"""Home Assistant's device-based MQTT discovery, as pure data: no client, no I/O.

One retained message on ``<prefix>/device/<node_id>/config`` describes the whole node (HA
2024.11+): its ``dev`` (device) and ``o`` (origin) blocks, and in ``cmps`` one component per
wired device, per sensor quantity, the emergency-stop button and the Pi's CPU temperature.
Every component shares the node's availability topic, whose retained last will is
``offline``. :class:`Topics` names every topic of a node; :func:`discovery_config` builds the
payload from the devices' and sensors' latest states (the peripherals' state feeds).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from clawseed_edge.api import DeviceState, SensorReading

__all__ = [
    "ESTOP_PAYLOAD",
    "Topics",
    "component_for_device",
    "components_for_reading",
    "discovery_config",
    "object_id",
    "sensor_state_payload",
    "switch_payload",
]

#: What HA's emergency-stop button sends.
ESTOP_PAYLOAD = "PRESS"
#: Scale of a light's brightness on the wire (HA's default).
BRIGHTNESS_SCALE = 255

_LIGHTS = frozenset({"led", "pwm_led"})
_SWITCHES = frozenset({"relay", "digital_out", "buzzer"})
_INPUTS = frozenset({"button", "digital_in", "motion_sensor"})
#: A device name with one of these words gets the matching binary-sensor class.
_INPUT_CLASSES = (
    ("door", "door"),
    ("window", "window"),
    ("garage", "garage_door"),
    ("motion", "motion"),
    ("pir", "motion"),
    ("smoke", "smoke"),
    ("leak", "moisture"),
    ("water", "moisture"),
)
#: Sensor quantity -> (device_class, unit HA expects); None: no class (the unit as read).
_QUANTITY_CLASSES: dict[str, tuple[str, str | None]] = {
    "temperature": ("temperature", "°C"),
    "humidity": ("humidity", "%"),
    "pressure": ("atmospheric_pressure", "hPa"),
    "illuminance": ("illuminance", "lx"),
    "light": ("illuminance", "lx"),
    "lux": ("illuminance", "lx"),
    "voltage": ("voltage", "V"),
    "current": ("current", "A"),
    "power": ("power", "W"),
    "co2": ("carbon_dioxide", "ppm"),
    "distance": ("distance", "m"),
    "moisture": ("moisture", "%"),
}
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

    def sensor_state(self, sensor: str) -> str:
        return f"{self.base}/sensor/{sensor}/state"

    @property
    def estop(self) -> str:
        return f"{self.base}/estop/press"

    @property
    def estop_state(self) -> str:
        """The latch, retained: ``{"latched": bool, "why", "since", "how_to_reset"}``."""
        return f"{self.base}/estop/state"

    def refusal(self, device: str) -> str:
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


def sensor_state_payload(reading: SensorReading) -> dict[str, Any]:
    """The JSON state of a sensor: its values by quantity (rounded to 3 decimals)."""
    return {q: round(float(v), 3) for q, v in reading.values.items()}


def component_for_device(
    topics: Topics, state: DeviceState, *, approval: bool = False
) -> tuple[str, dict[str, Any]] | None:
    """(component id, component) for a wired device, or None for a kind HA is not offered.

    Lights (``led``; ``pwm_led`` with brightness), switches (``relay``, ``digital_out``,
    ``buzzer``), binary sensors (``button``, ``digital_in``, ``motion_sensor``: a PIR is
    ``motion``, a name with ``door``/``window`` gets that class), a distance sensor.
    """
    name, kind = state.device, state.kind
    oid = object_id(topics.node_id, name)
    base: dict[str, Any] = {
        "name": name.replace("_", " "),
        "unique_id": oid,
        "default_entity_id": "",
    }
    if kind in _LIGHTS or kind in _SWITCHES:
        platform = "light" if kind in _LIGHTS else "switch"
        component = {
            **base,
            "p": platform,
            "state_topic": topics.device_state(name),
            "command_topic": topics.device_command(name),
            "payload_on": "ON",
            "payload_off": "OFF",
            # Why the last command was refused (estop_latched ...), as the entity's attributes.
            "json_attributes_topic": topics.refusal(name),
        }
        if platform == "switch":
            component["state_on"] = "ON"
            component["state_off"] = "OFF"
            component["device_class"] = "outlet" if kind == "relay" else "switch"
        if kind == "pwm_led":
            component["brightness_state_topic"] = topics.level_state(name)
            component["brightness_command_topic"] = topics.level_command(name)
            component["brightness_scale"] = BRIGHTNESS_SCALE
            component["on_command_type"] = "brightness"
        if approval:
            # HA is no person: such a device is switched only by someone who can approve.
            component["icon"] = "mdi:shield-lock"
    elif kind in _INPUTS:
        platform = "binary_sensor"
        component = {
            **base,
            "p": platform,
            "state_topic": topics.device_state(name),
            "payload_on": "ON",
            "payload_off": "OFF",
        }
        device_class = "motion" if kind == "motion_sensor" else _input_class(name)
        if device_class:
            component["device_class"] = device_class
    elif kind == "distance_sensor":
        platform = "sensor"
        component = {
            **base,
            "p": platform,
            "state_topic": topics.device_state(name),
            "device_class": "distance",
            "unit_of_measurement": "m",
            "state_class": "measurement",
        }
    else:
        return None
    component["default_entity_id"] = f"{platform}.{oid}"
    return oid, component


def _input_class(name: str) -> str | None:
    lowered = name.lower()
    for word, device_class in _INPUT_CLASSES:
        if word in lowered:
            return device_class
    return None


def components_for_reading(
    topics: Topics, reading: SensorReading, *, expire_after_s: int
) -> list[tuple[str, dict[str, Any]]]:
    """One ``sensor`` component per quantity of a sensor (``greenhouse`` -> temperature ...).

    ``expire_after_s``: HA shows the value as unavailable when no new one came in that long.
    """
    out = []
    for quantity in reading.values:
        oid = object_id(topics.node_id, reading.sensor, quantity)
        device_class, unit = _QUANTITY_CLASSES.get(quantity.lower(), (None, None))
        component: dict[str, Any] = {
            "p": "sensor",
            "name": f"{reading.sensor} {quantity}".replace("_", " "),
            "unique_id": oid,
            "default_entity_id": f"sensor.{oid}",
            "state_topic": topics.sensor_state(reading.sensor),
            "value_template": "{{ value_json." + _template_key(quantity) + " }}",
            "state_class": "measurement",
            "expire_after": expire_after_s,
        }
        read_unit = reading.units.get(quantity)
        if device_class is not None:
            component["device_class"] = device_class
        if read_unit or unit:
            component["unit_of_measurement"] = read_unit or unit
        out.append((oid, component))
    return out


def _template_key(quantity: str) -> str:
    return _SAFE.sub("_", quantity) or "value"


def _fixed_components(topics: Topics, *, expire_after_s: int) -> list[tuple[str, dict[str, Any]]]:
    estop = object_id(topics.node_id, "emergency_stop")
    latched = object_id(topics.node_id, "emergency_stop_latched")
    cpu = object_id(topics.node_id, "cpu_temperature")
    throttled = object_id(topics.node_id, "throttled")
    button: dict[str, Any] = {
        "p": "button",
        "name": "emergency stop",
        "unique_id": estop,
        "default_entity_id": f"button.{estop}",
        "command_topic": topics.estop,
        "payload_press": ESTOP_PAYLOAD,
        "icon": "mdi:alert-octagon",
    }
    # Off: the platform alone, which is how device-based discovery removes a published entity.
    return [
        (estop, button if topics.ha_estop else {"p": "button"}),
        (
            # The latched stop: on until a person resets it (never from Home Assistant).
            latched,
            {
                "p": "binary_sensor",
                "name": "emergency stop latched",
                "unique_id": latched,
                "default_entity_id": f"binary_sensor.{latched}",
                "state_topic": topics.estop_state,
                "value_template": "{{ 'ON' if value_json.latched else 'OFF' }}",
                "json_attributes_topic": topics.estop_state,
                "device_class": "safety",
                "icon": "mdi:alert-octagon",
            },
        ),
        (
            cpu,
            {
                "p": "sensor",
                "name": "CPU temperature",
                "unique_id": cpu,
                "default_entity_id": f"sensor.{cpu}",
                "state_topic": topics.health,
                "value_template": "{{ value_json.cpu_temperature }}",
                "device_class": "temperature",
                "unit_of_measurement": "°C",
                "state_class": "measurement",
                "entity_category": "diagnostic",
                "expire_after": expire_after_s,
            },
        ),
        (
            # The Pi's get_throttled "now" bits: on while under-voltage, capped or throttled;
            # the flags in words (the "since boot" ones too) as its attributes.
            throttled,
            {
                "p": "binary_sensor",
                "name": "throttled",
                "unique_id": throttled,
                "default_entity_id": f"binary_sensor.{throttled}",
                "state_topic": topics.health,
                "value_template": "{{ 'ON' if value_json.throttled_now else 'OFF' }}",
                "json_attributes_topic": topics.health,
                "json_attributes_template": "{{ {'flags': value_json.throttled_flags} | tojson }}",
                "device_class": "problem",
                "entity_category": "diagnostic",
                "expire_after": expire_after_s,
            },
        ),
    ]


def discovery_config(
    topics: Topics,
    *,
    devices: Iterable[DeviceState],
    readings: Iterable[SensorReading],
    approvals: Mapping[str, bool] | None = None,
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
        version: This package's version (the ``o`` and ``dev`` blocks).
        expire_after_s: For every sensor component.
        removed: Component id -> platform of components published before and gone now: each
            gets ``{"p": platform}`` only, which tells HA to delete that entity.
    """
    approvals = approvals or {}
    components: dict[str, dict[str, Any]] = {}
    for state in devices:
        found = component_for_device(topics, state, approval=approvals.get(state.device, False))
        if found is not None:
            components[found[0]] = found[1]
    for reading in readings:
        if reading.ok:
            components.update(
                components_for_reading(topics, reading, expire_after_s=expire_after_s)
            )
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
