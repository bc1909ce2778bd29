"""AutomationStore: automations and their firings in ``state.db`` (tables ``automations`` and
``automation_firings``).

The service's :class:`~.automations.Automations` and ``clawseed-edge automations add`` (with no
service running) use the same object; ``[[automations]]`` are synced in at the service's start
(origin ``config``), as ``[[jobs]]`` are. Firings are kept per rule, the newest
:data:`KEEP_FIRINGS` of each; a removed rule's firings go with it.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from clawseed_edge.api import ClawseedError
from clawseed_edge.config.automations import AutomationConfig

from .automation_spec import MAX_AUTOMATIONS

if TYPE_CHECKING:
    from clawseed_edge.state import StateDB

__all__ = [
    "KEEP_FIRINGS",
    "AutomationFiring",
    "AutomationStore",
    "StoredAutomation",
    "TooManyAutomations",
]

#: Firings kept per rule (older ones are pruned as new ones arrive).
KEEP_FIRINGS = 200
#: The most characters of an output or error kept in a firing.
MAX_DETAIL_CHARS = 500


class TooManyAutomations(ClawseedError, ValueError):
    """state.db holds :data:`~.automation_spec.MAX_AUTOMATIONS` automations already."""

    code = "automations_too_many"


@dataclass(frozen=True, slots=True)
class StoredAutomation:
    """A rule as stored: its table, where it came from, when it was made."""

    config: AutomationConfig
    origin: str
    created_at: float


@dataclass(frozen=True, slots=True)
class AutomationFiring:
    """One firing: ``event`` fire or reset; ``action`` tool, prompt, message or none."""

    id: int
    automation: str
    at: float
    event: str
    action: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "automation": self.automation,
            "at": self.at,
            "event": self.event,
            "action": self.action,
            "ok": self.ok,
            "detail": self.detail,
        }


def _spec(config: AutomationConfig) -> str:
    return json.dumps(msgspec.to_builtins(config), sort_keys=True, ensure_ascii=False)


def _config(spec: str) -> AutomationConfig:
    return msgspec.convert(json.loads(spec), AutomationConfig)


class AutomationStore:
    """Automations and firings over an open :class:`~clawseed_edge.state.StateDB`.

    Every method is one statement or one ``BEGIN IMMEDIATE`` transaction, safe to cancel.
    """

    def __init__(self, db: StateDB, *, max_automations: int = MAX_AUTOMATIONS) -> None:
        self.db = db
        self.max_automations = max_automations

    async def add(
        self, config: AutomationConfig, origin: str, created_at: float, *, replace: bool = False
    ) -> bool:
        """Store a rule; False when the name is taken (and ``replace`` is off).

        Raises:
            TooManyAutomations: ``max_automations`` exist already.
        """
        async with self.db.immediate() as conn:
            async with conn.execute(
                "SELECT COUNT(*) FROM automations WHERE name != ?", (config.name,)
            ) as c:
                count = (await c.fetchone())[0]
            async with conn.execute(
                "SELECT 1 FROM automations WHERE name = ?", (config.name,)
            ) as c:
                exists = await c.fetchone() is not None
            if exists and not replace:
                return False
            if count >= self.max_automations:
                raise TooManyAutomations(
                    f"there are {count} automations already (at most {self.max_automations}); "
                    "remove one (`clawseed-edge automations remove NAME`)"
                )
            await conn.execute(
                "INSERT OR REPLACE INTO automations (name, spec, origin, created_at) "
                "VALUES (?,?,?,?)",
                (config.name, _spec(config), origin, created_at),
            )
        return True

    async def get(self, name: str) -> StoredAutomation | None:
        rows = await self.db.fetchall(
            "SELECT spec, origin, created_at FROM automations WHERE name = ?", (name,)
        )
        return StoredAutomation(_config(rows[0][0]), rows[0][1], rows[0][2]) if rows else None

    async def list(self) -> builtins.list[StoredAutomation]:
        """Every rule, by name."""
        rows = await self.db.fetchall(
            "SELECT spec, origin, created_at FROM automations ORDER BY name"
        )
        return [StoredAutomation(_config(s), o, c) for s, o, c in rows]

    async def remove(self, name: str) -> bool:
        """Delete a rule and its firings; returns whether it existed."""
        changed = await self.db.execute("DELETE FROM automations WHERE name = ?", (name,))
        await self.db.execute("DELETE FROM automation_firings WHERE automation = ?", (name,))
        return changed > 0

    async def sync_declared(
        self, declared: Sequence[AutomationConfig], now: float
    ) -> builtins.list[str]:
        """Make the ``config`` rules those declared: add or update them, drop the ones no
        longer declared (with their firings). A declared name replaces a created rule of the
        same name. Returns the names removed."""
        current = {a.config.name: a for a in await self.list()}
        for config in declared:
            old = current.get(config.name)
            if old is not None and old.origin == "config" and old.config == config:
                continue
            await self.add(config, "config", now, replace=True)
        keep = {c.name for c in declared}
        removed = [n for n, a in current.items() if a.origin == "config" and n not in keep]
        for name in removed:
            await self.remove(name)
        return removed

    # --- firings ---------------------------------------------------------------------------

    async def record(
        self, automation: str, at: float, event: str, action: str, ok: bool, detail: str
    ) -> None:
        """Insert a firing and prune the rule's old ones."""
        async with self.db.immediate() as conn:
            await conn.execute(
                "INSERT INTO automation_firings (automation, at, event, action, ok, detail) "
                "VALUES (?,?,?,?,?,?)",
                (automation, at, event, action, int(ok), detail[:MAX_DETAIL_CHARS]),
            )
            await conn.execute(
                "DELETE FROM automation_firings WHERE automation = ? AND id <= ("
                "SELECT id FROM automation_firings WHERE automation = ? "
                "ORDER BY id DESC LIMIT 1 OFFSET ?)",
                (automation, automation, KEEP_FIRINGS),
            )

    async def firings(
        self, automation: str | None = None, limit: int = 20
    ) -> builtins.list[AutomationFiring]:
        """The latest firings (of one rule, or of all), newest first."""
        where, params = ("WHERE automation = ?", [automation]) if automation else ("", [])
        rows = await self.db.fetchall(
            "SELECT id, automation, at, event, action, ok, detail FROM automation_firings "
            f"{where} ORDER BY id DESC LIMIT ?",
            [*params, max(1, min(limit, 1000))],
        )
        return [AutomationFiring(i, a, t, e, act, bool(ok), d) for i, a, t, e, act, ok, d in rows]
