"""Agent.aclose runs registered resource closers once, last first, despite failures."""

from __future__ import annotations

import pytest

from clawseed_edge.agent import AgentBuilder, StaticApprover
from clawseed_edge.testing import ScriptedProvider


async def test_closers_run_once_in_reverse_order_even_if_one_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = AgentBuilder().provider(ScriptedProvider([])).approver(StaticApprover(True)).build()
    order: list[str] = []

    async def first() -> None:
        order.append("memory")

    async def broken() -> None:
        order.append("broken")
        raise OSError("disk gone")

    async def last() -> None:
        order.append("peripherals")

    for closer in (first, broken, last):
        agent.on_close(closer)
    await agent.aclose()
    await agent.aclose()
    assert order == ["peripherals", "broken", "memory"]
    assert "a resource closer failed" in caplog.text
