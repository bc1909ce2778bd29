"""Local intents: simple commands carried out before any model is asked.

:class:`LocalIntents` reads the user's sentence with the demo model's planner
(:mod:`clawseed_edge.providers.demo_plan`) and the language files
(:mod:`clawseed_edge.providers.demo_lang`), knowing the configured devices (names, kinds,
aliases) and sensors (names, quantities). A sentence it understands *whole* becomes tool calls
that the turn engine runs exactly as a model's (schema check, SecurityPolicy, approvals,
events); anything else goes to the model unchanged.

It never acts on what was not asked now: a sentence with a condition or a time ("if", "when",
"at 7", "in 5 minutes", "every"), a hedge ("maybe", "should I"), a negation, or one put as a
question is never carried out here when it would change anything; a question that only reads
("is the door open?", "what's the temperature", "how cold was it overnight?") is answered here.
Pure and bounded: no I/O, linear in the sentence (cut to
:data:`~clawseed_edge.providers.demo_lang.MAX_TEXT_CHARS`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from clawseed_edge.api import ToolCall, ToolResult, ToolSpec
from clawseed_edge.api.wording import for_people
from clawseed_edge.providers import demo_lang
from clawseed_edge.providers.demo_plan import plan_sentence

from .offer import enum_values

__all__ = ["DeviceWords", "LocalIntents", "SensorWords", "local_answer"]

#: What each sensor driver measures (a sensor of an unknown driver is found by name only).
DRIVER_QUANTITIES: Mapping[str, tuple[str, ...]] = {
    "bme280": ("temperature", "humidity", "pressure"),
    "bmp280": ("temperature", "pressure"),
    "sht31": ("temperature", "humidity"),
    "aht20": ("temperature", "humidity"),
    "dht22": ("temperature", "humidity"),
    "dht11": ("temperature", "humidity"),
    "ds18b20": ("temperature",),
    "bh1750": ("illuminance",),
    "ads1115": ("voltage",),
}
# Kind words that are also verbs or too vague to name one device on their own.
_NOT_A_NAME = frozenset({"switch", "output", "input", "sensor"})
# Tools that only look: a question may use them; anything else changes the world.
_READ_TOOLS = re.compile(r"read|status|history|scan|list|recall|info")


@dataclass(frozen=True, slots=True)
class DeviceWords:
    """A configured device as the stage knows it: its name, kind and other names."""

    name: str
    kind: str = ""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SensorWords:
    """A configured sensor: its name and what it measures."""

    name: str
    quantities: tuple[str, ...] = ()

    @classmethod
    def for_driver(cls, name: str, driver: str) -> SensorWords:
        return cls(name, DRIVER_QUANTITIES.get(driver.lower(), ()))


@dataclass(slots=True)
class LocalIntents:
    """The local-intent stage (see the module docstring).

    Args:
        devices: The configured devices; the words of each (its name spoken, its aliases, its
            name with the kind word swapped for another: ``red_led`` is also "red light")
            are rewritten to its name before the sentence is planned.
        sensors: The configured sensors and their quantities.
    """

    devices: Sequence[DeviceWords] = ()
    sensors: Sequence[SensorWords] = ()
    _forms: list[tuple[re.Pattern[str], str]] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._forms = _device_forms(self.devices)

    def plan(self, text: str, tools: Sequence[ToolSpec]) -> tuple[ToolCall, ...]:
        """The calls for ``text`` when it is understood whole and asked now, else ``()``."""
        if not text.strip() or demo_lang.is_hedged(text):
            return ()
        names = {t.name for t in tools}
        window = demo_lang.history_window(text)
        if window is not None and "sensor_history" in names:
            history = self._history_call(text, window)
            if history is not None:
                return (history,)
        if demo_lang.deferred_reason(text) is not None or window is not None:
            return ()  # later, on a condition, or about the past without the history tool
        english = self._canonical(demo_lang.to_english(text))
        reading = self._sensor_read(english, tools)
        if reading is not None:
            return (reading,)
        planned = plan_sentence(english, tools)
        if not planned.calls or planned.skipped:
            return ()  # not understood whole: the model decides
        writes = [c for c in planned.calls if not _READ_TOOLS.search(c.name)]
        if not writes and not (_asks(english) or demo_lang.is_question(text)):
            return ()  # "the doorbell button was pressed" tells, it does not ask: the model
        if writes and demo_lang.is_negated(text):
            return ()
        if writes and demo_lang.is_question(text):
            # "is the red led on?" asks for its state: read it; "turn on the fan?" does nothing.
            return _state_reads(english, planned.calls, tools)
        return tuple(planned.calls)

    def _canonical(self, english: str) -> str:
        """``english`` with each device's words replaced by its configured name."""
        for pattern, name in self._forms:
            english = pattern.sub(name, english)
        return english

    def _quantity(self, text: str) -> str | None:
        english = demo_lang.to_english(text)
        for quantity, words in demo_lang.quantity_words().items():
            if any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", english) for w in words):
                return quantity
        return None

    def _sensor_for(self, english: str, quantity: str | None) -> SensorWords | None:
        for sensor in self.sensors:
            spoken = sensor.name.lower().replace("_", " ")
            if spoken in english or sensor.name.lower() in english:
                return sensor
        if quantity is None:
            return None
        return next((s for s in self.sensors if quantity in s.quantities), None)

    def _sensor_read(self, english: str, tools: Sequence[ToolSpec]) -> ToolCall | None:
        """``sensor_read`` for a question about a quantity or a sensor, when no device is
        named ("what's the temperature", "how humid is the greenhouse")."""
        if any(name in english for _, name in self._forms) or not _asks(english):
            return None
        spec = next((t for t in tools if t.name == "sensor_read"), None)
        if spec is None or _WRITE.search(english):
            return None
        sensor = self._sensor_for(english, self._quantity(english))
        if sensor is None or sensor.name not in enum_values(spec, "sensor"):
            return None
        return ToolCall("sensor_read", {"sensor": sensor.name})

    def _history_call(self, text: str, window: str) -> ToolCall | None:
        english = demo_lang.to_english(text)
        if _WRITE.search(english):
            return None
        quantity = self._quantity(text)
        sensor = self._sensor_for(english, quantity)
        if sensor is None:
            return None
        args: dict[str, object] = {"sensor": sensor.name, "window": window}
        if quantity is not None:
            args["quantity"] = quantity
        return ToolCall("sensor_history", args)


