"""``clawseed_edge.testing.gateway``: a user's client test, as the module docstring writes it."""

from __future__ import annotations

from pathlib import Path

from clawseed_edge.client import GatewayClient
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.gateway import running_gateway


async def test_a_users_client_chats_with_a_test_gateway(tmp_path: Path) -> None:
    provider = ScriptedProvider(["Hello from the device."])
    async with running_gateway(tmp_path, provider) as gateway:
        token = await gateway.pair("my-app")
        assert gateway.ws_url.startswith("ws://127.0.0.1:")
        async with GatewayClient(gateway.url, token=token) as client:
            await client.connect()
            answer = await client.ask("hello?")
    assert answer == "Hello from the device."
