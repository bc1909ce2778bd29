"""What the offline demo model does for one sentence: its calls, and what it skipped and why.

The demo model (:mod:`clawseed_edge.providers.demo`) is rules, not a language model, so it
must never guess the opposite of what was asked. A sentence is cut into clauses (at commas,
``and``, ``then``, ``but`` ...) and each clause is read on its own: the devices it names, its
verb and its own ``on``/``off``. "turn off the red led and turn on the fan" is two calls, each
with its own value. A clause with a device but no verb borrows the verb of the clause before
it ("turn on the red led and the fan"); a clause with a verb but no value borrows the value of a
following clause that is only a value ("turn the red led and the fan off"). A negated clause
("don't turn on the fan", "not the red led") is never acted on; a clause that cannot be read
whole is skipped, and the skip is reported. Bounded: at most :data:`MAX_CLAUSES` clauses and
:data:`MAX_CALLS` calls per sentence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clawseed_edge.api import ToolCall, ToolSpec

__all__ = ["MAX_CALLS", "MAX_CLAUSES", "DemoPlan", "device_names", "plan_sentence"]

MAX_CLAUSES = 16
"""Clauses read per sentence; the rest is reported as skipped."""
MAX_CALLS = 8
"""Calls made per sentence; the rest is reported as skipped."""

# Where one instruction ends and the next begins. A "." only ends a clause before a space or
# the end, so "30.5%" stays whole.
_CLAUSE_BREAK = re.compile(
    r"\s*([,;!?]|\.(?=\s|$)|&|(?<![a-z])(?:and|then|but|also|plus|after that|except(?: for)?|"
    r"other than|apart from|besides)(?![a-z]))\s*"
)
# After these, a part without a verb of its own is what to leave alone ("all except the fan").
_EXCEPT = re.compile(r"except(?: for)?|other than|apart from|besides")
_NEGATION = re.compile(
    r"(?<![a-z])(?:don'?t|do not|dont|never|not|no longer|no need to|doesn'?t|mustn'?t|must not)"
    r"(?![a-z])"
)
_PERCENT = re.compile(r"(\d{1,3}(?:\.\d+)?)\s*(%|percent)")
_COUNT = re.compile(r"(\d{1,3})\s*(?:times|x)(?![a-z])")
_ON = re.compile(r"(?<![a-z])(?:on|enable|start)(?![a-z])")
_OFF = re.compile(r"(?<![a-z])(?:off|disable|stop)(?![a-z])")
# verb -> the words that ask for it, tried in this order; a tool serves a verb when its name
# contains the verb.
_VERBS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("blink", ("blink", "flash")),
    ("toggle", ("toggle", "flip")),
    ("level", ("dim", "brightness", "level", "%", "percent")),
    ("switch", ("turn", "switch", "on", "off", "enable", "disable", "start", "stop")),
    ("read", ("read", "is", "state of", "check", "pressed", "open", "closed")),
)
_VERB_RES = tuple(
    (verb, re.compile("|".join(rf"(?<![a-z]){re.escape(w)}(?![a-z])" for w in words)))
    for verb, words in _VERBS
)
# A clause that is only a value ("the fan off") may lend that value to the clauses before it.
_ACTION_WORDS = re.compile(
    r"(?<![a-z])(?:turn|switch|enable|disable|start|stop|blink|flash|toggle|flip|dim|set|read|"
    r"check)(?![a-z])"
)
_WRITE_WORDS = re.compile(
    r"(?<![a-z])(?:turn|switch|enable|disable|start|stop|blink|flash|toggle|flip|dim|set)(?![a-z])"
)
_PRONOUN = re.compile(r"(?<![a-z])(?:it|them|both)(?![a-z])")
_STATUS_WORDS = ("status", "state of everything", "what is on", "what's on", "list devices")
# A question any configured sensor may answer: "how warm is it?" -> sensor_read.
_SENSOR_WORDS = re.compile(
    r"\b(warm|cold|hot|temperature|temp|humid|humidity|pressure|light|bright|dark|lux|"
    r"sensor|measure|voltage)\b"
)


@dataclass
class DemoPlan:
    """The calls for a sentence, in the order it names them, and what was skipped and why."""

    calls: list[ToolCall] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def add(self, call: ToolCall) -> None:
        if call in self.calls:
            return  # "the red led and the red led" asks once
        if len(self.calls) >= MAX_CALLS:
            self.skip(f"{_describe(call)}: I make at most {MAX_CALLS} calls per message")
            return
        self.calls.append(call)

    def skip(self, note: str) -> None:
        if note not in self.skipped:
            self.skipped.append(note)


@dataclass
class _Waiting:
    """A device whose clause named a verb but no on/off: a later "... off" may complete it."""

    device: str
    action: str
    slot: int


def plan_sentence(text: str, tools: Sequence[ToolSpec]) -> DemoPlan:
    """The demo model's calls for the user's ``text`` (see the module docstring).

    Never raises; work is linear in the text and bounded by :data:`MAX_CLAUSES`.
    """
    text = text.lower().replace("\u2019", "'")
    plan = DemoPlan()
    devices = device_names(tools)
    # re.split with a group gives [clause, separator, clause, ...]: keep each clause's separator.
    pieces = _CLAUSE_BREAK.split(text)
    separated = [(pieces[i - 1] if i else "", pieces[i]) for i in range(0, len(pieces), 2)]
    clauses = [(sep, c) for sep, c in separated if c.strip()]
    if len(clauses) > MAX_CLAUSES:
        plan.skip(f"everything after the first {MAX_CLAUSES} parts of the message")
        clauses = clauses[:MAX_CLAUSES]
    action = ""  # the last clause with a verb of its own: verb-less clauses borrow it
    negated = False
    slots: list[ToolCall | None] = []  # a call per slot; None while a device waits for on/off
    waiting: list[_Waiting] = []
    last_named: list[str] = []
    for separator, clause in clauses:
        named = _named_devices(clause, devices)
        if not named and _PRONOUN.search(clause) and _ACTION_WORDS.search(clause):
            named = last_named  # "turn on the red led, then turn it off"
        last_named = named or last_named
        verb_at = _first_verb_position(clause)
        if verb_at is not None:
            action = clause
            negated = _NEGATION.search(clause, 0, verb_at) is not None
        elif _NEGATION.search(clause) is not None or _EXCEPT.fullmatch(separator):
            negated = True  # "..., not the red led", "... except the fan": nothing to do to it
        elif separator == "but":
            action = ""  # "turn off the fan but the red led": what to do to it was not said
        elif (
            not named
            and not any(w in clause for w in _STATUS_WORDS)
            and not _SENSOR_WORDS.search(clause)
        ):
            continue  # "please", "thanks": nothing to do
        if negated:
            if named or verb_at is not None:
                what = ", ".join(named) if named else f"'{clause.strip()}'"
                plan.skip(f"left {what} as it is (as you asked)")
            continue
        if any(w in clause for w in _STATUS_WORDS):
            status = next((t for t in tools if "status" in t.name), None)
            if status is not None:
                slots.append(ToolCall(status.name, {}))
                continue
        if not _ACTION_WORDS.search(clause) and _switch_value(clause) is not None:
            _complete_waiting(waiting, clause, slots, tools)  # "... and the fan off"
        if not named:
            # "turn on the light" names a device kind, not the light level: never a reading.
            sensor = None if _WRITE_WORDS.search(clause) else _sensor_call(clause, tools)
            if sensor is not None:
                slots.append(sensor)
            elif verb_at is not None:
                plan.skip(f"'{clause.strip()}': it names no device I know")
            continue
        for device in named:
            call, missing_value = _device_call(device, action, tools) if action else (None, True)
            if call is not None:
                slots.append(call)
            elif missing_value:
                waiting.append(_Waiting(device, action, len(slots)))
                slots.append(None)
            else:
                plan.skip(f"'{clause.strip()}': I have no tool that does that to {device}")
    for w in waiting:
        if slots[w.slot] is None:
            plan.skip(
                f"{w.device}: say 'on' or 'off'" if w.action else f"{w.device}: say what to do"
            )
    for call in slots:
        if call is not None:
            plan.add(call)
    return plan


def _complete_waiting(
    waiting: list[_Waiting],
    value_clause: str,
    slots: list[ToolCall | None],
    tools: Sequence[ToolSpec],
) -> None:
    for w in waiting:
        if slots[w.slot] is None:
            call, _ = _device_call(w.device, f"{w.action} {value_clause}", tools)
            slots[w.slot] = call


def _describe(call: ToolCall) -> str:
    args = " ".join(f"{k}={v}" for k, v in call.arguments.items())
    return f"{call.name} {args}".strip()


def _device_enum(spec: ToolSpec) -> list[str]:
    props = spec.parameters.get("properties", {})
    device = props.get("device", {}) if isinstance(props, Mapping) else {}
    values = device.get("enum", []) if isinstance(device, Mapping) else []
    return [v for v in values if isinstance(v, str)]


def device_names(tools: Sequence[ToolSpec]) -> list[str]:
    """Every device name the tools' ``device`` parameters accept, in first-seen order."""
    seen: dict[str, None] = {}
    for spec in tools:
        for device in _device_enum(spec):
            seen.setdefault(device)
    return list(seen)


