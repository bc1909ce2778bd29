"""One installed distribution brings a plugin of every kind, and a config file uses them all.

The distribution is a fake dist-info on ``sys.path`` (tests/fake_dist.py), so the entry points
are read by ``importlib.metadata`` exactly as after ``pip install``; the objects it names live in
this module.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest

from clawseed_edge.agent import BaseHook
from clawseed_edge.api import (
    BaseTool,
    ConfigInvalid,
    HealthStatus,
    HookDecision,
    Peripheral,
    PluginRegistry,
    RiskClass,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
)
from clawseed_edge.config.assembly import assemble
from clawseed_edge.config.file import load_config
from clawseed_edge.config.tool_table import all_tools, default_tool_registry
from clawseed_edge.memory.none import NoneMemory
from clawseed_edge.peripherals.i2c.sim import RegisterChipModel
from clawseed_edge.peripherals.sensors import Quantity, check_values
from clawseed_edge.providers.config import ProviderConfig
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.tools.factories import ToolSetup
from tests.fake_dist import install

# --- the plugins ------------------------------------------------------------------------------


class ScriptSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    city: str
    answer: str = "Done."


class ScriptedModelPlugin:
    """A provider plugin with its own ``[provider.settings]`` table."""

    settings = ScriptSettings

    def create(self, config: ProviderConfig, settings: ScriptSettings) -> ScriptedProvider:
        return ScriptedProvider(
            [ScriptedProvider.call("weather_now", city=settings.city), settings.answer]
        )


SCRIPTED = ScriptedModelPlugin()


class WeatherSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    unit: str = "C"
    max_cities: int = 3


class WeatherNow(BaseTool):
    name = "weather_now"
    description = "The weather in a city, now."
    risk = RiskClass.READ
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }

    def __init__(self, unit: str) -> None:
        self.unit = unit

    async def execute(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        return ToolResult.ok(f"{arguments['city']}: 4 {self.unit}, rain")


class WeatherTools:
    """A tool plugin with its own ``[[tools.plugins]]`` keys."""

    settings = WeatherSettings

    def create(self, setup: ToolSetup, settings: WeatherSettings) -> Sequence[Tool]:
        return [WeatherNow(settings.unit)]


WEATHER = WeatherTools()
HOOKS_SEEN: list[str] = []


class AuditHook(BaseHook):
    name = "audit"

    async def before_tool(self, call: ToolCall, tool: Any, context: ToolContext) -> HookDecision:
        HOOKS_SEEN.append(call.name)
        return HookDecision.proceed()


def audit_hook(options: dict[str, Any]) -> AuditHook:
    return AuditHook()


class PsuSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    name: str
    type: str
    volts: float = 5.0


class BenchPsu:
    board_type = "bench_psu"

    def __init__(self, settings: PsuSettings) -> None:
        self.name = settings.name
        self.volts = settings.volts

    async def connect(self) -> None:
        return None

    async def disconnect(self) -> None:
        return None

    async def health_check(self) -> HealthStatus:
        return HealthStatus(True, "ok")

    async def apply_safe_state(self) -> None:
        return None

    def describe(self) -> str:
        return "a bench power supply"

    def tools(self) -> Sequence[Tool]:
        return []


class PsuFactory:
    settings = PsuSettings

    def create(self, settings: PsuSettings, *, sim: bool, source: str, key: str) -> Peripheral:
        return BenchPsu(settings)

    def devices(self, settings: PsuSettings) -> Sequence[str]:
        return []


PSU = PsuFactory()


class SoilModel(RegisterChipModel):
    def set(self, **values: float) -> None:
        self.registers[0x10] = round(values["moisture"])


class SoilChip:
    driver_name: ClassVar[str] = "soilchip"
    transport: ClassVar[str] = "i2c"
    addresses: ClassVar[tuple[int, ...]] = (0x36,)
    quantities: ClassVar[tuple[Quantity, ...]] = (Quantity("moisture", "%", 0, 100, 0),)
    min_interval_s: ClassVar[float] = 0.0
    summary: ClassVar[str] = "a plugin's soil moisture chip"
    sim_model: ClassVar[str] = f"{__name__}:SoilModel"

    def __init__(self, bus: Any, address: int) -> None:
        self.bus, self.address = bus, address

    def setup(self) -> None:
        pass

    def read(self) -> dict[str, float]:
        value = self.bus.read_byte_data(self.address, 0x10)
        return check_values(self.driver_name, self.quantities, {"moisture": value})


class IrcChannel:
    """Stands in for a channel plugin (the channel floor looks its ``type`` up by name)."""


KIT = {
    "clawseed_edge.providers": {"scripted": f"{__name__}:SCRIPTED"},
    "clawseed_edge.tools": {"weather": f"{__name__}:WEATHER"},
    "clawseed_edge.hooks": {"audit": f"{__name__}:audit_hook"},
    "clawseed_edge.peripherals": {"bench_psu": f"{__name__}:PSU"},
    "clawseed_edge.sensors": {"soilchip": f"{__name__}:SoilChip"},
    "clawseed_edge.channels": {"irc": f"{__name__}:IrcChannel"},
}

CONFIG = """
[provider]
name = "scripted"
[provider.settings]
city = "Bergen"
answer = "Rain in Bergen."

