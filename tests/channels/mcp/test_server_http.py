"""``/mcp`` on the gateway (``[mcp] http = true``): the SDK's own Client over streamable HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import pin_level

from ..gateway.conftest import CONFIG, base_url, pair_token, running_service

mcp = pytest.importorskip("mcp")

HTTP_CONFIG = CONFIG.replace('level = "supervised"', 'level = "full"') + "[mcp]\nhttp = true\n"


async def test_mcp_over_http_needs_a_paired_token_and_switches_the_pin(
    clawseed_home: Path,
) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    provider = ScriptedProvider(streaming=True)
    async with running_service(clawseed_home, provider, HTTP_CONFIG) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        url = base_url(service) + "/mcp"
        async with httpx.AsyncClient() as http:
            anonymous = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            wrong = await http.post(
                url, json={}, headers={"Authorization": "Bearer not-a-paired-token"}
            )
            challenged = anonymous.headers.get("www-authenticate", "")
            where = challenged.partition('resource_metadata="')[2].rstrip('"')
            metadata = await http.get(where or base_url(service) + "/nowhere")
        token = await pair_token(service)
        async with httpx.AsyncClient() as http:
            # DNS rebinding: a page on another name, even with a stolen token, is refused.
            rebound = await http.post(
                url,
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers={"Authorization": f"Bearer {token}", "Host": "attacker.example"},
            )
        http2 = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with mcp.Client(streamable_http_client(url, http_client=http2)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            result = await client.call_tool("gpio_switch", {"device": "porch_light", "on": True})
        on = pin_level(gpio, "porch_light")
    assert rebound.status_code in (403, 421), rebound.text
    assert anonymous.status_code == 401 and wrong.status_code == 401
    assert anonymous.json()["error"]["code"] == "unauthorized"
    # The challenge the MCP authorization spec expects, pointing to metadata that exists.
    challenge = anonymous.headers["www-authenticate"]
    assert challenge.startswith('Bearer resource_metadata="')
    assert metadata.status_code == 200, metadata.text
    assert metadata.json()["resource"] == url
    assert metadata.json()["authorization_servers"] == []
    assert "POST /pair" in metadata.json()["clawseed_pairing"]
    assert tools["gpio_read"].annotations.read_only_hint is True
    assert not result.is_error, result.content
    assert on == 1


async def test_mcp_is_not_served_unless_turned_on(clawseed_home: Path) -> None:
    provider = ScriptedProvider(streaming=True)
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient() as http:
            response = await http.post(
                base_url(service) + "/mcp", json={}, headers={"Authorization": f"Bearer {token}"}
            )
    assert response.status_code in (404, 405)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize(
    ("action", "approve", "level"), [("accept", True, 1), ("decline", False, 0)]
)
async def test_a_client_named_as_approver_approves_by_elicitation_in_both_protocol_modes(
    clawseed_home: Path, mode: str, action: str, approve: bool, level: int
) -> None:
    import httpx2
    import mcp_types as types
    from mcp.client.streamable_http import streamable_http_client

    asked: list[str] = []

    async def elicit(ctx: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action, content={"approve": approve})

    config = HTTP_CONFIG.replace("http = true\n", 'http = true\napprovers = ["desk-host"]\n')
    config += '[[devices]]\nname = "heater"\npin = "GPIO27"\nkind = "relay"\napproval = true\n'
    async with running_service(clawseed_home, ScriptedProvider(streaming=True), config) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        token = await pair_token(service, "desk-host")
        http2 = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        transport = streamable_http_client(base_url(service) + "/mcp", http_client=http2)
        async with mcp.Client(transport, mode=mode, elicitation_callback=elicit) as client:
            version = client.protocol_version
            result = await client.call_tool("gpio_switch", {"device": "heater", "on": True})
        on = pin_level(gpio, "heater")
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert len(asked) == 1 and "heater" in asked[0]
    assert result.is_error is (not approve), result.content
    assert on == level


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_paired_client_cannot_approve_its_own_call_the_phone_does(
    clawseed_home: Path, mode: str
) -> None:
    import mcp_types as types

    asked: list[str] = []

    async def elicit(ctx: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)  # it would say yes to anything
        return types.ElicitResult(action="accept", content={"approve": True})

    async with running_service(
        clawseed_home, ScriptedProvider(streaming=True), APPROVAL_CONFIG
    ) as service:
        assert service.runtime is not None and service.hub is not None
        (gpio,) = service.runtime.peripherals
        phones: list[dict[str, Any]] = []

        def phone(frame: dict[str, Any]) -> None:  # the person on the phone says no
            phones.append(frame)
            service.hub.broker.resolve(frame["id"], False, by="phone")

        unsubscribe = service.hub.broker.subscribe("phone", phone)
        try:
            token = await pair_token(service)
            async with _client(service, token, mode=mode, elicitation_callback=elicit) as client:
                result = await client.call_tool("gpio_switch", {"device": "heater", "on": True})
        finally:
            unsubscribe()
        on = pin_level(gpio, "heater")
    assert asked == [], "the requester was not asked"
    assert [p.get("tool") for p in phones] == ["gpio_switch"]
    assert result.is_error and on == 0


APPROVAL_CONFIG = (
    HTTP_CONFIG + '[[devices]]\nname = "heater"\npin = "GPIO27"\nkind = "relay"\napproval = true\n'
)


def _client(service: Any, token: str, mode: str = "legacy", **kwargs: Any) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http2 = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(base_url(service) + "/mcp", http_client=http2)
    return mcp.Client(transport, mode=mode, **kwargs)


async def test_over_http_a_client_that_cannot_elicit_goes_to_the_broker(
    clawseed_home: Path,
) -> None:
    provider = ScriptedProvider(streaming=True)
    async with running_service(clawseed_home, provider, APPROVAL_CONFIG) as service:
        assert service.runtime is not None and service.hub is not None
        (gpio,) = service.runtime.peripherals
        phones: list[dict[str, Any]] = []

        def phone(frame: dict[str, Any]) -> None:  # a paired phone that approves
            phones.append(frame)
            service.hub.broker.resolve(frame["id"], True, by="phone")

        unsubscribe = service.hub.broker.subscribe("phone", phone)
        try:
            async with _client(service, await pair_token(service)) as client:
                result = await client.call_tool("gpio_switch", {"device": "heater", "on": True})
        finally:
            unsubscribe()
        on = pin_level(gpio, "heater")
    assert not result.is_error, result.content
    assert [p.get("tool") for p in phones] == ["gpio_switch"]
    assert on == 1


async def test_over_http_read_only_autonomy_refuses_the_switch(clawseed_home: Path) -> None:
    config = HTTP_CONFIG.replace('level = "full"', 'level = "read_only"')
    async with running_service(clawseed_home, ScriptedProvider(streaming=True), config) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        async with _client(service, await pair_token(service)) as client:
            result = await client.call_tool("gpio_switch", {"device": "porch_light", "on": True})
        on = pin_level(gpio, "porch_light")
    assert result.is_error and "read_only" in result.content[0].text
    assert on == 0


# Handshake-era subscriptions (what hosts speak today); 2026-07-28 replaces them.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_over_http_resources_are_read_and_a_subscription_is_notified(
    clawseed_home: Path,
) -> None:
    import json

    import anyio
    import mcp_types as types

    updated: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()

    async with running_service(clawseed_home, ScriptedProvider(streaming=True), HTTP_CONFIG) as svc:
        async with _client(svc, await pair_token(svc), message_handler=on_message) as client:
            uris = {str(r.uri) for r in (await client.list_resources()).resources}
            before = json.loads(
                (await client.read_resource("device://porch_light")).contents[0].text
            )
            pinout = json.loads((await client.read_resource("board://pi")).contents[0].text)
            await client.subscribe_resource("device://porch_light")
            await client.call_tool("gpio_switch", {"device": "porch_light", "on": True})
            with anyio.fail_after(30):
                await arrived.wait()
    assert {"clawseed://devices", "device://porch_light", "board://pi"} <= uris
    assert before["value"] == 0.0
    assert any(row.get("used_by", {}).get("device") == "porch_light" for row in pinout["pins"])
    assert set(updated) == {"device://porch_light"}
