"""AgentBuilder: assemble an :class:`~clawseed_edge.agent.engine.Agent` step by step.

Example::

    agent = (
        AgentBuilder()
        .provider(provider)
        .tools([ReadTemperature(), SwitchFan()])
        .workspace_dir(Path("~/.clawseed-edge/workspace").expanduser())
        .autonomy("supervised")
        .approver(CliApprover())
        .build()
    )
    print(await agent.run("how warm is it?"))
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from clawseed_edge.api import (
    Approver,
    Hook,
    Memory,
    Observer,
    Peripheral,
    Provider,
    SessionStore,
    Tool,
)

from .approval import CliApprover
from .engine import Agent
from .hooks import HookRunner
from .observer import NoopObserver
from .prompt import SystemPromptBuilder, ensure_workspace
from .registry import ToolRegistry
from .security import Autonomy, SecurityPolicy
from .toolcalls import ToolDispatcher

__all__ = ["AgentBuilder", "fork_agent"]


class AgentBuilder:
    """Fluent assembly of an Agent; every method returns the builder.

    Defaults: no tools, the dispatcher the provider's capability asks for, a SecurityPolicy in
    ``supervised`` autonomy asking on the terminal (:class:`CliApprover`, which refuses when
    there is no terminal), no memory, no session store, a no-op observer.
    """

    def __init__(self) -> None:
        self._provider: Provider | None = None
        self._tools: list[Tool] = []
        self._registry: ToolRegistry | None = None
        self._memory: Memory | None = None
        self._store: SessionStore | None = None
        self._observer: Observer | None = None
        self._dispatcher: ToolDispatcher | None = None
        self._workspace: Path | None = None
        self._allowed: list[str] = []
        self._denied: list[str] = []
        self._hooks: list[Hook] = []
        self._runner: HookRunner | None = None
        self._policy: SecurityPolicy | None = None
        self._autonomy: Autonomy | None = None
        self._approver: Approver | None = None
        self._peripherals: list[Peripheral] = []
        self._platform: str | None = None
        self._agent_options: dict[str, Any] = {}

    def provider(self, provider: Provider) -> AgentBuilder:
        self._provider = provider
        return self

    def tools(self, tools: Iterable[Tool]) -> AgentBuilder:
        """Add tools (built-in source) to the registry the builder makes."""
        self._tools.extend(tools)
        return self

    def registry(self, registry: ToolRegistry) -> AgentBuilder:
        """Use this registry (tools from ``tools()`` and peripherals are added to it)."""
        self._registry = registry
        return self

    def memory(self, memory: Memory) -> AgentBuilder:
        self._memory = memory
        return self

    def session_store(self, store: SessionStore) -> AgentBuilder:
        self._store = store
        return self

    def observer(self, observer: Observer) -> AgentBuilder:
        self._observer = observer
        return self

    def dispatcher(self, dispatcher: ToolDispatcher) -> AgentBuilder:
        self._dispatcher = dispatcher
        return self

    def workspace_dir(self, path: str | Path) -> AgentBuilder:
        """The user's workspace (identity files; base of relative paths). Created on build."""
        self._workspace = Path(path)
        return self

    def allowed_tools(self, patterns: Iterable[str]) -> AgentBuilder:
        """Glob patterns of tool names to keep (deny wins)."""
        self._allowed.extend(patterns)
        return self

    def denied_tools(self, patterns: Iterable[str]) -> AgentBuilder:
        """Glob patterns of tool names to drop."""
        self._denied.extend(patterns)
        return self

    def hooks(self, hooks: Iterable[Hook]) -> AgentBuilder:
        """Add user hooks (they run after the SecurityPolicy, in order)."""
        self._hooks.extend(hooks)
        return self

    def hook_runner(self, runner: HookRunner) -> AgentBuilder:
        """Use this runner; its user hooks run after the policy (and after ``hooks()``'s)."""
        self._runner = runner
        return self

    def security_policy(self, policy: SecurityPolicy) -> AgentBuilder:
        """Use this policy instead of the default one."""
        self._policy = policy
        return self

    def autonomy(self, autonomy: Autonomy | str) -> AgentBuilder:
        """Autonomy of the default policy (ignored if ``security_policy()`` is given)."""
        self._autonomy = Autonomy(autonomy)
        return self

    def approver(self, approver: Approver) -> AgentBuilder:
        """Who approves calls; also set on a given policy that has none."""
        self._approver = approver
        return self

    def peripherals(self, peripherals: Iterable[Peripheral]) -> AgentBuilder:
        """Boards whose tools are registered and whose ``describe()`` goes in the prompt."""
        self._peripherals.extend(peripherals)
        return self

    def platform(self, platform: str) -> AgentBuilder:
        """Override the detected platform line of the prompt."""
        self._platform = platform
        return self

    def max_tool_iterations(self, n: int) -> AgentBuilder:
        self._agent_options["max_tool_iterations"] = n
        return self

    def tool_timeout(self, seconds: float) -> AgentBuilder:
        """Default per-tool timeout for tools that set none."""
        self._agent_options["tool_timeout_s"] = seconds
        return self

    def max_history(self, n: int) -> AgentBuilder:
        self._agent_options["max_history"] = n
        return self

    def option(self, name: str, value: Any) -> AgentBuilder:
        """Any other keyword of :class:`Agent` (``max_tool_output_chars``, ``clock`` ...)."""
        self._agent_options[name] = value
        return self

    def build(self) -> Agent:
        """Assemble the Agent.

        Raises:
            ValueError: No provider was given.
            ToolNameInvalid / ToolNameClash: From registering the tools.
        """
        if self._provider is None:
            raise ValueError(
                "AgentBuilder needs a provider: call .provider(...) before .build() "
                "(in tests: clawseed_edge.testing.ScriptedProvider)"
            )
        registry = self._make_registry()
        observer = self._observer if self._observer is not None else NoopObserver()
        policy = self._policy
        if policy is None:
            policy = SecurityPolicy(
                autonomy=self._autonomy or Autonomy.SUPERVISED,
                approver=self._approver if self._approver is not None else CliApprover(),
                workspace_dir=self._workspace,
            )
        elif policy.approver is None and self._approver is not None:
            policy.approver = self._approver
        if policy.observer is None:
            policy.observer = observer
        if policy.workspace_dir is None and self._workspace is not None:
            policy.workspace_dir = self._workspace
        user_hooks: list[Hook] = list(self._hooks)
        if self._runner is not None:
            user_hooks.extend(self._runner.hooks)
        runner = HookRunner(user_hooks, policy=policy)
        if self._workspace is not None:
            ensure_workspace(self._workspace)
        prompt = SystemPromptBuilder(
            workspace_dir=self._workspace,
            autonomy=policy.autonomy.value,
            platform=self._platform,
            scrub=self._agent_options.get("scrub"),
            forbidden=policy.forbidden_path,
        )
        return Agent(
            provider=self._provider,
            registry=registry,
            dispatcher=self._dispatcher,
            hooks=runner,
            observer=observer,
            prompt_builder=prompt,
            peripherals=self._peripherals,
            memory=self._memory,
            session_store=self._store,
            **self._agent_options,
        )

    def _make_registry(self) -> ToolRegistry:
        if self._registry is not None:
            registry = self._registry
            if self._allowed or self._denied:
                # A filtered copy: the given registry is left as it was.
                registry = registry.copy(
                    allowed=self._allowed or registry.filter.allowed,
                    denied=[*registry.filter.denied, *self._denied],
                )
        else:
            registry = ToolRegistry(allowed=self._allowed, denied=self._denied)
        registry.register_many(self._tools)
        peripheral_tools: list[Tool] = []
        for p in self._peripherals:
            peripheral_tools.extend(p.tools())
        registry.register_many(peripheral_tools)
        return registry


