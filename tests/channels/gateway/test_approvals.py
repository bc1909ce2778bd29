"""Approvals go to people: a button-triggered turn in ``run`` asks the connected phone."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import ChatRequest, ChatResponse
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import mock_pin, pin_level

from .conftest import open_ws, pair_token, recv, recv_until, running_service


class SignallingProvider(ScriptedProvider):
    """Sets ``answered`` when the request after the tool call arrives (the call has run)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answered = asyncio.Event()

    async def chat(self, request: ChatRequest) -> ChatResponse:
        if len(self.requests) == 1:
            self.answered.set()
        return await super().chat(request)


@pytest.mark.parametrize("approved", [True, False])
async def test_a_doorbell_turn_asks_the_phone_and_its_answer_decides(
    clawseed_home: Path, approved: bool
) -> None:
    provider = SignallingProvider(
        [ScriptedProvider.call("gpio_switch", device="porch_light", on=True), "Done."]
    )
    async with running_service(clawseed_home, provider) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        token = await pair_token(service)
        async with await open_ws(service, token, "approvals=1") as ws:
            await recv_until(ws, "connected")
            mock_pin(gpio, "doorbell").drive_low()  # pressed (the button pulls up)
            request = await recv(ws)
            assert pin_level(gpio, "porch_light") == 0, "nothing switched before the answer"
            await ws.send(
                json.dumps({"type": "approval_response", "id": request["id"], "approved": approved})
            )
            await provider.answered.wait()
            level = pin_level(gpio, "porch_light")
    assert request["type"] == "approval_request"
    assert request["tool"] == "gpio_switch"
    assert request["device"] == "porch_light"
    assert request["value"] == 1.0
    assert "switch porch_light" in request["action"]
    assert provider.requests[0].messages[-1].content.endswith("the doorbell button was pressed")
    tool_message = provider.requests[1].messages[-1].content
    if approved:
        assert level == 1
        assert "porch_light" in tool_message and "Error" not in tool_message
    else:
        assert level == 0
        assert "refused" in tool_message


async def test_with_no_client_connected_the_approval_is_refused_at_once(
    clawseed_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    provider = SignallingProvider(
        [ScriptedProvider.call("gpio_switch", device="porch_light", on=True), "Could not."]
    )
    async with running_service(clawseed_home, provider) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        mock_pin(gpio, "doorbell").drive_low()
        await provider.answered.wait()
        level = pin_level(gpio, "porch_light")
    assert level == 0
    told = provider.requests[1].messages[-1].content
    assert "no paired client is connected" in told
    assert "no one was asked to approve" in told and "was refused" not in told  # no one said no
    assert any(
        "approval of" in r.getMessage() and "refused" in r.getMessage() for r in caplog.records
    )


async def test_the_first_answer_wins_and_a_late_one_is_told(clawseed_home: Path) -> None:
    provider = SignallingProvider(
        [ScriptedProvider.call("gpio_switch", device="porch_light", on=True), "Done."]
    )
    async with running_service(clawseed_home, provider) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        token = await pair_token(service)
        async with (
            await open_ws(service, token, "approvals=1") as phone,
            await open_ws(service, token, "approvals=1") as tab,
        ):
            await recv_until(phone, "connected")
            await recv_until(tab, "connected")
            mock_pin(gpio, "doorbell").drive_low()
            first = await recv(phone)
            second = await recv(tab)
            assert first["id"] == second["id"]
            await phone.send(
                json.dumps({"type": "approval_response", "id": first["id"], "approved": True})
            )
            await provider.answered.wait()
            await tab.send(
                json.dumps({"type": "approval_response", "id": first["id"], "approved": False})
            )
            late = await recv_until(tab, "error")
            level = pin_level(gpio, "porch_light")
    assert level == 1
    # Every socket that was shown the request is told it was resolved (the tab hides it).
    assert {"type": "approval_resolved", "id": first["id"], "outcome": "approved"} in late
    assert late[-1]["code"] == "approval_unknown"


async def test_clients_that_cannot_answer_are_not_waited_for(clawseed_home: Path) -> None:
    # A display on the socket and a dashboard on /sse, both saying ?approvals=0: they are shown
    # the request, but the approval is refused at once instead of after approval_timeout_s.
    import httpx

    from .conftest import base_url

    provider = SignallingProvider(
        [ScriptedProvider.call("gpio_switch", device="porch_light", on=True), "Could not."]
    )
    async with running_service(clawseed_home, provider) as service:
        assert service.runtime is not None and service.hub is not None
        (gpio,) = service.runtime.peripherals
        token = await pair_token(service)
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            await open_ws(service, token, "approvals=0") as ws,
            httpx.AsyncClient(base_url=base_url(service), headers=headers) as http,
            http.stream("GET", "/sse?approvals=0") as sse,
        ):
            await recv_until(ws, "connected")
            assert (await anext(sse.aiter_lines())).startswith(": connected")
            mock_pin(gpio, "doorbell").drive_low()
            await asyncio.wait_for(provider.answered.wait(), 10)  # not after 20 s
            answerers = service.hub.broker.answerers
        level = pin_level(gpio, "porch_light")
    assert answerers == 0 and level == 0
    assert "no paired client is connected" in provider.requests[1].messages[-1].content
