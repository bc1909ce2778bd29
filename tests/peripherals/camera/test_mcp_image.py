"""MCP: ``camera_snapshot`` answers with image content, the same bytes the camera stored."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from clawseed_edge.agent import AgentBuilder, SecurityPolicy
from clawseed_edge.channels.mcp.backend import LocalBackend
from clawseed_edge.channels.mcp.handlers import McpServer
from clawseed_edge.channels.mcp.session import Session
from clawseed_edge.peripherals.camera.bank import CameraBank
from clawseed_edge.peripherals.camera.config import CameraConfig
from clawseed_edge.testing import ScriptedProvider


async def _nowhere(message: dict[str, Any]) -> None:
    raise AssertionError(f"nothing is sent on this stream: {message}")


async def test_tools_call_returns_the_snapshot_as_image_content(tmp_path: Path) -> None:
    cameras = CameraBank([CameraConfig(name="porch_cam", resolution=[160, 120])], tmp_path)
    agent = (
        AgentBuilder()
        .provider(ScriptedProvider([]))
        .peripherals([cameras])
        .security_policy(SecurityPolicy(autonomy="full"))
        .platform("test")
        .build()
    )
    server = McpServer(LocalBackend(agent, [cameras]))
    session = Session("s", "stdio", may_approve=False, notify=lambda m: None)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    await server.handle(session, init, _nowhere)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "camera_snapshot", "arguments": {"camera": "porch_cam"}},
    }
    answer = await server.handle(session, call, _nowhere)
    await cameras.disconnect()
    await agent.aclose()
    assert answer is not None
    text, image = answer["result"]["content"]
    path = cameras.latest("porch_cam")
    assert path is not None and path.name in text["text"]
    assert image["type"] == "image" and image["mimeType"] == "image/jpeg"
    assert base64.b64decode(image["data"]) == path.read_bytes()
