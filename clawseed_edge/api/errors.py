"""The one error tree of clawseed-edge.

Every error the runtime raises on purpose derives from :class:`ClawseedError`. Each area has a
sub-base, and leaf errors also inherit the builtin they resemble, so ``except ValueError`` and
``except ConnectionError`` keep working in callers that do not know our names::

    ClawseedError
    ├── ResourceClosed(RuntimeError)             used after aclose()/disconnect()
    ├── ConfigError
    │   ├── ConfigFileNotFound(FileNotFoundError)
    │   └── ConfigInvalid(ValueError)            file, key path and what was expected
    │       ├── PluginNotFound(LookupError)      no built-in or installed plugin has the name
    │       ├── PluginConflict                   a name registered twice, or two plugins' name
    │       └── PluginLoadFailed                 a plugin's module did not import
    ├── ProviderError                            .provider .model .retryable .status
    │   ├── ProviderUnreachable(ConnectionError)  retryable
    │   ├── ProviderTimeout(TimeoutError)         retryable
    │   ├── ProviderRateLimited                   retryable, .retry_after seconds
    │   ├── ProviderServerError                   retryable (5xx)
    │   ├── ProviderAuthFailed(PermissionError)
    │   ├── ProviderModelNotFound(LookupError)
    │   ├── ProviderContextTooLong(ValueError)
    │   ├── ProviderBadResponse(ValueError)       garbage or protocol violation
    │   └── ProviderStreamInterrupted             text was already shown: never replayed
    ├── ToolError
    │   ├── ToolNotFound(LookupError)
    │   ├── ToolNameInvalid(ValueError)
    │   ├── ToolNameClash(ValueError)
    │   ├── ToolArgumentsInvalid(ValueError)
    │   └── ToolTimeout(TimeoutError)
    ├── PolicyError
    │   ├── PolicyDenied(PermissionError)
    │   ├── PolicyRateLimited(PolicyDenied)
    │   └── EstopLatched(PolicyDenied)       the emergency stop holds until a person resets it
    ├── AgentError
    │   ├── AgentIterationLimit
    │   ├── AgentTurnAborted
    │   ├── AgentMessageTooLong(ValueError)    over [agent] max_message_chars; nothing ran
    │   └── AgentClosed(ResourceClosed)          a turn asked of a closing or closed agent
    ├── MemoryStoreError
    │   └── MemoryUnavailable
    └── HardwareError
        ├── BoardNotFound(LookupError)
        ├── BoardDisconnected(ConnectionError)
        ├── BoardProtocolError(ValueError)
        ├── BoardCommandFailed                    the board answered ok=false
        ├── DeviceNotFound(LookupError)
        ├── PinInvalid(ValueError)
        ├── PinReserved(ValueError)
        ├── PinInUse(ValueError)
        ├── PinModeUnsupported(ValueError)
        ├── PinFactoryUnavailable(ImportError)    lgpio (or another backend) is not installed
        ├── PeripheralClosed(ResourceClosed)      a disconnected peripheral refuses work
        ├── DeviceClosed(ResourceClosed)          a closed device refuses work
        ├── BusNotFound(FileNotFoundError)        no /dev/i2c-N (I2C not enabled)
        ├── BusAccessDenied(PermissionError)      the user is not in the bus's group
        ├── BusLost(ConnectionError)              the bus went away during a transfer
        ├── DeviceNoResponse(ConnectionError)     nothing answers at the address (NACK)
        └── SensorDataInvalid(ValueError)         a failed CRC or an impossible value

A user-facing message says what happened, which input caused it, and what to do.
"""

from __future__ import annotations

from .urls import redact_url

__all__ = [
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
]


class ClawseedError(Exception):
    """Root of every error clawseed-edge raises on purpose.

    Attributes:
        code: A short stable identifier (``"provider_unreachable"``) that the gateway sends to
            clients in ``error`` events. Subclasses set it; it never changes between releases.
    """

    code: str = "error"


class ResourceClosed(ClawseedError, RuntimeError):
    """A resource (agent, peripheral, memory, connection) was used after it was closed.

    Areas may subclass it with their own leaf; the message names the resource and says to make
    a new one.
    """

    code = "resource_closed"


# --- config -----------------------------------------------------------------------------------


class ConfigError(ClawseedError):
    """A configuration file or value is wrong."""

    code = "config_error"


