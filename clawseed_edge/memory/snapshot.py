"""``MEMORY_SNAPSHOT.md``: core memory as a Markdown file a human can read and we can reload.

Each entry is a heading, one HTML comment holding its fields as JSON (invisible when
rendered), and its content as a block quote, so any content (headings, comment markers) round
trips exactly::

    ## fan_pin
    <!-- memory {"key": "fan_pin", "namespace": "default", ...} -->
    > the fan relay is on GPIO23
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable

from clawseed_edge.api import MemoryEntry, MemoryStoreError

__all__ = ["SNAPSHOT_NAME", "parse_snapshot", "render_snapshot"]

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
