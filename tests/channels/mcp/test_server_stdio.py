"""The MCP server over stdio, driven by the SDK's own ``Client`` (a real subprocess).

``mode="legacy"`` is the handshake era that desktop hosts speak today: it has the back-channel
that elicitation needs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import pin_level

from ..gateway.conftest import running_service

mcp = pytest.importorskip("mcp")
types = pytest.importorskip("mcp_types")

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "full"
approval_timeout_s = 20
[hardware]
board = "sim"
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
[[devices]]
name = "heater"
pin = "GPIO27"
kind = "relay"
approval = true
"""


def _params(home: Path, config: Path) -> Any:
    return mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "clawseed_edge", "--config", str(config), "mcp", "serve", "--sim"],
        env={"CLAWSEED_HOME": str(home)},
    )


def _config(tmp_path: Path, text: str = CONFIG) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _answering(action: str, approve: bool, asked: list[str]) -> Any:
    async def elicit(ctx: Any, params: Any) -> Any:
        asked.append(params.message)
        return types.ElicitResult(action=action, content={"approve": approve})

    return elicit


async def _device_value(client: Any, device: str) -> float:
    import json

    result = await client.read_resource(f"device://{device}")
    return float(json.loads(result.contents[0].text)["value"])


async def test_tools_are_listed_with_annotations_from_their_risk(
    tmp_path: Path, clawseed_home: Path
) -> None:
    async with mcp.Client(_params(clawseed_home, _config(tmp_path)), mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["gpio_read"].annotations.read_only_hint is True
    assert tools["gpio_switch"].annotations.read_only_hint is False
    assert tools["gpio_switch"].annotations.destructive_hint is False
    assert "porch_light" in str(tools["gpio_switch"].input_schema)


async def test_a_switch_through_mcp_changes_the_simulated_pin(
    tmp_path: Path, clawseed_home: Path
) -> None:
    async with mcp.Client(_params(clawseed_home, _config(tmp_path)), mode="legacy") as client:
        before = await _device_value(client, "porch_light")
        result = await client.call_tool("gpio_switch", {"device": "porch_light", "on": True})
        after = await _device_value(client, "porch_light")
    assert not result.is_error, result.content[0].text
    assert (before, after) == (0.0, 1.0)


async def test_read_only_autonomy_refuses_the_switch(tmp_path: Path, clawseed_home: Path) -> None:
    config = _config(tmp_path, CONFIG.replace('level = "full"', 'level = "read_only"'))
    async with mcp.Client(_params(clawseed_home, config), mode="legacy") as client:
        result = await client.call_tool("gpio_switch", {"device": "porch_light", "on": True})
        after = await _device_value(client, "porch_light")
    assert result.is_error
    assert "read_only" in result.content[0].text
    assert after == 0.0


@pytest.mark.parametrize(
    ("action", "approve", "value"), [("accept", True, 1.0), ("decline", False, 0.0)]
)
async def test_an_approval_device_asks_the_client_by_elicitation(
    tmp_path: Path, clawseed_home: Path, action: str, approve: bool, value: float
) -> None:
    asked: list[str] = []
    async with mcp.Client(
        _params(clawseed_home, _config(tmp_path)),
        mode="legacy",
        elicitation_callback=_answering(action, approve, asked),
    ) as client:
        result = await client.call_tool("gpio_switch", {"device": "heater", "on": True})
        after = await _device_value(client, "heater")
        light = await client.call_tool("gpio_switch", {"device": "porch_light", "on": True})
    assert len(asked) == 1 and "heater" in asked[0], "only the approval device asks"
    assert not light.is_error
    assert result.is_error is (not approve), result.content[0].text
    assert after == value


async def test_standalone_a_client_that_cannot_elicit_is_refused_without_a_phone_to_open(
    tmp_path: Path, clawseed_home: Path
) -> None:
    from clawseed_edge.cli.mcp_cmd import STANDALONE_REFUSAL

    async with mcp.Client(_params(clawseed_home, _config(tmp_path)), mode="legacy") as client:
        result = await client.call_tool("gpio_switch", {"device": "heater", "on": True})
        after = await _device_value(client, "heater")
    # No service, no gateway: refused, never skipped, and no phone app to point to.
    assert result.is_error
    text = result.content[0].text
    assert STANDALONE_REFUSAL in text and "phone" not in text
    assert after == 0.0


async def test_with_the_service_running_it_bridges_to_its_hardware_and_broker(
    tmp_path: Path, clawseed_home: Path
) -> None:
    provider = ScriptedProvider(streaming=True)
    config = CONFIG + "[gateway]\nenabled = true\nport = 0\n"
    async with running_service(clawseed_home, provider, config) as service:
        assert service.runtime is not None and service.hub is not None
        (gpio,) = service.runtime.peripherals
        # --sim here would open a second set of pins: the bridge must use the service's.
        params = _params(clawseed_home, _config(tmp_path))
        answers: list[dict[str, Any]] = []

        def phone(frame: dict[str, Any]) -> None:  # a paired phone that approves
            answers.append(frame)
            service.hub.broker.resolve(frame["id"], True, by="phone")

        unsubscribe = service.hub.broker.subscribe("phone", phone)
        try:
            async with mcp.Client(params, mode="legacy") as client:
                names = {t.name for t in (await client.list_tools()).tools}
                light = await client.call_tool("gpio_switch", {"device": "porch_light", "on": True})
                heater = await client.call_tool("gpio_switch", {"device": "heater", "on": True})
                state = await _device_value(client, "heater")
        finally:
            unsubscribe()
        assert "gpio_switch" in names
        assert not light.is_error and not heater.is_error, heater.content[0].text
        assert pin_level(gpio, "porch_light") == 1 and pin_level(gpio, "heater") == 1
        assert state == 1.0
        assert [a.get("tool") for a in answers] == ["gpio_switch"]


def test_mcp_config_prints_what_a_desktop_host_launches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from clawseed_edge.cli.main import main

    config = _config(tmp_path)
    assert main(["--config", str(config), "mcp", "config", "--sim"]) == 0
    snippet = json.loads(capsys.readouterr().out)
    server = snippet["mcpServers"]["clawseed-edge"]
    assert server["args"] == ["--config", str(config.resolve()), "mcp", "serve", "--sim"]
    assert server["command"]


# Handshake-era subscriptions (what stdio hosts speak today); 2026-07-28 replaces them.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_a_subscribed_device_resource_is_notified_when_it_changes(
    tmp_path: Path, clawseed_home: Path
) -> None:
    import anyio

    updated: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()

    async with mcp.Client(
        _params(clawseed_home, _config(tmp_path)), mode="legacy", message_handler=on_message
    ) as client:
        assert client.server_capabilities.resources.subscribe is True
        await client.subscribe_resource("device://porch_light")
        await client.call_tool("gpio_switch", {"device": "heater", "on": False})
        await client.call_tool("gpio_switch", {"device": "porch_light", "on": True})
        with anyio.fail_after(30):
            await arrived.wait()
    assert updated and set(updated) == {"device://porch_light"}


