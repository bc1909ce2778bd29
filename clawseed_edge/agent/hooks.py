"""The hook pipeline around every tool call, and the registry of hook factories for config.

Before-hooks run in order; each continues, modifies the call's arguments, or cancels with a
reason (the first cancel stops the chain and the call becomes a failed result the model reads).
The SecurityPolicy, when given, always runs first; if a later hook modifies the call, the policy
checks the modified call again, so no hook can smuggle a call past it. A hook may change the
arguments but not the tool: a modified call naming another tool is cancelled.

After-hooks observe only: they see every call's final result, and their exceptions are logged,
never raised into the turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import msgspec

from clawseed_edge.api import (
    ConfigInvalid,
    Hook,
    HookDecision,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
)
from clawseed_edge.api.plugins import PluginRegistry

__all__ = [
    "BaseHook",
    "BeforeOutcome",
    "HookFactory",
    "HookFactoryRegistry",
    "HookRunner",
]

log = logging.getLogger(__name__)

HookFactory = Callable[[Mapping[str, Any]], Hook]


class BaseHook:
    """Defaults for a hook: continue before, do nothing after. Subclass and override."""

    name: str = "hook"

    async def before_tool(
        self, call: ToolCall, tool: Tool | None, context: ToolContext
    ) -> HookDecision:
        return HookDecision.proceed()

    async def after_tool(self, call: ToolCall, result: ToolResult, context: ToolContext) -> None:
        return None


class BeforeOutcome(msgspec.Struct, frozen=True):
    """What the before-hooks decided.

    Attributes:
        call: The call to run (possibly modified), or the original call when cancelled.
        cancelled: Whether a hook cancelled it.
        reason: The cancelling hook's reason (what happened and what the user can do).
        hook: The name of the hook that cancelled, if any.
        modified_by: Names of the hooks that modified the call, in order.
        code: The cancelling decision's stable code (``"estop_latched"``), if it gave one.
    """

    call: ToolCall
    cancelled: bool = False
    reason: str = ""
    hook: str | None = None
    modified_by: tuple[str, ...] = ()
    code: str | None = None


def _hook_name(hook: object) -> str:
    return str(getattr(hook, "name", None) or type(hook).__name__)


class HookRunner:
    """Runs the policy and the user's hooks around a tool call.

    Args:
        hooks: User hooks, in order. Each needs ``before_tool`` and/or ``after_tool``.
        policy: The SecurityPolicy (or any hook) that must always run first. If it has a
            ``recheck(call, tool, context)`` coroutine, that is used to check a call modified by
            a later hook (so a rate limit is not counted twice); otherwise ``before_tool``.

    A before-hook that raises is treated as a cancel (fail closed) and logged.
    """

    def __init__(self, hooks: Iterable[Hook] = (), *, policy: Hook | None = None) -> None:
        self._hooks: list[Hook] = list(hooks)
        self.policy = policy
        self._rebuild()

    @property
    def hooks(self) -> tuple[Hook, ...]:
        """The user hooks, in order (without the policy)."""
        return tuple(self._hooks)

    def add(self, hook: Hook) -> None:
        """Append a user hook."""
        self._hooks.append(hook)
        self._rebuild()

    def with_policy(self, policy: Hook | None) -> HookRunner:
        """A runner with the same user hooks and ``policy`` first."""
        return HookRunner(self._hooks, policy=policy)

    def _rebuild(self) -> None:
        self._before = [h for h in self._hooks if callable(getattr(h, "before_tool", None))]
        after: list[Hook] = []
        if self.policy is not None and callable(getattr(self.policy, "after_tool", None)):
            after.append(self.policy)
        after.extend(h for h in self._hooks if callable(getattr(h, "after_tool", None)))
        self._after = after

    async def run_before(
        self, call: ToolCall, tool: Tool | None, context: ToolContext
    ) -> BeforeOutcome:
        """Run the policy, then the user before-hooks, in order.

        Cancel-safe: a cancelled runner has not run the call.
        """
        policy = self.policy
        if policy is not None:
            decision = await self._ask(policy, call, tool, context)
            if decision.outcome == "cancel":
                return BeforeOutcome(
                    call, True, decision.reason, _hook_name(policy), code=decision.code
                )
            if decision.outcome == "modify" and decision.call is not None:
                call = self._adopt(call, decision.call)
        current = call
        modified: list[str] = []
        for hook in self._before:
            decision = await self._ask(hook, current, tool, context)
            if decision.outcome == "cancel":
                return BeforeOutcome(
                    current, True, decision.reason, _hook_name(hook), code=decision.code
                )
            if decision.outcome == "modify" and decision.call is not None:
                if decision.call.name != current.name:
                    reason = (
                        f"hook {_hook_name(hook)!r} tried to turn a call of {current.name!r} "
                        f"into a call of {decision.call.name!r}; hooks may change arguments only"
                    )
                    log.warning(reason)
                    return BeforeOutcome(current, True, reason, _hook_name(hook))
                current = self._adopt(current, decision.call)
                modified.append(_hook_name(hook))
        if modified and policy is not None:
            recheck = getattr(policy, "recheck", None)
            try:
                if callable(recheck):
                    decision = await recheck(current, tool, context)
                else:
                    decision = await policy.before_tool(current, tool, context)
            except Exception as exc:
                log.exception("policy %s failed on a modified call", _hook_name(policy))
                return BeforeOutcome(
                    current, True, f"policy check failed: {exc}", _hook_name(policy)
                )
            if decision.outcome == "cancel":
                return BeforeOutcome(
                    current,
                    True,
                    decision.reason,
                    _hook_name(policy),
                    tuple(modified),
                    decision.code,
                )
        return BeforeOutcome(current, modified_by=tuple(modified))

    async def run_after(self, call: ToolCall, result: ToolResult, context: ToolContext) -> None:
        """Run every after-hook; exceptions are logged and swallowed."""
        for hook in self._after:
            try:
                await hook.after_tool(call, result, context)
            except Exception:
                log.exception("after-hook %s failed on %s (ignored)", _hook_name(hook), call.name)

    @staticmethod
    async def _ask(
        hook: Hook, call: ToolCall, tool: Tool | None, context: ToolContext
    ) -> HookDecision:
        try:
            decision = await hook.before_tool(call, tool, context)
        except Exception as exc:
            log.exception(
                "before-hook %s failed on %s; cancelling the call", _hook_name(hook), call.name
            )
            return HookDecision.cancel(
                f"hook {_hook_name(hook)!r} failed ({type(exc).__name__}: {exc}); the call was "
                "not run. Check the hook's configuration"
            )
        if not isinstance(decision, HookDecision):
            return HookDecision.cancel(
                f"hook {_hook_name(hook)!r} returned {decision!r} instead of a HookDecision; "
                "the call was not run"
            )
        return decision

    @staticmethod
    def _adopt(original: ToolCall, new: ToolCall) -> ToolCall:
        # Keep the call id: the model pairs the result with its call by it.
        if new.id != original.id:
            new = replace(new, id=original.id)
        return new


class HookFactoryRegistry(PluginRegistry[HookFactory]):
    """Named hook factories, so config can declare hooks: ``{name = "audit", ...options}``.

    A factory takes the options dict (everything but ``name``) and returns a Hook. This is the
    one plugin registry (:class:`~clawseed_edge.api.plugins.PluginRegistry`) for the kind
    ``hooks``: a name that is not registered is looked up in the entry-point group
    ``clawseed_edge.hooks``.

    Args:
        factories: Factories to register at once.
        load_entry_points: Look unknown names up in the entry-point group.
    """

    def __init__(
        self, factories: Mapping[str, HookFactory] | None = None, *, load_entry_points: bool = True
    ) -> None:
        super().__init__("hooks", noun="hook", load_entry_points=load_entry_points, key="hooks")
        for name, factory in (factories or {}).items():
            self.register(name, factory)

    def build(self, name: str, options: Mapping[str, Any] | None = None) -> Hook:
        """Build one hook.

        Raises:
            ConfigInvalid: No factory has that name, or the factory rejected the options.
        """
        factory = self.get(name)
        try:
            return factory(dict(options or {}))
        except ConfigInvalid:
            raise
        except (TypeError, ValueError, KeyError) as exc:
            raise ConfigInvalid(f"hook {name!r} rejected its options: {exc}", key="hooks") from exc

    def build_all(self, declarations: Sequence[Mapping[str, Any]]) -> list[Hook]:
        """Build hooks from declarations like ``{"name": "audit", "path": "..."}``, in order."""
        hooks: list[Hook] = []
        for i, decl in enumerate(declarations):
            name = decl.get("name")
            if not isinstance(name, str):
                raise ConfigInvalid(
                    "each hook needs a 'name' naming its factory", key=f"hooks[{i}].name"
                )
            hooks.append(self.build(name, {k: v for k, v in decl.items() if k != "name"}))
        return hooks