[autonomy]
level = "full"

[[tools.plugins]]
name = "weather"
unit = "F"

[[hooks]]
name = "audit"

[hardware]
board = "sim"

[[peripherals]]
name = "psu"
type = "bench_psu"
volts = 12

[[sensors]]
name = "bed"
driver = "soilchip"
"""


@pytest.fixture
def kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``acme-clawseed-kit`` is installed: one entry point in every group."""
    install(monkeypatch, tmp_path / "site", "acme-clawseed-kit", KIT)
    HOOKS_SEEN.clear()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


async def test_a_plugin_of_every_kind_runs_from_one_config(kit: None, tmp_path: Path) -> None:
    runtime = await assemble(load_config(write(tmp_path, CONFIG)), sim=True)
    async with runtime:
        agent = runtime.agent
        assert await agent.run("weather in Bergen?") == "Rain in Bergen."
        assert HOOKS_SEEN == ["weather_now"]
        tool = agent.registry.get("weather_now")
        assert isinstance(tool, WeatherNow) and tool.unit == "F"
        psu, bank = runtime.peripherals
        assert isinstance(psu, BenchPsu) and psu.volts == 12
        bank.sim.sensor("bed").set(moisture=37)  # type: ignore[attr-defined]
        reading = await bank.read("bed")  # type: ignore[attr-defined]
        assert reading.format_value("moisture") == "37 %"
    channels: PluginRegistry[Any] = PluginRegistry("channels", noun="channel")
    assert channels.get("irc") is IrcChannel
    assert channels.info("irc").distribution == "acme-clawseed-kit"


async def test_a_provider_plugin_validates_its_settings_table(kit: None, tmp_path: Path) -> None:
    text = '[provider]\nname = "scripted"\n[provider.settings]\ncity = "Oslo"\ncolour = "red"\n'
    with pytest.raises(ConfigInvalid) as info:
        await assemble(load_config(write(tmp_path, text)), sim=True)
    assert (info.value.file, info.value.key) == (
        str(tmp_path / "config.toml"),
        "provider.settings.colour",
    )
    assert "provider 'scripted': unknown key 'colour'" in str(info.value)
    text = '[provider]\nname = "scripted"\n'
    with pytest.raises(ConfigInvalid, match="missing required key 'city'") as info:
        await assemble(load_config(write(tmp_path, text)), sim=True)
    assert info.value.key == "provider.settings.city"


async def test_a_built_in_provider_takes_no_settings_table(tmp_path: Path) -> None:
    text = '[provider]\nname = "demo"\n[provider.settings]\ncity = "Oslo"\n'
    with pytest.raises(ConfigInvalid, match=r"provider 'demo' takes no \[provider.settings\]"):
        await assemble(load_config(write(tmp_path, text)), sim=True)


