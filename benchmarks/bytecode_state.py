"""What the start-up benchmarks share: was the code byte-compiled when they ran (one line), and
the ``--optimize`` option.

Uses ``clawseed_edge.config.bytecode`` (the package and its dependencies, as ``doctor`` checks
them); older trees without that module are checked for the package's own modules only.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path


def bytecode_line() -> str:
    try:
        from clawseed_edge.config.bytecode import describe, stale_sources
    except ImportError:
        import clawseed_edge

        files = sorted(Path(clawseed_edge.__file__).parent.rglob("*.py"))
        stale = [f for f in files if not _fresh(f)]
        return f"bytecode: {len(stale)} of {len(files)} package modules without a fresh .pyc"
    return "bytecode: " + describe(*stale_sources())


def _fresh(source: Path) -> bool:
    cached = Path(importlib.util.cache_from_source(str(source)))
    try:
        header = cached.read_bytes()[:16]
    except OSError:
        return False
    stat = source.stat()
    return (
        header[:4] == importlib.util.MAGIC_NUMBER
        and int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
        and int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF
    )


def add_optimize_option(parser: argparse.ArgumentParser) -> None:
    """``--optimize N``: the ``PYTHONOPTIMIZE`` of the processes a start-up benchmark runs
    (default 2, what the systemd unit sets; 0 runs them as the commands people type)."""
    parser.add_argument(
        "--optimize",
        type=int,
        choices=(0, 1, 2),
        default=2,
        help="PYTHONOPTIMIZE of the processes measured (default 2: what the systemd unit sets)",
    )
