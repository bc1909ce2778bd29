"""The [provider] config section: defaults per provider, validation, API keys."""

from __future__ import annotations

import tomllib

import msgspec
import pytest

from clawseed_edge.api import ProviderAuthFailed
from clawseed_edge.providers import ProviderConfig

ISSUE_EXAMPLE = """
[provider]
name = "ollama"
model = "qwen2.5:3b"
base_url = "http://127.0.0.1:11434"
api_key_env = "ANTHROPIC_API_KEY"
timeout_s = 120
[[provider.fallbacks]]
name = "anthropic"
model = "claude-sonnet-4-5"
"""


def parse(text: str) -> ProviderConfig:
    return msgspec.convert(tomllib.loads(text)["provider"], ProviderConfig)


def test_the_issue_example_parses() -> None:
    config = parse(ISSUE_EXAMPLE)
    assert config.timeout_s == 120.0
    assert config.fallbacks[0].name == "anthropic"
    assert config.fallbacks[0].api_key_env == "ANTHROPIC_API_KEY"


def test_defaults_per_provider() -> None:
    assert ProviderConfig().model == "qwen2.5:3b"
    assert ProviderConfig().base_url == "http://127.0.0.1:11434"
    anthropic = ProviderConfig(name="claude")
    assert anthropic.model == "claude-sonnet-4-6" and anthropic.api_key_env == "ANTHROPIC_API_KEY"
    assert ProviderConfig(name="groq").api_key_env == "GROQ_API_KEY"
    assert ProviderConfig(name="lmstudio").base_url == "http://127.0.0.1:1234/v1"
    assert ProviderConfig(name="my-plugin").model is None


def test_written_values_win_over_defaults() -> None:
    config = ProviderConfig(name="anthropic", model="claude-haiku-4-5", api_key_env="K")
    assert (config.model, config.api_key_env) == ("claude-haiku-4-5", "K")


def test_unknown_keys_are_refused_with_their_name() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"tiemout_s"):
        parse("[provider]\ntiemout_s = 3\n")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[provider]\ntimeout_s = 0\n", "timeout_s must be > 0"),
        ("[provider]\nmax_retries = -1\n", "max_retries must be >= 0"),
        ("[provider]\nmax_retries = 1000000\n", r"max_retries must be in 0\.\.10, got 1000000"),
        ("[provider]\ntimeout_s = nan\n", "timeout_s must be > 0"),
        ("[provider]\ndeadline_s = 0\n", "deadline_s must be in"),
        ("[provider]\ndeadline_s = inf\n", "deadline_s must be in"),
        ("[provider]\nmax_response_bytes = 10\n", "max_response_bytes must be in"),
        ('[provider]\ntool_mode = "tools"\n', "tool_mode"),
        ('[[provider.routes]]\nmodel = "x"\n', "needs hint, keywords or images"),
        ('[[provider.routes]]\nhint = "fast"\n', "needs model or provider"),
    ],
)
def test_bad_values_name_the_problem(text: str, match: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=match):
        parse(text)


def test_limits_have_sane_defaults() -> None:
    config = ProviderConfig()
    assert config.max_retries <= 10 and 0 < config.deadline_s <= 3600
    assert config.max_response_bytes == 8 * 1024 * 1024 and config.tool_mode == "auto"


def test_api_key_from_config_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ProviderConfig(name="openai", api_key="inline").resolve_api_key() == "inline"
    monkeypatch.setenv("OPENAI_API_KEY", " from-env ")
    assert ProviderConfig(name="openai").resolve_api_key() == "from-env"
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ProviderAuthFailed, match=r"^no API key: set OPENAI_API_KEY"):
        ProviderConfig(name="openai").resolve_api_key()
    assert ProviderConfig(name="openai").resolve_api_key(required=False) is None
