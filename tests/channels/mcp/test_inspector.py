"""The MCP Inspector's CLI (a host nobody here wrote) against our server, through ``npx``:
tools listed, resource templates listed, a tool called; over stdio and over ``/mcp``.

``.ci/run`` installs the Inspector into ``.ci/node`` (git-ignored); without it these skip.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import pin_level

from ..gateway.conftest import CONFIG as GATEWAY_CONFIG
from ..gateway.conftest import base_url, pair_token, running_service
from .test_server_stdio import CONFIG

NODE = Path(__file__).resolve().parents[3] / ".ci" / "node"
pytestmark = pytest.mark.skipif(
    shutil.which("npx") is None or not (NODE / "node_modules" / ".bin" / "mcp-inspector").exists(),
    reason="the MCP Inspector is not installed (.ci/run installs it into .ci/node)",
)


async def _inspector(home: Path, *argv: str) -> Any:
    """Run ``npx mcp-inspector --cli ARGV`` (from .ci/node) and return its JSON output."""
    process = await asyncio.create_subprocess_exec(
        "npx", "--no-install", "mcp-inspector", "--cli", *argv,
        cwd=NODE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "CLAWSEED_HOME": str(home),
             "HOME": str(home)},
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, (out + err).decode()[-2000:]
    return json.loads(out)


def _serve(config: Path) -> list[str]:
    return [
        "--",
        sys.executable,
        "-m",
        "clawseed_edge",
        "--config",
        str(config),
        "mcp",
        "serve",
        "--sim",
    ]


async def test_the_inspector_lists_tools_and_templates_and_calls_a_tool_over_stdio(
    tmp_path: Path, clawseed_home: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    tools = await _inspector(clawseed_home, "--method", "tools/list", *_serve(config))
    templates = await _inspector(
        clawseed_home, "--method", "resources/templates/list", *_serve(config)
    )
    called = await _inspector(
        clawseed_home,
        "--method", "tools/call", "--tool-name", "gpio_switch",
        "--tool-arg", "device=porch_light", "on=true", *_serve(config),
    )  # fmt: skip
    names = {t["name"] for t in tools["tools"]}
    assert {"gpio_switch", "gpio_read"} <= names
    assert {t["uriTemplate"] for t in templates["resourceTemplates"]} >= {"device://{name}"}
    assert called["isError"] is False and "on" in called["content"][0]["text"]


async def test_the_inspector_calls_a_tool_on_mcp_over_http_with_a_paired_token(
    clawseed_home: Path,
) -> None:
    config = (
        GATEWAY_CONFIG.replace('level = "supervised"', 'level = "full"') + "[mcp]\nhttp = true\n"
    )
    async with running_service(clawseed_home, ScriptedProvider(streaming=True), config) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        token = await pair_token(service, "inspector")
        url = base_url(service) + "/mcp"
        auth = ["--transport", "http", "--header", f"Authorization: Bearer {token}"]
        templates = await _inspector(
            clawseed_home, url, *auth, "--method", "resources/templates/list"
        )
        called = await _inspector(
            clawseed_home, url, *auth, "--method", "tools/call", "--tool-name", "gpio_switch",
            "--tool-arg", "device=porch_light", "on=true",
        )  # fmt: skip
        on = pin_level(gpio, "porch_light")
    assert len(templates["resourceTemplates"]) == 3
    assert called["isError"] is False
    assert on == 1
