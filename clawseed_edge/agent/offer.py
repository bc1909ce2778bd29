"""Which tools a model request offers: fewer for small local models, narrowed to the policy.

:func:`offered_tools` is called once per turn by the turn engine:

- ``max_tools`` (``[agent] max_tools``): at most this many tools per request, those the message
  can concern first (it names a device or sensor in their enums, or a verb they serve), then a
  short fixed set. ``None`` means automatic: :data:`SMALL_MODEL_TOOLS` when the provider says it
  runs a small local model (``local_small_model``), all tools otherwise.
- When the provider constrains its output to the offered tools (``constrained_output``), each
  tool's ``device`` enum is narrowed to the devices the SecurityPolicy lets this actor touch
  (``read_only`` keeps only reads; a write that needs approval with no approver set up is
  dropped), so the schema the server enforces cannot even express a refused call. A tool left
  with no device is not offered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from clawseed_edge.api import DeviceAction, ToolSpec

__all__ = [
    "SMALL_MODEL_TOOLS",
    "enum_values",
    "narrow_to_policy",
    "offered_tools",
    "select_tools",
]

#: Tools offered per request to a small local model when ``max_tools`` is automatic.
SMALL_MODEL_TOOLS = 8
#: Offered whenever there is room: what most questions to a board need.
_FIXED = ("hardware_status", "sensor_read", "gpio_switch", "gpio_read", "sensor_history")
_VERB_TOOLS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"(?<![a-z]){words}(?![a-z])"), tool)
    for words, tool in (
        (r"turn|switch|on|off|enable|disable|start|stop|打开|关", "switch"),
        (r"toggle|flip", "toggle"),
        (r"dim|brighten|level|percent|\d+ ?%|half", "level"),
        (r"blink|flash", "blink"),
        (r"is|are|read|check|open|closed|pressed", "read"),
        (r"temperature|humid\w*|pressure|warm|cold|hot|sensor", "sensor"),
        (r"yesterday|overnight|last night|today|highest|lowest|average", "history"),
        (r"remember|recall|forget|memory|note", "memory"),
        (r"file|write|save|list", "file"),
        (r"status|everything", "status"),
    )
)


def offered_tools(parts: Any, text: str, specs: Sequence[ToolSpec]) -> tuple[ToolSpec, ...]:
    """The tools to offer the model for ``text`` (see the module docstring).

    ``parts`` is the agent (its ``provider``, ``registry``, ``hooks`` and ``max_tools``).
    """
    provider = parts.provider
    offered = tuple(specs)
    if getattr(provider, "constrained_output", False):
        policy = getattr(getattr(parts, "hooks", None), "policy", None)
        offered = narrow_to_policy(offered, parts.registry, policy)
    limit = getattr(parts, "max_tools", None)
    if limit is None:
        limit = SMALL_MODEL_TOOLS if getattr(provider, "local_small_model", False) else 0
    if limit and len(offered) > limit:
        offered = select_tools(text, offered, limit)
    return offered


def select_tools(text: str, specs: Sequence[ToolSpec], limit: int) -> tuple[ToolSpec, ...]:
    """The ``limit`` tools ``text`` most likely concerns, in their registry order."""
    lowered = text.lower()
    scores: dict[str, int] = {}
    for spec in specs:
        score = 0
        for prop in ("device", "sensor"):
            if any(_names(value, lowered) for value in enum_values(spec, prop)):
                score += 4
        for pattern, verb in _VERB_TOOLS:
            if verb in spec.name and pattern.search(lowered):
                score += 2
        if spec.name in _FIXED:
            score += 1
        scores[spec.name] = score
    ranked = sorted(specs, key=lambda s: -scores[s.name])[:limit]
    keep = {s.name for s in ranked}
    return tuple(s for s in specs if s.name in keep)


def narrow_to_policy(specs: Sequence[ToolSpec], registry: Any, policy: Any) -> tuple[ToolSpec, ...]:
    """``specs`` with each ``device`` enum cut to what ``policy`` lets this actor touch."""
    if policy is None:
        return tuple(specs)
    read_only = str(getattr(policy, "autonomy", "")) == "read_only"
    kept: list[ToolSpec] = []
    for spec in specs:
        tool = registry.get(spec.name) if registry is not None else None
        devices = enum_values(spec, "device")
        describe = getattr(tool, "describe_action", None)
        if not devices or describe is None:
            risk = str(getattr(tool, "risk", "read"))
            if read_only and risk != "read":
                continue  # nothing that acts runs in read_only: do not offer it
            kept.append(spec)
            continue
        allowed = [d for d in devices if _may_touch(policy, read_only, describe, spec, d)]
        if allowed:
            kept.append(_with_devices(spec, allowed))
    return tuple(kept)


def _may_touch(policy: Any, read_only: bool, describe: Any, spec: ToolSpec, device: str) -> bool:
    try:
        action = describe(_sample_arguments(spec, device))
    except Exception:
        return False  # the tool cannot say what a call would do: the policy would refuse it
    if not isinstance(action, DeviceAction):
        return not read_only
    if not action.allowed:
        return False
    if action.operation == "read":
        return True
    if read_only:
        return False
    asks = action.requires_approval or str(getattr(policy, "autonomy", "")) == "supervised"
    return not (asks and getattr(policy, "approver", None) is None)


def _sample_arguments(spec: ToolSpec, device: str) -> dict[str, Any]:
    """Arguments that a call to ``device`` could have (to ask the tool what it would do)."""
    props: Mapping[str, Any] = spec.parameters.get("properties", {})
    args: dict[str, Any] = {"device": device}
    for name in spec.parameters.get("required", ()):
        schema = props.get(name, {})
        if name == "device" or not isinstance(schema, Mapping):
            continue
        kind = schema.get("type")
        if kind == "boolean":
            args[name] = True
        elif kind in ("number", "integer"):
            args[name] = schema.get("minimum", schema.get("default", 0))
        elif schema.get("enum"):
            args[name] = schema["enum"][0]
    return args


def _with_devices(spec: ToolSpec, devices: list[str]) -> ToolSpec:
    parameters = dict(spec.parameters)
    props = dict(parameters.get("properties", {}))
    props["device"] = {**props["device"], "enum": devices}
    parameters["properties"] = props
    return replace(spec, parameters=parameters)


def enum_values(spec: ToolSpec, prop: str) -> list[str]:
    """The string values the ``prop`` parameter of ``spec`` is limited to (``[]``: none)."""
    props = spec.parameters.get("properties", {})
    schema = props.get(prop, {}) if isinstance(props, Mapping) else {}
    values = schema.get("enum", []) if isinstance(schema, Mapping) else []
    return [v for v in values if isinstance(v, str)]


def _names(value: str, lowered: str) -> bool:
    spoken = value.lower().replace("_", " ")
    return value.lower() in lowered or spoken in lowered
