"""``/mcp`` on the gateway (``[mcp] http = true``): the SDK's own Client over streamable HTTP."""

from __future__ import annotations

from pathlib import Path

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
        token = await pair_token(service)
        http2 = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with mcp.Client(streamable_http_client(url, http_client=http2)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            result = await client.call_tool("gpio_switch", {"device": "porch_light", "on": True})
        on = pin_level(gpio, "porch_light")
    assert anonymous.status_code == 401 and wrong.status_code == 401
    assert anonymous.json()["error"]["code"] == "unauthorized"
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


@pytest.mark.parametrize(("approve", "level"), [(True, 1), (False, 0)])
async def test_an_approval_device_asks_an_http_client_by_elicitation(
    clawseed_home: Path, approve: bool, level: int
) -> None:
    import httpx2
    import mcp_types as types
    from mcp.client.streamable_http import streamable_http_client

    asked: list[str] = []

    async def elicit(ctx: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": approve})

    config = HTTP_CONFIG + '[[devices]]\nname = "heater"\npin = "GPIO27"\nkind = "relay"\n'
    config += "approval = true\n"
    async with running_service(clawseed_home, ScriptedProvider(streaming=True), config) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        token = await pair_token(service)
        http2 = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        transport = streamable_http_client(base_url(service) + "/mcp", http_client=http2)
        async with mcp.Client(transport, mode="legacy", elicitation_callback=elicit) as client:
            result = await client.call_tool("gpio_switch", {"device": "heater", "on": True})
        on = pin_level(gpio, "heater")
    assert len(asked) == 1 and "heater" in asked[0]
    assert result.is_error is (not approve), result.content
    assert on == level
