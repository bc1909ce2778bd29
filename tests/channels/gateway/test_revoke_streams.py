"""``pair --revoke`` ends everything the token opened: WebSocket chats and ``/sse`` streams."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from clawseed_edge.service import control_path, control_request
from clawseed_edge.testing import ScriptedProvider

from .conftest import base_url, open_ws, pair_token, recv_until, running_service


async def test_revoking_a_token_closes_its_sse_stream_and_keeps_the_others(
    clawseed_home: Path,
) -> None:
    async with running_service(clawseed_home, ScriptedProvider()) as service:
        assert service.hub is not None
        revoked_token = await pair_token(service, "lost-phone")
        kept_token = await pair_token(service, "tablet")
        token_id = (await service.hub.pairing.authenticate(revoked_token)).id
        url = base_url(service)
        async with (
            httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {revoked_token}"}
            ) as lost,
            httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {kept_token}"}
            ) as kept,
            lost.stream("GET", "/sse") as lost_stream,
            kept.stream("GET", "/sse") as kept_stream,
        ):
            lost_lines = lost_stream.aiter_lines()
            kept_lines = kept_stream.aiter_lines()
            assert (await anext(lost_lines)).startswith(": connected")
            assert (await anext(kept_lines)).startswith(": connected")
            async with await open_ws(service, revoked_token) as ws:
                await recv_until(ws, "connected")
                answer = await control_request(
                    control_path(clawseed_home), "pair_revoke", id=token_id
                )
                closing = await recv_until(ws, "error")
            # The revoked stream ends (without the fix it kept receiving every frame).
            async with asyncio.timeout(5):
                rest = [line async for line in lost_lines]
            service.hub.publish({"type": "notice", "text": "still here"})
            async with asyncio.timeout(5):
                while "still here" not in (line := await anext(kept_lines)):
                    pass
    assert answer["revoked"] is True
    assert closing[-1]["code"] == "closing"
    assert not any(line.startswith("data: ") and "still here" in line for line in rest)
    assert "still here" in line
