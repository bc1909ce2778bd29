"""The typed configuration: one msgspec Struct per TOML table.

A complete file, every key optional (the values shown are the defaults)::

    [agent]
    max_tool_iterations = 10
    max_history = 50
    tool_timeout_s = 30.0
    workspace_dir = "workspace"        # relative to $CLAWSEED_HOME
    max_message_chars = 32000          # a longer user message is refused, nothing runs
    max_recall_chars = 4000            # recalled memory per request (0: no recall)
    max_tool_argument_chars = 65536    # one tool call's arguments, as JSON

    [autonomy]
    level = "supervised"               # read_only | supervised | full
    max_actions_per_hour = 120
    approval_timeout_s = 120.0
    shell_allowlist = ["ls", "cat", "echo", "date", "uptime", "df", "free", "vcgencmd"]
    forbidden_paths = []               # added to the built-in list (/etc/shadow, ~/.ssh, and
                                       # $CLAWSEED_HOME's secrets, config.toml, memory.db)
    auto_approve = ["memory_store"]    # tools (glob patterns) that need no approval in
                                       # supervised; never a device with approval = true

    [tools]
    allowed = ["*"]                    # glob patterns; deny wins
    denied = []
    shell = false                      # the shell tool (allow-listed commands only)
    files = true                       # file_read / file_write / file_list in the workspace
    system_info = true                 # board, temperature, load, memory, disk, throttling
    http_request = false               # HTTP requests to allowed hosts (risk: act)
    web_fetch = false                  # a web page as readable text (risk: read)

    [tools.http]                       # the limits of http_request and web_fetch
    allowed_domains = []               # "example.com", "*.example.com", "*" (any public host)
    allowed_networks = []              # non-public networks allowed, e.g. "192.168.1.0/24"
    methods = ["GET"]                  # what http_request may send (+ HEAD POST PUT PATCH ...)
    timeout_s = 10.0                   # one whole exchange, redirects included
    max_response_bytes = 1048576       # a bigger body fails the call
    max_redirects = 3                  # each redirect is checked like the first URL
    max_output_chars = 8000            # text handed to the model

    [[hooks]]
    name = "my_hook"                   # a HookFactory registered by name
    options = {}

    [gateway]                          # HTTP + WebSocket for phones (clawseed-edge gateway)
    enabled = false                    # true: `clawseed-edge run` hosts the gateway too
    host = "127.0.0.1"                 # a non-loopback host also needs allow_public_bind
    port = 42617
    allow_public_bind = false
    require_pairing = true
    max_body_bytes = 65536
    max_frame_bytes = 65536
    max_message_chars = 16000
    max_remote_tools = 32
    max_tool_schema_bytes = 8192
    remote_tool_timeout_s = 30.0
    requests_per_minute = 120          # per token (and per client address before pairing)
    max_connections = 256

``[embedding]`` (a provider table, e.g. ``name = "ollama"``, ``model = "nomic-embed-text"``) turns
on vector recall in memory; without it recall is keyword-only (FTS5 BM25).

The sections of the other layers are defined next to the code they configure and embedded
here: ``[provider]`` (:class:`~clawseed_edge.providers.config.ProviderConfig`), ``[memory]``
(:class:`~clawseed_edge.memory.config.MemoryConfig`), ``[hardware]`` and ``[[devices]]``
(the Pi header called ``pi``: :class:`HardwareSettings`,
:class:`~clawseed_edge.peripherals.wired.DeviceConfig`). ``[[peripherals]]`` tables are kept
as written here and validated at load by the factory their ``type`` names
(:mod:`clawseed_edge.peripherals.registry`; see :mod:`clawseed_edge.config.hardware`).
``[[sensors]]``, ``[[displays]]`` and ``[i2c]`` describe the sensor bank
(:mod:`clawseed_edge.peripherals.sensors.config`, docs/sensors.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from clawseed_edge.memory.config import MemoryConfig
from clawseed_edge.peripherals.camera.config import CameraConfig
from clawseed_edge.peripherals.gpio.config import HardwareConfig
from clawseed_edge.peripherals.gpio.pins import PinFactoryKind
from clawseed_edge.peripherals.sensors.config import I2CSettings, SensorConfig
from clawseed_edge.peripherals.wired.config import DeviceConfig
from clawseed_edge.providers.config import ProviderConfig

from .automations import AutomationConfig
from .jobs import JobSettings, SchedulerSettings
from .mcp import McpSettings
from .paths import system_directory

if TYPE_CHECKING:
    from clawseed_edge.state import HistoryRetention

__all__ = [
    "AgentSettings",
    "AutonomySettings",
    "ChannelsSettings",
    "Config",
    "GatewaySettings",
    "HardwareSettings",
    "HistorySettings",
    "HookSettings",
    "HttpSettings",
    "MqttSettings",
    "TelegramSettings",
    "ToolsSettings",
]

# Value ranges, checked when the file is loaded (the error names the key and the bound).
PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
Seconds = Annotated[float, msgspec.Meta(gt=0)]

DEFAULT_SHELL_ALLOWLIST = ["ls", "cat", "echo", "date", "uptime", "df", "free", "vcgencmd"]


class AgentSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[agent]``: the turn engine.

    Attributes:
        max_tool_iterations: Model calls per turn; a turn still calling tools after this many
            rounds ends.
        max_history: Messages kept per session.
        tool_timeout_s: Seconds one tool call may run before it is cancelled.
        workspace_dir: The agent's file tools' directory; relative paths are under
            ``$CLAWSEED_HOME``. A system directory is refused.
    """

    max_tool_iterations: PositiveInt = 10
    max_history: PositiveInt = 50
    tool_timeout_s: Seconds = 30.0
    workspace_dir: str = "workspace"
    #: A longer user message is refused with an error naming this key; the turn does not run.
    max_message_chars: PositiveInt = 32_000
    #: Recalled memory put in front of one request's user message (most relevant first).
    max_recall_chars: Annotated[int, msgspec.Meta(ge=0)] = 4_000
    #: One tool call's arguments as JSON; a bigger call is refused unread.
    max_tool_argument_chars: PositiveInt = 65_536
    #: Carry out simple commands asked now ("turn on the red led", "is the door open?")
    #: without the model, through the same policy (docs/small-models.md); false: all to it.
    local_intents: bool = True
    #: Tools offered per model request; unset: 8 for a small local model, all otherwise.
    max_tools: PositiveInt | None = None

    def __post_init__(self) -> None:
        # Raised as "workspace_dir: ..." so the loader names agent.workspace_dir.
        if "\0" in self.workspace_dir:
            raise ValueError("workspace_dir: contains a NUL character; write a plain path")
        if not self.workspace_dir.strip():
            raise ValueError("workspace_dir: is empty; leave it out for $CLAWSEED_HOME/workspace")
        system = system_directory(self.workspace_dir)
        if system is not None:
            raise ValueError(
                f"workspace_dir: {self.workspace_dir!r} is a system directory ({system}); the "
                "agent writes files there. Use a directory of its own, e.g. 'workspace' "
                "(under $CLAWSEED_HOME)"
            )


class AutonomySettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[autonomy]``: the SecurityPolicy.

    Attributes:
        level: ``read_only`` (nothing that acts runs), ``supervised`` (acting calls ask the
            user first) or ``full`` (they run; a device with ``approval = true`` still asks).
        max_actions_per_hour: Per-session limit on acting and dangerous calls.
        approval_timeout_s: Seconds to wait for an approval; no answer is a refusal.
        shell_allowlist: Shell commands whose first word may run (with ``[tools] shell``).
        forbidden_paths: Paths (and everything under them) no tool may touch, added to the
            built-in list (``/etc/shadow``, ``~/.ssh``, and ``$CLAWSEED_HOME``'s secrets,
            config.toml, memory.db); ``~`` expands.
        auto_approve: Tools (glob patterns) that need no approval in ``supervised``; never a
            device configured with ``approval = true``, and not for the rest of a turn that has
            read outside content (``web_fetch``, ``http_request``, a remote tool).
    """

    level: Literal["read_only", "supervised", "full"] = "supervised"
    max_actions_per_hour: PositiveInt = 120
    approval_timeout_s: Seconds = 120.0
    shell_allowlist: list[str] = msgspec.field(
        default_factory=lambda: list(DEFAULT_SHELL_ALLOWLIST)
    )
    forbidden_paths: list[str] = msgspec.field(default_factory=list)
    # Writing the agent's own memory needs no human, or a headless device remembers nothing.
    auto_approve: list[str] = msgspec.field(default_factory=lambda: ["memory_store"])


# --- [tools.http]: the HTTP tools' limits (http_request, web_fetch) ----------------------------

HttpMethod = Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


class HttpSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[tools.http]``: where ``http_request`` and ``web_fetch`` may connect, and their limits.

    Every URL, and every redirect, is checked: its host against ``allowed_domains``, then the
    addresses the host resolves to (loopback, private, link-local, carrier-grade NAT and cloud
    metadata addresses are refused unless ``allowed_networks`` lists them), and the connection
    goes to the address that was checked. See docs/tools.md.

    Attributes:
        allowed_domains: Hosts the tools may reach: ``"example.com"`` (that name),
            ``"*.example.com"`` (its subdomains), ``"*"`` (any host with a public address).
            An IP address in a URL must be listed as written (``"192.168.1.20"``).
        allowed_networks: Non-public networks the tools may reach anyway, in CIDR form
            (``"192.168.1.0/24"``, ``"127.0.0.1/32"``); a cloud metadata address
            (169.254.169.254, fd00:ec2::254 ...) only when listed alone (``/32``, ``/128``).
        methods: What ``http_request`` may send; ``web_fetch`` always sends GET.
        timeout_s: Seconds for one whole exchange, redirects included.
        max_response_bytes: A response body larger than this (after decompression) fails the
            call; nothing past it is read.
        max_redirects: Redirects followed, each checked like the first URL.
        max_output_chars: Text handed to the model; the rest is cut with a note.
    """

    allowed_domains: list[str] = msgspec.field(default_factory=list)
    allowed_networks: list[str] = msgspec.field(default_factory=list)
    methods: Annotated[list[HttpMethod], msgspec.Meta(min_length=1)] = msgspec.field(
        default_factory=lambda: ["GET"]
    )
    timeout_s: Seconds = 10.0
    max_response_bytes: Annotated[int, msgspec.Meta(ge=1024, le=64 * 1024 * 1024)] = 1_048_576
    max_redirects: Annotated[int, msgspec.Meta(ge=0, le=10)] = 3
    max_output_chars: Annotated[int, msgspec.Meta(ge=100, le=200_000)] = 8000

    def __post_init__(self) -> None:
        import ipaddress

        for domain in self.allowed_domains:
            if not domain.strip() or (any(c in domain for c in "/:@ \t") and not _is_ip(domain)):
                raise ValueError(
                    f"allowed_domains: {domain!r} is not a host name; write the name alone, "
                    "e.g. 'example.com', '*.example.com' or '*' (no scheme, port or path)"
                )
        for network in self.allowed_networks:
            try:
                ipaddress.ip_network(network, strict=False)
            except ValueError:
                raise ValueError(
                    f"allowed_networks: {network!r} is not a network; write one in CIDR form, "
                    "e.g. '192.168.1.0/24' or '127.0.0.1/32'"
                ) from None


