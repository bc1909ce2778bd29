"""The vocabularies every layer shares: risk classes, resource states, why a model stopped.

Standard library only, and no dataclass: importing them costs next to nothing (the gateway's
server needs :class:`Lifecycle` before its door opens, channels/gateway/door.py, and nothing
else of the api's).
"""

from __future__ import annotations

import enum

__all__ = ["Lifecycle", "RiskClass", "StopReason"]


class RiskClass(enum.StrEnum):
    """How much harm a tool call can do; the SecurityPolicy decides by it.

    ``READ`` observes only, ``ACT`` changes the world in a way that can be undone (switch a
    relay, write memory), ``DANGEROUS`` may not be undone (shell, file deletion, flashing).
    """

    READ = "read"
    ACT = "act"
    DANGEROUS = "dangerous"


class Lifecycle(enum.StrEnum):
    """The one state vocabulary of every resource (agent, peripheral, memory, gateway ...).

    ``UNOPENED`` -> ``OPEN`` -> ``CLOSING`` -> ``CLOSED``; a closed resource is never reopened
    (make a new one) and refuses work with an error that says so.
    """

    UNOPENED = "unopened"
    OPEN = "open"
    CLOSING = "closing"
    CLOSED = "closed"


class StopReason(enum.StrEnum):
    """Why the model stopped producing output."""

    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"
    ERROR = "error"
    OTHER = "other"
