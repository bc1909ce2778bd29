"""The system prompt of a prompt-guided agent: one tools section, call format included."""

from __future__ import annotations

from clawseed_edge.agent import AgentBuilder, StaticApprover
from clawseed_edge.testing import ScriptedProvider

from ._tools import EchoTool


def test_prompt_guided_system_prompt_has_one_tools_section_with_the_call_format() -> None:
    provider = ScriptedProvider([], native_tools=False)
    agent = (
        AgentBuilder().provider(provider).tools([EchoTool()]).approver(StaticApprover(True)).build()
    )
    prompt = agent.system_prompt()
    assert prompt.count("\n## Tools\n") + prompt.startswith("## Tools\n") == 1
    assert "<tool_call>" in prompt and "Parameters (JSON schema)" in prompt
    assert agent.system_prompt() == prompt, "stable across calls (prefix caching)"
