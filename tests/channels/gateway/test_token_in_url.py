"""``?token=`` is for WebSockets only: on HTTP a token in a URL ends in proxy logs."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import websockets

from clawseed_edge.testing import ScriptedProvider

from .conftest import base_url, pair_token, running_service


async def test_a_token_in_the_query_is_refused_on_http_and_accepted_on_websockets(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        url = base_url(service)
        async with httpx.AsyncClient(base_url=url) as http:
            refused = {
                path: await http.get(path, params={"token": token})
                for path in ("/api/sessions", "/api/peripherals", "/ready")
            }
            sse = await http.get("/sse", params={"token": token})
            by_header = await http.get(
                "/api/sessions", headers={"Authorization": f"Bearer {token}"}
            )
        ws_url = url.replace("http://", "ws://") + f"/ws/chat?token={token}"
        async with websockets.connect(ws_url) as ws:
            hello = json.loads(await ws.recv())
    for path, response in refused.items():
        assert response.status_code == 400, path
        assert response.json()["error"]["code"] == "token_in_url", path
        assert token not in response.text
    assert sse.status_code == 400
    assert by_header.status_code == 200
    assert hello["type"] != "error", hello
