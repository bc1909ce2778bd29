"""DeviceLedger: the device actions in state.db, seen by every process that opens the file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawseed_edge.api import ActionLedger, ResourceClosed
from clawseed_edge.state import DeviceLedger


async def test_two_ledgers_on_one_file_share_the_window(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with DeviceLedger(path) as first, DeviceLedger(path) as second:
        assert isinstance(first, ActionLedger)
        assert await first.charge("pi/pump", 1000.0, 1, limit=1, since=940.0)
        # Another process (its own connection) sees that charge and may not take the switch.
        assert await second.recent("pi/pump", 950.0) == [1000.0]
        assert not await second.charge("pi/pump", 1010.0, 1, limit=1, since=950.0)
        # Other devices have their own window; the pump's frees after a minute.
        assert await second.charge("pi/lamp", 1010.0, 1, limit=1, since=950.0)
        assert await second.charge("pi/pump", 1061.0, 1, limit=1, since=1001.0)
    assert path.stat().st_mode & 0o777 == 0o600


async def test_a_charge_of_several_switches_counts_each(tmp_path: Path) -> None:
    async with DeviceLedger(tmp_path / "state.db") as ledger:
        assert await ledger.charge("pi/led", 5.0, 4, limit=5, since=0.0)
        assert await ledger.recent("pi/led", 0.0) == [5.0] * 4
        assert not await ledger.charge("pi/led", 6.0, 2, limit=5, since=0.0)


async def test_concurrent_charges_from_two_connections_take_the_last_switch_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    async with DeviceLedger(path) as a, DeviceLedger(path) as b:
        await a.recent("x", 0.0)  # both open before they race
        await b.recent("x", 0.0)
        results = await asyncio.gather(
            *(ledger.charge("pi/pump", 100.0, 1, limit=1, since=40.0) for ledger in (a, b) * 3)
        )
    assert sorted(results) == [False] * 5 + [True]


async def test_a_closed_ledger_refuses_work(tmp_path: Path) -> None:
    ledger = DeviceLedger(tmp_path / "state.db")
    await ledger.aclose()
    await ledger.aclose()  # idempotent
    with pytest.raises(ResourceClosed, match="closed"):
        await ledger.recent("pi/pump", 0.0)


def test_no_tool_may_touch_the_ledger(tmp_path: Path, clawseed_home: Path) -> None:
    # Deleting or rewriting state.db would reset the limits that protect the hardware.
    from clawseed_edge.config.assembly import build_policy
    from clawseed_edge.config.file import load_config

    config = tmp_path / "config.toml"
    config.write_text('[provider]\nname = "demo"\n', encoding="utf-8")
    forbidden = set(build_policy(load_config(config)).forbidden_paths)
    assert {str(clawseed_home / "state.db"), str(clawseed_home / "run")} <= forbidden


async def test_the_ledger_table_is_a_migration_of_state_db(tmp_path: Path) -> None:
    from clawseed_edge.state import MIGRATIONS, StateDB

    path = tmp_path / "state.db"
    async with DeviceLedger(path) as ledger:
        assert await ledger.charge("pi/pump", 1.0, 1, limit=1, since=0.0)
    async with await StateDB.open(path) as db:
        assert await db.schema_version() == len(MIGRATIONS)
        assert await db.fetchall("SELECT key, cost FROM device_actions") == [("pi/pump", 1)]
