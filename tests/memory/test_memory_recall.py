"""Hybrid recall: ranking on a labelled set, modes, FTS sanitising, embedder failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import MemoryEntry
from clawseed_edge.memory.recall import fts_match_expression, keyword_scores, merge_scores
from clawseed_edge.memory.sqlite import SqliteMemory

QUERY = "which pin drives the fan relay"
LABELLED = {
    "both": "fan relay is on pin GPIO23",  # shares words and meaning
    "keyword": "pin 7 drives the buzzer",  # shares words (pin, drives)
    "paraphrase": "the ventilator switch is wired to header 16",  # meaning only
    "noise1": "greenhouse should stay under 28 C",
    "noise2": "wifi password lives in the vault",
    "noise3": "water the tomatoes every morning",
}


async def _fill(mem: SqliteMemory) -> None:
    for key, content in LABELLED.items():
        await mem.store(MemoryEntry(key, content))


async def test_hybrid_ranks_both_first_and_finds_the_paraphrase(memory: SqliteMemory) -> None:
    await _fill(memory)
    found = await memory.recall(QUERY, limit=5)
    keys = [e.key for e in found]
    assert keys[0] == "both"
    assert set(keys) == {"both", "keyword", "paraphrase"}
    assert all(e.score is not None and 0 < e.score <= 1 for e in found)
    assert [e.score for e in found] == sorted((e.score or 0 for e in found), reverse=True)


async def test_keyword_mode_misses_the_paraphrase(memory: SqliteMemory) -> None:
    await _fill(memory)
    keys = [e.key for e in await memory.recall(QUERY, mode="keyword")]
    assert keys[0] == "both"
    assert set(keys) == {"both", "keyword"}


async def test_vector_mode_finds_the_paraphrase_without_shared_words(
    memory: SqliteMemory,
) -> None:
    await _fill(memory)
    keys = [e.key for e in await memory.recall("ventilator contactor", mode="vector")]
    assert "paraphrase" in keys and "both" in keys
    keyword_keys = [e.key for e in await memory.recall("ventilator contactor", mode="keyword")]
    assert keyword_keys == ["paraphrase"]  # "both" shares no word: only vectors find it


async def test_min_relevance_drops_unrelated_entries(tmp_path: Path, make_embedder: Any) -> None:
    async with SqliteMemory.open(
        tmp_path / "m.db", embedder=make_embedder(), min_relevance=0.6
    ) as mem:
        await _fill(mem)
        keys = [e.key for e in await mem.recall(QUERY)]
    assert keys == ["both"]


async def test_namespace_isolation(memory: SqliteMemory) -> None:
    await memory.store(MemoryEntry("pin", "fan relay on GPIO23", namespace="alice"))
    await memory.store(MemoryEntry("pin", "fan relay on GPIO5", namespace="bob"))
    alice = await memory.recall("fan relay", namespace="alice")
    bob = await memory.recall("fan relay", namespace="bob")
    assert [e.content for e in alice] == ["fan relay on GPIO23"]
    assert [e.content for e in bob] == ["fan relay on GPIO5"]
    assert await memory.recall("fan relay") == []  # "default" holds nothing
    assert (await memory.get("pin", namespace="alice")).content.endswith("GPIO23")  # type: ignore[union-attr]
    assert await memory.forget("pin", namespace="alice")
    assert await memory.get("pin", namespace="bob") is not None
    assert await memory.count(namespace="alice") == 0
    assert await memory.count() == 1


async def test_session_and_category_scope(memory: SqliteMemory) -> None:
    await memory.store(MemoryEntry("a", "fan relay wiring", category="daily", session_id="s1"))
    await memory.store(MemoryEntry("b", "fan relay spare", category="core", session_id="s2"))
    assert [e.key for e in await memory.recall("fan relay", session_id="s1")] == ["a"]
    assert [e.key for e in await memory.recall("fan relay", category="core")] == ["b"]


@pytest.mark.parametrize(
    "query",
    [
        'say "hello',
        "-fan",
        "fan:relay",
        "relay*",
        "AND",
        "fan AND OR NOT relay",
        "NEAR(fan relay",
        "content: fan",
        "^fan",
        "'; DROP TABLE entries; --",
        "",
        "   ",
        "***",
    ],
)
async def test_hostile_queries_do_not_raise(memory: SqliteMemory, query: str) -> None:
    await memory.store(MemoryEntry("fan", "fan relay on GPIO23"))
    found = await memory.recall(query, mode="keyword")
    assert isinstance(found, list)
    assert await memory.count() == 1


def test_fts_expression_quotes_every_word() -> None:
    assert fts_match_expression('fan "NEAR" relay*') == '"fan" OR "near" OR "relay"'
    assert fts_match_expression("the") == '"the"'  # only stop words: keep them
    assert fts_match_expression("?!") is None


def test_keyword_scores_normalise_to_best() -> None:
    scores = keyword_scores([(1, -4.0), (2, -1.0)])
    assert scores == {1: 1.0, 2: 0.25}


def test_merge_weights_and_threshold() -> None:
    merged = merge_scores(
        {1: 1.0}, {2: 1.0, 1: 0.5}, keyword_weight=0.3, vector_weight=0.7, min_relevance=0.0
    )
    assert [(s.rowid, round(s.score, 2)) for s in merged] == [(2, 0.7), (1, 0.65)]
    merged = merge_scores(
        {1: 1.0}, {2: 1.0, 1: 0.5}, keyword_weight=0.3, vector_weight=0.7, min_relevance=0.68
    )
    assert [s.rowid for s in merged] == [2]


async def test_embedding_cache_hit_on_restore(memory: SqliteMemory, embedder: Any) -> None:
    await memory.store(MemoryEntry("a", "fan relay on GPIO23"))
    calls = embedder.calls
    await memory.store(MemoryEntry("a", "fan relay on GPIO23"))
    await memory.store(MemoryEntry("b", "fan relay on GPIO23"))
    assert embedder.calls == calls
    await memory.store(MemoryEntry("c", "something else"))
    assert embedder.calls == calls + 1


async def test_embedder_failure_on_store_keeps_the_entry(
    memory: SqliteMemory, embedder: Any
) -> None:
    embedder.fail = True
    stored = await memory.store(MemoryEntry("a", "fan relay on GPIO23"))
    assert stored.key == "a"
    assert (await memory.get("a")) is not None
    found = await memory.recall("fan relay")  # query embedding fails too: keyword-only
    assert [e.key for e in found] == ["a"]
    embedder.fail = False
    assert [e.key for e in await memory.recall("fan relay", mode="vector")] == []  # no vector


async def test_no_vector_support_runs_keyword_only(tmp_path: Path, make_embedder: Any) -> None:
    embedder = make_embedder()
    async with SqliteMemory.open(tmp_path / "m.db", embedder=embedder, load_vectors=False) as mem:
        assert not mem.vectors_loaded and mem.effective_mode == "keyword"
        await _fill(mem)
        keys = {e.key for e in await mem.recall(QUERY)}
    assert keys == {"both", "keyword"}
    assert embedder.calls == 0


async def test_reopen_with_vectors_keeps_working(tmp_path: Path, make_embedder: Any) -> None:
    async with SqliteMemory.open(tmp_path / "m.db", embedder=make_embedder()) as mem:
        await _fill(mem)
    async with SqliteMemory.open(tmp_path / "m.db", load_vectors=False) as mem:
        assert await mem.forget("both")  # vec table present but not loadable: no crash
        assert {e.key for e in await mem.recall(QUERY)} == {"keyword"}
    async with SqliteMemory.open(tmp_path / "m.db", embedder=make_embedder()) as mem:
        keys = [e.key for e in await mem.recall(QUERY)]
        async with mem._read("test") as conn:
            vectors = (await conn.execute_fetchall("SELECT COUNT(*) FROM entries_vec"))[0][0]
    assert keys[0] in {"keyword", "paraphrase"} and "both" not in keys
    assert vectors == len(LABELLED) - 1  # the orphan vector of "both" was cleaned up


async def test_backfill_gives_vectors_to_entries_stored_without(
    memory: SqliteMemory, embedder: Any
) -> None:
    embedder.fail = True
    await _fill(memory)
    embedder.fail = False
    assert "paraphrase" not in [e.key for e in await memory.recall(QUERY)]
    assert await memory.backfill_vectors(batch=4) == len(LABELLED)
    assert await memory.backfill_vectors() == 0
    assert "paraphrase" in [e.key for e in await memory.recall(QUERY)]


async def test_backfill_pages_and_stops_at_the_first_batch_the_embedder_cannot_embed(
    memory: SqliteMemory, embedder: Any, caplog: pytest.LogCaptureFixture
) -> None:
    embedder.fail = True
    await _fill(memory)
    calls = embedder.calls
    assert await memory.backfill_vectors(batch=2) == 0
    assert embedder.calls == calls + 1, "one failed batch, not one per batch"
    assert sum("embedding failed" in r.getMessage() for r in caplog.records) >= 1
    embedder.fail = False
    calls = embedder.calls
    assert await memory.backfill_vectors(batch=2) == len(LABELLED)
    assert embedder.calls - calls == -(-len(LABELLED) // 2), "pages of two"
