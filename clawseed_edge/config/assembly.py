"""Assembling a running agent from a config: provider, memory, tools, peripherals, policy, hooks.

:func:`assemble` is what ``clawseed-edge`` does at start; :func:`assemble_agent` does the same
from a path and returns just the Agent. Assembly lives in the config layer, above the engine
(the engine imports nothing from here). An
application that wants its own pieces passes them in (a provider, a provider registry, hook
factories, an approver, an observer) or assembles its own with
:class:`~clawseed_edge.agent.builder.AgentBuilder`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from clawseed_edge.agent.builder import AgentBuilder
from clawseed_edge.agent.engine import Agent
from clawseed_edge.agent.hooks import HookFactoryRegistry
from clawseed_edge.agent.intents import DeviceWords, LocalIntents, SensorWords
from clawseed_edge.agent.redact import Scrubber, install_log_redaction
from clawseed_edge.agent.registry import ToolRegistry
from clawseed_edge.agent.security import DEFAULT_FORBIDDEN_PATHS, SecurityPolicy
from clawseed_edge.api import (
    ActionLedger,
    Approver,
    ConfigInvalid,
    EmbeddingProvider,
    EstopLatch,
    Hook,
    Memory,
    Observer,
    Peripheral,
    Provider,
    RemoteDevices,
    SessionStore,
    Tool,
    ToolContext,
)

from .file import LoadedConfig, load_config
from .paths import resolve_in_home
from .schema import Config
from .tool_table import all_tools

__all__ = [
    "Runtime",
    "assemble",
    "assemble_agent",
    "build_policy",
    "build_provider",
    "secret_scrubber",
]

_log = logging.getLogger(__name__)

#: How long a capability probe of the model server may take.
PROBE_TIMEOUT_S = 10.0


@dataclass(slots=True)
class Runtime:
    """Everything :func:`assemble` built; close it with ``await runtime.aclose()``.

    The agent owns the resources: closing it (``runtime.aclose()`` or ``agent.aclose()``)
    refuses new turns, aborts running ones, applies every output's safe value, then
    disconnects the peripherals, closes memory and finally the provider, each step bounded.
    Idempotent.
    """

    agent: Agent
    provider: Provider
    memory: Memory
    peripherals: list[Peripheral]
    loaded: LoadedConfig
    workspace_dir: Path
    probe_task: asyncio.Task[None] | None = None
    #: Other nodes' devices in the device tools (``[mqtt] enabled``; the channel fills it).
    remote: RemoteDevices | None = None

    async def probe_provider(self, timeout_s: float = PROBE_TIMEOUT_S) -> None:
        """Ask the provider (and its fallbacks) what the model can do, within ``timeout_s``.

        An Ollama model without tool support gets tools described in the prompt from then
        on. A failure is logged, never raised: the first turn reports the provider's error
        with its advice. Safe to cancel.
        """
        probe = getattr(self.provider, "probe", None)
        if probe is None:
            return
        try:
            async with asyncio.timeout(timeout_s):
                await probe()
        except Exception as exc:
            _log.warning("could not probe the model server: %s", exc)

    async def backfill_memory(self) -> int:
        """Embed the memory entries that have no vector (stored before ``[embedding]`` was
        configured, or while the embedder was down); returns how many got one.

        Nothing to do without vector recall. Pages through the entries and stops at the first
        batch the embedder cannot embed (one warning; the rest wait for the next start). A
        failure is logged, never raised. Safe to cancel.
        """
        backfill = getattr(self.memory, "backfill_vectors", None)
        if backfill is None or not getattr(self.memory, "vector_enabled", False):
            return 0
        try:
            done = int(await backfill())
        except Exception as exc:
            _log.warning("memory: could not embed the entries without a vector: %s", exc)
            return 0
        if done:
            _log.info("memory: embedded %d entries that had no vector", done)
        return done

    async def _background(self, timeout_s: float, backfill: bool) -> None:
        await self.probe_provider(timeout_s)
        if backfill:
            await self.backfill_memory()

    def start_background_probe(
        self, timeout_s: float = PROBE_TIMEOUT_S, *, restart: bool = False
    ) -> asyncio.Task[None]:
        """Start :meth:`probe_provider`, then (once per runtime) :meth:`backfill_memory`, as a
        task and return it (once; later calls return the same task). A service calls this once
        it is ready, so that start-up does no network I/O and loads no provider SDK;
        :meth:`aclose` cancels the task if it still runs.

        ``restart=True`` (a reloaded provider) cancels a probe still running and starts anew.
        """
        if restart and self.probe_task is not None:
            self.probe_task.cancel()
            self.probe_task = None
        if self.probe_task is None:
            self.probe_task = asyncio.get_running_loop().create_task(
                self._background(timeout_s, backfill=not restart), name="provider-probe"
            )
        return self.probe_task

    async def aclose(self) -> None:
        """Close the agent and everything it was assembled with. Idempotent."""
        task = self.probe_task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self.agent.aclose()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _local_intents(config: Config) -> LocalIntents | None:
    """The local-intent stage from the configured devices and sensors (None when off)."""
    if not config.agent.local_intents:
        return None
    devices = [DeviceWords(d.name, str(d.kind)) for d in config.devices]
    sensors = [SensorWords.for_driver(s.name, s.driver) for s in config.sensors]
    return LocalIntents(devices, sensors)


async def assemble_agent(config: LoadedConfig | str | Path | None = None, **options: Any) -> Agent:
    """Load a config (a path, a LoadedConfig or None for the default) and assemble its Agent.

    Provider (with fallbacks), memory, built-in tools, peripherals (connected), the
    SecurityPolicy and the ``[[hooks]]`` all come from the file; ``aclose()`` (or
    ``async with``) applies safe states, disconnects and closes them again.

    Args:
        config: A path to a TOML file, a ``LoadedConfig``, or None for
            ``$CLAWSEED_HOME/config.toml`` (the embedded default when it does not exist).
        **options: Passed on to :func:`assemble`: ``sim``, ``provider``, ``provider_registry``
            (a custom provider factory registry), ``approver``, ``observer``,
            ``hook_factories``, ``extra_tools``.

    Raises:
        ConfigError: The file is missing or invalid (the message names the key).
        HardwareError: The wiring is wrong or a board cannot be opened.
    """
    if not isinstance(config, LoadedConfig):
        config = load_config(config)
    runtime = await assemble(config, **options)
    return runtime.agent


def _with_key(pc: Any, secrets_path: Path) -> Any:
    """``pc`` with its API key (and its fallbacks' keys) read from the env or the secrets file."""
    from .secrets import lookup_secret

    fallbacks = [_with_key(f, secrets_path) for f in pc.fallbacks]
    api_key = pc.api_key
    if api_key is None and pc.api_key_env:
        api_key = lookup_secret(pc.api_key_env, secrets_path)
    return msgspec.structs.replace(pc, api_key=api_key, fallbacks=fallbacks)


def own_files(loaded: LoadedConfig) -> list[str]:
    """The files no tool may touch because they hold credentials or the agent's own state.

    The secrets file, the config file, the memory database, ``state.db`` (pairing tokens and
    the device ledger: deleting it would reset the hardware rate limits), the Telegram pairing
    file, the ``run`` directory (estop handshakes, lgpio's FIFO) and this process's environment
    (``/proc/self/environ`` resolves to it in the policy; it holds the keys that came from the
    environment). Each entry also covers what is written beside it: ``config.toml.bak``,
    ``.secrets.XXXX`` temp files, ``state.db-wal`` (the rule of
    :class:`~clawseed_edge.agent.access.ForbiddenPaths`).
    """
    home = loaded.home
    files = [
        str(home / "secrets"),
        str(home / "config.toml"),
        str(home / "run"),
        str(home / "state.db"),
        # The stem: telegram-paired.json and the telegram-paired.tmp it is written through.
        str(home / "telegram-paired"),
    ]
    if not loaded.embedded and loaded.source not in files:
        files.append(loaded.source)
    if loaded.config.memory.backend == "sqlite":
        files.append(str(resolve_in_home(loaded.config.memory.path, home)))
    files.append(f"/proc/{os.getpid()}/environ")
    return files


def build_policy(
    loaded: LoadedConfig,
    *,
    approver: Approver | None = None,
    observer: Observer | None = None,
    ledger: ActionLedger | None = None,
) -> SecurityPolicy:
    """The SecurityPolicy the config describes, its own files forbidden (see :func:`own_files`).

    With a ``ledger`` shared between processes (``state.db``) the device rate limits hold
    across them, and the policy's clock is Unix time so their stamps compare.

    Raises:
        ConfigInvalid: an ``[autonomy]`` value the policy refuses (names the file and key).
    """
    config = loaded.config
    try:
        return SecurityPolicy(
            autonomy=config.autonomy.level,
            approver=approver,
            allowed_commands=config.autonomy.shell_allowlist,
            forbidden_paths=[
                *DEFAULT_FORBIDDEN_PATHS,
                *own_files(loaded),
                *config.autonomy.forbidden_paths,
            ],
            workspace_dir=resolve_in_home(config.agent.workspace_dir, loaded.home),
            max_actions_per_hour=config.autonomy.max_actions_per_hour,
            approval_timeout_s=config.autonomy.approval_timeout_s,
            auto_approve=config.autonomy.auto_approve,
            observer=observer,
            ledger=ledger,
            clock=time.time if ledger is not None else time.monotonic,
        )
    except ValueError as exc:
        key = "autonomy.auto_approve" if "auto_approve" in str(exc) else "autonomy"
        raise ConfigInvalid(str(exc), file=loaded.source, key=key) from exc


def secret_scrubber(loaded: LoadedConfig) -> Scrubber:
    """A scrubber that knows the configured secrets' values: every value of the secrets file,
    the API key of the provider, its fallbacks and the embedding provider, and the Telegram
    bot token (``[channels.telegram] bot_token_env``).

    Raises:
        ConfigInvalid: the secrets file is readable by others, or a line is not NAME=value.
    """
    from .secrets import read_secrets

    secrets_path = loaded.home / "secrets"
    values = list(read_secrets(secrets_path).values())
    pending = [loaded.config.provider]
    if loaded.config.embedding is not None:
        pending.append(loaded.config.embedding)
    while pending:
        pc = pending.pop()
        pending.extend(pc.fallbacks)
        keyed = _with_key(msgspec.structs.replace(pc, fallbacks=[]), secrets_path)
        if keyed.api_key:
            values.append(keyed.api_key)
    # The Telegram bot token, from the environment too (the file's values are in already).
    from .secrets import lookup_secret

    token = lookup_secret(loaded.config.channels.telegram.bot_token_env, secrets_path)
    if token:
        values.append(token)
    return Scrubber(values)


def build_provider(loaded: LoadedConfig, registry: Any | None = None) -> Provider:
    """The configured provider (with its fallbacks), API keys taken from env or secrets."""
    from clawseed_edge.providers.registry import create_provider, default_registry

    config = _with_key(loaded.config.provider, loaded.home / "secrets")
    try:
        return create_provider(config, registry or default_registry())
    except ConfigInvalid as exc:
        if exc.file is not None:
            raise
        # An unknown name or a plugin's [provider.settings]: say which file it is in.
        message = str(exc).removeprefix(f"{exc.key}: ") if exc.key else str(exc)
        raise type(exc)(message, file=loaded.source, key=exc.key) from exc


def build_embedder(loaded: LoadedConfig, registry: Any | None = None) -> EmbeddingProvider | None:
    """The ``[embedding]`` provider for memory's vector recall, or None when not configured.

    It is one provider without fallbacks: vectors from different models are not comparable.

    Raises:
        ConfigInvalid: the named provider cannot make embeddings.
    """
    if loaded.config.embedding is None:
        return None
    from clawseed_edge.providers.registry import default_registry

    config = _with_key(loaded.config.embedding, loaded.home / "secrets")
    embedder = (registry or default_registry()).create(config)
    if not (embedder.capabilities.embeddings and isinstance(embedder, EmbeddingProvider)):
        raise ConfigInvalid(
            f"provider {config.name!r} cannot make embeddings; use ollama (e.g. model "
            "'nomic-embed-text') or an OpenAI-compatible server",
            file=loaded.source,
            key="embedding.name",
        )
    return embedder


async def assemble(
    loaded: LoadedConfig,
    *,
    sim: bool = False,
    provider: Provider | None = None,
    provider_registry: Any | None = None,
    approver: Approver | None = None,
    observer: Observer | None = None,
    hook_factories: HookFactoryRegistry | None = None,
    extra_tools: Sequence[Tool] = (),
    connect: bool = True,
    probe_at_start: bool = True,
    latch: EstopLatch | None = None,
) -> Runtime:
    """Build and connect everything the config describes.

    Args:
        loaded: From :func:`~clawseed_edge.config.file.load_config`.
        sim: Run the configured devices on mock pins (no hardware touched).
        provider: Use this provider instead of the configured one.
        provider_registry: Factories for provider names (default: built-ins + plugins).
        approver: Who approves calls (default: a y/n prompt on the terminal).
        observer: Receives observer events (default: none).
        hook_factories: Factories for the ``[[hooks]]`` the config declares.
        extra_tools: More tools to register (an application's own).
        connect: Connect the peripherals (False: build only, for listing tools).
        probe_at_start: Ask the model server what the model can do before returning (bounded
            to 10 s; a failure is logged). A service passes False and calls
            :meth:`Runtime.start_background_probe` once it is ready: no network I/O and no
            provider SDK before then.
        latch: The service's emergency-stop latch: the policy refuses by it, a serial board
            set up again after a reset honours it, and while it holds every output is
            connected at its safe level, never at ``initial``.

    Raises:
        ConfigInvalid / HardwareError: The config or the wiring is wrong (names file and key).
    """
    config = loaded.config
    home = loaded.home
    _ensure_home(home)
    workspace = resolve_in_home(config.agent.workspace_dir, home)
    # Everything that only reads the config first: a mistake there leaves nothing open.
    ledger = _device_ledger(home)
    if latch is None and connect:
        # No service handed its latch over (a one-shot `agent`): the stored one still holds.
        latch = await _stored_latch(home)
    policy = build_policy(loaded, approver=approver, observer=observer, ledger=ledger)
    policy.latch = latch
    scrubber = secret_scrubber(loaded)
    # Log lines (ours and the libraries', e.g. a URL with a key) pass the scrubber too.
    install_log_redaction(scrubber)
    hooks = _build_hooks(config, loaded.source, hook_factories or HookFactoryRegistry())
    peripherals = _build_peripherals(loaded, sim=sim)
    provider = provider if provider is not None else build_provider(loaded, provider_registry)

    opened: list[Callable[[], Awaitable[None]]] = [provider.aclose, ledger.aclose]
    try:
        embedder = build_embedder(loaded, provider_registry)
        close_embedder = getattr(embedder, "aclose", None)
        if close_embedder is not None:
            opened.append(close_embedder)
        memory = await _open_memory(config, home, embedder, scrubber)
        opened.append(memory.aclose)
        from clawseed_edge.peripherals.safety import connect_peripheral

        for p in peripherals:
            opened.append(p.disconnect)  # disconnect applies the safe values first
            if connect:
                await connect_peripheral(p, latch)
        tools: list[Tool] = all_tools(
            config, memory, workspace=workspace, scrub=scrubber.scrub, source=loaded.source
        )
        tools.extend(extra_tools)
        mcp_registry = await _open_mcp(config, opened, home / "secrets")
        builder = (
            AgentBuilder()
            .provider(provider)
            .tools(tools)
            .memory(memory)
            .workspace_dir(workspace)
            .allowed_tools(config.tools.allowed)
            .denied_tools(config.tools.denied)
            .hooks(hooks)
            .security_policy(policy)
            .peripherals(peripherals)
            .max_tool_iterations(config.agent.max_tool_iterations)
            .tool_timeout(config.agent.tool_timeout_s)
            .max_history(config.agent.max_history)
            .option("max_message_chars", config.agent.max_message_chars)
            .option("max_recall_chars", config.agent.max_recall_chars)
            .option("max_tool_argument_chars", config.agent.max_tool_argument_chars)
            .option("scrub", scrubber.scrub)
            .option("local_intents", _local_intents(config))
            .option("max_tools", config.agent.max_tools)
        )
        if mcp_registry is not None:
            builder = builder.registry(mcp_registry)
        if approver is not None:
            builder = builder.approver(approver)
        if observer is not None:
            builder = builder.observer(observer)
        # NoneMemory (memory disabled, or a database that could not open: said at start)
        # stores no history; handing it over would fail every turn's save.
        from clawseed_edge.memory.none import NoneMemory

        if isinstance(memory, SessionStore) and not isinstance(memory, NoneMemory):
            builder = builder.session_store(memory)
        agent = builder.build()
    except BaseException:
        for close in reversed(opened):
            try:
                await close()
            except Exception:
                _log.exception("cleanup after a failed start also failed")
        raise
    _wire_memory_upkeep(agent, memory, config, scrubber)
    remote = _offer_remote_devices(agent, config)
    for close in opened[1:]:  # the agent closes its provider itself
        agent.on_close(close)
    runtime = Runtime(
        agent=agent,
        provider=provider,
        memory=memory,
        peripherals=peripherals,
        loaded=loaded,
        workspace_dir=workspace,
        remote=remote,
    )
    if connect and probe_at_start:
        try:
            await runtime.probe_provider()
        except BaseException:  # cancelled: close what was opened
            await runtime.aclose()
            raise
    return runtime


async def _stored_latch(home: Path) -> EstopLatch | None:
    """The emergency-stop latch in ``home``'s state.db, when one is stored latched."""
    from clawseed_edge.state.latch import read_stored_latch

    try:
        state = await asyncio.to_thread(read_stored_latch, home / "state.db")
    except Exception as exc:  # sqlite3.Error: unreadable; the service itself would say so
        _log.warning("could not read the emergency-stop latch in state.db (%s)", exc)
        return None
    if not state.latched:
        return None
    latch = EstopLatch()
    latch.restore(state)
    _log.warning("the emergency stop is latched (%s): outputs stay safe until a reset", state.why)
    return latch


async def _open_mcp(
    config: Config, opened: list[Callable[[], Awaitable[None]]], secrets_path: Path
) -> ToolRegistry | None:
    """Start the ``[[mcp.servers]]`` (a failed one is logged and skipped) and return a registry
    holding their tools (``<server>__<tool>``, source ``mcp:<server>``); None when there are
    none configured (the client is then never imported)."""
    if not config.mcp.servers:
        return None
    from clawseed_edge.agent.registry import Mcp, ToolRegistry
    from clawseed_edge.api import ToolNameClash, ToolNameInvalid
    from clawseed_edge.tools.mcp_client import open_mcp_servers

    from .mcp import with_secret_env

    servers = []
    for settings in config.mcp.servers:
        try:
            servers.append(with_secret_env(settings, secrets_path))
        except ConfigInvalid as exc:
            _log.error("MCP server %r skipped: %s", settings.name, exc)
    connections, tools = await open_mcp_servers(servers, config.tools.http.allowed_networks)
    opened.extend(c.aclose for c in connections)
    registry = ToolRegistry(allowed=config.tools.allowed, denied=config.tools.denied)
    for tool in tools:
        try:
            registry.register(tool, Mcp(tool.connection.name))
        except (ToolNameClash, ToolNameInvalid) as exc:
            _log.warning("MCP tool %r skipped: %s", tool.name, exc)
    return registry


def _offer_remote_devices(agent: Agent, config: Config) -> RemoteDevices | None:
    """With ``[mqtt]`` on, the device tools also list other nodes' devices (``shed.fan``)."""
    if not config.mqtt.enabled:
        return None
    from clawseed_edge.peripherals.fleet_tools import fleet_tools

    remote = RemoteDevices(limit=config.mqtt.max_remote_entries)
    registry = agent.registry
    local = {t.name: t for t in registry.tools()}
    for tool in fleet_tools(local, remote):
        registry.register_or_replace(tool)  # keeps a local tool's place in the list
    return remote


def _build_hooks(config: Config, source: str, factories: HookFactoryRegistry) -> list[Hook]:
    try:
        return factories.build_all([{"name": h.name, **h.options} for h in config.hooks])
    except ConfigInvalid as exc:
        message = str(exc).removeprefix(f"{exc.key}: ") if exc.key else str(exc)
        raise ConfigInvalid(message, file=source, key=exc.key or "hooks") from exc


# --- pieces -----------------------------------------------------------------------------------


def _ensure_home(home: Path) -> None:
    """Create ``$CLAWSEED_HOME`` (mode 0700: it holds memory and secrets) if it is missing."""
    if home.is_dir():
        return
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigInvalid(
            f"cannot create the home directory {home}: {exc.strerror}; set CLAWSEED_HOME to a "
            "writable directory"
        ) from exc


async def _open_memory(
    config: Config, home: Path, embedder: EmbeddingProvider | None, scrubber: Scrubber
) -> Memory:
    from clawseed_edge.memory.factory import open_memory

    if embedder is None:
        _log.info("no [embedding] provider configured: memory recall is keyword-only")
    return await open_memory(config.memory, home, embedder=embedder, redactor=scrubber)


def _wire_memory_upkeep(agent: Agent, memory: Memory, config: Config, scrubber: Scrubber) -> None:
    """After each completed turn: a dated ``daily`` entry, flagged facts promoted to ``core``
    (``remember that ...``), and retention pruning once a day. What is stored is scrubbed of
    credentials first (a user may paste a key; a model may repeat one)."""
    consolidate = getattr(memory, "consolidate", None)
    prune_if_due = getattr(memory, "prune_if_due", None)
    if consolidate is None or prune_if_due is None:
        return  # NoneMemory or a third-party store without upkeep
    retention_days = config.memory.retention_days

    async def upkeep(context: ToolContext, text: str, answer: str) -> None:
        await consolidate(
            context.session_id,
            scrubber.scrub(text),
            scrubber.scrub(answer),
            namespace=context.namespace,
        )
        await prune_if_due(retention_days)

    agent.on_turn_done(upkeep)


def _device_ledger(home: Path) -> Any:
    """The ledger of recent device actions in ``$CLAWSEED_HOME/state.db`` (opened on first use)."""
    from clawseed_edge.state import DeviceLedger

    return DeviceLedger(home / "state.db")


def _build_peripherals(loaded: LoadedConfig, *, sim: bool) -> list[Peripheral]:
    """The Pi header of ``[hardware]`` + ``[[devices]]`` and every ``[[peripherals]]`` table, from
    the tables the loader validated (none is validated twice)."""
    from .hardware import build_peripherals

    workspace = resolve_in_home(loaded.config.agent.workspace_dir, loaded.home)
    return build_peripherals(
        loaded.config,
        loaded.source,
        sim=sim,
        tables=loaded.peripheral_tables,
        workspace=workspace,
    )