class ConfigFileNotFound(ConfigError, FileNotFoundError):
    """The configuration file does not exist."""

    code = "config_not_found"


class ConfigInvalid(ConfigError, ValueError):
    """A configuration value is missing, of the wrong type, or not allowed.

    Args:
        message: What is wrong and what to do.
        file: The file the value came from, if any.
        key: The dotted key path (``"devices[1].pin"``), if known.
    """

    code = "config_invalid"

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None) -> None:
        self.file = file
        self.key = key
        where = ""
        if file and key:
            where = f"{file}: {key}: "
        elif file:
            where = f"{file}: "
        elif key:
            where = f"{key}: "
        super().__init__(f"{where}{message}")


class PluginNotFound(ConfigInvalid, LookupError):
    """No built-in and no installed plugin has the name (see :mod:`clawseed_edge.api.plugins`).

    The message names the kind, the name, the known names and the entry-point group.
    """

    code = "plugin_not_found"


class PluginConflict(ConfigInvalid):
    """A name registered twice in code, or offered by two installed distributions."""

    code = "plugin_conflict"


class PluginLoadFailed(ConfigInvalid):
    """A plugin (or a built-in named by import path) failed to import; see ``__cause__``."""

    code = "plugin_load_failed"


# --- providers --------------------------------------------------------------------------------


class ProviderError(ClawseedError):
    """A model provider failed to answer.

    Attributes:
        provider: The provider's name (``"ollama"``), if known.
        model: The model asked, if known.
        status: The HTTP status the server answered, if any.
        retryable: Whether the same request may succeed if sent again.
    """

    code = "provider_error"
    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        status: int | None = None,
    ) -> None:
        # A provider's message quotes its base_url: the password in it is never shown.
        super().__init__(redact_url(message))
        self.provider = provider
        self.model = model
        self.status = status


class ProviderUnreachable(ProviderError, ConnectionError):
    """No server answered at the configured address."""

    code = "provider_unreachable"
    retryable = True


class ProviderTimeout(ProviderError, TimeoutError):
    """The server did not answer within the configured timeout."""

    code = "provider_timeout"
    retryable = True


class ProviderRateLimited(ProviderError):
    """The server answered 429; ``retry_after`` is its advice in seconds, if it gave one."""

    code = "provider_rate_limited"
    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.retry_after = retry_after


class ProviderServerError(ProviderError):
    """The server failed (HTTP 5xx or an overload answer)."""

    code = "provider_server_error"
    retryable = True


class ProviderAuthFailed(ProviderError, PermissionError):
    """The API key is missing or was rejected."""

    code = "provider_auth_failed"


class ProviderModelNotFound(ProviderError, LookupError):
    """The model is not available on the server (for Ollama: not pulled)."""

    code = "provider_model_not_found"


class ProviderContextTooLong(ProviderError, ValueError):
    """The prompt does not fit in the model's context window."""

    code = "provider_context_too_long"


class ProviderBadResponse(ProviderError, ValueError):
    """The server answered something that is not the protocol it speaks (garbage bytes)."""

    code = "provider_bad_response"
    retryable = True


class ProviderStreamInterrupted(ProviderError):
    """A stream broke after text was shown to the user; the turn is not replayed."""

    code = "provider_stream_interrupted"


# --- tools ------------------------------------------------------------------------------------


class ToolError(ClawseedError):
    """A tool could not be registered, found or run."""

    code = "tool_error"


class ToolNotFound(ToolError, LookupError):
    """No tool of that name is registered."""

    code = "tool_not_found"


class ToolNameInvalid(ToolError, ValueError):
    """A tool name does not match ``^[a-zA-Z0-9_-]{1,64}$``."""

    code = "tool_name_invalid"


class ToolNameClash(ToolError, ValueError):
    """A tool of that name is already registered (use register_or_replace to replace it)."""

    code = "tool_name_clash"


class ToolArgumentsInvalid(ToolError, ValueError):
    """The arguments of a tool call do not fit the tool's schema."""

    code = "tool_arguments_invalid"


class ToolTimeout(ToolError, TimeoutError):
    """A tool did not finish within its timeout."""

    code = "tool_timeout"


# --- policy -----------------------------------------------------------------------------------


class PolicyError(ClawseedError):
    """The security policy is misconfigured or refused an action."""

    code = "policy_error"


class PolicyDenied(PolicyError, PermissionError):
    """The security policy refused an action; the message says why."""

    code = "policy_denied"


