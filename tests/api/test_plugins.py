"""The one plugin registry: lookup, the unknown-name error, the duplicate rules, lazy metadata.

Plugins come from fake distributions on ``sys.path`` (tests/fake_dist.py): the entry points
are read by ``importlib.metadata`` as they would be after a ``pip install``.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from clawseed_edge.api import (
    PLUGIN_GROUPS,
    ConfigInvalid,
    PluginConflict,
    PluginLoadFailed,
    PluginNotFound,
    PluginRegistry,
)
from tests.fake_dist import install

#: Objects the fake distributions point at.
ALPHA = object()
BETA = object()
BUILT_IN = object()


def test_every_kind_has_one_group() -> None:
    assert PLUGIN_GROUPS == {
        "providers": "clawseed_edge.providers",
        "peripherals": "clawseed_edge.peripherals",
        "sensors": "clawseed_edge.sensors",
        "tools": "clawseed_edge.tools",
        "channels": "clawseed_edge.channels",
        "hooks": "clawseed_edge.hooks",
    }
    with pytest.raises(ValueError, match="unknown plugin kind 'gadgets'"):
        PluginRegistry("gadgets")


def test_lookup_by_name_alias_and_lazy_import_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lazy_part_for_registry_test.py").write_text("THING = 'made'\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lazy_part_for_registry_test", raising=False)
    registry: PluginRegistry[object] = PluginRegistry("tools", load_entry_points=False)
    registry.register("built", BUILT_IN, aliases=("b",))
    registry.register("lazy", "lazy_part_for_registry_test:THING")
    assert "lazy_part_for_registry_test" not in sys.modules  # a path is imported on first use
    assert registry.get("built") is BUILT_IN and registry.get("b") is BUILT_IN
    assert registry.get("lazy") == "made"
    assert "lazy_part_for_registry_test" in sys.modules
    assert registry.names() == ["b", "built", "lazy"]
    assert registry.registered() == ["built", "lazy"]
    assert "b" in registry and "nope" not in registry
    assert registry.info("b").origin == "built-in"


def test_an_unknown_name_is_one_error_for_every_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(
        monkeypatch,
        tmp_path,
        "acme-parts",
        {"clawseed_edge.channels": {"irc": f"{__name__}:ALPHA"}},
    )
    for kind in PLUGIN_GROUPS:
        registry: PluginRegistry[object] = PluginRegistry(kind, key=f"{kind}.name")
        registry.register("builtin_one", BUILT_IN)
        with pytest.raises(PluginNotFound) as info:
            registry.get("nope", file="c.toml")
        error = info.value
        assert isinstance(error, ConfigInvalid) and isinstance(error, LookupError)
        assert (error.file, error.key, error.code) == ("c.toml", f"{kind}.name", "plugin_not_found")
        message = str(error)
        noun = kind.removesuffix("s")
        assert f"unknown {noun} 'nope': use one of builtin_one" in message
        assert f"entry-point group 'clawseed_edge.{kind}'" in message
        assert "docs/plugins.md" in message
        # Installed plugins are known names too (only the channels group has one here).
        assert ("irc" in message) == (kind == "channels")


def test_an_empty_registry_says_so() -> None:
    registry: PluginRegistry[object] = PluginRegistry("hooks", load_entry_points=False)
    with pytest.raises(PluginNotFound, match=r"unknown hook 'audit': no hook is known; install"):
        registry.get("audit")


def test_registering_a_taken_name_needs_replace() -> None:
    registry: PluginRegistry[object] = PluginRegistry("providers", load_entry_points=False)
    registry.register("ollama", BUILT_IN, aliases=("local",))
    for name, aliases in (("ollama", ()), ("mine", ("local",)), ("local", ())):
        with pytest.raises(PluginConflict, match="already registered; pass replace=True"):
            registry.register(name, ALPHA, aliases=aliases)
    registry.register("ollama", ALPHA, replace=True)
    assert registry.get("ollama") is ALPHA and registry.get("local") is ALPHA


def test_a_plugin_may_not_shadow_a_built_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    install(
        monkeypatch,
        tmp_path,
        "evil-shell",
        {"clawseed_edge.tools": {"shell": f"{__name__}:ALPHA", "sh": f"{__name__}:ALPHA"}},
    )
    registry: PluginRegistry[object] = PluginRegistry("tools")
    registry.register("shell", BUILT_IN, aliases=("sh",))
    assert registry.get("shell") is BUILT_IN and registry.get("sh") is BUILT_IN
    with caplog.at_level(logging.WARNING), pytest.raises(PluginNotFound):
        registry.get("other")  # reading the group finds the shadowing entry points
    warnings = [r.getMessage() for r in caplog.records if "shadow" in r.getMessage()]
    assert len(warnings) == 2
    assert "tool plugin 'shell'" in warnings[0] and "from evil-shell" in warnings[0]
    assert registry.get("shell") is BUILT_IN


def test_two_distributions_with_one_name_is_an_error_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = {"clawseed_edge.sensors": {"soil": f"{__name__}:ALPHA"}}
    install(monkeypatch, tmp_path / "a", "soil-sensors", group)
    install(
        monkeypatch,
        tmp_path / "b",
        "garden-kit",
        {"clawseed_edge.sensors": {"soil": f"{__name__}:BETA"}},
    )
    registry: PluginRegistry[object] = PluginRegistry("sensors", noun="sensor driver")
    with pytest.raises(PluginConflict) as info:
        registry.get("soil", key="sensors[0].driver")
    message = str(info.value)
    assert "two installed plugins offer the sensor driver 'soil'" in message
    assert "soil-sensors" in message and "garden-kit" in message
    assert info.value.key == "sensors[0].driver" and info.value.code == "plugin_conflict"


def test_a_plugin_is_loaded_once_and_says_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(
        monkeypatch, tmp_path, "acme-hooks", {"clawseed_edge.hooks": {"audit": f"{__name__}:ALPHA"}}
    )
    registry: PluginRegistry[object] = PluginRegistry("hooks")
    assert registry.available() == ["audit"] and registry.names() == []
    assert registry.get("audit") is ALPHA
    info = registry.info("audit")
    assert (info.origin, info.distribution, info.value) == (
        "plugin",
        "acme-hooks",
        f"{__name__}:ALPHA",
    )
    assert registry.names() == ["audit"] and "audit" in registry
    with pytest.raises(PluginConflict):  # a loaded plugin's name is taken, like a built-in's
        registry.register("audit", BETA)


def test_a_broken_plugin_names_its_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(
        monkeypatch,
        tmp_path,
        "broken-board",
        {"clawseed_edge.peripherals": {"psu": "no_such_module_xyz:f"}},
    )
    registry: PluginRegistry[object] = PluginRegistry("peripherals", noun="peripheral type")
    with pytest.raises(PluginLoadFailed) as info:
        registry.get("psu", file="c.toml", key="peripherals[0].type")
    message = str(info.value)
    assert message.startswith("c.toml: peripherals[0].type: peripheral type plugin 'psu'")
    assert (
        "(no_such_module_xyz:f, from broken-board) failed to load: ModuleNotFoundError" in message
    )
    assert isinstance(info.value.__cause__, ModuleNotFoundError)


def test_an_application_registry_never_reads_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(
        monkeypatch, tmp_path, "acme", {"clawseed_edge.providers": {"echo": f"{__name__}:ALPHA"}}
    )
    assert PluginRegistry("providers").get("echo") is ALPHA
    with pytest.raises(PluginNotFound, match=r"use one of mine, or install"):
        closed: PluginRegistry[object] = PluginRegistry("providers", load_entry_points=False)
        closed.register("mine", BETA)
        closed.get("echo")


# importlib.metadata is imported only for a name that is not registered: a plain start (every
# kind's built-ins looked up, an agent assembled from the default config) never pays for it.
LAZY = """
import asyncio, json, sys
from clawseed_edge.agent.hooks import HookFactoryRegistry
from clawseed_edge.config.assembly import assemble_agent
from clawseed_edge.config.tool_table import default_tool_registry
from clawseed_edge.peripherals.registry import default_registry as peripherals
from clawseed_edge.peripherals.sensors.registry import default_driver_registry
from clawseed_edge.providers.registry import default_registry as providers

async def start():
    agent = await assemble_agent(None, sim=True)
    await agent.aclose()

providers().get("claude"); peripherals().get("pi_gpio"); default_driver_registry().get("sht35")
default_tool_registry().get("shell")
asyncio.run(start())
before = "importlib.metadata" in sys.modules
try:
    HookFactoryRegistry().get("no_such_hook")
except LookupError:
    pass
print(json.dumps([before, "importlib.metadata" in sys.modules]))
"""


def test_entry_points_are_read_only_for_an_unknown_name(tmp_path: Path) -> None:
    env = {"PATH": "", "PYTHONNOUSERSITE": "1", "CLAWSEED_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", LAZY], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, True]


def test_a_built_in_path_that_does_not_import_is_not_called_a_plugin() -> None:
    registry: PluginRegistry[object] = PluginRegistry("sensors", noun="sensor driver")
    registry.register("bme280", "no_such_module_xyz:BME280")
    with pytest.raises(PluginLoadFailed, match=r"^driver: sensor driver 'bme280' \(no_such"):
        registry.get("bme280", key="driver")
