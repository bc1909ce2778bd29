"""Consolidation, pruning, conflicts and the MEMORY_SNAPSHOT.md round trip."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from clawseed_edge.api import MemoryEntry, MemoryStoreError
from clawseed_edge.memory.hygiene import (
    DAILY_PART_CHARS,
    conflict_search_words,
    important_facts,
    jaccard,
)
from clawseed_edge.memory.snapshot import parse_snapshot, render_snapshot
from clawseed_edge.memory.sqlite import MAX_ENTRY_CHARS, SqliteMemory

DAY = 86400.0


async def test_prune_keeps_core_and_custom(memory: SqliteMemory) -> None:
    old = time.time() - 40 * DAY
    for key, category in [
        ("c", "core"),
        ("d", "daily"),
        ("v", "conversation"),
        ("x", "projects"),
    ]:
        await memory.store(
            MemoryEntry(key, f"old {category} note", category=category, updated_at=old)
        )
    await memory.store(MemoryEntry("fresh", "new daily note", category="daily"))
    pruned = await memory.prune(30)
    assert pruned == 2
    assert sorted(e.key for e in await memory.list()) == ["c", "fresh", "x"]
    assert [e.key for e in await memory.recall("note", mode="keyword")] != []
    assert await memory.get("d") is None


async def test_prune_if_due_runs_once_per_interval(memory: SqliteMemory) -> None:
    now = time.time()
    await memory.store(MemoryEntry("d", "old", category="daily", updated_at=now - 90 * DAY))
    assert await memory.prune_if_due(30, now=now) == 1
    await memory.store(MemoryEntry("e", "old", category="daily", updated_at=now - 90 * DAY))
    assert await memory.prune_if_due(30, now=now + 60) is None
    assert await memory.prune_if_due(30, now=now + DAY + 1) == 1


async def test_conflicting_core_fact_supersedes_older(memory: SqliteMemory) -> None:
    await memory.store(MemoryEntry("limit_v1", "the greenhouse should stay under 28 C"))
    await memory.store(MemoryEntry("unrelated", "the fan relay is on GPIO23"))
    await memory.store(MemoryEntry("limit_v2", "the greenhouse should stay under 30 C"))
    old = await memory.get("limit_v1")
    assert old is not None and old.metadata["superseded_by"] == "limit_v2"
    assert "superseded_by" not in (await memory.get("unrelated")).metadata  # type: ignore[union-attr]
    keys = [e.key for e in await memory.recall("greenhouse stay under")]
    assert "limit_v2" in keys and "limit_v1" not in keys
    every = await memory.recall("greenhouse stay under", include_superseded=True)
    assert "limit_v1" in [e.key for e in every]


async def test_an_extracted_fact_never_supersedes_a_key_stored_on_purpose(
    memory: SqliteMemory,
) -> None:
    await memory.store(MemoryEntry("cat_name", "my cat is called Miso"))
    # A later turn repeats it; the extracted fact is newer, but the explicit key wins.
    stored = await memory.consolidate("s1", "remember that my cat is called Miso", "Noted.")
    extracted = next(e for e in stored if e.category == "core")
    assert (await memory.get(extracted.key)).metadata["superseded_by"] == "cat_name"  # type: ignore[union-attr]
    assert "superseded_by" not in (await memory.get("cat_name")).metadata  # type: ignore[union-attr]
    assert "cat_name" in [e.key for e in await memory.recall("cat", mode="keyword")]


async def test_a_key_stored_on_purpose_supersedes_an_older_extracted_fact(
    memory: SqliteMemory,
) -> None:
    stored = await memory.consolidate("s1", "remember that my cat is called Miso", "Noted.")
    extracted = next(e for e in stored if e.category == "core")
    await memory.store(MemoryEntry("cat_name", "my cat is called Miso"))
    assert (await memory.get(extracted.key)).metadata["superseded_by"] == "cat_name"  # type: ignore[union-attr]
    assert "superseded_by" not in (await memory.get("cat_name")).metadata  # type: ignore[union-attr]


async def test_non_core_entries_do_not_conflict(memory: SqliteMemory) -> None:
    await memory.store(MemoryEntry("a", "the greenhouse should stay under 28 C", category="daily"))
    await memory.store(MemoryEntry("b", "the greenhouse should stay under 30 C", category="daily"))
    assert "superseded_by" not in (await memory.get("a")).metadata  # type: ignore[union-attr]


def test_jaccard() -> None:
    assert jaccard("fan relay on GPIO23", "fan relay on GPIO23") == 1.0
    assert jaccard("fan relay", "water tomatoes") == 0.0
    assert jaccard("", "x") == 0.0


async def test_consolidate_writes_daily_and_promotes_flagged_facts(memory: SqliteMemory) -> None:
    stored = await memory.consolidate(
        "phone-1",
        "Remember that the fan relay is on GPIO23. What is the temperature?",
        "It is 24 C.",
    )
    assert [e.category for e in stored] == ["daily", "core"]
    daily, core = stored
    assert daily.key.startswith("daily/") and "phone-1" in daily.key
    assert "It is 24 C." in daily.content and daily.session_id == "phone-1"
    assert core.content == "the fan relay is on GPIO23" and core.importance >= 0.9
    assert [e.key for e in await memory.recall("fan relay", category="core")] == [core.key]


def test_important_facts_patterns() -> None:
    text = "hi. Important: the pump runs at night! note that tank B leaks"
    assert important_facts(text) == ["the pump runs at night", "tank B leaks"]
    assert important_facts("how warm is it?") == []


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("remember that the fan is on GPIO23", ["the fan is on GPIO23"]),
        ("Remember: the fan is on GPIO23.", ["the fan is on GPIO23"]),
        ("remember the fan is on GPIO23", ["the fan is on GPIO23"]),
        ("remember the fan pin", []),
        ("please remember the fan pin", []),
        ("remember to water the plants", []),
        ("do you remember that the fan is on GPIO23?", []),
        ("remember that the fan is on GPIO23?", []),
        ("note the door sensor", []),
    ],
)
def test_only_statements_are_promoted(text: str, facts: list[str]) -> None:
    # a request ("remember the fan pin") is not a fact; a statement is
    assert important_facts(text) == facts


async def test_consolidate_does_not_promote_a_request(memory: SqliteMemory) -> None:
    stored = await memory.consolidate("cli", "remember the fan pin", "Which pin is it?")
    assert [e.category for e in stored] == ["daily"]


async def test_snapshot_round_trip(tmp_path: Path) -> None:
    snap = tmp_path / "MEMORY_SNAPSHOT.md"
    tricky = "line one\n## not a heading\n<!-- memory {} -->\n> quoted"
    async with SqliteMemory.open(tmp_path / "a.db", snapshot_path=snap) as mem:
        await mem.store(MemoryEntry("fan", "fan relay on GPIO23", importance=0.9))
        await mem.store(MemoryEntry("odd", tricky, namespace="bob", metadata={"note": "-->x<"}))
        await mem.store(MemoryEntry("day", "a daily note", category="daily"))
        before = sorted(await mem.export(category="core"), key=lambda e: e.key)
        assert await mem.export_snapshot() == snap
    text = snap.read_text()
    assert "fan relay on GPIO23" in text and "a daily note" not in text
    async with SqliteMemory.open(tmp_path / "b.db", snapshot_path=snap) as fresh:
        after = sorted(await fresh.export(), key=lambda e: e.key)
        assert [e.key for e in await fresh.recall("fan relay")] == ["fan"]
    assert after == before


async def test_existing_database_is_not_hydrated_again(tmp_path: Path) -> None:
    snap = tmp_path / "MEMORY_SNAPSHOT.md"
    snap.write_text(render_snapshot([MemoryEntry("k", "from snapshot")]))
    async with SqliteMemory.open(tmp_path / "m.db", snapshot_path=snap) as mem:
        assert await mem.count() == 1
        await mem.forget("k")
    async with SqliteMemory.open(tmp_path / "m.db", snapshot_path=snap) as mem:
        assert await mem.count() == 0


def test_damaged_snapshot_names_the_line() -> None:
    with pytest.raises(MemoryStoreError, match=r"snap.md:3"):
        parse_snapshot("# x\n\n<!-- memory {not json} -->\n", source="snap.md")


def test_snapshot_parse_of_render_is_identity() -> None:
    entries = [
        MemoryEntry("a", "x\n\ny", importance=0.2, created_at=1.0, updated_at=2.0),
        MemoryEntry("b b", "", namespace="n", session_id="s", metadata={"k": [1, 2]}),
    ]
    assert parse_snapshot(render_snapshot(entries)) == entries


async def test_newer_stored_first_still_wins(memory: SqliteMemory) -> None:
    now = time.time()
    await memory.store(MemoryEntry("new", "the greenhouse should stay under 30 C", updated_at=now))
    await memory.store(
        MemoryEntry("old", "the greenhouse should stay under 28 C", updated_at=now - DAY)
    )
    assert (await memory.get("old")).metadata.get("superseded_by") == "new"  # type: ignore[union-attr]
    assert "superseded_by" not in (await memory.get("new")).metadata  # type: ignore[union-attr]


async def test_snapshot_written_on_close_when_core_changed(tmp_path: Path) -> None:
    snap = tmp_path / "MEMORY_SNAPSHOT.md"
    async with SqliteMemory.open(tmp_path / "m.db", snapshot_path=snap) as mem:
        await mem.store(MemoryEntry("d", "daily only", category="daily"))
    assert not snap.exists()
    async with SqliteMemory.open(tmp_path / "m.db", snapshot_path=snap) as mem:
        await mem.store(MemoryEntry("fan", "fan relay on GPIO23"))
    assert [e.key for e in parse_snapshot(snap.read_text())] == ["fan"]


async def _steps_per_store(memory: SqliteMemory, facts: int, shared: str = "") -> int:
    """SQLite VM steps (in units of 100) of storing six more core facts, one by one, after
    ``facts`` others (each also containing the word ``shared``, if given).

    Six, not one: a single store's cost swings up to 4x with the FTS index's segment merges
    (which SQLite version serves changes where they fall); summed, that evens out.
    """
    await memory.store_many(
        [
            MemoryEntry(f"fact/{i}", f"relay{i} drives pump{i} in zone{i} {shared}", "core")
            for i in range(facts)
        ]
    )
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0  # 0: keep running

    conn = memory._conn
    await conn.set_progress_handler(count, 100)
    try:
        for k in range(6):
            await memory.store(
                MemoryEntry(
                    f"probe/{k}", f"sensor probe{k} on bus reads the last value {shared}", "core"
                )
            )
    finally:
        await conn.set_progress_handler(None, 100)
    return steps[0]


@pytest.mark.parametrize("shared", ["", "pin"], ids=["no-shared-word", "common-word"])
async def test_storing_a_fact_does_not_scale_with_core_rows(tmp_path: Path, shared: str) -> None:
    # The conflict check once ran the FTS search once per core row (quadratic over a series
    # of stores). Driven from the FTS table, with the search narrowed to words an
    # overlapping fact must contain, a word every fact has ("pin") does not make every fact
    # a candidate. Counted in SQLite VM steps, not wall time.
    async with SqliteMemory.open(tmp_path / "a.db", load_vectors=False) as small:
        few = await _steps_per_store(small, 30, shared)
    async with SqliteMemory.open(tmp_path / "b.db", load_vectors=False) as large:
        many = await _steps_per_store(large, 300, shared)
    assert many < 2 * few, (few, many)  # the per-row search cost 10x here


async def test_daily_summary_is_capped_and_says_so(memory: SqliteMemory) -> None:
    answer = "word " * 200_000  # a 1 MB answer
    (daily,) = await memory.consolidate("cli", "x" * 50_000, answer)
    assert len(daily.content) <= 2 * DAILY_PART_CHARS + 200
    assert daily.content.count("more characters not kept") == 2
    stored = await memory.get(daily.key)
    assert stored is not None and stored.content == daily.content


async def test_an_overlong_flagged_fact_is_not_promoted(memory: SqliteMemory) -> None:
    stored = await memory.consolidate("cli", "remember that the pump " + "is " * 2000, "ok")
    assert [e.category for e in stored] == ["daily"]


async def test_store_refuses_an_entry_over_the_limit(memory: SqliteMemory) -> None:
    with pytest.raises(MemoryStoreError, match=r"'huge'.*characters.*at most"):
        await memory.store(MemoryEntry("huge", "x" * (MAX_ENTRY_CHARS + 1)))
    assert await memory.get("huge") is None
    await memory.store(MemoryEntry("fits", "x" * MAX_ENTRY_CHARS))


async def test_a_conflict_is_found_among_many_facts_sharing_a_word(tmp_path: Path) -> None:
    # 200 facts share "pin"; the one that really overlaps must still be found and superseded
    async with SqliteMemory.open(tmp_path / "m.db", load_vectors=False) as memory:
        await memory.store_many(
            [MemoryEntry(f"fact/{i}", f"sensor{i} is on pin {i}", "core") for i in range(200)]
        )
        await memory.store(MemoryEntry("old", "the garage fan relay is on pin 23", "core"))
        await memory.store(MemoryEntry("new", "the garage fan relay is on pin 24", "core"))
        old = await memory.get("old")
        assert old is not None and old.metadata.get("superseded_by") == "new"
        assert (await memory.get("fact/23")).metadata.get("superseded_by") is None  # type: ignore[union-attr]


def test_conflict_search_words_are_the_ones_an_overlap_must_share() -> None:
    # 3 words, threshold 0.6: an overlapping fact shares >= 2, so it has one of any 2
    assert conflict_search_words("the fan relay is on GPIO23", 0.6) == ["gpio23", "relay"]
    assert conflict_search_words("the fan relay is on GPIO23", 0.0) == ["gpio23", "relay", "fan"]
    assert conflict_search_words("the fan relay is on GPIO23", 1.0) == ["gpio23"]
    assert conflict_search_words("it is on", 0.6) == []


async def test_text_that_is_not_utf8_is_refused_clearly_or_cleaned(memory: SqliteMemory) -> None:
    with pytest.raises(MemoryStoreError, match=r"'bad'.*surrogate"):
        await memory.store(MemoryEntry("bad", "broken \ud800 paste"))
    (daily,) = await memory.consolidate("cli", "broken \ud800 paste", "ok")
    assert "broken ? paste" in daily.content  # the turn summary is kept, the bad character not


async def test_concurrent_snapshot_exports_all_succeed(tmp_path: Path) -> None:
    # Two sessions finishing turns at once used to share one ".tmp" name: the second rename
    # found the file gone (FileNotFoundError). Each write now has its own temporary file.
    snap = tmp_path / "MEMORY_SNAPSHOT.md"
    async with SqliteMemory.open(tmp_path / "c.db", snapshot_path=snap) as mem:
        await mem.store(MemoryEntry("fan", "fan relay on GPIO23", importance=0.9))
        results = await asyncio.gather(*(mem.export_snapshot() for _ in range(20)))
    assert results == [snap] * 20
    text, leftovers = await asyncio.to_thread(
        lambda: (snap.read_text(), [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"])
    )
    assert "fan relay on GPIO23" in text
    assert leftovers == []
