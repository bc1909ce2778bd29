"""The Python client SDK against a real gateway: pairing errors, approvals, reconnect + resume."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawseed_edge.client import (
    ClientConnectionError,
    GatewayClient,
    PairingFailed,
    TurnFailed,
    pair,
)
from clawseed_edge.testing import ScriptedProvider
from tests.channels.gateway.conftest import base_url, running_service


async def test_pair_with_a_wrong_code_raises_with_the_gateways_reason(clawseed_home: Path) -> None:
    async with running_service(clawseed_home, ScriptedProvider()) as service:
        assert service.hub is not None
        code = service.hub.pairing.new_code()
        with pytest.raises(PairingFailed, match="tries left"):
            await pair(base_url(service), "999999" if code != "999999" else "000000")
        token = await pair(base_url(service), code, name="laptop")
        with pytest.raises(ClientConnectionError, match="unknown or revoked token"):
            await GatewayClient(base_url(service), token=token + "x", reconnect=False).connect()
    assert token.startswith("cst_")


async def test_the_client_reconnects_and_resumes_its_session(clawseed_home: Path) -> None:
    provider = ScriptedProvider(["One.", "Two."])
    async with running_service(clawseed_home, provider) as service:
        assert service.hub is not None
        token = await pair(base_url(service), service.hub.pairing.new_code())
        async with GatewayClient(base_url(service), token=token, backoff_s=(0.01, 0.05)) as client:
            client.add_tool("phone_ping", lambda arguments: "pong")
            first = await client.connect()
            assert await client.ask("first") == "One."
            session = client.session_id
            await client.drop_connection()
            await client.next_event("reconnected")
            resumed = client.session
            assert await client.ask("second") == "Two."
            tools = set(service.hub.connections[session].remote_names)
    assert first["resumed"] is False
    assert resumed["sessionId"] == session and resumed["resumed"] is True
    assert client.connections == 2
    assert tools == {"phone_ping"}, "tools registered again on reconnect"
    assert any(m.content == "One." for m in provider.requests[-1].messages)


async def test_on_approval_answers_and_a_failed_turn_raises(clawseed_home: Path) -> None:
    from tests.channels.gateway.conftest import CONFIG

    provider = ScriptedProvider(
        [
            ScriptedProvider.call("gpio_switch", device="porch_light", on=True),
            "Switched.",
            ScriptedProvider.call("phone_fail"),
            RuntimeError("model broke"),
        ]
    )
    asked: list[dict[str, object]] = []

    def approve(frame: dict[str, object]) -> bool:
        asked.append(frame)
        return True

    async with running_service(clawseed_home, provider, CONFIG) as service:
        assert service.hub is not None
        token = await pair(base_url(service), service.hub.pairing.new_code())
        async with GatewayClient(base_url(service), token=token, on_approval=approve) as client:

            @client.tool("phone_fail")
            def failing(arguments: object) -> str:
                raise OSError("no camera")

            await client.connect()
            answer = await client.ask("porch light on")
            with pytest.raises(TurnFailed) as failed:
                await client.ask("take a photo")
    assert answer == "Switched."
    assert asked and asked[0]["device"] == "porch_light"
    assert "model broke" in str(failed.value)
    tool_message = provider.requests[3].messages[-1].content
    assert "OSError: no camera" in tool_message


async def test_events_stream_every_frame_in_order(clawseed_home: Path) -> None:
    provider = ScriptedProvider(["Streamed reply."], streaming=True)
    async with running_service(clawseed_home, provider) as service:
        assert service.hub is not None
        token = await pair(base_url(service), service.hub.pairing.new_code())
        async with GatewayClient(base_url(service), token=token) as client:
            await client.connect()
            await client.send("hello")
            kinds = []
            async for frame in client.events():
                kinds.append(frame["type"])
                if frame["type"] == "done":
                    break
            await asyncio.sleep(0)
    assert kinds[0] == "connected" and kinds[-1] == "done" and "chunk" in kinds
