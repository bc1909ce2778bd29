from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from clawseed_edge.config import reference
from clawseed_edge.config.schema import Config

DOC = Path(__file__).resolve().parents[2] / "docs" / "config.md"


def test_docs_config_md_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == reference.render(), (
        f"docs/config.md is stale; regenerate it with `{reference.REGENERATE}`"
    )


def test_every_table_and_key_is_documented() -> None:
    page = reference.render()
    for field in msgspec.structs.fields(Config):
        name = field.encode_name
        assert f"## `[{name}]`" in page or f"## `[[{name}]]`" in page, name
    for key in ("max_history", "api_key_env", "retention_days", "pin_factory", "max_connections"):
        assert f"| `{key}` |" in page, key


def test_rows_carry_type_default_and_description() -> None:
    page = reference.render()
    row = next(line for line in page.splitlines() if line.startswith("| `port` |"))
    assert row.startswith("| `port` | integer (>= 0, <= 65535) | `42617` | The TCP port. |")
    row = next(line for line in page.splitlines() if line.startswith("| `level` |"))
    assert '`"read_only"` \\| `"supervised"` \\| `"full"`' in row and '`"supervised"`' in row
    row = next(line for line in page.splitlines() if line.startswith("| `name` | string | *req"))
    assert row  # a required key says so
    # #: comments are descriptions too
    assert "A longer user message is refused" in page


def test_every_key_has_a_description() -> None:
    missing = [
        line.split("|")[1].strip()
        for line in reference.render().splitlines()
        if line.startswith("| `") and line.rstrip().endswith("|  |")
    ]
    assert missing == []


def test_module_prints_the_page() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clawseed_edge.config.reference"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == reference.render()
