"""Conversations: every connection's agent is built from the service's assembled parts, once,
with the service's one SecurityPolicy; a client's own tools are trusted only in its session."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import Channel
from clawseed_edge.testing import ScriptedProvider

from .gateway.conftest import CONFIG, open_ws, pair_token, recv_until, running_service

# Full autonomy (no approvals in the way) and a porch light that may switch once a minute.
LIMITED = CONFIG.replace('[autonomy]\nlevel = "supervised"', '[autonomy]\nlevel = "full"').replace(
    'kind = "led"\n', 'kind = "led"\nmax_switches_per_minute = 1\n', 1
)


async def _switch(ws: Any, on: bool) -> dict[str, Any]:
    await ws.send(json.dumps({"type": "message", "content": f"light {'on' if on else 'off'}"}))
    frames = await recv_until(ws, "done")
    return next(f for f in frames if f["type"] == "tool_result")


async def test_conversation_agents_share_the_assembled_parts_and_not_the_registry(
    clawseed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import clawseed_edge.config.assembly as assemble_module

    async with running_service(clawseed_home, ScriptedProvider()) as service:
        assert service.runtime is not None and service.hub is not None
        # From here on nothing may assemble again: a connection builds from the parts.
        monkeypatch.setattr(assemble_module, "build_policy", _refuse_to_assemble)
        token = await pair_token(service)
        async with (
            await open_ws(service, token, "session_id=a") as a,
            await open_ws(service, token, "session_id=b") as b,
        ):
            await recv_until(a, "connected")
            await recv_until(b, "connected")
            one, two = service.hub.conversations.of_channel("gateway")
        shared = service.runtime.agent
        channels = list(service.channels)
        for _ in range(500):  # the server notices the closed sockets a moment later
            if not service.hub.conversations.all():
                break
            await asyncio.sleep(0.01)
        left = service.hub.conversations.all()
    for conversation in (one, two):
        agent = conversation.agent
        assert agent.hooks is shared.hooks and agent.hooks.policy is shared.hooks.policy
        assert agent.provider is shared.provider and agent.memory is shared.memory
        assert agent.prompt_builder is shared.prompt_builder
        assert agent.registry is not shared.registry
        assert agent.turn_done_listeners == shared.turn_done_listeners
    assert one.agent.registry is not two.agent.registry
    assert [c.name for c in channels] == ["gateway"] and isinstance(channels[0], Channel)
    assert left == [], "a closed connection's conversation is forgotten"


def _refuse_to_assemble(*args: object, **kwargs: object) -> None:
    raise AssertionError("a connection re-ran part of assembly (build_policy)")


async def test_a_device_rate_limit_holds_across_conversations(clawseed_home: Path) -> None:
    # One SecurityPolicy for every conversation: a second phone cannot reset the limit.
    provider = ScriptedProvider(
        [
            ScriptedProvider.call("gpio_switch", device="porch_light", on=True),
            "On.",
            ScriptedProvider.call("gpio_switch", device="porch_light", on=False),
            "Off?",
        ]
    )
    async with running_service(clawseed_home, provider, LIMITED) as service:
        assert service.runtime is not None
        token = await pair_token(service)
        async with (
            await open_ws(service, token, "session_id=phone") as phone,
            await open_ws(service, token, "session_id=tablet") as tablet,
        ):
            await recv_until(phone, "connected")
            await recv_until(tablet, "connected")
            first = await _switch(phone, True)
            second = await _switch(tablet, False)
        light = service.runtime.peripherals[0].pin_states()["GPIO17"]["value"]  # type: ignore[attr-defined]
    assert first["success"] is True
    assert second["success"] is False, second
    assert "max_per_minute=1" in second["error"], second
    assert light == 1


async def test_the_system_prompt_is_shared_while_the_tools_are_the_services(
    clawseed_home: Path,
) -> None:
    from clawseed_edge.agent import Remote
    from clawseed_edge.testing.tools import EchoTool

    async with running_service(clawseed_home, ScriptedProvider()) as service:
        assert service.runtime is not None and service.hub is not None
        shared = service.runtime.agent
        one = service.hub.conversations.open("gateway", "phone", "one")
        two = service.hub.conversations.open("gateway", "tablet", "two")
        same = one.agent.system_prompt() is shared.system_prompt() is two.agent.system_prompt()
        two.agent.registry.register(EchoTool(), Remote("two"))  # a client's own tool
        own = two.agent.system_prompt()
        still = one.agent.system_prompt() is shared.system_prompt()
    assert same and still, "built once for every conversation with the service's tools"
    assert "echo" in own and "echo" not in shared.system_prompt()