def test_a_tool_plugin_validates_its_table_and_may_not_name_a_built_in(
    kit: None, tmp_path: Path
) -> None:
    def tools(text: str) -> list[Tool]:
        config = load_config(write(tmp_path, text)).config
        return all_tools(config, NoneMemory(), workspace=tmp_path, source="c.toml")

    assert "weather_now" in [t.name for t in tools('[[tools.plugins]]\nname = "weather"\n')]
    with pytest.raises(ConfigInvalid) as info:
        tools('[[tools.plugins]]\nname = "weather"\nmax_cities = "many"\n')
    assert (info.value.file, info.value.key) == ("c.toml", "tools.plugins[0].max_cities")
    with pytest.raises(
        ConfigInvalid, match=r"'shell' is a built-in tool, not a plugin: set"
    ) as info:
        tools('[[tools.plugins]]\nname = "shell"\n')
    assert info.value.key == "tools.plugins[0].name"
    with pytest.raises(ConfigInvalid, match=r"unknown tool factory 'wether': use one of .*weather"):
        tools('[[tools.plugins]]\nname = "wether"\n')


def test_built_in_tools_register_through_the_same_registry(tmp_path: Path) -> None:
    registry = default_tool_registry()
    assert registry.registered()[:3] == ["memory_store", "memory_recall", "memory_forget"]
    assert registry.info("shell").origin == "built-in"
    # An application overrides a built-in on purpose, and all_tools builds its version.
    registry.register("system_info", lambda setup: WeatherNow("K"), replace=True)
    built = all_tools(load_config(None).config, NoneMemory(), workspace=tmp_path, registry=registry)
    assert [t for t in built if isinstance(t, WeatherNow)]


# --- the examples of docs/plugins.md, run as written -----------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
RUNNABLE = ("[provider]", "[[tools.plugins]]", "[[hooks]]")


def doc_examples() -> tuple[dict[str, str], dict[str, dict[str, str]], list[str]]:
    """(module name -> code, entry-point group -> entries, config snippets) from the page."""
    text = DOC.read_text(encoding="utf-8")
    modules = {}
    for code in re.findall(r"```python\n(.*?)```", text, re.S):
        first = code.splitlines()[0]
        if first.startswith("# clawseed_"):
            modules[first.removeprefix("# ").removesuffix(".py")] = code
    groups: dict[str, dict[str, str]] = {}
    configs = []
    for block in re.findall(r"```toml\n(.*?)```", text, re.S):
        data = tomllib.loads(block)
        if "project" in data:
            for group, entries in data["project"]["entry-points"].items():
                groups.setdefault(group, {}).update(entries)
        elif any(table in block for table in RUNNABLE):
            configs.append(block)
    return modules, groups, configs


async def test_the_examples_of_docs_plugins_md_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules, groups, configs = doc_examples()
    assert {"clawseed_echo", "clawseed_weather", "clawseed_deny"} <= set(modules)
    assert set(groups) == set(KIT)  # an example entry point for every kind
    assert len(configs) == len(RUNNABLE)
    site = tmp_path / "site"
    site.mkdir()
    for name, code in modules.items():
        (site / f"{name}.py").write_text(code, encoding="utf-8")
    install(monkeypatch, site, "clawseed-doc-examples", groups)
    try:
        config = "\n".join(configs) + '\n[autonomy]\nlevel = "full"\n'
        runtime = await assemble(load_config(write(tmp_path, config)), sim=True)
        async with runtime:
            answer = await runtime.agent.run("hello")
            assert answer.startswith(">> ") and answer.endswith("hello")
            weather = runtime.agent.registry.get("weather_now")
            assert weather is not None
            result = await weather.execute({"city": "Oslo"}, ToolContext())
            assert result.output == "Oslo: 4 F"
            (deny,) = runtime.agent.hooks.hooks
            decision = await deny.before_tool(ToolCall("shell", {}), None, ToolContext())
            assert decision.outcome == "cancel"
    finally:
        for name in modules:
            sys.modules.pop(name, None)
