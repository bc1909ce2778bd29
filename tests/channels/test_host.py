"""The ChannelHost: a plugin channel from an entry point is built the one way, started by
``run`` and acts through the host's door (the example of docs/plugins.md, as written)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.config.plugins import channel_registry
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.gateway import running_gateway
from clawseed_edge.testing.hardware import mock_pin
from tests.fake_dist import install

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "supervised"
[gateway]
enabled = false
[hardware]
board = "sim"
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
[[devices]]
name = "heater"
pin = "GPIO22"
kind = "relay"
approval = true
"""


def the_example() -> tuple[str, str, str]:
    """(module code, entry point, config table) of the channel example in docs/plugins.md."""
    section = DOC.read_text(encoding="utf-8").split("## A channel", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    entry = re.search(r'^blink = "(.*)"$', section, re.M)
    table = re.search(r"^\[channels\.blink\]\n(?:[^`\n].*\n)+", section, re.M)
    assert entry is not None and table is not None
    return code, entry.group(1), table.group(0)


@pytest.fixture
def blink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    code, entry, table = the_example()
    site = tmp_path / "site"
    site.mkdir()
    (site / "clawseed_blink.py").write_text(code, encoding="utf-8")
    install(monkeypatch, site, "clawseed-blink", {"clawseed_edge.channels": {"blink": entry}})
    yield table
    sys.modules.pop("clawseed_blink", None)


async def test_a_plugin_channel_is_started_by_run_and_acts_through_the_host(
    clawseed_home: Path, blink: str
) -> None:
    listed = channel_registry().catalogue()  # what `plugins list` shows
    assert [(r.origin, r.problem) for r in listed if r.name == "blink"] == [("plugin", None)]
    provider = ScriptedProvider([])
    async with running_gateway(clawseed_home, provider, CONFIG + blink) as gw:
        service = gw.service
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        channel = next(c for c in service.channels if c.name == "blink")
        # A person's command under supervised: no phone was needed, the pin went high once.
        assert channel.result.success, channel.result.error  # type: ignore[attr-defined]
        assert [s.state for s in mock_pin(gpio, "porch_light").states] == [0, 1]
        assert service.host is not None and service.host.approvals is not None
    assert provider.requests == [], "no model was asked"


async def test_an_approval_device_still_asks_and_read_only_refuses_the_plugins_person(
    clawseed_home: Path, blink: str
) -> None:
    heater = blink.replace("porch_light", "heater")
    async with running_gateway(clawseed_home, ScriptedProvider([]), CONFIG + heater) as gw:
        channel = next(c for c in gw.service.channels if c.name == "blink")
        result = channel.result  # type: ignore[attr-defined]
        # Nobody can answer (the plugin's people cannot, no phone): refused, never switched.
        assert not result.success and result.code == "policy_refused"
    read_only = (CONFIG + blink).replace('level = "supervised"', 'level = "read_only"')
    async with running_gateway(clawseed_home, ScriptedProvider([]), read_only) as gw:
        channel = next(c for c in gw.service.channels if c.name == "blink")
        assert channel.result.code == "policy_denied"  # type: ignore[attr-defined]
        (gpio,) = gw.service.runtime.peripherals  # type: ignore[union-attr]
        assert [s.state for s in mock_pin(gpio, "porch_light").states] == [0]


async def test_a_plugin_table_off_is_not_started_and_an_unknown_one_is_named(
    clawseed_home: Path, blink: str
) -> None:
    off = CONFIG + blink + "enabled = false\n"
    async with running_gateway(clawseed_home, ScriptedProvider([]), off) as gw:
        assert [c.name for c in gw.service.channels] == []
    unknown = CONFIG + "[channels.blinky]\ndevice = 'porch_light'\n"
    with pytest.raises(ConfigInvalid, match="blinky"):
        async with running_gateway(clawseed_home, ScriptedProvider([]), unknown):
            pass


async def test_a_factory_that_returns_no_channel_is_named() -> None:
    from clawseed_edge.channels.host import build_channel

    def broken(settings: object, host: object) -> object:
        return {"name": "broken"}

    with pytest.raises(ConfigInvalid, match=r"test_host:.*broken returned dict, not a channel"):
        await build_channel(broken, {}, None)  # type: ignore[arg-type]


def test_a_fork_shares_every_part_but_the_registry_and_the_history() -> None:
    from clawseed_edge.agent import Agent, fork_agent

    shared = Agent(provider=ScriptedProvider([]), max_tool_iterations=3, tool_timeout_s=7.0)
    fork = fork_agent(shared)
    assert fork.registry is not shared.registry
    assert (fork.provider, fork.hooks, fork.observer, fork.scrub) == (
        shared.provider,
        shared.hooks,
        shared.observer,
        shared.scrub,
    )
    assert (fork.max_tool_iterations, fork.tool_timeout_s) == (3, 7.0)
