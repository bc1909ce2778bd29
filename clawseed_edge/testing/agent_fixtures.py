"""pytest fixtures for agent tests (scripted provider, agent builder).

Offered to every pytest run through the ``clawseed_edge`` pytest plugin::

    async def test_led(agent_builder, scripted_provider):
        scripted_provider.add(scripted_provider.call("set_led", state="on"), "Done.")
        agent = agent_builder.tools([SetLed()]).build()
        assert await agent.run("led on") == "Done."

Imports of the agent layer happen inside the fixtures, so loading the plugin stays cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from clawseed_edge.agent.builder import AgentBuilder
    from clawseed_edge.testing.scripted import ScriptedProvider

__all__ = ["agent_builder", "scripted_provider"]


@pytest.fixture
def scripted_provider() -> ScriptedProvider:
    """An empty, non-streaming ScriptedProvider with native tools; queue with ``.add()``."""
    from clawseed_edge.testing.scripted import ScriptedProvider

    return ScriptedProvider()


@pytest.fixture
def agent_builder(scripted_provider: ScriptedProvider, tmp_path: Path) -> AgentBuilder:
    """An AgentBuilder with the scripted provider, a temporary workspace and an approver that
    approves everything (supervised autonomy); add tools and build."""
    from clawseed_edge.agent.approval import StaticApprover
    from clawseed_edge.agent.builder import AgentBuilder

    return (
        AgentBuilder()
        .provider(scripted_provider)
        .workspace_dir(tmp_path / "workspace")
        .approver(StaticApprover(True))
        .platform("test")
    )
