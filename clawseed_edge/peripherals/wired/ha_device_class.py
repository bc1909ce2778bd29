"""A device's ``ha_device_class``: the class Home Assistant shows it with, checked at load.

The lists are HA's documented binary-sensor and switch device classes. A class is set by the
user (``ha_device_class = "door"``) or follows from the kind (a PIR is ``motion``); it never
comes from the device's name (a ``doorbell`` is no door).
"""

from __future__ import annotations

__all__ = ["BINARY_SENSOR_CLASSES", "SWITCH_CLASSES", "SWITCH_KINDS", "ha_class_problem"]

#: HA's binary-sensor device classes (for an input: ``button``, ``digital_in``, ``motion_sensor``).
BINARY_SENSOR_CLASSES = frozenset(
    "battery battery_charging carbon_monoxide cold connectivity door garage_door gas heat "
    "light lock moisture motion moving occupancy opening plug power presence problem running "
    "safety smoke sound tamper update vibration window".split()
)
#: HA's switch device classes (the default is ``switch``; ``outlet`` for a plug socket).
SWITCH_CLASSES = frozenset({"outlet", "switch"})
#: The kinds HA shows as a switch.
SWITCH_KINDS = frozenset({"relay", "digital_out", "buzzer"})


def ha_class_problem(kind: str, is_input: bool, ha_device_class: str) -> str | None:
    """Why ``ha_device_class`` does not fit a device of ``kind`` (None: it fits)."""
    if is_input:
        allowed = BINARY_SENSOR_CLASSES
    elif kind in SWITCH_KINDS:
        allowed = SWITCH_CLASSES
    else:
        return f"ha_device_class applies to inputs and to {', '.join(sorted(SWITCH_KINDS))}"
    if ha_device_class not in allowed:
        return (
            f"{ha_device_class[:40]!r} is not a Home Assistant class for a {kind}; "
            f"use one of {', '.join(sorted(allowed))}"
        )
    return None
