"""At run time MCP loads neither the SDK nor pydantic: ``mcp serve``, ``[mcp] http = true``
and an ``[[mcp.servers]]`` client, each in a fresh interpreter where importing them fails."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from clawseed_edge.config.file import load_config
from clawseed_edge.config.packages import package_needs
from tests.service.fresh import run_script

from .test_server_stdio import CONFIG

mcp = pytest.importorskip("mcp")  # the reference client drives `mcp serve`

BLOCKED = ("mcp", "mcp_types", "pydantic", "pydantic_core")
#: Importing any of BLOCKED in the script fails (None in sys.modules), and the end checks it.
PRELUDE = f"import sys\nBLOCKED = {BLOCKED!r}\nfor name in BLOCKED:\n    sys.modules[name] = None\n"

SERVICE_SCRIPT = (
    PRELUDE
    + """
import asyncio, json

import httpx

from clawseed_edge.config.file import load_config
from clawseed_edge.service.process import Service, ServiceOptions

async def main():
    service = Service(load_config(sys.argv[1]), ServiceOptions(sim=True, say=lambda line: None))
    await service.start()
    try:
        code = service.hub.pairing.new_code()
        base = service.server.url
        async with httpx.AsyncClient(base_url=base) as http:
            paired = await http.post("/pair", headers={"X-Pairing-Code": code})
            auth = {"Authorization": "Bearer " + paired.json()["token"]}
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}
            opened = await http.post("/mcp", json=init, headers=auth)
            auth["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
            listed = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 2,
                                     "method": "tools/list"}, headers=auth)
        tools = [t["name"] for t in listed.json()["result"]["tools"]]
        echo = await service.runtime.agent.registry.get("fake__echo").execute(
            {"text": "hi"}, None)
    finally:
        await service.aclose()
    loaded = sorted(n for n in sys.modules if n.split(".")[0] in BLOCKED
                    and sys.modules[n] is not None)
    print(json.dumps({"tools": tools, "echo": echo.output, "loaded": loaded}))

asyncio.run(main())
"""
)


def test_mcp_http_and_an_mcp_servers_client_need_no_package() -> None:
    config = load_config_text(
        '[provider]\nname = "demo"\n[gateway]\nenabled = true\n[mcp]\nhttp = true\n'
        '[[mcp.servers]]\nname = "home"\ncommand = "/bin/true"\n'
    )
    assert [n.extra for n in package_needs(config)] == ["gateway"]


def load_config_text(text: str) -> object:
    import tempfile

    with tempfile.TemporaryDirectory() as where:
        path = Path(where) / "config.toml"
        path.write_text(text, encoding="utf-8")
        return load_config(path).config


def test_mcp_over_http_and_a_stdio_server_client_import_neither_sdk_nor_pydantic(
    tmp_path: Path,
) -> None:
    # The server the client reaches is the SDK's (a child process, not this interpreter).
    config = (
        CONFIG
        + f"""
[gateway]
enabled = true
port = 0
[mcp]
http = true
[[mcp.servers]]
name = "fake"
command = "{sys.executable}"
args = ["-m", "clawseed_edge.testing.fake_servers.mcp_server"]
"""
    )
    found, stderr = run_script(SERVICE_SCRIPT, config, tmp_path)
    assert "gpio_switch" in found["tools"], stderr
    assert found["echo"] == "echo: hi", stderr
    assert found["loaded"] == []


async def test_mcp_serve_imports_neither_sdk_nor_pydantic(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    # The serve runs with the SDK and pydantic blocked: one import of either and it fails.
    launch = PRELUDE + (
        "from clawseed_edge.cli.main import main\n"
        f"sys.exit(main(['--config', {str(config)!r}, 'mcp', 'serve', '--sim']))\n"
    )
    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-c", launch],
        env={"CLAWSEED_HOME": str(tmp_path / "home")},
    )
    async with mcp.Client(params, mode="legacy") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("gpio_switch", {"device": "porch_light", "on": True})
    assert "gpio_switch" in tools
    assert not result.is_error, result.content
