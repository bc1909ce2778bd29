"""``clawseed-edge memory list|search|forget|export``: look into and tidy the memory database.

The database is ``--db PATH`` if given, else the config's ``[memory] path`` (the file of
``--config``, or ``$CLAWSEED_HOME/config.toml``, or the embedded default: ``memory.db``);
relative paths are under ``$CLAWSEED_HOME`` (home default ``~/.clawseed-edge``). Commands
never create a database: a missing one is an error. Search is keyword-only here (no embedding
provider is started by the CLI), so sqlite-vec is not loaded either: a forgotten entry's vector
is deleted by the next start with an embedder (docs/memory.md, "Which SQLite library").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``memory`` command group."""
    parser = subparsers.add_parser("memory", help="list, search, forget and export memory")
    sub = parser.add_subparsers(dest="memory_command", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--db",
            metavar="PATH",
            help="memory database (default: the config's [memory] path, $CLAWSEED_HOME/memory.db)",
        )
        p.add_argument("--namespace", "-n", default="default", help="namespace (default: default)")

    p = sub.add_parser("list", help="list entries, newest first")
    common(p)
    p.add_argument("--all-namespaces", action="store_true", help="list every namespace")
    p.add_argument("--category", "-c", help="only this category (core, daily, ...)")
    p.add_argument("--session", help="only entries written by this session")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=_list)

    p = sub.add_parser("search", help="keyword search, most relevant first")
    common(p)
    p.add_argument("query", help="what to look for (any text)")
    p.add_argument("--category", "-c", help="only this category")
    p.add_argument("--limit", type=int, default=10, help="at most this many (default 10)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=_search)

    p = sub.add_parser("forget", help="delete an entry by key")
    common(p)
    p.add_argument("key", help="the entry's key")
    p.set_defaults(func=_forget)

    p = sub.add_parser("export", help="export entries as JSON lines or a Markdown snapshot")
    common(p)
    p.add_argument("--all-namespaces", action="store_true", help="export every namespace")
    p.add_argument("--category", "-c", help="only this category")
    p.add_argument("--session", help="only entries written by this session")
    p.add_argument("--since", help="updated at or after (ISO date/time, UTC, or Unix seconds)")
    p.add_argument("--until", help="updated before (ISO date/time, UTC, or Unix seconds)")
    p.add_argument("--format", choices=("jsonl", "snapshot"), default="jsonl", help="default jsonl")
    p.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout")
    p.set_defaults(func=_export)


def _db_path(args: argparse.Namespace) -> Path:
    """``--db``, else ``[memory] path`` of the config (``--config`` or the default file).

    Raises:
        ConfigError: The config cannot be read or is invalid (the message names file and key).
    """
    if args.db:
        return Path(args.db).expanduser()
    from clawseed_edge.config.file import load_config
    from clawseed_edge.config.paths import resolve_in_home

    loaded = load_config(getattr(args, "config", None))
    return resolve_in_home(loaded.config.memory.path, loaded.home)


def _timestamp(text: str | None, option: str) -> float | None:
    if text is None:
        return None
    from datetime import UTC, datetime

    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise SystemExit(
            f"clawseed-edge memory: {option} {text!r} is not a date; use 2026-11-29, "
            "2026-11-29T14:00 or Unix seconds"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _run(args: argparse.Namespace, action: Any) -> int:
    """Open the database, run ``action(memory)``, translate errors into exit code 1."""
    import asyncio

    from clawseed_edge.api import ConfigError, MemoryStoreError
    from clawseed_edge.memory.sqlite import SqliteMemory

    try:
        path = _db_path(args)
    except ConfigError as exc:
        print(f"clawseed-edge memory: {exc}", file=sys.stderr)
        return 1
    if not path.is_file():
        print(
            f"clawseed-edge memory: no memory database at {path}; pass --db PATH, --config "
            "PATH (its [memory] path) or set CLAWSEED_HOME",
            file=sys.stderr,
        )
        return 1

    async def go() -> int:
        async with SqliteMemory.open(path) as memory:
            return int(await action(memory))

    try:
        return asyncio.run(go())
    except MemoryStoreError as exc:
        print(f"clawseed-edge memory: {exc}", file=sys.stderr)
        return 1


def _line(entry: Any, *, json_out: bool) -> str:
    if json_out:
        import json

        return json.dumps(_as_dict(entry), ensure_ascii=False)
    import time

    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(entry.updated_at))
    content = " ".join(entry.content.split())
    if len(content) > 100:
        content = content[:99] + "…"
    score = f" {entry.score:.2f}" if entry.score is not None else ""
    return f"{entry.key}\t{entry.category}\t{when}{score}\t{content}"


def _as_dict(entry: Any) -> dict[str, Any]:
    from dataclasses import asdict

    data = asdict(entry)
    if data.get("score") is None:
        data.pop("score", None)
    return data


def _list(args: argparse.Namespace) -> int:
    async def action(memory: Any) -> int:
        entries = await memory.list(
            namespace=None if args.all_namespaces else args.namespace,
            category=args.category,
            session_id=args.session,
            limit=args.limit,
        )
        for entry in entries:
            print(_line(entry, json_out=args.json))
        return 0

    return _run(args, action)


def _search(args: argparse.Namespace) -> int:
    async def action(memory: Any) -> int:
        found = await memory.recall(
            args.query, limit=args.limit, namespace=args.namespace, category=args.category
        )
        if not found and not args.json:
            print(f"nothing found for {args.query!r}", file=sys.stderr)
        for entry in found:
            print(_line(entry, json_out=args.json))
        return 0

    return _run(args, action)


def _forget(args: argparse.Namespace) -> int:
    async def action(memory: Any) -> int:
        if await memory.forget(args.key, namespace=args.namespace):
            print(f"forgot {args.key!r} in namespace {args.namespace!r}")
            return 0
        print(
            f"clawseed-edge memory: nothing stored under {args.key!r} in namespace "
            f"{args.namespace!r}; `clawseed-edge memory list` shows the keys",
            file=sys.stderr,
        )
        return 1

    return _run(args, action)


def _export(args: argparse.Namespace) -> int:
    since = _timestamp(args.since, "--since")
    until = _timestamp(args.until, "--until")

    async def action(memory: Any) -> int:
        import json

        from clawseed_edge.memory.snapshot import render_snapshot

        entries = await memory.export(
            namespace=None if args.all_namespaces else args.namespace,
            session_id=args.session,
            category=args.category,
            since=since,
            until=until,
        )
        if args.format == "snapshot":
            text = render_snapshot(sorted(entries, key=lambda e: (e.namespace, e.created_at)))
        else:
            text = "".join(json.dumps(_as_dict(e), ensure_ascii=False) + "\n" for e in entries)
        result.append((text, len(entries)))
        return 0

    result: list[tuple[str, int]] = []
    code = _run(args, action)
    if code or not result:
        return code
    text, count = result[0]
    if not args.output:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"clawseed-edge memory: cannot write {args.output}: {exc}", file=sys.stderr)
        return 1
    from .render import counted

    print(f"exported {counted(count, 'entry', 'entries')} to {args.output}", file=sys.stderr)
    return 0