def _spoken_forms(device: str) -> set[str]:
    forms = {device.lower(), device.lower().replace("_", " ").replace("-", " ")}
    node, dot, name = device.lower().partition(".")
    if dot:  # another node's device (``shed.fan``): "the shed's fan", "the shed fan"
        for n in {node, node.replace("_", " ").replace("-", " ")}:
            for d in {name, name.replace("_", " ").replace("-", " ")}:
                forms |= {f"{n}'s {d}", f"{n} {d}"}
    return forms


def _named_devices(clause: str, devices: Sequence[str]) -> list[str]:
    """The devices a clause names, in the order it names them (a longer name wins an overlap)."""
    found: list[tuple[int, int, str]] = []
    for device in devices:
        for form in _spoken_forms(device):
            for m in re.finditer(rf"(?<![a-z0-9_]){re.escape(form)}(?![a-z0-9_])", clause):
                found.append((m.start(), -(m.end() - m.start()), device))
    named: list[str] = []
    end = -1
    for start, neg_len, device in sorted(found):
        if start >= end and device not in named:
            named.append(device)
            end = start - neg_len
    return named


def _first_verb_position(clause: str) -> int | None:
    starts = [m.start() for _, pattern in _VERB_RES if (m := pattern.search(clause))]
    return min(starts) if starts else None