def _is_ip(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


class ToolsSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[tools]``: which tools the model may see (glob patterns, deny wins) and which
    built-ins are on (``clawseed-edge tools list`` shows each with the key that turns it on).

    Attributes:
        allowed: Tool names (glob patterns) the model may see.
        denied: Tool names (glob patterns) it may not; a name matching both is denied.
        shell: Offer the shell tool (allow-listed commands only, ``[autonomy] shell_allowlist``).
        files: Offer ``file_read``, ``file_write`` and ``file_list`` in the workspace.
        system_info: Offer ``system_info`` (board, CPU temperature, load, memory, disk, uptime,
            Raspberry Pi throttling and under-voltage flags); risk ``read``.
        http_request: Offer ``http_request`` (risk ``act``: it may change something on a
            server, so it asks in ``supervised``); needs ``[tools.http] allowed_domains``.
        web_fetch: Offer ``web_fetch`` (GET, a page as readable text; risk ``read``); needs
            ``[tools.http] allowed_domains``.
        http: Where the HTTP tools may connect, and their limits.
        plugins: Tool plugins to add, each a table with the ``name`` of a factory in the
            entry-point group ``clawseed_edge.tools`` and the plugin's own keys (see
            docs/plugins.md).
    """

    allowed: list[str] = msgspec.field(default_factory=lambda: ["*"])
    denied: list[str] = msgspec.field(default_factory=list)
    shell: bool = False
    files: bool = True
    system_info: bool = True
    http_request: bool = False
    web_fetch: bool = False
    http: HttpSettings = msgspec.field(default_factory=HttpSettings)
    plugins: list[dict[str, Any]] = msgspec.field(default_factory=list)

    def __post_init__(self) -> None:
        for name in ("http_request", "web_fetch"):
            if getattr(self, name) and not self.http.allowed_domains:
                raise ValueError(
                    f"{name}: is on but [tools.http] allowed_domains is empty, so every URL "
                    "would be refused; list the hosts it may reach, e.g. allowed_domains = "
                    '["example.com"] (or ["*"] for any public host)'
                )


class HookSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[[hooks]]``: a hook built by the factory registered under ``name``.

    Attributes:
        name: The name a HookFactory is registered under.
        options: Keyword arguments for that factory.
    """

    name: str
    options: dict[str, Any] = msgspec.field(default_factory=dict)


class GatewaySettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[gateway]``: the HTTP/WebSocket server phones and other clients talk to.

    Every limit bounds what a client may send (bytes, characters, counts); see docs/gateway.md.

    Attributes:
        enabled: ``clawseed-edge run`` hosts the gateway too.
        host: The address to listen on; a non-loopback host also needs ``allow_public_bind``.
        port: The TCP port.
        allow_public_bind: Allow a non-loopback ``host`` (put TLS in front of it).
        require_pairing: Every endpoint but ``/health``, ``/ready`` and ``/pair`` needs a
            paired token (``false``: loopback development only).
        max_body_bytes: Largest HTTP request body.
        max_frame_bytes: Largest WebSocket frame.
        max_message_chars: Longest chat message.
        max_remote_tools: Tools one connection may offer.
        max_tool_schema_bytes: Largest JSON schema of one remote tool.
        remote_tool_timeout_s: Seconds to wait for a client to answer a remote tool call.
        requests_per_minute: Per token (and per client address before pairing), each of HTTP
            requests, WebSocket connects and chat messages counted apart; 0: no limit.
        max_connections: Open chat connections at once (TCP connections of all kinds: this
            and 64 more).
        max_connections_per_address: Open TCP connections one client address may hold.
        header_timeout_s: Seconds a new connection has to send its request headers.
        allowed_hosts: Names besides IP addresses, ``localhost`` and this machine's host name
            under which the gateway is reached (a reverse proxy's name): accepted as ``Host``
            and as the ``Origin`` of a web page that may change state.
        trusted_proxies: Addresses of reverse proxies whose ``X-Forwarded-For`` is believed
            (empty: none, so the client address is the socket's peer; ``*`` trusts everyone).
        pairing_code_ttl_s: Seconds a pairing code lives.
        pairing_code_max_failures: Wrong guesses, from all clients together, that end a
            pairing code (a new one is asked for with ``clawseed-edge pair``).
        pairing_attempts_per_minute: Wrong pairing codes accepted a minute from all clients
            together (each address is also locked out after 5); 0: no global budget.
    """

    enabled: bool = False
    host: Annotated[str, msgspec.Meta(min_length=1)] = "127.0.0.1"
    port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 42617
    allow_public_bind: bool = False
    require_pairing: bool = True
    max_body_bytes: Annotated[int, msgspec.Meta(ge=1024)] = 65536
    max_frame_bytes: Annotated[int, msgspec.Meta(ge=1024)] = 65536
    max_message_chars: Annotated[int, msgspec.Meta(ge=1)] = 16000
    max_remote_tools: Annotated[int, msgspec.Meta(ge=0)] = 32
    max_tool_schema_bytes: Annotated[int, msgspec.Meta(ge=64)] = 8192
    remote_tool_timeout_s: Annotated[float, msgspec.Meta(gt=0)] = 30.0
    requests_per_minute: Annotated[int, msgspec.Meta(ge=0)] = 120
    max_connections: Annotated[int, msgspec.Meta(ge=1)] = 256
    max_connections_per_address: Annotated[int, msgspec.Meta(ge=1)] = 32
    header_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=300)] = 10.0
    allowed_hosts: list[Annotated[str, msgspec.Meta(min_length=1, max_length=253)]] = msgspec.field(
        default_factory=list
    )
    trusted_proxies: list[Annotated[str, msgspec.Meta(min_length=1)]] = msgspec.field(
        default_factory=list
    )
    pairing_code_ttl_s: Annotated[float, msgspec.Meta(ge=10, le=86400)] = 600.0
    pairing_code_max_failures: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 10
    pairing_attempts_per_minute: Annotated[int, msgspec.Meta(ge=0)] = 30


class TelegramSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[channels.telegram]``: a Telegram bot that long-polls the Bot API (nothing is exposed).

    See docs/telegram.md and docs/channels.md.

    Attributes:
        enabled: ``clawseed-edge run`` hosts the bot.
        bot_token_env: The name under which the bot token is looked up: the environment
            first, then the secrets file (``clawseed-edge secrets set TELEGRAM_BOT_TOKEN``).
        allowed_users: Numeric Telegram user ids served; nobody else is (a stranger is told
            their id and how the owner can allow it).
        api_base: The Bot API's address (a local Bot API server, or a test fake).
        poll_timeout_s: Seconds one long poll waits for updates.
        edit_interval_s: Least seconds between two edits of a streamed answer in one chat.
        max_message_chars: Longest message accepted from a user (longer ones are refused).
        groups: Serve group chats too, but only messages from allowed users that mention the
            bot (``@its_name``) or reply to it; off, group chats are ignored.
    """

    enabled: bool = False
    bot_token_env: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")] = (
        "TELEGRAM_BOT_TOKEN"
    )
    allowed_users: Annotated[
        list[Annotated[int, msgspec.Meta(ge=1, le=2**53)]], msgspec.Meta(max_length=1000)
    ] = msgspec.field(default_factory=list)
    api_base: Annotated[str, msgspec.Meta(pattern=r"^https?://[^\s/]+(/[^\s]*)?$")] = (
        "https://api.telegram.org"
    )
    poll_timeout_s: Annotated[int, msgspec.Meta(ge=1, le=50)] = 30
    edit_interval_s: Annotated[float, msgspec.Meta(ge=1.0, le=60.0)] = 1.0
    max_message_chars: Annotated[int, msgspec.Meta(ge=1, le=32_000)] = 4096
    groups: bool = False


class ChannelsSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[channels]``: the ways in besides the gateway.

    Attributes:
        telegram: A Telegram bot.
        plugins: ``[channels.<name>]`` tables of channels from plugins (entry point group
            ``clawseed_edge.channels``), each passed as it is to its factory; ``enabled =
            false`` in one keeps it off. See docs/plugins.md.
    """

    telegram: TelegramSettings = msgspec.field(default_factory=TelegramSettings)
    plugins: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)


_MQTT_PREFIX = r"^[A-Za-z0-9_/-]{1,64}$"


class MqttSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[mqtt]``: the MQTT channel (Home Assistant discovery) on the user's broker.

    See docs/mqtt.md. The ``mqtt`` extra (``pip install 'clawseed-edge[mqtt]'``) brings its
    client; nothing of it is imported while ``enabled`` is false.

    Attributes:
        enabled: ``clawseed-edge run`` connects to the broker.
        host: The broker's host name or address.
        port: The broker's port (1883; 8883 is the usual TLS port).
        node_id: Names this device on the broker (letters, digits, ``_`` and ``-``); empty:
            the host name.
        discovery_prefix: Home Assistant's discovery prefix.
        username: The broker account; empty: anonymous.
        password_env: The name of the environment variable or secret
            (``clawseed-edge secrets set NAME``) that holds the account's password.
        tls: Connect with TLS (the broker's certificate is checked).
        ca_file: The CA certificate that signed the broker's certificate (empty: the
            system's CAs).
        protocol: ``"3.1.1"`` or ``"5"``.
        keepalive_s: Seconds between keep-alive pings; the broker declares the device offline
            (its last will) after 1.5 times this with no word from it.
        reconnect_max_s: The longest wait between reconnection attempts (it doubles from 1 s).
        max_payload_bytes: A longer incoming payload is dropped (logged).
        max_commands_per_minute: Commands taken from the broker per minute; more are dropped
            (logged). The SecurityPolicy's own rates still apply to each one.
        max_remote_entries: Other nodes' devices (and, apart, sensors) that enter the device
            tools' enums as ``<node>.<name>``; more are left out (logged).
        max_calls_per_node_per_minute: Fleet calls taken from one calling node per minute
            (a token bucket per node; the excess is dropped, logged once a minute).
        fleet_wait_s: How long one-shot ``agent``/``chat`` wait for the other nodes'
            retained descriptions after connecting.
        nodes: The other nodes of this fleet (their node ids): listed before any other node
            the broker tells of, whatever else is published there (docs/fleet.md).
        estop_from_ha: Offer Home Assistant an emergency-stop button (anyone who may publish
            to ``clawseed/<node>/estop/press`` on the broker can press it); ``false`` removes
            the button and ignores the topic.
        camera_images: Publish each camera's newest snapshot (the JPEG, retained: the broker
            keeps one per camera) for Home Assistant's ``image`` entity; ``false`` publishes
            none and empties the retained ones (docs/camera.md).
    """

    enabled: bool = False
    host: Annotated[str, msgspec.Meta(min_length=1, max_length=253)] = "127.0.0.1"
    port: Annotated[int, msgspec.Meta(ge=1, le=65535)] = 1883
    node_id: Annotated[str, msgspec.Meta(pattern=r"^([A-Za-z0-9_-]{1,64})?$")] = ""
    discovery_prefix: Annotated[str, msgspec.Meta(pattern=_MQTT_PREFIX)] = "homeassistant"
    username: Annotated[str, msgspec.Meta(max_length=256)] = ""
    password_env: Annotated[str, msgspec.Meta(pattern=r"^([A-Za-z_][A-Za-z0-9_]{0,63})?$")] = ""
    tls: bool = False
    ca_file: str = ""
    protocol: Literal["3.1.1", "5"] = "3.1.1"
    keepalive_s: Annotated[int, msgspec.Meta(ge=5, le=3600)] = 60
    reconnect_max_s: Annotated[float, msgspec.Meta(ge=1, le=3600)] = 60.0
    max_payload_bytes: Annotated[int, msgspec.Meta(ge=64, le=1_048_576)] = 4096
    max_commands_per_minute: Annotated[int, msgspec.Meta(ge=1, le=6000)] = 60
    max_remote_entries: Annotated[int, msgspec.Meta(ge=0, le=1024)] = 64
    max_calls_per_node_per_minute: Annotated[int, msgspec.Meta(ge=1, le=6000)] = 30
    fleet_wait_s: Annotated[float, msgspec.Meta(ge=0, le=10)] = 1.0
    nodes: Annotated[
        list[Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_-]{1,64}$")]],
        msgspec.Meta(max_length=64),
    ] = msgspec.field(default_factory=list)
    estop_from_ha: bool = True
    camera_images: bool = True

    def __post_init__(self) -> None:
        if self.ca_file and not self.tls:
            raise ValueError("ca_file is set but tls is false; set tls = true to use it")
        if self.password_env and not self.username:
            raise ValueError("password_env is set without a username; set username too")


class HardwareSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[hardware]``: the board the top-level ``[[devices]]`` are wired to.

    Attributes:
        board: A Pi board id (``rpi4b``) or ``sim``. Required as soon as there are
            ``[[devices]]``: the loader refuses to guess (simulated pins on a real Pi light
            nothing and say nothing).
        pin_factory: ``auto`` (lgpio on hardware, mock with ``--sim``), ``lgpio`` or ``mock``.
    """

    board: str | None = None
    pin_factory: PinFactoryKind = "auto"


class HistorySettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """``[history]``: sensor history kept by the service in ``$CLAWSEED_HOME/history.db``.

    Attributes:
        enabled: Record the filtered values of sensors with an ``update_interval``.
        raw_hours: Keep every value this many hours (then only aggregates).
        minute_days: Keep per-minute min/max/mean/count this many days.
        hour_days: Keep per-hour min/max/mean/count this many days.
        flush_s: Write the batch of new values this often (seconds).
    """

    enabled: bool = True
    raw_hours: Annotated[float, msgspec.Meta(ge=1, le=24 * 366)] = 48.0
    minute_days: Annotated[float, msgspec.Meta(ge=1, le=3660)] = 30.0
    hour_days: Annotated[float, msgspec.Meta(ge=1, le=3660)] = 366.0
    flush_s: Annotated[float, msgspec.Meta(ge=1, le=3600)] = 10.0

    def retention(self) -> HistoryRetention:
        from clawseed_edge.state import HistoryRetention

        return HistoryRetention(
            self.raw_hours * 3600, self.minute_days * 86400, self.hour_days * 86400
        )


class Config(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The whole config file.

    Attributes:
        provider: The model server and model.
        embedding: A provider for embeddings (e.g. ``name = "ollama"``, ``model =
            "nomic-embed-text"``): turns on vector recall in memory; unset, recall is
            keyword-only (FTS5 BM25).
        memory: The memory store.
        hardware: The Pi header that ``[[devices]]`` are wired to.
        devices: Outputs and inputs on the Pi header's pins.
        peripherals: More boards (another Pi header, a plugin's board), each a table whose
            ``type`` names the factory that validates the rest of its keys; see
            docs/hardware.md.
        sensors: I2C and sysfs sensors; see docs/sensors.md.
        displays: Character displays, with the same keys as ``[[sensors]]``.
        i2c: Bus-wide I2C settings.
        agent: The turn engine.
        autonomy: What may run without asking.
        tools: Which tools the model may see.
        hooks: Extra hooks around every tool call, after the SecurityPolicy.
        gateway: The HTTP/WebSocket server.
        channels: The other ways in (Telegram).
        scheduler: Scheduled jobs run by the service.
        jobs: Jobs declared in the file, synced into state.db at start.
        history: Sensor history (docs/sensors.md, History).
        automations: Rules on sensor readings and input events that act without the model
            (docs/sensors.md, Automations).
        mqtt: The MQTT channel (Home Assistant discovery).
        cameras: Cameras; see docs/camera.md.
    """

    provider: ProviderConfig = msgspec.field(default_factory=ProviderConfig)
    embedding: ProviderConfig | None = None
    memory: MemoryConfig = msgspec.field(default_factory=MemoryConfig)
    hardware: HardwareSettings = msgspec.field(default_factory=HardwareSettings)
    devices: list[DeviceConfig] = msgspec.field(default_factory=list)
    peripherals: list[dict[str, Any]] = msgspec.field(default_factory=list)
    sensors: list[SensorConfig] = msgspec.field(default_factory=list)
    displays: list[SensorConfig] = msgspec.field(default_factory=list)
    i2c: I2CSettings = msgspec.field(default_factory=I2CSettings)
    agent: AgentSettings = msgspec.field(default_factory=AgentSettings)
    autonomy: AutonomySettings = msgspec.field(default_factory=AutonomySettings)
    tools: ToolsSettings = msgspec.field(default_factory=ToolsSettings)
    hooks: list[HookSettings] = msgspec.field(default_factory=list)
    gateway: GatewaySettings = msgspec.field(default_factory=GatewaySettings)
    channels: ChannelsSettings = msgspec.field(default_factory=ChannelsSettings)
    # Scheduled jobs (docs/scheduler.md): the scheduler's settings and the declared jobs.
    scheduler: SchedulerSettings = msgspec.field(default_factory=SchedulerSettings)
    jobs: list[JobSettings] = msgspec.field(default_factory=list)
    #: Model Context Protocol: ``/mcp`` on the gateway, and other MCP servers' tools.
    mcp: McpSettings = msgspec.field(default_factory=McpSettings)
    history: HistorySettings = msgspec.field(default_factory=HistorySettings)
    automations: list[AutomationConfig] = msgspec.field(default_factory=list)
    mqtt: MqttSettings = msgspec.field(default_factory=MqttSettings)
    #: Cameras (docs/camera.md): snapshots the model can see, motion as an input.
    cameras: list[CameraConfig] = msgspec.field(default_factory=list)

    def hardware_with_devices(self) -> HardwareConfig:
        """The Pi header of ``[hardware]`` with the top-level ``[[devices]]``.

        The loader has checked that ``board`` is set when there are devices; with no devices
        an unset board is ``sim`` (nothing is driven).
        """
        return HardwareConfig(
            board=self.hardware.board or "sim",
            pin_factory=self.hardware.pin_factory,
            devices=tuple(self.devices),
        )
