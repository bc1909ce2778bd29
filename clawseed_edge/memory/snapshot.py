"""``MEMORY_SNAPSHOT.md``: core memory as a Markdown file a human can read and we can reload.

Each entry is a heading, one HTML comment holding its fields as JSON (invisible when
rendered), and its content as a block quote, so any content (headings, comment markers) round
trips exactly::

    ## fan_pin
    <!-- memory {"key": "fan_pin", "namespace": "default", ...} -->
    > the fan relay is on GPIO23
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from clawseed_edge.api import MemoryEntry, MemoryStoreError

__all__ = ["SNAPSHOT_NAME", "SnapshotMethods", "parse_snapshot", "render_snapshot"]

SNAPSHOT_NAME = "MEMORY_SNAPSHOT.md"

_FIELDS = re.compile(r"^<!-- memory (?P<json>\{.*\}) -->$")


def render_snapshot(entries: Iterable[MemoryEntry], *, now: float | None = None) -> str:
    """The snapshot text for ``entries`` (normally the ``core`` ones)."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(time.time() if now is None else now))
    lines = [
        "# Memory snapshot",
        "",
        f"Core memory of clawseed-edge, written {stamp}. It is reloaded when memory.db is",
        "missing. Edit with care: keep each entry's comment line as it is.",
        "",
    ]
    for e in entries:
        fields = {
            "key": e.key,
            "namespace": e.namespace,
            "category": e.category,
            "session_id": e.session_id,
            "importance": e.importance,
            "created_at": e.created_at,
            "updated_at": e.updated_at,
            "metadata": e.metadata,
        }
        encoded = json.dumps(fields, ensure_ascii=False, sort_keys=True)
        encoded = encoded.replace("<", "\\u003c").replace(">", "\\u003e")
        title = " ".join(e.key.split()) or "(empty key)"
        lines.append(f"## {title}")
        lines.append(f"<!-- memory {encoded} -->")
        lines.extend("> " + line for line in e.content.split("\n"))
        lines.append("")
    return "\n".join(lines)


def parse_snapshot(text: str, *, source: str = SNAPSHOT_NAME) -> list[MemoryEntry]:
    """The entries in a snapshot text.

    Raises:
        MemoryStoreError: An entry's comment line is not valid JSON (names the line).
    """
    entries: list[MemoryEntry] = []
    fields: dict[str, object] | None = None
    content: list[str] = []

    def flush() -> None:
        if fields is not None:
            entries.append(_entry(fields, "\n".join(content)))

    for number, line in enumerate(text.splitlines(), start=1):
        match = _FIELDS.match(line)
        if match:
            flush()
            content = []
            try:
                fields = json.loads(match.group("json"))
            except ValueError as exc:
                raise MemoryStoreError(
                    f"{source}:{number}: the entry's comment line is not valid JSON ({exc}); "
                    "restore it or delete the entry"
                ) from exc
        elif fields is not None and (line.startswith("> ") or line == ">"):
            content.append(line[2:])
    flush()
    return entries


def _entry(fields: dict[str, object], content: str) -> MemoryEntry:
    def num(name: str, default: float) -> float:
        value = fields.get(name, default)
        return float(value) if isinstance(value, int | float) else default

    metadata = fields.get("metadata")
    session = fields.get("session_id")
    return MemoryEntry(
        key=str(fields.get("key", "")),
        content=content,
        category=str(fields.get("category", "core")),
        namespace=str(fields.get("namespace", "default")),
        session_id=session if isinstance(session, str) else None,
        importance=num("importance", 0.5),
        created_at=num("created_at", 0.0),
        updated_at=num("updated_at", 0.0),
        metadata=dict(metadata) if isinstance(metadata, dict) else {},
    )


class SnapshotMethods:
    """Snapshot export and hydration for SqliteMemory."""

    if TYPE_CHECKING:
        snapshot_path: Path | None

        async def export(
            self, *, namespace: str | None = None, category: str | None = None
        ) -> list[MemoryEntry]: ...

        async def store_many(self, entries: Sequence[MemoryEntry]) -> list[MemoryEntry]: ...

    async def export_snapshot(
        self, path: str | Path | None = None, *, namespace: str | None = None
    ) -> Path:
        """Write the ``core`` entries to ``MEMORY_SNAPSHOT.md`` atomically; returns the path.

        Raises:
            MemoryStoreError: No path given or configured, or the file cannot be written.
        """
        target = Path(path) if path is not None else self.snapshot_path
        if target is None:
            raise MemoryStoreError("no snapshot path: pass one or configure snapshot_path")
        entries = await self.export(namespace=namespace, category="core")
        entries.sort(key=lambda e: (e.namespace, e.created_at, e.key))
        text = render_snapshot(entries)
        try:
            await asyncio.to_thread(_write_atomic, target, text)
        except OSError as exc:
            raise MemoryStoreError(f"cannot write memory snapshot {target}: {exc}") from exc
        return target

    async def hydrate_snapshot(self, path: str | Path) -> int:
        """Store every entry of a snapshot file; returns how many.

        Raises:
            MemoryStoreError: The file cannot be read or an entry line is damaged.
        """
        source = Path(path)
        try:
            text = await asyncio.to_thread(source.read_text, encoding="utf-8")
        except OSError as exc:
            raise MemoryStoreError(f"cannot read memory snapshot {source}: {exc}") from exc
        entries = parse_snapshot(text, source=str(source))
        await self.store_many(entries)
        return len(entries)


def _write_atomic(target: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``target``, fsync it, rename it over ``target``.

    The temporary name is unique per write, so two sessions finishing their turns at once each
    replace the whole file (the last rename wins) instead of one renaming the other's file away.
    """
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
