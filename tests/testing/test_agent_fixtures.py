"""The pytest plugin's agent fixtures, used the way a user's test would use them."""

from __future__ import annotations

from clawseed_edge.agent import AgentBuilder
from clawseed_edge.api import RiskClass
from clawseed_edge.testing import ScriptedProvider

from ..agent._tools import EchoTool


async def test_fixtures_build_a_working_agent(
    agent_builder: AgentBuilder, scripted_provider: ScriptedProvider
) -> None:
    relay = EchoTool("relay", RiskClass.ACT)
    scripted_provider.add(ScriptedProvider.call("relay", text="on"), "Relay is on.")
    agent = agent_builder.tools([relay]).build()
    assert await agent.run("switch the relay on") == "Relay is on."
    assert relay.calls == [{"text": "on"}]  # supervised, approved by the fixture's approver
    assert agent.workspace_dir is not None and (agent.workspace_dir / "SOUL.md").exists()
    assert scripted_provider.requests[1].messages[-1].content == "echo: on"