def _device_call(
    device: str, action: str, tools: Sequence[ToolSpec]
) -> tuple[ToolCall | None, bool]:
    """The call that does ``action`` to ``device``, and whether only an on/off value was missing."""
    missing_value = False
    for verb, pattern in _VERB_RES:
        if pattern.search(action) is None:
            continue
        for spec in tools:
            if verb not in spec.name or device not in _device_enum(spec):
                continue
            args, missing = _fill_arguments(spec, device, action)
            if args is not None:
                return ToolCall(spec.name, args), False
            missing_value = missing_value or missing
    return None, missing_value


def _switch_value(action: str) -> bool | None:
    """True for on, False for off: whichever word comes first in the clause."""
    on, off = _ON.search(action), _OFF.search(action)
    if on is None or off is None:
        return None if on is off else on is not None
    return on.start() < off.start()


def _fill_arguments(spec: ToolSpec, device: str, action: str) -> tuple[dict[str, Any] | None, bool]:
    """The arguments for ``spec``, or None and whether the missing one was an on/off value."""
    props: Mapping[str, Any] = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", ()))
    args: dict[str, Any] = {"device": device}
    for name, schema in props.items():
        if name == "device" or not isinstance(schema, Mapping):
            continue
        kind = schema.get("type")
        value: Any = None
        if kind == "boolean":
            value = _switch_value(action)
        elif kind == "number" and (m := _PERCENT.search(action)):
            value = min(float(m.group(1)), 100.0) / 100
        elif kind == "integer" and name == "count" and (m := _COUNT.search(action)):
            value = int(m.group(1))
        if value is not None:
            args[name] = value
        elif name in required:
            return None, kind == "boolean"
    return args, False


def _sensor_call(text: str, tools: Sequence[ToolSpec]) -> ToolCall | None:
    """sensor_read of the sensor named in ``text``, else of the first configured one when
    ``text`` asks about something sensors measure."""
    spec = next((t for t in tools if t.name == "sensor_read"), None)
    if spec is None:
        return None
    props = spec.parameters.get("properties", {})
    sensor_prop = props.get("sensor", {}) if isinstance(props, Mapping) else {}
    sensors = [s for s in sensor_prop.get("enum", []) if isinstance(s, str)]
    sensor = next((s for s in sensors if _named_devices(text, [s])), None)
    if sensor is None and sensors and _SENSOR_WORDS.search(text):
        sensor = sensors[0]
    return None if sensor is None else ToolCall(spec.name, {"sensor": sensor})
