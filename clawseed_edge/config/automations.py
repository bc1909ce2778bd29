"""``[[automations]]``: the table's schema (the runner is :mod:`clawseed_edge.scheduler.automations`)."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["AutomationConfig"]


class AutomationConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """One rule (the same check for the ``automation_add`` tool and ``automations add``).

    Attributes:
        name: Letters, digits, ``_`` and ``-`` (up to 64).
        when: The condition: ``SENSOR.QUANTITY`` compared with numbers (``"greenhouse.temperature
            > 30"``) or an input's state alone (``"door.open"``, ``"doorbell.pressed"``), joined
            by and/or/not and parentheses (300 characters, 16 comparisons at most).
        for_: Written ``for``: how long ``when`` must hold before ``do`` runs (``"2m"``).
        until: The reset condition (hysteresis); default: ``when`` no longer holds.
        do: The action when it fires: ``{ tool = "...", arguments = { ... } }`` (through the
            SecurityPolicy), ``{ prompt = "..." }`` (a turn of the model) or ``{ message =
            "..." }`` (a notification); optional when ``notify`` is given.
        then: The action when it resets (optional; the same forms).
        notify: Where firings, messages and a prompt's answer go: ``"phones"`` (the gateway's
            event stream), ``"telegram"``, ``"log"``.
        on_unknown: When a value the active rule reads goes unknown (a sensor whose reading
            failed or is stale): ``"then"`` resets it after ``unknown_grace`` and runs
            ``then`` (the safe side); ``"hold"`` keeps it active until the value is back.
        unknown_grace: How long a value may stay unknown before ``"then"`` applies (``"1m"``).
    """

    name: str
    when: str
    for_: str | int | float = msgspec.field(default=0, name="for")
    until: str | None = None
    do: dict[str, Any] = msgspec.field(default_factory=dict)
    then: dict[str, Any] | None = None
    notify: list[str] = msgspec.field(default_factory=list)
    on_unknown: str = "then"
    unknown_grace: str | int | float = "1m"
