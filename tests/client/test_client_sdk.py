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


APPROVAL_CONFIG_EXTRA = """
[[devices]]
name = "heater"
pin = "GPIO5"
kind = "relay"
approval = true
"""


async def test_ask_without_an_approval_handler_declines_at_once_and_says_so(
    clawseed_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.channels.gateway.conftest import CONFIG

    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="heater", on=True), "It needs approval."]
    )
    async with running_service(clawseed_home, provider, CONFIG + APPROVAL_CONFIG_EXTRA) as service:
        assert service.hub is not None
        token = await pair(base_url(service), service.hub.pairing.new_code())
        async with GatewayClient(base_url(service), token=token) as client:
            await client.connect()
            # The gateway waits 20 s for an answer ([autonomy] approval_timeout_s); the bound
            # here only keeps a regression from hanging the suite.
            answer = await asyncio.wait_for(client.ask("heater on"), 15)
    assert answer == "It needs approval."
    refusal = provider.requests[1].messages[-1].content
    assert "no approval handler" in refusal, refusal
    assert "no approval handler" in caplog.text and "heater" in caplog.text


async def test_a_blocking_sync_approval_handler_runs_off_the_event_loop(
    clawseed_home: Path,
) -> None:
    import threading

    from clawseed_edge.testing.hardware import pin_level
    from tests.channels.gateway.conftest import CONFIG

    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="heater", on=True), "Heater on."]
    )
    entered, release = threading.Event(), threading.Event()

    def blocking_approval(request: dict[str, object]) -> bool:  # like input() at a terminal
        entered.set()
        return release.wait(10)  # False if the loop was blocked and never released it

    async def release_when_asked() -> None:  # runs only while the loop is free
        await asyncio.to_thread(entered.wait, 10)
        release.set()

    async with running_service(clawseed_home, provider, CONFIG + APPROVAL_CONFIG_EXTRA) as service:
        assert service.hub is not None
        token = await pair(base_url(service), service.hub.pairing.new_code())
        async with GatewayClient(base_url(service), token=token) as client:
            await client.connect()
            releaser = asyncio.create_task(release_when_asked())
            answer = await asyncio.wait_for(
                client.ask("heater on", on_approval=blocking_approval), 15
            )
            await releaser
            level = pin_level(service.runtime.peripherals[0], "heater")  # type: ignore[union-attr]
    assert answer == "Heater on."
    assert level == 1


async def test_a_drop_during_the_turn_raises_turn_lost(clawseed_home: Path) -> None:
    from clawseed_edge.client import TurnLost

    provider = ScriptedProvider(["Too late."], delay_s=1.0)
    async with running_service(clawseed_home, provider) as service:
        assert service.hub is not None
        token = await pair(base_url(service), service.hub.pairing.new_code())
        async with GatewayClient(base_url(service), token=token, backoff_s=(0.01, 0.05)) as client:
            await client.connect()
            session = client.session_id
            asking = asyncio.create_task(client.ask("slow question"))
            await asyncio.sleep(0.2)
            await client.drop_connection()
            with pytest.raises(TurnLost) as lost:
                await asyncio.wait_for(asking, 15)
    assert lost.value.session_id == session
    assert "dropped during the turn" in str(lost.value)
