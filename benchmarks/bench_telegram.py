"""What the Telegram channel costs: idle RSS of ``run --sim`` with it on vs off, and the
message-to-reply latency through a fake Bot API vs the same turn over the gateway's WebSocket.

1. Idle RSS: ``clawseed-edge run --sim`` in a subprocess (gateway off in both), the channel on
   (polling a :class:`~clawseed_edge.testing.fake_servers.FakeBotApi` on 127.0.0.1 served from
   this process) or off, alternating, ``--rounds`` each; VmRSS after ``--idle-s`` seconds.
2. Latency: one service in this process with the gateway and the channel on and a zero-latency
   provider; turns alternate between a Telegram message (pushed to the fake; timed until the
   fake receives the reply's ``sendMessage``) and a WebSocket message (timed until ``done``).
   Both include the same turn; the Telegram side adds the long poll's wake-up and the reply call.

Run: ``python benchmarks/bench_telegram.py [--rounds 3] [--idle-s 8] [--turns 40]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

TOKEN = "111111:BENCH-token-not-a-real-one"
OWNER = 4242

BASE = """
[provider]
name = "demo"
[memory]
backend = "none"
[hardware]
board = "sim"
[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"
"""

TELEGRAM = """
[channels.telegram]
enabled = true
allowed_users = [{owner}]
api_base = "{url}"
"""


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def idle_rss(on: bool, url: str, idle_s: float) -> float:
    home = Path(tempfile.mkdtemp(prefix="bench-telegram-"))
    text = BASE + (TELEGRAM.format(owner=OWNER, url=url) if on else "")
    (home / "config.toml").write_text(text, encoding="utf-8")
    env = {**os.environ, "CLAWSEED_HOME": str(home), "TELEGRAM_BOT_TOKEN": TOKEN}
    exe = Path(sys.executable).with_name("clawseed-edge")
    proc = subprocess.Popen(
        [str(exe), "run", "--sim"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(idle_s)
        if proc.poll() is not None:
            raise RuntimeError(f"run --sim exited with {proc.returncode}")
        return rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(15)


class InstantProvider:
    """A zero-latency provider that answers every request with the same short text."""

    name = "instant"
    model = "instant"

    def __init__(self) -> None:
        from clawseed_edge.api import ProviderCapabilities

        self._caps = ProviderCapabilities(native_tools=True, streaming=False)

    @property
    def capabilities(self) -> Any:
        return self._caps

    async def chat(self, request: Any) -> Any:
        from clawseed_edge.api import ChatResponse, StopReason, Usage

        return ChatResponse(text="ok", stop_reason=StopReason.END_TURN, usage=Usage(10, 1))

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        from clawseed_edge.api import StreamDone

        yield StreamDone(await self.chat(request))

    async def aclose(self) -> None:
        return None


async def latencies(turns: int) -> dict[str, list[float]]:
    import logging

    import httpx
    from websockets.asyncio.client import connect

    from clawseed_edge.config.file import load_config
    from clawseed_edge.service import Service, ServiceOptions
    from clawseed_edge.testing.fake_servers import FakeBotApi

    logging.disable(logging.WARNING)
    replied = asyncio.Event()

    class SignallingBot(FakeBotApi):
        async def _m_sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
            result = await super()._m_sendMessage(params)
            if params.get("text") == "ok":
                replied.set()
            return result

    out: dict[str, list[float]] = {"telegram": [], "websocket": []}
    async with SignallingBot(token=TOKEN) as bot:
        home = Path(tempfile.mkdtemp(prefix="bench-telegram-"))
        os.environ["CLAWSEED_HOME"] = str(home)
        os.environ["TELEGRAM_BOT_TOKEN"] = TOKEN
        text = BASE + "[gateway]\nenabled = true\nport = 0\n"
        text += TELEGRAM.format(owner=OWNER, url=bot.url)
        (home / "config.toml").write_text(text, encoding="utf-8")
        options = ServiceOptions(
            sim=True,
            assemble={"provider": InstantProvider()},
            control_socket=False,
            say=lambda _: None,
        )
        async with Service(load_config(home / "config.toml"), options) as service:
            assert service.server is not None and service.hub is not None
            channel = next(c for c in service.channels if c.name == "telegram")
            await bot.wait_until(lambda: channel.state == "polling", what="polling")  # type: ignore[attr-defined]
            code = service.hub.pairing.new_code()
            async with httpx.AsyncClient(base_url=service.server.url) as http:
                answer = await http.post(
                    "/pair", headers={"X-Pairing-Code": code, "X-Client-Name": "bench"}
                )
            token = answer.json()["token"]
            url = service.server.url.replace("http://", "ws://") + "/ws/chat"
            async with connect(url, additional_headers={"Authorization": f"Bearer {token}"}) as ws:
                while json.loads(await ws.recv())["type"] != "connected":
                    pass
                for i in range(turns + 2):  # the first two are warm-up
                    replied.clear()
                    started = time.perf_counter()
                    bot.push_message(OWNER, f"turn {i}")
                    await asyncio.wait_for(replied.wait(), 30)
                    tg = time.perf_counter() - started
                    # Let the turn's history save and the chat's edit window pass.
                    await asyncio.sleep(1.1)
                    started = time.perf_counter()
                    await ws.send(json.dumps({"type": "message", "content": f"turn {i}"}))
                    while json.loads(await ws.recv())["type"] != "done":
                        pass
                    wsl = time.perf_counter() - started
                    await asyncio.sleep(0.05)
                    if i >= 2:
                        out["telegram"].append(tg * 1000)
                        out["websocket"].append(wsl * 1000)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle-s", type=float, default=8.0)
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()

    from clawseed_edge.testing.fake_servers import FakeBotApi

    rss: dict[str, list[float]] = {"on": [], "off": []}
    with FakeBotApi(token=TOKEN) as bot:
        for i in range(args.rounds):
            for on in (True, False) if i % 2 == 0 else (False, True):
                rss["on" if on else "off"].append(idle_rss(on, bot.url, args.idle_s))
    print(f"idle RSS of run --sim after {args.idle_s:g} s, {args.rounds} rounds (MB):")
    for key in ("off", "on"):
        values = ", ".join(f"{v:.1f}" for v in rss[key])
        print(f"  channel {key:<3}  median {statistics.median(rss[key]):.1f}  [{values}]")
    print(
        f"  difference of medians: {statistics.median(rss['on']) - statistics.median(rss['off']):+.1f}"
    )

    lat = asyncio.run(latencies(args.turns))
    print(f"message-to-reply latency, {args.turns} turns each, alternating (ms):")
    for key in ("websocket", "telegram"):
        values = sorted(lat[key])
        p90 = values[int(0.9 * (len(values) - 1))]
        print(f"  {key:<9}  median {statistics.median(values):.1f}  p90 {p90:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
