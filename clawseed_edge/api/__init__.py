"""The stable api layer: types, protocols, events and errors. Standard library only.

Everything a plugin author needs is importable from here::

    from clawseed_edge.api import BaseTool, ToolResult, RiskClass

Each name is imported from its module on first use (PEP 562, :mod:`.lazy`): a process that
needs an error class does not build the event dataclasses (about 0.6 ms each on a desktop
core, several times that on a Pi Zero 2 W). ``tests/test_exports.py`` checks that this table
lists exactly each module's ``__all__``.
"""

from typing import TYPE_CHECKING

from .lazy import lazy_face as _lazy_face

if TYPE_CHECKING:
    from .channels import *  # noqa: F403
    from .errors import *  # noqa: F403
    from .events import *  # noqa: F403
    from .kinds import *  # noqa: F403
    from .latch import *  # noqa: F403
    from .plugins import *  # noqa: F403
    from .protocols import *  # noqa: F403
    from .remote import *  # noqa: F403
    from .states import *  # noqa: F403
    from .types import *  # noqa: F403
    from .urls import *  # noqa: F403
    from .wording import *  # noqa: F403

#: Where each public name lives (its module's ``__all__``).
_MODULES: dict[str, tuple[str, ...]] = {
    ".channels": ("Channel",),
    ".errors": (
        "AgentClosed",
        "AgentError",
        "AgentIterationLimit",
        "AgentMessageTooLong",
        "AgentTurnAborted",
        "BoardCommandFailed",
        "BoardDisconnected",
        "BoardNotFound",
        "BoardProtocolError",
        "BusAccessDenied",
        "BusLost",
        "BusNotFound",
        "ClawseedError",
        "ConfigError",
        "ConfigFileNotFound",
        "ConfigInvalid",
        "DeviceClosed",
        "DeviceNoResponse",
        "DeviceNotFound",
        "EstopLatched",
        "HardwareError",
        "MemoryStoreError",
        "MemoryUnavailable",
        "PeripheralClosed",
        "PinFactoryUnavailable",
        "PinInUse",
        "PinInvalid",
        "PinModeUnsupported",
        "PinReserved",
        "PluginConflict",
        "PluginLoadFailed",
        "PluginNotFound",
        "PolicyDenied",
        "PolicyError",
        "PolicyRateLimited",
        "ProviderAuthFailed",
        "ProviderBadResponse",
        "ProviderContextTooLong",
        "ProviderError",
        "ProviderModelNotFound",
        "ProviderRateLimited",
        "ProviderServerError",
        "ProviderStreamInterrupted",
        "ProviderTimeout",
        "ProviderUnreachable",
        "ResourceClosed",
        "SensorDataInvalid",
        "ToolArgumentsInvalid",
        "ToolError",
        "ToolNameClash",
        "ToolNameInvalid",
        "ToolNotFound",
        "ToolTimeout",
    ),
    ".events": (
        "AbortedEvent",
        "ApprovalDecision",
        "ApprovalRequest",
        "ApprovalRequestEvent",
        "ChunkEvent",
        "DoneEvent",
        "ErrorEvent",
        "ErrorObserved",
        "LlmRequest",
        "LlmResponse",
        "ObserverEvent",
        "PolicyDecision",
        "StreamDone",
        "StreamEvent",
        "TextDelta",
        "ThinkingDelta",
        "ThinkingEvent",
        "ToolCallEvent",
        "ToolCallReady",
        "ToolExecuted",
        "ToolResultEvent",
        "TurnEnded",
        "TurnEvent",
        "TurnStarted",
    ),
    ".kinds": ("Lifecycle", "RiskClass", "StopReason"),
    ".latch": (
        "ESTOP_LATCHED",
        "ESTOP_RESET_HINT",
        "EstopLatch",
        "LatchState",
    ),
    ".plugins": (
        "PLUGIN_GROUPS",
        "PluginInfo",
        "PluginRegistry",
        "describe_settings_error",
        "load_object",
    ),
    ".protocols": (
        "ActionLedger",
        "Approver",
        "BaseTool",
        "EmbeddingProvider",
        "HealthStatus",
        "Hook",
        "HookDecision",
        "HookOutcome",
        "Memory",
        "MemoryEntry",
        "Observer",
        "Peripheral",
        "Provider",
        "ProviderCapabilities",
        "Redactor",
        "SessionInfo",
        "SessionStore",
        "Tool",
        "ToolRegistry",
    ),
    ".remote": (
        "MAX_REMOTE_ENTRIES",
        "RemoteCall",
        "RemoteDevice",
        "RemoteDevices",
        "RemoteSensor",
        "split_remote_name",
    ),
    ".states": (
        "DeviceState",
        "SensorReading",
        "StateFeed",
        "StateListener",
        "StateSource",
        "StateUpdate",
    ),
    ".types": (
        "ACTOR_KINDS",
        "Actor",
        "ChatMessage",
        "ChatRequest",
        "ChatResponse",
        "DeviceAction",
        "ResourceAccess",
        "Role",
        "ToolCall",
        "ToolContext",
        "ToolResult",
        "ToolSpec",
        "Usage",
    ),
    ".urls": (
        "URL_PASSWORD_MARKER",
        "redact_url",
    ),
    ".wording": (
        "MODEL_ONLY_SENTENCES",
        "for_people",
    ),
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)
