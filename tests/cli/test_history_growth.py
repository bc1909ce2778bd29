"""Requests stay bounded across turns: `agent -m` in separate processes against a fake model
server that records what it was sent (issue 14.1/14.2: recalled memory stored in history made
every later request carry old recall blocks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.testing.fake_servers import FakeOllama, Reply

from .test_agent_with_fake_servers import cli

pytestmark = pytest.mark.slow


def test_a_big_message_does_not_make_every_later_request_grow(tmp_path: Path) -> None:
    # Words the short messages share, so memory recall finds the big turn every time.
    paste = ("the fan log says pump fan relay temperature 21.5 C ok " * 400)[:20_000]
    short = [f"is the fan on? question {i}" for i in range(8)]
    with FakeOllama() as server:
        server.queue(*[Reply.text(f"answer {i}") for i in range(10)])
        config = tmp_path / "config.toml"
        config.write_text(
            f'[provider]\nname = "ollama"\nmodel = "qwen2.5:3b"\nbase_url = "{server.url}"\n'
            '[autonomy]\nlevel = "full"\n',
            encoding="utf-8",
        )
        for text in [paste, *short]:
            result = cli(tmp_path, config, "agent", "-m", text, "--session", "s1")
            assert result.returncode == 0, result.stderr
        fresh = cli(tmp_path, config, "agent", "-m", "is the fan on?", "--session", "fresh")
        assert fresh.returncode == 0, fresh.stderr
        sizes = [len(r.body) for r in server.requests_to("/api/chat")]
    print("request sizes:", sizes)
    assert len(sizes) == 10
    assert sizes[1] > 20_000, sizes  # the paste is in the session's history
    assert sizes[8] <= 1.5 * sizes[1], f"the requests grew: {sizes}"
    assert sizes[9] < 16_000, f"a fresh session carries old history or recall: {sizes}"


def test_a_message_over_the_limit_is_refused_with_the_key_to_raise(tmp_path: Path) -> None:
    with FakeOllama() as server:
        config = tmp_path / "config.toml"
        config.write_text(
            f'[provider]\nname = "ollama"\nmodel = "qwen2.5:3b"\nbase_url = "{server.url}"\n'
            "[agent]\nmax_message_chars = 1000\n",
            encoding="utf-8",
        )
        result = cli(tmp_path, config, "agent", "-m", "w" * 1500, "--session", "s1")
        chats = server.requests_to("/api/chat")
    assert result.returncode != 0
    assert "1,500 characters" in result.stderr and "1,000" in result.stderr
    assert "max_message_chars" in result.stderr
    assert chats == []
