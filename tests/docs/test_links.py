"""Every relative link of the README and of docs/ leads to a file that exists, and a link to a
heading (``page.md#heading``) to a heading that exists (GitHub's anchor rule)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"(?m)^#+ (.*)$", page.read_text("utf-8"))}


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text("utf-8"), flags=re.S)
    return [m.group(1) for m in re.finditer(r"\]\(([^)\s]+)\)", text)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto: ...
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: {dest.name} has no heading #{anchor}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_the_readme_is_a_front_door() -> None:
    """At most 250 lines, and the index links every page of docs/."""
    assert len((ROOT / "README.md").read_text("utf-8").splitlines()) <= 250
    index = ROOT / "docs" / "index.md"
    listed = {Path(t.partition("#")[0]).name for t in links(index)}
    missing = [p.name for p in PAGES[1:] if p.name not in listed | {"index.md"}]
    assert not missing, f"docs/index.md does not link {missing}"


def test_the_slug_rule() -> None:
    assert slug("Several Pis on one broker") == "several-pis-on-one-broker"
    assert slug("`[channels.telegram]`") == "channelstelegram"
    assert slug("1. Flash MicroPython") == "1-flash-micropython"