def fork_agent(agent: Agent, *, registry: ToolRegistry | None = None) -> Agent:
    """An agent for one conversation, built from ``agent``'s parts, never by assembling again.

    The provider, hooks (one SecurityPolicy: its rates and approvals), observer, prompt,
    peripherals, memory, session store, limits, scrubber and after-turn listeners are
    ``agent``'s own objects; the fork has its own tool registry (``registry``, or a copy of
    ``agent``'s, so a client's remote tools reach only its conversation) and its own running
    turns. Never close a fork: its parts are ``agent``'s.
    """
    shared = {name: getattr(agent, name) for name in _FORKED_PARTS}
    tools = registry if registry is not None else agent.registry.copy()
    fork = Agent(**shared, registry=tools, prompt_from=agent)
    for listener in agent.turn_done_listeners:
        fork.on_turn_done(listener)
    return fork


#: The Agent arguments a fork shares with its origin (all but the registry and the history).
_FORKED_PARTS = (
    "provider",
    "hooks",
    "observer",
    "prompt_builder",
    "peripherals",
    "memory",
    "session_store",
    "max_tool_iterations",
    "tool_timeout_s",
    "max_history",
    "max_tool_output_chars",
    "memory_recall_limit",
    "max_message_chars",
    "max_recall_chars",
    "max_tool_argument_chars",
    "scrub",
    "close_timeout_s",
    "local_intents",
    "max_tools",
)
