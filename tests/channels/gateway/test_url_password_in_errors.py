"""Issue 35 item 6: the provider's base_url password is hidden on every error surface.

The provider is the real OpenAI-compatible one (and an Ollama fallback) pointed at closed
loopback ports with a password in each URL: the CLI's ``error:`` line, ``no provider could
answer``, the webhook's error JSON and the WebSocket's error frame must not show either
password. One function does it (``clawseed_edge.api.redact_url``), where each message is made.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest

from clawseed_edge.api import ErrorEvent, ProviderUnreachable, redact_url
from clawseed_edge.cli.main import main
from clawseed_edge.config.assembly import build_provider
from clawseed_edge.config.file import load_config

from .conftest import CONFIG, base_url, open_ws, pair_token, recv_until, running_service

PRIMARY_PW = "OpenaiPW-67"
FALLBACK_PW = "OllamaPW-68"


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _provider_table() -> str:
    return (
        f'[provider]\nname = "openai-compatible"\nmodel = "x"\nmax_retries = 0\n'
        f'base_url = "http://admin:{PRIMARY_PW}@127.0.0.1:{_closed_port()}/v1"\n'
        f'[[provider.fallbacks]]\nname = "ollama"\nmax_retries = 0\n'
        f'base_url = "http://u:{FALLBACK_PW}@127.0.0.1:{_closed_port()}"\n'
    )


def _assert_hidden(text: str) -> None:
    assert PRIMARY_PW not in text and FALLBACK_PW not in text, text
    assert "***@127.0.0.1" in text, text  # the server is still named


def test_the_one_rule() -> None:
    assert (
        redact_url("http://a:b@h/x and https://c:d@e:1") == "http://a:***@h/x and https://c:***@e:1"
    )
    assert redact_url("http://127.0.0.1:9/v1") == "http://127.0.0.1:9/v1"
    assert str(ProviderUnreachable(f"at http://x:{PRIMARY_PW}@127.0.0.1:9")) == (
        "at http://x:***@127.0.0.1:9"
    )
    assert ErrorEvent(f"at http://x:{PRIMARY_PW}@h/").message == "at http://x:***@h/"


def test_cli_error_and_no_provider_could_answer(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = clawseed_home / "config.toml"
    config.write_text(_provider_table())
    capsys.readouterr()
    assert main(["--config", str(config), "agent", "-m", "hi"]) == 1
    err = capsys.readouterr().err
    assert "no provider could answer" in err
    _assert_hidden(err)


async def test_webhook_json_and_websocket_frame(clawseed_home: Path) -> None:
    text = CONFIG.replace('[provider]\nname = "demo"\n', _provider_table())
    (clawseed_home / "config.toml").write_text(text)
    provider = build_provider(load_config(clawseed_home / "config.toml"))
    async with running_service(clawseed_home, provider, text) as service:
        token = await pair_token(service)
        auth = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=base_url(service), headers=auth) as http:
            hook = await http.post("/webhook", json={"message": "ping"})
        async with await open_ws(service, token) as ws:
            await ws.send(json.dumps({"type": "message", "content": "hi"}))
            frames = await recv_until(ws, "error")
    assert hook.status_code == 502
    _assert_hidden(hook.json()["error"]["message"])
    _assert_hidden(hook.text)
    _assert_hidden(frames[-1]["message"])
    _assert_hidden(json.dumps(frames))
