"""The turn engine: registry, hooks, SecurityPolicy, dispatchers, parser, history, prompt.

The public names are re-exported here; the modules themselves are implementation detail::

    from clawseed_edge.agent import AgentBuilder, SecurityPolicy, StaticApprover
"""

from .approval import CallbackApprover, CliApprover, NoAnswer, QueueApprover, StaticApprover
from .builder import AgentBuilder, fork_agent
from .engine import Agent
from .history import History, estimate_tokens, time_prefix, truncate_tool_output
from .hooks import BaseHook, BeforeOutcome, HookFactory, HookFactoryRegistry, HookRunner
from .observer import CompositeObserver, LoggingObserver, MetricsObserver, NoopObserver
from .prompt import SystemPromptBuilder, ensure_workspace
from .registry import BUILTIN, BuiltIn, Mcp, Remote, ToolFilter, ToolRegistry, ToolSource
from .security import (
    DEFAULT_ALLOWED_COMMANDS,
    DEFAULT_AUTO_APPROVE,
    DEFAULT_FORBIDDEN_PATHS,
    Autonomy,
    SecurityPolicy,
    check_command,
)
from .toolcalls import (
    NativeToolDispatcher,
    ParsedResponse,
    ToolDispatcher,
    read_response,
    select_dispatcher,
)

__all__ = [
    "BUILTIN",
    "DEFAULT_ALLOWED_COMMANDS",
    "DEFAULT_AUTO_APPROVE",
    "DEFAULT_FORBIDDEN_PATHS",
    "Agent",
    "AgentBuilder",
    "Autonomy",
    "BaseHook",
    "BeforeOutcome",
    "BuiltIn",
    "CallbackApprover",
    "CliApprover",
    "CompositeObserver",
    "History",
    "HookFactory",
    "HookFactoryRegistry",
    "HookRunner",
    "LoggingObserver",
    "Mcp",
    "MetricsObserver",
    "NativeToolDispatcher",
    "NoAnswer",
    "NoopObserver",
    "ParsedResponse",
    "QueueApprover",
    "Remote",
    "SecurityPolicy",
    "StaticApprover",
    "SystemPromptBuilder",
    "ToolDispatcher",
    "ToolFilter",
    "ToolRegistry",
    "ToolSource",
    "check_command",
    "ensure_workspace",
    "estimate_tokens",
    "fork_agent",
    "read_response",
    "select_dispatcher",
    "time_prefix",
    "truncate_tool_output",
]