async def test_each_board_pinout_is_a_resource_with_used_reserved_and_free_pins(
    tmp_path: Path, clawseed_home: Path
) -> None:
    import json

    async with mcp.Client(_params(clawseed_home, _config(tmp_path)), mode="legacy") as client:
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        pinout = json.loads((await client.read_resource("board://pi")).contents[0].text)
        with pytest.raises(Exception, match="no board"):
            await client.read_resource("board://nowhere")
    assert "board://pi" in uris
    pins = {row["pin"]: row for row in pinout["pins"]}
    assert pinout["board"] == "sim" and pinout["peripheral"] == "pi"
    assert pins["GPIO17"]["used_by"] == {"device": "porch_light", "kind": "led", "mode": "output"}
    assert pins["GPIO27"]["used_by"]["device"] == "heater"
    assert pins["GPIO17"]["free"] is False and pins["GPIO22"]["free"] is True
    assert "GPIO22" in pinout["free"] and "GPIO17" not in pinout["free"]
    assert pins["GPIO17"]["header"] == "11"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize(
    ("action", "approve", "level"), [("accept", True, 1), ("decline", False, 0)]
)
async def test_bridged_to_the_service_an_approval_asks_the_host_by_elicitation(
    tmp_path: Path, clawseed_home: Path, action: str, approve: bool, level: int, mode: str
) -> None:
    provider = ScriptedProvider(streaming=True)
    config = CONFIG + "[gateway]\nenabled = true\nport = 0\n"
    async with running_service(clawseed_home, provider, config) as service:
        assert service.runtime is not None and service.hub is not None
        (gpio,) = service.runtime.peripherals
        phones: list[dict[str, Any]] = []

        def phone(frame: dict[str, Any]) -> None:  # a paired phone: it must not be asked
            phones.append(frame)
            service.hub.broker.resolve(frame["id"], True, by="phone")

        unsubscribe = service.hub.broker.subscribe("phone", phone)
        asked: list[str] = []
        try:
            async with mcp.Client(
                _params(clawseed_home, _config(tmp_path)),
                mode=mode,
                elicitation_callback=_answering(action, approve, asked),
            ) as client:
                heater = await client.call_tool("gpio_switch", {"device": "heater", "on": True})
                light = await client.call_tool("gpio_switch", {"device": "porch_light", "on": True})
        finally:
            unsubscribe()
        assert len(asked) == 1 and "heater" in asked[0], "the host was asked, once"
        assert phones == [], "the broker was not asked: the host answered"
        assert heater.is_error is (not approve), heater.content[0].text
        if not approve:
            assert "declined in the MCP client" in heater.content[0].text
        assert not light.is_error
        assert pin_level(gpio, "heater") == level and pin_level(gpio, "porch_light") == 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_bridged_to_the_service_a_subscription_is_notified_of_its_switches(
    tmp_path: Path, clawseed_home: Path
) -> None:
    import anyio

    from clawseed_edge.agent.tool_run import call_tool
    from clawseed_edge.api import ToolContext

    provider = ScriptedProvider(streaming=True)
    config = CONFIG + "[gateway]\nenabled = true\nport = 0\n"
    updated: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()

    async with running_service(clawseed_home, provider, config) as service:
        assert service.runtime is not None
        async with mcp.Client(
            _params(clawseed_home, _config(tmp_path)), mode="legacy", message_handler=on_message
        ) as client:
            await client.subscribe_resource("device://porch_light")
            # The switch is the service's own (another channel's), not an MCP call.
            context = ToolContext(session_id="test", channel="test")
            done = await call_tool(
                service.runtime.agent, "gpio_switch", {"device": "porch_light", "on": True}, context
            )
            assert done.success, done.error
            with anyio.fail_after(30):
                await arrived.wait()
            state = await _device_value(client, "porch_light")
            board = await client.read_resource("board://pi")
    assert updated and set(updated) == {"device://porch_light"}
    assert state == 1.0
    assert '"device": "porch_light"' in board.contents[0].text, "the service's pinout"
