"""``GET /api/config`` hides every spelling of a secret; deep TOML is a clear 400, not a 500."""

from __future__ import annotations

import tomllib
from pathlib import Path

import httpx

from clawseed_edge.testing import ScriptedProvider

from .conftest import CONFIG, base_url, pair_token, running_service

KEY = "sk-ant-api03-verysecretvalue1234"
FALLBACK_KEY = "sk-proj-fallbacksecretvalue99887766"
PASSWORD = "hunter2password"

# Dotted keys, a multi-line string, a quoted key, an inline table in a list, a URL password.
PROVIDER = f'''provider.name = "demo"
provider."api_key" = """
{KEY}"""
provider.base_url = "http://me:{PASSWORD}@127.0.0.1:9/v1"
provider.fallbacks = [{{ name = "openai", 'api_key' = '{FALLBACK_KEY}' }}]
'''


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_every_spelling_of_a_secret_is_redacted_in_the_file_text(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    config = CONFIG.replace('[provider]\nname = "demo"\n', PROVIDER)
    assert config != CONFIG
    async with running_service(clawseed_home, provider, config) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            read = await http.get("/api/config")
            again = await http.put("/api/config", json={"toml": read.json()["toml"]})
    assert read.status_code == 200
    for secret in (KEY, FALLBACK_KEY, PASSWORD, "verysecret", "fallbacksecret", "hunter2"):
        assert secret not in read.text, secret
    shown = tomllib.loads(read.json()["toml"])
    assert shown["provider"]["api_key"] == "***"
    assert shown["provider"]["fallbacks"][0]["api_key"] == "***"
    assert shown["provider"]["base_url"] == "http://me:***@127.0.0.1:9/v1"
    assert shown["gateway"]["max_body_bytes"] == 4096, "the rest of the file is kept"
    assert read.json()["config"]["provider"]["base_url"] == "http://me:***@127.0.0.1:9/v1"
    assert again.json()["error"]["code"] == "config_redacted_value"
    assert KEY in (clawseed_home / "config.toml").read_text(), "the file was not touched"


async def test_deeply_nested_toml_is_a_clear_400(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            deep = await http.put("/api/config", json={"toml": "x = " + "[" * 1000})
            health = await http.get("/health")
    assert deep.status_code == 400
    assert deep.json()["error"]["code"] == "config_invalid"
    assert "nested 1000 deep" in deep.json()["error"]["message"]
    assert health.status_code == 200


async def test_mcp_server_env_and_token_args_are_redacted(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    """Issue 35 item 7: ``[[mcp.servers]]`` env values and ``--token`` arguments."""
    hass, arg = "hass-long-lived-7f3a9c", "argtoken-55c1e2d0"
    mcp = (
        f'[[mcp.servers]]\nname = "hass"\ncommand = "/nonexistent/mcp-hass"\n'
        f'args = ["--token", "{arg}"]\nenv = {{ HASS = "{hass}" }}\n'
    )
    async with running_service(clawseed_home, provider, CONFIG + mcp) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            read = await http.get("/api/config")
    assert read.status_code == 200
    assert hass not in read.text and arg not in read.text
    for shown in (read.json()["config"], tomllib.loads(read.json()["toml"])):
        server = shown["mcp"]["servers"][0]
        assert server["env"] == {"HASS": "***"}
        assert server["args"] == ["--token", "***"]