class EstopLatched(PolicyDenied):
    """The emergency stop is latched: nothing that drives an output runs until a person
    resets it (``clawseed-edge estop --reset``, the web app, Telegram ``/reset``)."""

    code = "estop_latched"


class PolicyRateLimited(PolicyDenied):
    """An action was refused because its rate limit is used up."""

    code = "policy_rate_limited"


# --- agent ------------------------------------------------------------------------------------


class AgentError(ClawseedError):
    """The turn engine could not complete a turn."""

    code = "agent_error"


class AgentIterationLimit(AgentError):
    """The model kept calling tools past ``max_tool_iterations``."""

    code = "agent_iteration_limit"


class AgentTurnAborted(AgentError):
    """The turn was aborted by its caller."""

    code = "agent_turn_aborted"


class AgentMessageTooLong(AgentError, ValueError):
    """A user message is longer than ``[agent] max_message_chars``; the turn did not run."""

    code = "agent_message_too_long"


class AgentClosed(AgentError, ResourceClosed):
    """A turn was asked of an agent that is closing or closed; build or assemble a new one."""

    code = "agent_closed"


# --- memory -----------------------------------------------------------------------------------


class MemoryStoreError(ClawseedError):
    """The memory store failed (named so as not to shadow the builtin ``MemoryError``)."""

    code = "memory_error"


class MemoryUnavailable(MemoryStoreError):
    """Memory could not be opened; the agent runs without it."""

    code = "memory_unavailable"


# --- hardware ---------------------------------------------------------------------------------


class HardwareError(ClawseedError):
    """A board, pin or device problem."""

    code = "hardware_error"


class BoardNotFound(HardwareError, LookupError):
    """No board of that id is known, or none is plugged in at the configured port."""

    code = "board_not_found"


class BoardDisconnected(HardwareError, ConnectionError):
    """The board went away (cable unplugged, port closed)."""

    code = "board_disconnected"


class BoardProtocolError(HardwareError, ValueError):
    """The board sent something that is not our JSON-lines protocol."""

    code = "board_protocol_error"


class BoardCommandFailed(HardwareError):
    """The board answered ``ok: false``; ``board_code`` is its error code."""

    code = "board_command_failed"

    def __init__(self, message: str, *, board_code: str = "error") -> None:
        super().__init__(message)
        self.board_code = board_code


class DeviceNotFound(HardwareError, LookupError):
    """No configured device has that name."""

    code = "device_not_found"


class PinInvalid(HardwareError, ValueError):
    """The board has no pin of that name."""

    code = "pin_invalid"


class PinReserved(HardwareError, ValueError):
    """The pin is reserved on this board (power, boot, SWD, the host UART)."""

    code = "pin_reserved"


class PinInUse(HardwareError, ValueError):
    """The pin is already claimed by another device."""

    code = "pin_in_use"


class PinModeUnsupported(HardwareError, ValueError):
    """The pin cannot do what the device needs (PWM on a pin without PWM ...)."""

    code = "pin_mode_unsupported"


class PinFactoryUnavailable(HardwareError, ImportError):
    """The pin backend's library is not installed (lgpio on a Pi); the message says what to
    install, and that ``--sim`` runs on simulated pins."""

    code = "pin_factory_unavailable"


class PeripheralClosed(HardwareError, ResourceClosed):
    """A peripheral was used after :meth:`disconnect`; make a new one to use the pins again."""

    code = "peripheral_closed"


class DeviceClosed(HardwareError, ResourceClosed):
    """A device was used after it was closed (its peripheral disconnected or never connected)."""

    code = "device_closed"


class BusNotFound(HardwareError, FileNotFoundError):
    """The bus device (``/dev/i2c-1``) does not exist: the bus is not enabled or not wired."""

    code = "bus_not_found"


class BusAccessDenied(HardwareError, PermissionError):
    """The bus device exists but this user may not open it (not in the ``i2c`` group)."""

    code = "bus_access_denied"


class BusLost(HardwareError, ConnectionError):
    """The bus went away during a transfer (adapter removed, overlay unloaded)."""

    code = "bus_lost"


class DeviceNoResponse(HardwareError, ConnectionError):
    """Nothing acknowledged the address (NACK): wiring, address or power."""

    code = "device_no_response"


class SensorDataInvalid(HardwareError, ValueError):
    """A sensor answered with data that cannot be right: a failed CRC, an impossible value."""

    code = "sensor_data_invalid"
