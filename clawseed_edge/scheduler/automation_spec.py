"""What an automation is and how it is checked: one function for ``[[automations]]``, the
``automation_add`` tool and ``clawseed-edge automations add`` alike.

A rule is an :class:`~clawseed_edge.config.automations.AutomationConfig` (the table's shape);
:func:`validate_automation` parses its conditions, checks its actions, the names it reads (when
the caller knows which sensors and devices exist) and the tools it calls (when the caller has
an agent), and raises :class:`~clawseed_edge.api.ConfigInvalid` naming the field. An action is
one of::

    { tool = "gpio_switch", arguments = { device = "fan", on = true } }   # a tool call
    { prompt = "The greenhouse is hot: check the vents and tell me." }   # a turn of the model
    { message = "The greenhouse passed 30 °C" }                           # a notification

``notify = ["phones", "telegram", "log"]`` says where firings (and messages, and a prompt's
answer) go; a rule may have ``notify`` and no ``do`` (it only tells).

Names in a condition are ``SENSOR.QUANTITY`` (``greenhouse.temperature``) or ``DEVICE.WORD``
for a wired device's published state (:func:`device_values`): ``door.open``, ``button.pressed``,
``hall.motion``, ``fan.value``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.config.automations import AutomationConfig
from clawseed_edge.config.jobs import MAX_ARGUMENTS_CHARS, MAX_PROMPT_CHARS

from .rules import Condition, ExpressionInvalid, RuleState, parse_condition

__all__ = [
    "MAX_AUTOMATIONS",
    "MAX_MESSAGE_CHARS",
    "NOTIFY_PLACES",
    "ON_UNKNOWN",
    "describe_automation",
    "device_values",
    "known_names",
    "validate_automation",
    "validate_automations",
]

#: The most rules one service runs (declared and created together).
MAX_AUTOMATIONS = 100
#: The longest ``{ message = ... }``.
MAX_MESSAGE_CHARS = 500
#: What an active rule does when a value it reads goes unknown (see :mod:`.rules`).
ON_UNKNOWN = ("then", "hold")
#: Where ``notify`` may send: the gateway's phones, Telegram's users, the log.
NOTIFY_PLACES = ("phones", "telegram", "log")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_FOR = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, None: 1.0}
_ACTION_HINT = (
    'an action is { tool = "...", arguments = { ... } }, { prompt = "..." } or { message = "..." }'
)

#: An input's words: ``DEVICE.WORD`` holds while the device's value is 1 (first word) or 0.
_WORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "button": (("pressed", "open", "active"), ("released", "closed", "inactive")),
    "digital_in": (("active", "open"), ("inactive", "closed")),
    "motion_sensor": (("motion", "active"), ("quiet", "inactive")),
}
#: Output devices: on/off besides value.
_OUTPUT_WORDS = (("on",), ("off",))

CheckTool = Callable[[str, Mapping[str, Any]], None]


def device_values(device: str, kind: str, value: float | None) -> dict[str, float]:
    """The lookup entries a device state gives: ``DEVICE.value`` and its words (1.0 or 0.0).

    An unknown value (a closed device) makes every entry NaN: no comparison on it holds.
    """
    words = _WORDS.get(kind, _OUTPUT_WORDS)
    if value is None:
        unknown = float("nan")
        return {f"{device}.{w}": unknown for w in ("value", *words[0], *words[1])}
    out = {f"{device}.value": float(value)}
    for word in words[0]:
        out[f"{device}.{word}"] = 1.0 if value else 0.0
    for word in words[1]:
        out[f"{device}.{word}"] = 0.0 if value else 1.0
    return out


def known_names(peripherals: Iterable[Any]) -> dict[str, list[str]]:
    """``{sensor or device: [quantities or words]}`` the peripherals publish (no I/O); a
    sensor that is not sampled (``update_interval = "never"``) has an empty list."""
    out: dict[str, list[str]] = {}
    for p in peripherals:
        if hasattr(p, "sensor_names") and hasattr(p, "sensor"):
            for name in p.sensor_names():
                sensor = p.sensor(name)
                # Rules see sampled readings only: an on-demand sensor publishes none.
                sampled = getattr(sensor, "interval_s", None) is not None
                out[name] = [q.name for q in sensor.driver.quantities] if sampled else []
        for wired in getattr(p, "wired", ()) or ():
            on, off = _WORDS.get(wired.kind, _OUTPUT_WORDS)
            out[wired.name] = ["value", *on, *off]
        # Other inputs (a camera's motion) say which device kinds they publish.
        for name, kind in getattr(p, "published_inputs", dict)().items():
            on, off = _WORDS.get(kind, _OUTPUT_WORDS)
            out[name] = ["value", *on, *off]
    return out


def _duration(value: Any) -> float | None:
    m = None if isinstance(value, bool) else _FOR.match(str(value))
    return None if m is None else float(m.group(1)) * _SECONDS[m.group(2)]


def _action(
    value: Any, key: str, file: str | None, check_tool: CheckTool | None
) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) == 0:
        raise ConfigInvalid(_ACTION_HINT, file=file, key=key)
    kinds = [k for k in ("tool", "prompt", "message") if k in value]
    extra = set(value) - {"tool", "arguments", "prompt", "message"}
    if len(kinds) != 1 or extra or ("arguments" in value and kinds != ["tool"]):
        raise ConfigInvalid(_ACTION_HINT, file=file, key=key)
    kind = kinds[0]
    text = value[kind]
    if not isinstance(text, str) or not text.strip():
        raise ConfigInvalid(f"{kind}: a non-empty string", file=file, key=f"{key}.{kind}")
    if kind == "prompt" and len(text) > MAX_PROMPT_CHARS:
        raise ConfigInvalid(
            f"longer than {MAX_PROMPT_CHARS} characters", file=file, key=f"{key}.prompt"
        )
    if kind == "message" and len(text) > MAX_MESSAGE_CHARS:
        raise ConfigInvalid(
            f"longer than {MAX_MESSAGE_CHARS} characters", file=file, key=f"{key}.message"
        )
    if kind != "tool":
        return {kind: text}
    arguments = value.get("arguments", {})
    if not isinstance(arguments, dict):
        raise ConfigInvalid("a table", file=file, key=f"{key}.arguments")
    if len(json.dumps(arguments, default=str)) > MAX_ARGUMENTS_CHARS:
        raise ConfigInvalid(
            f"more than {MAX_ARGUMENTS_CHARS} characters as JSON", file=file, key=f"{key}.arguments"
        )
    if text.startswith(("cron_", "automation_")) or text == "shell":
        raise ConfigInvalid(
            f"{text[:64]!r}: an automation calls a device's or a plain tool, not cron, "
            "automation or shell tools",
            file=file,
            key=f"{key}.tool",
        )
    if check_tool is not None:
        try:
            check_tool(text, arguments)
        except ValueError as exc:
            raise ConfigInvalid(str(exc), file=file, key=key) from None
    return {"tool": text, "arguments": arguments}


def _check_names(
    condition: Condition, known: Mapping[str, Sequence[str]], key: str, file: str | None
) -> None:
    for name in sorted(condition.names):
        source, _, what = name.partition(".")
        if source not in known:
            listed = ", ".join(sorted(known)) or "none are configured"
            raise ConfigInvalid(
                f"{name!r}: no sensor or device is named {source!r} (known: {listed[:300]})",
                file=file,
                key=key,
            )
        if not known[source]:
            raise ConfigInvalid(
                f"{name!r}: sensor {source} is read only on demand; give it an update_interval "
                '(e.g. "60s") so the service samples it',
                file=file,
                key=key,
            )
        if what not in known[source]:
            raise ConfigInvalid(
                f"{name!r}: {source} has no {what!r}; use one of {', '.join(known[source])}",
                file=file,
                key=key,
            )


def validate_automation(
    a: AutomationConfig,
    *,
    prefix: str = "",
    file: str | None = None,
    known: Mapping[str, Sequence[str]] | None = None,
    check_tool: CheckTool | None = None,
) -> RuleState:
    """Check one rule; returns its state machine.

    Args:
        a: The rule.
        prefix: Put before each key in errors (``"automations[2]."``; ``""`` for a tool).
        file: The config file, when the rule came from one.
        known: Sensor/device names and what each publishes; None: names are not checked.
        check_tool: Raises ValueError for a tool call the agent could never make.

    Raises:
        ConfigInvalid: Naming the key (``when``, ``for``, ``do.tool`` ...) and what to write.
    """
    if not NAME.match(a.name):
        raise ConfigInvalid(
            f"{a.name[:40]!r}: a name of letters, digits, _ and - (up to 64)",
            file=file,
            key=f"{prefix}name",
        )
    conditions: dict[str, Condition | None] = {}
    for field in ("when", "until"):
        text = getattr(a, field)
        try:
            conditions[field] = None if text is None else parse_condition(text)
        except ExpressionInvalid as exc:
            raise ConfigInvalid(f"{a.name!r}: {exc}", file=file, key=f"{prefix}{field}") from None
        if known is not None and conditions[field] is not None:
            _check_names(conditions[field], known, f"{prefix}{field}", file)  # type: ignore[arg-type]
    for_s = _duration(a.for_)
    if for_s is None:
        raise ConfigInvalid(
            f"{a.name!r}: write a duration such as '2m', '30s'", file=file, key=f"{prefix}for"
        )
    if for_s > 86400:
        raise ConfigInvalid(f"{a.name!r}: at most a day", file=file, key=f"{prefix}for")
    bad = [p for p in a.notify if p not in NOTIFY_PLACES]
    if bad or len(a.notify) > len(NOTIFY_PLACES):
        raise ConfigInvalid(
            f"{a.name!r}: {bad[:3]} is not a place; use any of {', '.join(NOTIFY_PLACES)}",
            file=file,
            key=f"{prefix}notify",
        )
    if not a.do and not a.notify:
        raise ConfigInvalid(
            f'{a.name!r}: give do = {{ tool = ... }} (or {{ prompt = "..." }}, '
            '{ message = "..." }), or notify = ["phones"]',
            file=file,
            key=f"{prefix}do",
        )
    _action(a.do or None, f"{prefix}do", file, check_tool)
    _action(a.then, f"{prefix}then", file, check_tool)
    if a.on_unknown not in ON_UNKNOWN:
        raise ConfigInvalid(
            f'{a.name!r}: on_unknown is "then" (run then when a sensor goes unknown) or '
            '"hold" (keep the rule active until the values come back)',
            file=file,
            key=f"{prefix}on_unknown",
        )
    grace = _duration(a.unknown_grace)
    if grace is None or grace > 86400:
        raise ConfigInvalid(
            f"{a.name!r}: write a duration up to a day such as '1m', '30s'",
            file=file,
            key=f"{prefix}unknown_grace",
        )
    when = conditions["when"]
    assert when is not None
    return RuleState(
        when, for_s, conditions["until"], on_unknown=a.on_unknown, unknown_grace_s=grace
    )


def validate_automations(
    entries: Sequence[AutomationConfig],
    source: str = "config.toml",
    *,
    known: Mapping[str, Sequence[str]] | None = None,
    check_tool: CheckTool | None = None,
) -> list[tuple[AutomationConfig, RuleState]]:
    """Check every ``[[automations]]`` table (unique names, at most :data:`MAX_AUTOMATIONS`).

    Raises:
        ConfigInvalid: Naming ``automations[i].<key>`` and what to write.
    """
    if len(entries) > MAX_AUTOMATIONS:
        raise ConfigInvalid(
            f"at most {MAX_AUTOMATIONS} automations", file=source, key="automations"
        )
    out = []
    names: set[str] = set()
    for i, a in enumerate(entries):
        prefix = f"automations[{i}]."
        if a.name in names:
            raise ConfigInvalid(
                f"{a.name[:40]!r}: a unique name of letters, digits, _ and - (up to 64)",
                file=source,
                key=f"{prefix}name",
            )
        names.add(a.name)
        state = validate_automation(
            a, prefix=prefix, file=source, known=known, check_tool=check_tool
        )
        out.append((a, state))
    return out


def _action_words(action: Mapping[str, Any] | None) -> str:
    if not action:
        return "nothing"
    if "tool" in action:
        args = json.dumps(action.get("arguments", {}), sort_keys=True, ensure_ascii=False)
        return f"call {action['tool']} {args[:120]}"
    if "prompt" in action:
        text = str(action["prompt"])
        return f'ask the model "{text[:80]}{"..." if len(text) > 80 else ""}"'
    return f'send "{str(action["message"])[:80]}"'


def describe_automation(a: AutomationConfig, for_s: float) -> str:
    """The rule in words: when, for how long, what it does, until when, and whom it tells."""
    held = f" for {for_s:g} s" if for_s else ""
    text = f"When {a.when}{held}: {_action_words(a.do)}."
    if a.until:
        text += f" It resets when {a.until}"
    else:
        text += " It resets when that no longer holds"
    text += f" and then: {_action_words(a.then)}." if a.then else "."
    if a.on_unknown == "hold":
        text += " While a value it reads is unknown, it holds."
    elif a.then:
        text += f" A value unknown for {a.unknown_grace} runs that too."
    if a.notify:
        text += f" Firings are announced to {', '.join(a.notify)}."
    return text
