"""An agent with an Ollama provider never loads the ollama SDK or pydantic, not even after a
whole turn (a tool call, its result, the answer) against a fake Ollama, both installed or not.

Checked in a fresh interpreter: ``sys.modules`` is per process. The fake server runs in this
process, so the child holds only the agent.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from clawseed_edge.testing.fake_servers import FakeOllama, Reply

CONFIG = """
[provider]
name = "ollama"
model = "qwen2.5:3b"
base_url = "{url}"
constrained = "off"
[agent]
local_intents = false
[hardware]
board = "sim"
[autonomy]
level = "full"
[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"
"""

TURN = """
import asyncio, json, sys
from clawseed_edge.config import assemble_agent

async def main():
    async with await assemble_agent(sys.argv[1], sim=True) as agent:
        answer = await agent.run("turn on the red led")
    heavy = [m for m in ("ollama", "pydantic", "pydantic_core") if m in sys.modules]
    print(json.dumps({"answer": answer, "heavy": heavy, "httpx": "httpx" in sys.modules}))

asyncio.run(main())
"""


async def test_a_full_turn_loads_neither_the_ollama_sdk_nor_pydantic(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.queue(
        Reply.tool_call("gpio_switch", {"device": "red_led", "on": True}),
        Reply.text("The red LED is on."),
    )
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(url=ollama.url), encoding="utf-8")
    env = {"PATH": "", "PYTHONNOUSERSITE": "1", "CLAWSEED_HOME": str(tmp_path / "home")}
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", TURN, str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    stdout, stderr = await asyncio.wait_for(child.communicate(), 120)
    assert child.returncode == 0, stderr.decode()
    result = json.loads(stdout.decode().strip().splitlines()[-1])
    assert result["answer"] == "The red LED is on."
    # the turn really went over HTTP: the tool result went back to the model
    chats = ollama.requests_to("/api/chat")
    assert len(chats) == 2
    assert chats[1].json["messages"][-1]["role"] == "tool"
    assert result["httpx"] is True
    assert result["heavy"] == []
