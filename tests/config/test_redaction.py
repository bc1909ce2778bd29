"""Redacting a parsed config document: every way TOML can spell a key, and value shapes."""

from __future__ import annotations

import tomllib

import pytest

from clawseed_edge.agent.redact import Scrubber
from clawseed_edge.config.redaction import REDACTED, is_secret_key, redact_document
from clawseed_edge.config.toml_text import dumps

SECRET = "sk-ant-api03-verysecretvalue1234"

#: Each variant hides one secret; the test checks that no part of it survives.
VARIANTS = {
    "plain key": f'[provider]\napi_key = "{SECRET}"\n',
    "dotted key": f'provider.api_key = "{SECRET}"\n',
    "inline table": f'provider = {{ name = "anthropic", api_key = "{SECRET}" }}\n',
    "quoted key": f'[provider]\n"api_key" = "{SECRET}"\n',
    "literal quoted key": f"[provider]\n'api_key' = '{SECRET}'\n",
    "multi-line string": f'[provider]\napi_key = """\n{SECRET}\n"""\n',
    "multi-line literal": f"[provider]\napi_key = '''{SECRET}'''\n",
    "fallback table": f'[[provider.fallbacks]]\nname = "openai"\napi_key = "{SECRET}"\n',
    "fallback inline": f'[provider]\nfallbacks = [{{ name = "x", api_key = "{SECRET}" }}]\n',
    "password key": f'[mqtt]\npassword = "{SECRET}"\n',
    "token under another key": f'[hooks.options]\nnote = "{SECRET}"\n',
    "bearer header": f'[tools.http]\nheaders = {{ Authorization = "Bearer {SECRET}" }}\n',
    "secret table": f'[tokens]\nphone = "{SECRET}"\n',
    "secret list": f'[provider]\napi_keys = ["{SECRET}"]\n',
    "private key name": f'[tls]\nprivate_key = "{SECRET}"\n',
}


@pytest.mark.parametrize("text", VARIANTS.values(), ids=VARIANTS.keys())
def test_every_spelling_of_a_secret_is_hidden(text: str) -> None:
    rendered = dumps(redact_document(tomllib.loads(text)))
    assert SECRET not in rendered
    assert "verysecret" not in rendered
    assert REDACTED in rendered
    tomllib.loads(rendered)  # still a TOML document


def test_a_password_inside_a_url_is_hidden_and_the_rest_kept() -> None:
    doc = {"provider": {"base_url": "http://user:hunter2word@127.0.0.1:11434/v1"}}
    out = redact_document(doc)
    assert out["provider"]["base_url"] == f"http://user:{REDACTED}@127.0.0.1:11434/v1"
    raw_at = {"provider": {"base_url": "https://me:p@ss@host/x"}}
    assert "ss@host" not in str(redact_document(raw_at)).replace(f"{REDACTED}@host", "")


def test_configured_secret_values_are_hidden_wherever_they_are() -> None:
    scrubber = Scrubber(["plain-but-configured-value"])
    out = redact_document({"hooks": [{"options": {"x": "plain-but-configured-value"}}]}, scrubber)
    assert out == {"hooks": [{"options": {"x": REDACTED}}]}


def test_plain_values_and_variable_names_are_kept() -> None:
    doc = {
        "provider": {"name": "ollama", "api_key_env": "ANTHROPIC_API_KEY", "max_tokens": 512},
        "gateway": {"host": "127.0.0.1", "port": 42617},
        "devices": [{"name": "fan", "pin": "GPIO18"}],
        "agent": {"token_budget": 4000, "url": "https://example.com/path"},
    }
    assert redact_document(doc) == doc


def test_secret_key_names() -> None:
    for key in ("api_key", "apikey", "API_KEY", "token", "bot_token", "secret", "password"):
        assert is_secret_key(key), key
    for key in ("api_key_env", "bot_token_env", "name", "monkey", "turkey"):
        assert not is_secret_key(key), key


def test_depth_is_bounded() -> None:
    deep: dict[str, object] = {"a": "x"}
    for _ in range(200):
        deep = {"n": deep}
    out = redact_document(deep)
    node = out
    for _ in range(40):
        if not isinstance(node, dict):
            break
        node = node["n"]
    assert node == REDACTED
