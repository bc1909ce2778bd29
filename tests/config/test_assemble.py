"""assemble_agent assembles provider, memory, tools, peripherals, policy and hooks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.agent import BaseHook, HookFactoryRegistry
from clawseed_edge.api import ConfigInvalid, HookDecision, ToolCall, ToolContext
from clawseed_edge.config import assemble_agent
from clawseed_edge.providers.config import ProviderConfig
from clawseed_edge.providers.registry import ProviderFactoryRegistry
from clawseed_edge.testing import ScriptedProvider

CONFIG = """
[provider]
name = "mine"
[agent]
local_intents = false  # the scripted model is what this turn tests
[autonomy]
level = "full"
[tools]
denied = ["file_*"]
[[hooks]]
name = "audit"
options = { label = "A" }
[hardware]
board = "sim"
[[devices]]
name = "pump"
pin = "GPIO23"
kind = "relay"
active_high = false
"""


class AuditHook(BaseHook):
    def __init__(self, label: str, seen: list[str]) -> None:
        self.name = f"audit-{label}"
        self.seen = seen

    async def before_tool(self, call: ToolCall, tool: Any, context: ToolContext) -> HookDecision:
        self.seen.append(call.name)
        return HookDecision.proceed()


async def test_assemble_agent_with_a_custom_provider_registry_and_hook_factory(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    scripted = ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="pump", on=True), "Pump on."]
    )
    made: list[ProviderConfig] = []

    def mine(config: ProviderConfig) -> ScriptedProvider:
        made.append(config)
        return scripted

    providers = ProviderFactoryRegistry(load_entry_points=False)
    providers.register("mine", mine)
    seen: list[str] = []
    hooks = HookFactoryRegistry()
    hooks.register("audit", lambda options: AuditHook(options["label"], seen))

    agent = await assemble_agent(path, sim=True, provider_registry=providers, hook_factories=hooks)
    async with agent:
        assert await agent.run("pump on") == "Pump on."
        (gpio,) = agent.peripherals
        assert gpio.pin_states()["GPIO23"]["level"] == 0, "relay is active-low: on = pin low"
        names = agent.registry.names()
        assert "memory_recall" in names and not any(n.startswith("file_") for n in names)
    assert made and made[0].name == "mine"
    assert seen == ["gpio_switch"]
    # aclose applied the safe value (off = pin high for an active-low relay) and disconnected
    assert not gpio.connected


async def test_unknown_hook_names_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[provider]\nname = "demo"\n[[hooks]]\nname = "nope"\n', encoding="utf-8")
    with pytest.raises(ConfigInvalid) as info:
        await assemble_agent(path)
    assert str(info.value).startswith(f"{path}: hooks: unknown hook 'nope'")


async def test_embedded_default_assembles_with_the_demo_model() -> None:
    agent = await assemble_agent(None, sim=True)
    async with agent:
        answer = await agent.run("turn on the red led")
        assert answer.startswith("Done.")
        gpio, sensors = agent.peripherals
        assert gpio.pin_states()["GPIO17"]["value"] == 1
        assert sensors.sensor_names() == ["greenhouse"]


async def test_memory_is_consolidated_after_each_turn(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[autonomy]\nlevel = "full"\n', encoding="utf-8")
    provider = ScriptedProvider(["Noted."])
    agent = await assemble_agent(path, provider=provider)
    async with agent:
        await agent.run("Remember that the fan relay is on GPIO23.", session_id="phone")
        memory = agent.memory
        assert memory is not None
        core = await memory.list(category="core")
        daily = await memory.list(category="daily")
    assert len(core) == 1 and "the fan relay is on GPIO23" in core[0].content
    assert daily and "Noted." in daily[0].content and daily[0].session_id == "phone"


async def test_embedding_provider_gives_memory_vectors(tmp_path: Path) -> None:
    from clawseed_edge.testing.fake_servers import FakeOllama

    async with FakeOllama(models={"nomic-embed-text": ("embedding",)}, dimensions=16) as server:
        path = tmp_path / "config.toml"
        path.write_text(
            '[autonomy]\nlevel = "full"\n'
            f'[embedding]\nname = "ollama"\nmodel = "nomic-embed-text"\nbase_url = "{server.url}"\n',
            encoding="utf-8",
        )
        agent = await assemble_agent(path, provider=ScriptedProvider(["Noted."]))
        async with agent:
            await agent.run("Remember that the greenhouse must stay under 28 C.")
            memory = agent.memory
            assert memory is not None
            hits = await memory.recall("greenhouse temperature limit", mode="vector")  # type: ignore[call-arg]
        embeds = server.requests_to("/api/embed")
    assert embeds and embeds[0].json["model"] == "nomic-embed-text"
    assert any("28 C" in hit.content for hit in hits)


async def test_a_chat_only_provider_cannot_be_the_embedder(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[provider]\nname = "demo"\n[embedding]\nname = "anthropic"\n', encoding="utf-8"
    )
    with pytest.raises(
        ConfigInvalid, match=r"embedding\.name: provider 'anthropic' cannot make embeddings"
    ):
        await assemble_agent(path)


async def test_the_probe_waits_for_start_background_probe_when_asked(tmp_path: Path) -> None:
    import asyncio

    from clawseed_edge.config.assembly import assemble
    from clawseed_edge.config.file import load_config
    from clawseed_edge.testing.fake_servers import FakeOllama

    async with FakeOllama(models={"qwen2.5:3b": ("completion",)}) as server:  # no tools
        path = tmp_path / "config.toml"
        path.write_text(f'[provider]\nname = "ollama"\nbase_url = "{server.url}"\n', "utf-8")
        runtime = await assemble(load_config(path), sim=True, probe_at_start=False)
        async with runtime:
            assert server.requests_to("/api/show") == []
            assert runtime.provider.capabilities.native_tools  # assumed before the probe
            task = runtime.start_background_probe()
            assert runtime.start_background_probe() is task  # once
            await asyncio.wait_for(task, 30)
            assert len(server.requests_to("/api/show")) == 1
            assert not runtime.provider.capabilities.native_tools
        # the default still probes before assemble returns (agent, chat, applications)
        runtime = await assemble(load_config(path), sim=True)
        async with runtime:
            assert len(server.requests_to("/api/show")) == 2


async def test_closing_the_runtime_cancels_a_probe_still_running(tmp_path: Path) -> None:
    import asyncio
    import socket

    from clawseed_edge.config.assembly import assemble
    from clawseed_edge.config.file import load_config

    # A server that accepts and never answers: the probe hangs until its timeout.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        path = tmp_path / "config.toml"
        path.write_text(f'[provider]\nname = "ollama"\nbase_url = "{url}"\n', "utf-8")
        runtime = await assemble(load_config(path), sim=True, probe_at_start=False)
        task = runtime.start_background_probe()
        await asyncio.sleep(0.05)
        assert not task.done()
        await runtime.aclose()
        assert task.cancelled()


async def test_a_reloaded_provider_is_probed_in_the_background(tmp_path: Path) -> None:
    import asyncio

    from clawseed_edge.config.assembly import assemble
    from clawseed_edge.config.file import load_config
    from clawseed_edge.config.reload import reload_runtime
    from clawseed_edge.testing.fake_servers import FakeOllama

    async with FakeOllama(models={"qwen2.5:0.5b": ("completion",)}) as server:  # no tools
        path = tmp_path / "config.toml"
        path.write_text('[provider]\nname = "demo"\n', "utf-8")
        runtime = await assemble(load_config(path), sim=True, probe_at_start=False)
        async with runtime:
            first = runtime.start_background_probe()
            await asyncio.wait_for(first, 30)
            path.write_text(
                f'[provider]\nname = "ollama"\nmodel = "qwen2.5:0.5b"\nbase_url = "{server.url}"\n',
                "utf-8",
            )
            await reload_runtime(runtime, load_config(path))
            assert runtime.probe_task is not None and runtime.probe_task is not first
            await asyncio.wait_for(runtime.probe_task, 30)
            assert len(server.requests_to("/api/show")) == 1
            assert not runtime.provider.capabilities.native_tools


async def test_the_background_task_embeds_entries_stored_before_embedding_was_configured(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import asyncio
    import socket

    from clawseed_edge.api import MemoryEntry
    from clawseed_edge.config.assembly import assemble
    from clawseed_edge.config.file import load_config
    from clawseed_edge.testing.fake_servers import FakeOllama

    caplog.set_level("INFO", logger="clawseed_edge.config.assembly")
    models = {"qwen2.5:3b": ("completion", "tools"), "nomic-embed-text": ("embedding",)}
    async with FakeOllama(models=models, dimensions=16) as server:
        path = tmp_path / "config.toml"
        base = f'[provider]\nname = "ollama"\nbase_url = "{server.url}"\n'
        path.write_text(base, "utf-8")
        runtime = await assemble(load_config(path), sim=True, probe_at_start=False)
        async with runtime:  # no [embedding]: keyword-only, no vector written
            for i in range(5):
                await runtime.memory.store(MemoryEntry(f"k{i}", f"greenhouse fact {i}"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed = f"http://127.0.0.1:{s.getsockname()[1]}"
        embedding = '[embedding]\nname = "ollama"\nmodel = "nomic-embed-text"\nbase_url = "{}"\n'
        # The embedder is down: the service keeps serving, one warning, nothing embedded.
        path.write_text(base + embedding.format(closed), "utf-8")
        runtime = await assemble(load_config(path), sim=True, probe_at_start=False)
        async with runtime:
            await asyncio.wait_for(runtime.start_background_probe(), 30)
            assert await runtime.backfill_memory() == 0
        warnings = [r for r in caplog.records if "embedding failed" in r.getMessage()]
        assert len(warnings) == 2, "one per backfill (the task's and this call)"
        # It is up: the next start gives all five a vector, found by vector recall.
        path.write_text(base + embedding.format(server.url), "utf-8")
        runtime = await assemble(load_config(path), sim=True, probe_at_start=False)
        async with runtime:
            await asyncio.wait_for(runtime.start_background_probe(), 30)
            assert await runtime.backfill_memory() == 0, "all done by the background task"
            async with runtime.memory._read("test") as conn:  # type: ignore[attr-defined]
                rows = await conn.execute_fetchall("SELECT COUNT(*) FROM entries_vec")
    assert rows[0][0] == 5
    assert any("embedded 5 entries that had no vector" in r.getMessage() for r in caplog.records)
