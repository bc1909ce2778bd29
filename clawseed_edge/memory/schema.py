"""Versioned schema migrations, recorded in the database's ``schema_migrations`` table.

Each migration runs once, in its own transaction, and is recorded with its version, so opening
an older database brings it up to date and opening a current one does nothing. The sqlite-vec
table is not a migration: it needs the extension and the embedder's dimension, so
:class:`~clawseed_edge.memory.sqlite.SqliteMemory` creates it when both are known.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate"]

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "entries, FTS5 index, embedding cache, meta",
        """
        CREATE TABLE entries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            content TEXT NOT NULL,
            category TEXT NOT NULL,
            session_id TEXT,
            importance REAL NOT NULL DEFAULT 0.5,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            content_hash TEXT NOT NULL,
            UNIQUE (namespace, key)
        );
        CREATE INDEX entries_category ON entries (namespace, category, updated_at);
        CREATE INDEX entries_session ON entries (session_id);
        CREATE VIRTUAL TABLE entries_fts USING fts5(
            content, key, content='entries', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
            INSERT INTO entries_fts (rowid, content, key) VALUES (new.id, new.content, new.key);
        END;
        CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
            INSERT INTO entries_fts (entries_fts, rowid, content, key)
            VALUES ('delete', old.id, old.content, old.key);
        END;
        CREATE TRIGGER entries_au AFTER UPDATE OF content, key ON entries BEGIN
            INSERT INTO entries_fts (entries_fts, rowid, content, key)
            VALUES ('delete', old.id, old.content, old.key);
            INSERT INTO entries_fts (rowid, content, key) VALUES (new.id, new.content, new.key);
        END;
        CREATE TABLE embedding_cache (
            content_hash TEXT NOT NULL,
            dimensions INTEGER NOT NULL,
            vector BLOB NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (content_hash, dimensions)
        );
        CREATE TABLE memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
    ),
    (
        2,
        "sessions and their messages",
        """
        CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            message_count INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE session_messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
            message TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE INDEX session_messages_session ON session_messages (session_id, id);
        """,
    ),
)

SCHEMA_VERSION = MIGRATIONS[-1][0]


async def migrate(conn: Any) -> int:
    """Apply every migration the database lacks; returns the schema version after.

    ``conn`` is an aiosqlite connection in autocommit mode. Each migration and its record are
    one transaction: a crash mid-way leaves the previous version intact.
    """
    await conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at REAL NOT NULL)"
    )
    async with conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations") as cur:
        row = await cur.fetchone()
    current = int(row[0])
    for version, description, script in MIGRATIONS:
        if version <= current:
            continue
        statements = [s.strip() for s in _split(script) if s.strip()]
        await conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements:
                await conn.execute(statement)
            await conn.execute(
                "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?,?,?)",
                (version, description, time.time()),
            )
            await conn.execute("COMMIT")
        except BaseException:
            await conn.execute("ROLLBACK")
            raise
        current = version
    return current


def _split(script: str) -> list[str]:
    """Split a script into statements, keeping trigger bodies (``BEGIN ... END;``) whole."""
    out: list[str] = []
    buf: list[str] = []
    in_trigger = False
    for line in script.splitlines():
        stripped = line.strip()
        buf.append(line)
        if stripped.upper().startswith("CREATE TRIGGER"):
            in_trigger = True
        if in_trigger:
            if stripped.upper() == "END;":
                out.append("\n".join(buf).rstrip().rstrip(";"))
                buf, in_trigger = [], False
        elif stripped.endswith(";"):
            out.append("\n".join(buf).rstrip().rstrip(";"))
            buf = []
    if "".join(buf).strip():
        out.append("\n".join(buf))
    return out
