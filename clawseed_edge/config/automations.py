"""``[[automations]]``: the table's schema (the runner is :mod:`clawseed_edge.scheduler.automations`)."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["AutomationConfig"]


class AutomationConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """One rule.

    Attributes:
        name: Letters, digits, ``_`` and ``-`` (up to 64).
        when: The condition, e.g. ``"greenhouse.temperature > 30"`` (and/or/not, parentheses).
        for_: Written ``for``: how long ``when`` must hold before ``do`` runs (``"2m"``).
        until: The reset condition (hysteresis); default: ``when`` no longer holds.
        do: The action when it fires: ``{ tool = "...", arguments = { ... } }``.
        then: The action when it resets (optional).
        notify: Where a firing is announced: ``"phones"`` (the gateway's event stream).
    """

    name: str
    when: str
    for_: str | int | float = msgspec.field(default=0, name="for")
    until: str | None = None
    do: dict[str, Any] = msgspec.field(default_factory=dict)
    then: dict[str, Any] | None = None
    notify: list[str] = msgspec.field(default_factory=list)