_WRITE = re.compile(
    r"(?<![a-z])(?:turn|switch|enable|disable|start|stop|blink|flash|toggle|flip|dim|set)"
    r"(?![a-z])"
)
_ASK = re.compile(
    r"^\s*(?:is|are)(?![a-z])|(?<![a-z])(?:what|what's|whats|how|read|check|tell me|show|status|"
    r"list|temperature|humidity|pressure|illuminance|voltage)(?![a-z])|\?"
)


_STATE_QUESTION = re.compile(r"^\s*(?:is|are)(?![a-z])")


def _state_reads(
    english: str, calls: Sequence[ToolCall], tools: Sequence[ToolSpec]
) -> tuple[ToolCall, ...]:
    """``gpio_read`` of each device a state question ("is the fan on?") names, else ``()``."""
    spec = next((t for t in tools if t.name == "gpio_read"), None)
    if spec is None or not _STATE_QUESTION.match(english):
        return ()
    readable = enum_values(spec, "device")
    devices = [str(c.arguments.get("device", "")) for c in calls]
    if not all(d in readable for d in devices):
        return ()
    return tuple(ToolCall("gpio_read", {"device": d}) for d in dict.fromkeys(devices))


def _asks(english: str) -> bool:
    return _ASK.search(english) is not None


def _device_forms(devices: Iterable[DeviceWords]) -> list[tuple[re.Pattern[str], str]]:
    """(pattern, device name) for every way a device is named, longest first."""
    kinds = demo_lang.kind_words()
    forms: dict[str, set[str]] = {}
    devices = list(devices)
    for device in devices:
        words = device.name.lower().replace("-", "_").split("_")
        synonyms = kinds.get(device.kind, ())
        own = [w for w in words if w not in synonyms]
        spoken = {" ".join(words), *(a.lower() for a in device.aliases)}
        if own and len(own) < len(words):  # "red_led": "red light", "red lamp" ...
            spoken.update(" ".join([*own, s]) for s in synonyms)
        for form in spoken:
            forms.setdefault(form, set()).add(device.name)
        for synonym in synonyms:  # "the light", when only one device is a light
            if synonym not in _NOT_A_NAME:
                forms.setdefault(synonym, set()).add(device.name)
    unique = [(form, next(iter(names))) for form, names in forms.items() if len(names) == 1]
    unique.sort(key=lambda pair: len(pair[0]), reverse=True)
    return [
        (re.compile(rf"(?<![a-z0-9_]){re.escape(form)}(?![a-z0-9_])"), name)
        for form, name in unique
        if form != name.lower()
    ]


def local_answer(results: Sequence[tuple[ToolCall, ToolResult]]) -> str:
    """The answer of a local turn: what was done, what was read, what was refused."""
    done: list[str] = []
    read: list[str] = []
    failed: list[str] = []
    for call, result in results:
        # A person reads this answer (no model in between): the model's hints are left out.
        text = for_people(result.output if result.success else result.error or "").strip()
        text = text[:400] or "(no output)"
        if not result.success:
            failed.append(text)
        elif _READ_TOOLS.search(call.name):
            read.append(text)
        else:
            done.append(text)
    parts = ["Done. " + _sentence("; ".join(done))] if done else []
    parts += [_sentence(r) for r in read]
    if failed:
        parts.append("Not done: " + _sentence("; ".join(failed)))
    return " ".join(parts) or "Done."


def _sentence(text: str) -> str:
    return text if not text or text[-1] in ".!?:" else text + "."
