"""Automation conditions: a small safe expression language, and the for/until state machine.

An expression compares readings with numbers (or with each other), or names an input's state
alone (true while it is nonzero), joined by ``and``, ``or``, ``not`` and parentheses::

    greenhouse.temperature > 30
    greenhouse.temperature >= 28.5 and not (porch.humidity < 40 or shed.temperature == 0)
    door.open and hall.motion

It is parsed once into a tree of tuples and evaluated against a lookup; nothing is ever given
to ``eval``. A reading that is not known yet makes its comparison false. Bounded: 300
characters, 16 comparisons, nesting 8 deep.

:class:`RuleState` is ESPHome's/Home Assistant's "for" with hysteresis, as a pure object: the
rule fires when ``when`` has held for ``for_s`` seconds, then stays active (never firing
again) until ``until`` holds (or ``when`` stops holding, when no ``until`` is given), which
resets it.

Stale data: a name whose value is unknown (not read yet, a failed or stale sensor: NaN) can
never prove ``until``, so an active rule would hold its ``do`` forever (a heater left on by a
dead thermometer). With ``on_unknown = "then"`` (the default) an active rule whose names stay
unknown for ``unknown_grace_s`` resets, and its ``then`` (the safe side) runs; with ``"hold"``
it stays active until the values come back.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Condition", "ExpressionInvalid", "RuleState", "parse_condition"]

MAX_CHARS = 300
MAX_COMPARISONS = 16
MAX_DEPTH = 8

_TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d+)?)|(?P<op><=|>=|==|!=|<|>)|(?P<paren>[()])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?))"
)
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_WORDS = {"and", "or", "not"}


class ExpressionInvalid(ValueError):
    """The expression cannot be parsed; the message quotes where and says what is allowed."""


Lookup = Callable[[str], float | None]


@dataclass(frozen=True, slots=True)
class Condition:
    """A parsed expression: :meth:`holds` evaluates it; :attr:`names` are the readings it uses."""

    text: str
    tree: tuple[Any, ...]
    names: frozenset[str]

    def holds(self, lookup: Lookup) -> bool:
        return _eval(self.tree, lookup)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ExpressionInvalid(
                f"cannot read {text[pos : pos + 20]!r}: write comparisons such as "
                "'greenhouse.temperature > 30', joined by and/or/not and parentheses"
            )
        kind = m.lastgroup or ""
        value = m.group(kind)
        if kind == "name" and value in _WORDS:
            kind = value
        out.append((kind, value))
        pos = m.end()
    return out


def parse_condition(text: str) -> Condition:
    """Parse ``text``.

    Raises:
        ExpressionInvalid: Too long, an unknown word or symbol, a comparison without two sides,
            too many comparisons, too deep.
    """
    if not isinstance(text, str) or not text.strip():
        raise ExpressionInvalid("the condition is empty; write e.g. 'greenhouse.temperature > 30'")
    if len(text) > MAX_CHARS:
        raise ExpressionInvalid(f"the condition is longer than {MAX_CHARS} characters")
    parser = _Parser(_tokens(text))
    tree = parser.expr(0)
    if parser.pos != len(parser.tokens):
        raise ExpressionInvalid(
            f"unexpected {parser.tokens[parser.pos][1]!r} after a whole condition"
        )
    return Condition(text.strip(), tree, frozenset(parser.names))


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.names: set[str] = set()
        self.comparisons = 0

    def _peek(self) -> str:
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else ""

    def _take(self) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise ExpressionInvalid("the condition ends too early (a comparison needs two sides)")
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expr(self, depth: int) -> tuple[Any, ...]:
        if depth > MAX_DEPTH:
            raise ExpressionInvalid(f"the condition nests deeper than {MAX_DEPTH}")
        node = self._and(depth)
        while self._peek() == "or":
            self._take()
            node = ("or", node, self._and(depth))
        return node

    def _and(self, depth: int) -> tuple[Any, ...]:
        node = self._not(depth)
        while self._peek() == "and":
            self._take()
            node = ("and", node, self._not(depth))
        return node

    def _not(self, depth: int) -> tuple[Any, ...]:
        if self._peek() == "not":
            self._take()
            return ("not", self._not(depth + 1))
        if self._peek() == "paren" and self.tokens[self.pos][1] == "(":
            self._take()
            node = self.expr(depth + 1)
            _, value = self._take()
            if value != ")":
                raise ExpressionInvalid("a '(' is not closed")
            return node
        return self._comparison()

    def _operand(self) -> tuple[str, Any]:
        kind, value = self._take()
        if kind == "num":
            return ("num", float(value))
        if kind == "name":
            if "." not in value:
                raise ExpressionInvalid(
                    f"{value!r}: name a reading as SENSOR.QUANTITY, e.g. greenhouse.temperature"
                )
            self.names.add(value)
            return ("name", value)
        raise ExpressionInvalid(f"expected a reading or a number, not {value!r}")

    def _comparison(self) -> tuple[Any, ...]:
        left = self._operand()
        ends = self._peek() in ("", "and", "or") or (
            self._peek() == "paren" and self.tokens[self.pos][1] == ")"
        )
        if left[0] == "name" and ends:
            # A bare name is a truth test: an input's word (door.open, button.pressed).
            self.comparisons += 1
            if self.comparisons > MAX_COMPARISONS:
                raise ExpressionInvalid(f"more than {MAX_COMPARISONS} comparisons")
            return ("is", left)
        kind, op = self._take()
        if kind != "op":
            raise ExpressionInvalid(f"expected a comparison (< <= > >= == !=) after {left[1]!r}")
        right = self._operand()
        self.comparisons += 1
        if self.comparisons > MAX_COMPARISONS:
            raise ExpressionInvalid(f"more than {MAX_COMPARISONS} comparisons")
        return ("cmp", op, left, right)


def _value(operand: tuple[str, Any], lookup: Lookup) -> float | None:
    return operand[1] if operand[0] == "num" else lookup(operand[1])


def _eval(node: tuple[Any, ...], lookup: Lookup) -> bool:
    kind = node[0]
    if kind == "and":
        return _eval(node[1], lookup) and _eval(node[2], lookup)
    if kind == "or":
        return _eval(node[1], lookup) or _eval(node[2], lookup)
    if kind == "not":
        return not _eval(node[1], lookup)
    if kind == "is":
        v = lookup(node[1][1])
        return v is not None and not math.isnan(v) and v != 0
    _, op, left, right = node
    a, b = _value(left, lookup), _value(right, lookup)
    if a is None or b is None or math.isnan(a) or math.isnan(b):
        return False  # unknown: no comparison holds
    return _OPS[op](a, b)


class RuleState:
    """``when`` held ``for_s`` -> "fire"; then active until ``until`` (or not ``when``) -> "reset".

    :meth:`update` takes the time and the lookup and returns ``"fire"``, ``"reset"`` or None;
    :meth:`deadline` says when a held ``when`` will have lasted ``for_s`` (for a timer).
    """

    def __init__(
        self,
        when: Condition,
        for_s: float = 0.0,
        until: Condition | None = None,
        *,
        on_unknown: str = "then",
        unknown_grace_s: float = 60.0,
    ) -> None:
        self.when = when
        self.for_s = for_s
        self.until = until
        self.on_unknown = on_unknown
        self.unknown_grace_s = unknown_grace_s
        self.active = False
        self.since: float | None = None
        #: Since when an active rule's names have been unknown (None: all known).
        self.unknown_since: float | None = None
        #: Why the last reset happened: ``"until"`` or ``"unknown"`` (for the firing record).
        self.reset_by = ""
        self._names = when.names | (until.names if until is not None else frozenset())

    def update(self, now: float, lookup: Lookup) -> str | None:
        if self.active:
            if self._unknown(lookup):
                return self._while_unknown(now)
            self.unknown_since = None
            done = (
                self.until.holds(lookup) if self.until is not None else not self.when.holds(lookup)
            )
            if done:
                self.active = False
                self.since = None
                self.reset_by = "until"
                return "reset"
            return None
        if not self.when.holds(lookup):
            self.since = None  # a spike shorter than `for` does not count
            return None
        if self.since is None:
            self.since = now
        if now - self.since >= self.for_s:
            self.active = True
            return "fire"
        return None

    def _unknown(self, lookup: Lookup) -> bool:
        for name in self._names:
            value = lookup(name)
            if value is None or math.isnan(value):
                return True
        return False

    def _while_unknown(self, now: float) -> str | None:
        """An active rule whose values are unknown: hold, or reset after the grace period."""
        if self.on_unknown == "hold":
            return None
        if self.unknown_since is None:
            self.unknown_since = now
        if now - self.unknown_since < self.unknown_grace_s:
            return None
        self.active = False
        self.since = self.unknown_since = None
        self.reset_by = "unknown"
        return "reset"

    def deadline(self) -> float | None:
        if self.active:
            if self.unknown_since is None or self.on_unknown == "hold":
                return None
            return self.unknown_since + self.unknown_grace_s  # the safe side is due then
        if self.since is None:
            return None
        return self.since + self.for_s

    def reset(self) -> None:
        """Forget what was held (the emergency stop pauses rules from scratch)."""
        self.active = False
        self.since = self.unknown_since = None
