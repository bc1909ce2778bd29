"""Languages as data for the demo model and the local-intent stage: one JSON file per language.

``demo_vocab/<code>.json`` holds a language's words: ``phrases`` (rewritten, longest first, to
the English the planner in :mod:`.demo_plan` reads), ``deferred`` (a condition or a time: "if",
"when", "at 7", "in 5 minutes", "every"), ``hedged`` ("maybe", "should I"), ``negation``,
``question_starts``, ``history`` (words that ask about the past) and, in English, the device
``kinds`` and sensor ``quantities`` words. Adding a language is one file (and its tests): every
file in the folder is loaded, and a sentence is read with the guard words of all of them.

Each check here is a pure function of the text: no I/O after the first load, linear work, and
the text is cut to :data:`MAX_TEXT_CHARS` first.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = [
    "MAX_TEXT_CHARS",
    "Vocabulary",
    "deferred_reason",
    "history_window",
    "is_hedged",
    "is_negated",
    "is_question",
    "kind_words",
    "languages",
    "quantity_words",
    "to_english",
]

#: Longer texts are read only this far (a command is a sentence, not a page).
MAX_TEXT_CHARS = 400

_ASCII_WORD = re.compile(r"^[\w' ]+$", re.ASCII)


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """One language's file, compiled."""

    code: str
    phrases: tuple[tuple[str, str], ...]
    deferred: re.Pattern[str] | None
    hedged: re.Pattern[str] | None
    negation: re.Pattern[str] | None
    question_starts: re.Pattern[str] | None
    history: re.Pattern[str] | None
    windows: tuple[tuple[re.Pattern[str], str], ...]
    kinds: dict[str, tuple[str, ...]]
    quantities: dict[str, tuple[str, ...]]


def _bounded(word: str) -> str:
    """``word`` as a pattern: at word boundaries for Latin words, anywhere for CJK ones."""
    if word[:1].isascii():
        return rf"(?<![a-z0-9]){word}(?![a-z0-9])"
    return word


def _alternation(words: list[str], *, start: bool = False) -> re.Pattern[str] | None:
    if not words:
        return None
    body = "|".join(f"(?:{_bounded(w)})" for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"^\s*(?:{body})" if start else body)


def _compile(code: str, data: dict[str, Any]) -> Vocabulary:
    phrases = data.get("phrases", {})
    ordered = sorted(phrases.items(), key=lambda kv: len(kv[0]), reverse=True)
    return Vocabulary(
        code=code,
        phrases=tuple((str(k), str(v)) for k, v in ordered),
        deferred=_alternation(list(data.get("deferred", []))),
        hedged=_alternation(list(data.get("hedged", []))),
        negation=_alternation(list(data.get("negation", []))),
        question_starts=_alternation(list(data.get("question_starts", [])), start=True),
        history=_alternation(list(data.get("history", []))),
        windows=tuple(
            (re.compile(_bounded(k)), str(v)) for k, v in dict(data.get("windows", {})).items()
        ),
        kinds={k: tuple(v) for k, v in dict(data.get("kinds", {})).items()},
        quantities={k: tuple(v) for k, v in dict(data.get("quantities", {})).items()},
    )


@functools.cache
def languages() -> tuple[Vocabulary, ...]:
    """Every vocabulary file in ``demo_vocab/``, English first (loaded once)."""
    folder = resources.files(__package__).joinpath("demo_vocab")
    found: list[Vocabulary] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            found.append(_compile(entry.name[:-5], json.loads(entry.read_text("utf-8"))))
    found.sort(key=lambda v: v.code != "en")
    return tuple(found)


def _clean(text: str) -> str:
    return text[:MAX_TEXT_CHARS].lower().replace("\u2019", "'").strip()


def _any(text: str, attribute: str) -> bool:
    text = _clean(text)
    for vocabulary in languages():
        pattern = getattr(vocabulary, attribute)
        if pattern is not None and pattern.search(text):
            return True
    return False


def to_english(text: str) -> str:
    """``text`` lower-cased with every language's phrases rewritten to the planner's English.

    English phrases are rewritten too ("half" -> "50%", "shut off" -> "turn off"); other
    languages' phrases carry their own spaces, so an unspaced sentence falls into words.
    """
    text = _clean(text)
    for vocabulary in languages():
        for phrase, english in vocabulary.phrases:
            if phrase in text:
                if _ASCII_WORD.match(phrase):
                    text = re.sub(rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])", english, text)
                else:
                    text = text.replace(phrase, english)
    return re.sub(r"\s+", " ", text).strip()


def deferred_reason(text: str) -> str | None:
    """The words that make ``text`` a request for later or on a condition, or None."""
    text = _clean(text)
    for vocabulary in languages():
        pattern = vocabulary.deferred
        if pattern is not None and (m := pattern.search(text)):
            return m.group(0).strip()
    return None


def is_hedged(text: str) -> bool:
    """Whether ``text`` wonders rather than asks ("maybe turn on ...", "should I ...")."""
    return _any(text, "hedged")


def is_negated(text: str) -> bool:
    """Whether ``text`` says "not", "don't", "never" ... anywhere."""
    return _any(text, "negation")


def is_question(text: str) -> bool:
    """Whether ``text`` is put as a question (a question mark, or a question word first)."""
    cleaned = _clean(text)
    return cleaned.endswith(("?", "\uff1f", "吗")) or _any(cleaned, "question_starts")


def history_window(text: str) -> str | None:
    """The ``sensor_history`` window ``text`` asks about ("last night", "today"), or None
    when it does not ask about the past."""
    if not _any(text, "history"):
        return None
    english = to_english(text)
    for vocabulary in languages():
        for pattern, window in vocabulary.windows:
            if pattern.search(english):
                return window
    return "24h"


def kind_words() -> dict[str, tuple[str, ...]]:
    """Device kind -> the words that name a device of that kind ("led" -> light, lamp, led)."""
    merged: dict[str, tuple[str, ...]] = {}
    for vocabulary in languages():
        for kind, words in vocabulary.kinds.items():
            merged[kind] = merged.get(kind, ()) + words
    return merged


def quantity_words() -> dict[str, tuple[str, ...]]:
    """Sensor quantity -> the words that ask about it ("temperature" -> warm, cold ...)."""
    merged: dict[str, tuple[str, ...]] = {}
    for vocabulary in languages():
        for quantity, words in vocabulary.quantities.items():
            merged[quantity] = merged.get(quantity, ()) + words
    return merged
