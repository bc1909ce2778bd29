"""Command-line overrides (--provider, --model, --autonomy) keep the rest of the config."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from clawseed_edge.cli.common import load_from_args

CONFIG = """
[provider]
name = "ollama"
model = "llama3.2:1b"
base_url = "http://10.0.0.5:11434"
[[provider.fallbacks]]
name = "anthropic"
"""


def args(path: Path, **kw: object) -> argparse.Namespace:
    base: dict[str, object] = {"config": str(path), "provider": None, "model": None}
    base.update(kw)
    return argparse.Namespace(**base)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def test_provider_naming_the_configured_one_keeps_its_settings(config: Path) -> None:
    provider = load_from_args(args(config, provider="ollama")).config.provider
    assert provider.model == "llama3.2:1b"
    assert provider.base_url == "http://10.0.0.5:11434"
    assert [f.name for f in provider.fallbacks] == ["anthropic"]


def test_provider_keeps_env_overrides(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAWSEED__PROVIDER__TIMEOUT_S", "7")
    monkeypatch.setenv("CLAWSEED__PROVIDER__MODEL", "qwen2.5:0.5b")
    provider = load_from_args(args(config, provider="ollama")).config.provider
    assert provider.timeout_s == 7.0
    assert provider.model == "qwen2.5:0.5b"


def test_another_provider_gets_its_own_defaults_and_keeps_fallbacks(config: Path) -> None:
    provider = load_from_args(args(config, provider="anthropic")).config.provider
    assert provider.name == "anthropic"
    assert provider.model == "claude-sonnet-4-6"  # not the ollama model of the file
    assert provider.base_url is None
    assert [f.name for f in provider.fallbacks] == ["anthropic"]


def test_model_override_applies_on_top(config: Path) -> None:
    provider = load_from_args(args(config, provider="anthropic", model="m1")).config.provider
    assert (provider.name, provider.model) == ("anthropic", "m1")
