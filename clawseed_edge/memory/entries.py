"""Memory entries to and from rows: validation, upsert parameters, filters, decoding."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from clawseed_edge.api import MemoryEntry, MemoryStoreError

__all__ = ["MAX_ENTRY_CHARS", "check_entries", "entry_from_row", "filters_sql", "upsert_row"]

#: Characters an entry's content may have: memory holds facts and summaries, not pastes
#: (each entry is also indexed, embedded, and put into prompts by recall).
MAX_ENTRY_CHARS = 16_000


def check_entries(entries: Sequence[MemoryEntry]) -> None:
    """Refuse entries the store must not hold, naming the entry and what to do.

    Raises:
        MemoryStoreError: An empty key or namespace, text that is not valid Unicode, or more
            than ``MAX_ENTRY_CHARS`` characters of content.
    """
    for entry in entries:
        if not entry.key or not entry.key.strip():
            raise MemoryStoreError("memory entry key is empty; give the fact a short name")
        if not entry.namespace:
            raise MemoryStoreError(f"memory entry {entry.key!r} has an empty namespace")
        for field in (entry.key, entry.content):
            try:
                field.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise MemoryStoreError(
                    f"memory entry {entry.key!r} has text that is not valid Unicode (a lone "
                    f"surrogate at position {exc.start}): store clean text"
                ) from None
        if len(entry.content) > MAX_ENTRY_CHARS:
            raise MemoryStoreError(
                f"memory entry {entry.key!r} is {len(entry.content)} characters; an entry "
                f"holds at most {MAX_ENTRY_CHARS}: store a summary or split it"
            )


def upsert_row(entry: MemoryEntry, digest: str, now: float) -> tuple[Any, ...]:
    """The parameters of the store's upsert statement for ``entry``."""
    return (
        entry.namespace,
        entry.key,
        entry.content,
        entry.category,
        entry.session_id,
        float(entry.importance),
        entry.created_at or now,
        entry.updated_at or now,
        json.dumps(entry.metadata, ensure_ascii=False),
        digest,
        bool(entry.created_at),
    )


def filters_sql(
    namespace: str | None,
    session_id: str | None,
    category: str | None,
    since: float | None,
    until: float | None,
) -> tuple[str, list[Any]]:
    """A ``WHERE`` clause over ``entries e`` for the given filters (None: not filtered)."""
    clauses: list[str] = []
    params: list[Any] = []
    for clause, value in (
        ("e.namespace = ?", namespace),
        ("e.session_id = ?", session_id),
        ("e.category = ?", category),
        ("e.updated_at >= ?", since),
        ("e.updated_at < ?", until),
    ):
        if value is not None:
            clauses.append(clause)
            params.append(value)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), params


def entry_from_row(row: Sequence[Any]) -> MemoryEntry:
    """The entry in a row of the store's entry columns (damaged metadata is kept, marked)."""
    try:
        metadata = json.loads(row[9]) if row[9] else {}
    except ValueError:
        metadata = {"_damaged_metadata": row[9]}
    return MemoryEntry(
        key=row[1],
        content=row[2],
        category=row[3],
        namespace=row[4],
        session_id=row[5],
        importance=float(row[6]),
        created_at=float(row[7]),
        updated_at=float(row[8]),
        metadata=metadata if isinstance(metadata, dict) else {"value": metadata},
    )
