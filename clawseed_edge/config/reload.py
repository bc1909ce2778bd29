"""Reloading a running agent's provider, model and autonomy from a re-read config file.

:func:`reload_runtime` is what ``clawseed-edge reload`` (and ``systemctl reload``) does in the
service: ``[provider]`` (name, model, server, fallbacks) and ``[autonomy]`` take effect at the
next model call and the next tool call; every other table needs a restart and is named in the
report. A turn that is running keeps its provider object until it ends: the old provider is
closed when the agent closes, never under a call in flight.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from .assembly import build_policy, build_provider

if TYPE_CHECKING:
    from .assembly import Runtime
    from .file import LoadedConfig

__all__ = ["RELOADABLE", "ReloadReport", "reload_runtime"]

#: The tables a reload applies; the others are read at start only.
RELOADABLE = ("provider", "autonomy")


@dataclass(slots=True)
class ReloadReport:
    """What a reload changed and what still needs a restart.

    Attributes:
        applied: The reloadable tables that changed and now apply (``provider``, ``autonomy``).
        needs_restart: Other tables that differ from the running config (a restart applies
            them: ``systemctl restart clawseed-edge``).
        provider: ``name/model`` of the provider now in use.
        autonomy: The autonomy level now in force.
    """

    applied: list[str] = field(default_factory=list)
    needs_restart: list[str] = field(default_factory=list)
    provider: str = ""
    autonomy: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "applied": self.applied,
            "needs_restart": self.needs_restart,
            "provider": self.provider,
            "autonomy": self.autonomy,
        }


def changed_tables(old: LoadedConfig, new: LoadedConfig) -> list[str]:
    """The top-level config tables whose values differ, in schema order."""
    a = msgspec.to_builtins(old.config)
    b = msgspec.to_builtins(new.config)
    return [key for key in dict.fromkeys([*a, *b]) if a.get(key) != b.get(key)]


async def reload_runtime(runtime: Runtime, fresh: LoadedConfig) -> ReloadReport:
    """Apply ``fresh``'s provider and autonomy to the running ``runtime``.

    Everything is built before anything is swapped: a config the policy or the provider
    registry refuses raises and leaves the runtime as it was.

    Raises:
        ConfigInvalid: ``fresh`` names an unknown provider or an autonomy value the policy
            refuses (names the file and key).

    Not cancel-safe once it swaps (it does not await after the first swap).
    """
    agent = runtime.agent
    changed = changed_tables(runtime.loaded, fresh)
    report = ReloadReport(needs_restart=[t for t in changed if t not in RELOADABLE])
    provider = build_provider(fresh) if "provider" in changed else None
    policy = None
    if "autonomy" in changed:
        old = agent.hooks.policy
        policy = build_policy(
            fresh,
            approver=getattr(old, "approver", None),
            observer=getattr(old, "observer", None),
            ledger=getattr(old, "ledger", None),
        )
        policy.latch = getattr(old, "latch", None)  # a latched stop survives the reload
    # Built without error: swap (no await from here on, so no turn sees half of it).
    if provider is not None:
        old_provider = agent.provider
        agent.provider = provider
        runtime.provider = provider
        agent.refresh_dispatcher()
        agent.on_close(old_provider.aclose)  # a turn in flight may still be using it
        # What the new model can do (tools or not) is unknown: probe it in the background.
        runtime.start_background_probe(restart=True)
        report.applied.append("provider")
    if policy is not None:
        agent.hooks = agent.hooks.with_policy(policy)
        agent.prompt_builder.autonomy = policy.autonomy.value
        report.applied.append("autonomy")
    if report.applied:
        agent.invalidate_prompt()
    runtime.loaded = _keep_unreloaded(runtime.loaded, fresh)
    report.provider = f"{agent.provider.name}/{agent.provider.model}"
    autonomy = getattr(agent.hooks.policy, "autonomy", None)
    report.autonomy = str(getattr(autonomy, "value", autonomy or ""))
    return report


def _keep_unreloaded(running: LoadedConfig, fresh: LoadedConfig) -> LoadedConfig:
    """The running config with only the reloadable tables taken from ``fresh``.

    So a second reload still reports the tables that need a restart.
    """
    config = msgspec.structs.replace(
        running.config, provider=fresh.config.provider, autonomy=fresh.config.autonomy
    )
    return msgspec.structs.replace(running, config=config)
