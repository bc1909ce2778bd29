"""The agent package's curated exports stay complete and importable."""

from __future__ import annotations

import importlib

import clawseed_edge.agent as agent

MODULES = ["approval", "builder", "dispatch", "engine", "hooks", "registry", "security"]


def test_every_public_name_of_the_core_modules_is_exported() -> None:
    missing = []
    for name in MODULES:
        module = importlib.import_module(f"clawseed_edge.agent.{name}")
        for public in getattr(module, "__all__", []):
            if public not in agent.__all__:
                missing.append(f"{name}.{public}")
    allowed_private = {
        "approval.announce_approval_request",
        "approval.approval_listener",
        "dispatch.ensure_call_ids",
        "registry.validate_tool_name",
    }
    assert sorted(set(missing) - allowed_private) == []


def test_every_export_resolves() -> None:
    for name in agent.__all__:
        assert getattr(agent, name) is not None, name
