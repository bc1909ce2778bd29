"""Remote tools over real sockets: registered by the client SDK, called by the agent, timed out,
and removed from both registries when the client leaves."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx

from clawseed_edge.client import GatewayClient
from clawseed_edge.testing import ScriptedProvider

from .conftest import base_url, open_ws, pair_token, recv, recv_until, running_service


async def _tool_names(service, token: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    async with httpx.AsyncClient(base_url=base_url(service)) as http:
        body = (await http.get("/api/tools", headers={"Authorization": f"Bearer {token}"})).json()
    return {t["name"]: t["source"] for t in body["tools"]}


async def test_a_tool_registered_by_the_sdk_is_called_by_the_agent(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add(ScriptedProvider.call("phone_battery", unit="percent"), "Your phone is at 87%.")
    seen: list[dict[str, object]] = []
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with GatewayClient(base_url(service), token=token) as client:

            @client.tool(
                "phone_battery",
                "Battery level of the phone",
                {"type": "object", "properties": {"unit": {"type": "string"}}},
            )
            async def battery(arguments: dict[str, object]) -> str:
                seen.append(dict(arguments))
                return "87"

            await client.connect()
            assert client.registered == ["phone_battery"]
            answer = await client.ask("how is my battery?")
            sources = await _tool_names(service, token)
    assert answer == "Your phone is at 87%."
    assert seen == [{"unit": "percent"}]
    assert sources["phone_battery"].startswith("remote:")
    tool_message = provider.requests[1].messages[-1]
    assert tool_message.role == "tool" and "87" in tool_message.content


async def test_a_remote_tool_that_never_answers_fails_with_a_clear_message(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add(ScriptedProvider.call("phone_camera"), "The camera did not answer.")
    async with running_service(clawseed_home, provider, remote_timeout_s=0.2) as service:
        token = await pair_token(service)
        async with await open_ws(service, token) as ws:
            await recv_until(ws, "connected")
            await ws.send(
                json.dumps(
                    {
                        "type": "register_tools",
                        "tools": [
                            {
                                "name": "phone_camera",
                                "description": "take a photo",
                                "parameters": "{}",
                                "risk": "read",
                            }
                        ],
                    }
                )
            )
            registered = await recv(ws)
            await ws.send(json.dumps({"type": "message", "content": "take a photo"}))
            frames = await recv_until(ws, "done")  # the request is never answered
    assert registered == {"type": "tools_registered", "count": 1, "registered": ["phone_camera"]}
    request = next(f for f in frames if f["type"] == "tool_call_request")
    assert request["name"] == "phone_camera" and request["id"]
    result = next(f for f in frames if f["type"] == "tool_result")
    assert result["success"] is False
    assert "did not answer within 0.2 s" in result["error"]
    assert "test-phone" in result["error"], "names the client"


async def test_disconnect_removes_remote_tools_from_the_registry_and_listing(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    async with running_service(clawseed_home, provider) as service:
        assert service.hub is not None
        hub = service.hub
        token = await pair_token(service)
        async with await open_ws(service, token) as ws:
            session = (await recv(ws))["sessionId"]
            await recv(ws)
            await ws.send(
                json.dumps(
                    {
                        "type": "register_tools",
                        "tools": [{"name": "phone_light", "description": "flashlight"}],
                    }
                )
            )
            await recv(ws)
            connection = hub.connections[session]
            agent = connection.agent
            # The connection's own registry only: another session may offer the same names.
            assert "phone_light" not in hub.registry and "phone_light" in agent.registry
            assert (await _tool_names(service, token))["phone_light"] == f"remote:{session}"
        await connection._done.wait()  # the server noticed the close and cleaned up
        assert "phone_light" not in agent.registry
        assert session not in hub.connections
        assert "phone_light" not in await _tool_names(service, token)


async def test_read_only_refuses_an_act_class_remote_tool(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    from .conftest import CONFIG

    provider.add(ScriptedProvider.call("phone_unlock"), "I may not.")
    config = CONFIG.replace('level = "supervised"', 'level = "read_only"')
    async with running_service(clawseed_home, provider, config) as service:
        token = await pair_token(service)
        async with await open_ws(service, token) as ws:
            await recv_until(ws, "connected")
            await ws.send(
                json.dumps(
                    {
                        "type": "register_tools",
                        "tools": [
                            {
                                "name": "phone_unlock",
                                "description": "unlock the door",
                                "risk": "act",
                            }
                        ],
                    }
                )
            )
            await recv(ws)
            await ws.send(json.dumps({"type": "message", "content": "unlock"}))
            frames = await recv_until(ws, "done")
    assert not any(f["type"] == "tool_call_request" for f in frames), "never sent to the phone"
    result = next(f for f in frames if f["type"] == "tool_result")
    assert "read_only" in result["error"]


async def test_a_tool_name_taken_by_a_builtin_is_rejected_by_name(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with await open_ws(service, token) as ws:
            await recv_until(ws, "connected")
            await ws.send(
                json.dumps(
                    {
                        "type": "register_tools",
                        "tools": [{"name": "gpio_switch"}, {"name": "phone_ok"}],
                    }
                )
            )
            registered = await recv(ws)
            error = await recv(ws)
    assert registered["registered"] == ["phone_ok"]
    assert registered["rejected"][0]["name"] == "gpio_switch"
    assert error["code"] == "tools_rejected"


async def test_too_many_tools_are_refused(clawseed_home: Path, provider: ScriptedProvider) -> None:
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with await open_ws(service, token) as ws:
            await recv_until(ws, "connected")
            tools = [{"name": f"t{i}"} for i in range(33)]
            await ws.send(json.dumps({"type": "register_tools", "tools": tools}))
            error = await asyncio.wait_for(recv(ws), 10)
    assert error["code"] == "too_many_tools" and "32" in error["message"]
