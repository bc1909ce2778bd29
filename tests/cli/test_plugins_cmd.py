"""``clawseed-edge plugins list``: every kind's built-ins and installed plugins, and why a plugin
is ignored (installed here as fake distributions on ``sys.path``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from clawseed_edge.api import PLUGIN_GROUPS
from clawseed_edge.cli.main import main
from clawseed_edge.cli.plugins_cmd import list_plugins
from clawseed_edge.config.plugins import default_registries
from tests.fake_dist import install

WEATHER = object()


def test_every_kind_is_listed_with_its_built_ins(capsys: pytest.CaptureFixture[str]) -> None:
    assert list(default_registries()) == list(PLUGIN_GROUPS)
    assert main(["plugins", "list"]) == 0
    out = capsys.readouterr().out
    for kind, group in PLUGIN_GROUPS.items():
        assert f"{kind} (entry-point group {group})" in out
    assert "  ollama     built-in  (also local)" in out
    assert "  shell          built-in" in out  # built-in tools are in the tool registry
    assert "  sht31    built-in  (also sht30, sht35)" in out


def test_installed_plugins_and_their_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    me = f"{__name__}:WEATHER"
    install(
        monkeypatch,
        tmp_path / "a",
        "acme-kit",
        {"clawseed_edge.tools": {"weather": me}, "clawseed_edge.providers": {"claude": me}},
    )
    install(monkeypatch, tmp_path / "b", "garden-kit", {"clawseed_edge.tools": {"weather": me}})
    out = io.StringIO()
    assert list_plugins(out=out) == 1
    text = out.getvalue()
    assert "  claude     plugin from acme-kit  ignored: a built-in provider has that name" in text
    assert (
        "weather        plugin from acme-kit  conflict: offered by acme-kit and garden-kit" in text
    )
    out = io.StringIO()
    assert list_plugins(as_json=True, out=out) == 1
    tools = json.loads(out.getvalue())["tools"]
    assert tools["group"] == "clawseed_edge.tools"
    weather = [e for e in tools["entries"] if e["name"] == "weather"]
    assert {e["distribution"] for e in weather} == {"acme-kit", "garden-kit"}
    assert all(e["origin"] == "plugin" and e["value"] == me for e in weather)
