"""A Pi Zero 2 W budget: the whole service as a maker with that board would run it.

One ``clawseed-edge run --sim`` process with every way in on: the gateway (phones), Telegram
(a fake Bot API on 127.0.0.1), MQTT with Home Assistant discovery (Debian's mosquitto on a free
port), MCP over HTTP (``/mcp``), three sensors sampled every second with history, two
automations, and Ollama as the model (a fake that speaks Ollama's wire protocol). Measured from
outside the process, in ``/proc/PID``:

* idle RSS (VmRSS) ``--idle-s`` seconds after the start-up line;
* CPU per idle minute (user + system ticks over ``--window-s``, scaled to 60 s), also as a
  share of one core;
* SD-card writes per hour: ``write_bytes`` of ``/proc/PID/io`` (what reached the block layer:
  history batches, state.db, the WAL) over the same window, scaled to an hour; ``wchar`` (every
  write(2), page cache included) beside it;
* RSS after ``--turns`` turns (one WebSocket, one turn at a time) and after ``--samples`` sensor
  readings (a second process with 24 ADS1115 ADCs asked for every 0.1 s; one "sample" is one
  read of one sensor, counted by the sampler: ``sensors`` over the control socket).
  Both print RSS at checkpoints, so creep shows as a rising column.

Baseline in the same run, measured alike: ``run --sim`` with no channel, no sensor sampling and
no automations (the floor every way in adds to). Medians over ``--runs`` runs, interleaved.

Run: ``python benchmarks/bench_pi_zero.py [--runs 3] [--window-s 60] [--turns 10000]
[--samples 100000] [--only idle|turns|samples]``; quicker: ``--window-s 20 --turns 1000 --samples 500``. Needs Linux
(``/proc``), mosquitto (``apt-get install mosquitto``) and the ``mqtt`` extra. Only loopback
addresses are used; every wait is bounded. Processes run at ``PYTHONOPTIMIZE=2`` as the unit
runs the service (``--optimize 0``: as the CLI runs).

What this cannot show: a Pi Zero 2 W's cores are about 4-6x slower than this machine's, so the
CPU figures scale up by that factor there; RSS and bytes written do not depend on the core.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

READY_LINE = "clawseed-edge running"
STEP_TIMEOUT_S = 60.0
TOKEN = "123456:bench-pi-zero"
OWNER = 4242

BASE = """
[provider]
name = "ollama"
model = "qwen2.5:3b"
base_url = "{ollama}"
[autonomy]
level = "full"
[hardware]
board = "sim"
[[devices]]
name = "fan"
pin = "GPIO17"
kind = "relay"
[[devices]]
name = "lamp"
pin = "GPIO18"
kind = "led"
[[devices]]
name = "door"
pin = "GPIO5"
kind = "digital_in"
"""

CHANNELS = """
[gateway]
enabled = true
port = {port}
require_pairing = false
requests_per_minute = 0
[channels.telegram]
enabled = true
api_base = "{telegram}"
allowed_users = [{owner}]
[mqtt]
enabled = true
port = {mqtt}
node_id = "pizero"
[mcp]
http = true
"""

SENSORS = """
[[sensors]]
name = "greenhouse"
driver = "bme280"
bus = 1
address = 0x76
update_interval = "1s"
[[sensors]]
name = "shed"
driver = "sht31"
bus = 1
address = 0x44
update_interval = "1s"
[[sensors]]
name = "light"
driver = "bh1750"
bus = 1
address = 0x23
update_interval = "1s"
[[automations]]
name = "too_hot"
when = "greenhouse.temperature > 30"
do = { tool = "gpio_switch", arguments = { device = "fan", on = true } }
until = "greenhouse.temperature < 28"
then = { tool = "gpio_switch", arguments = { device = "fan", on = false } }
[[automations]]
name = "dark"
when = "light.illuminance < 10"
do = { tool = "gpio_switch", arguments = { device = "lamp", on = true } }
"""

#: Twenty-four 4-channel ADCs asked for every 0.1 s, for the samples phase, two on each of twelve
#: buses: a simulated read waits out the chip's four conversions (about 34 ms at 128 SPS), as a
#: real one does, so two ADCs fit a bus's interval, and the sampler takes about 240 readings a
#: second here with every way in on (--samples 100000: about 7 minutes). Before the sampler read
#: the sensors of a pass together, a late pass (MQTT's start-up publishing was enough) made the
#: next later until the readings taken ahead went stale: about 15 a second, in about half the runs.
FAST_SENSORS = "".join(
    f'[[sensors]]\nname = "adc{bus}_{address:x}"\ndriver = "ads1115"\nbus = {bus}\n'
    f'address = 0x{address:x}\nupdate_interval = "0.1s"\n'
    for bus in range(3, 15)
    for address in (0x48, 0x49)
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of the whole process (every thread)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def io_counters(pid: int) -> dict[str, int]:
    """``write_bytes`` and ``wchar`` of ``/proc/PID/io`` (root, or the same user)."""
    out = {}
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        key, _, value = line.partition(":")
        out[key] = int(value)
    return out


class Service:
    """One ``clawseed-edge run --sim`` in a fresh home, stopped with SIGTERM."""

    def __init__(self, config: str, env: dict[str, str]) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="bench-pizero-"))
        (self.home / "config.toml").write_text(config, encoding="utf-8")
        self.env = {**env, "CLAWSEED_HOME": str(self.home)}
        self.proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> Service:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "clawseed_edge", "run", "--sim"],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + STEP_TIMEOUT_S
        assert self.proc.stderr is not None
        seen = []
        for line in self.proc.stderr:  # the start-up lines, up to the ready one
            seen.append(line)
            if READY_LINE in line:
                break
            if time.monotonic() > deadline:
                break
        else:
            raise RuntimeError(f"run --sim ended before ready: {''.join(seen)[-2000:]}")
        # Keep reading stderr so a chatty service never blocks on a full pipe.
        import threading

        threading.Thread(target=self._drain, daemon=True).start()
        return self

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for _ in self.proc.stderr:
            pass

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.home, ignore_errors=True)  # its databases: tens of MB after turns


def idle_figures(service: Service, idle_s: float, window_s: float) -> dict[str, float]:
    """Idle RSS, then CPU and bytes written over ``window_s`` of idling."""
    time.sleep(idle_s)
    out = {"idle_mb": rss_mb(service.pid)}
    cpu0, io0, t0 = cpu_s(service.pid), io_counters(service.pid), time.monotonic()
    time.sleep(window_s)
    cpu1, io1, t1 = cpu_s(service.pid), io_counters(service.pid), time.monotonic()
    elapsed = t1 - t0
    out["cpu_ms_per_min"] = (cpu1 - cpu0) * 1000 * 60 / elapsed
    out["core_share_pct"] = (cpu1 - cpu0) * 100 / elapsed
    out["write_kb_per_h"] = (io1["write_bytes"] - io0["write_bytes"]) / 1024 * 3600 / elapsed
    out["wchar_kb_per_h"] = (io1["wchar"] - io0["wchar"]) / 1024 * 3600 / elapsed
    return out


def turns(port: int, count: int, pid: int, every: int) -> list[tuple[int, float]]:
    """``count`` turns on one WebSocket; (turns so far, RSS MB) at each checkpoint."""
    from websockets.asyncio.client import connect

    rows: list[tuple[int, float]] = []

    async def run() -> None:
        async with asyncio.timeout(STEP_TIMEOUT_S + count * 0.5):
            async with connect(f"ws://127.0.0.1:{port}/ws/chat", max_size=None) as ws:
                while json.loads(await ws.recv())["type"] != "connected":
                    pass
                for i in range(count):
                    await ws.send(json.dumps({"type": "message", "content": f"hello {i}"}))
                    while True:
                        event = json.loads(await ws.recv())
                        if event["type"] in ("done", "error", "aborted"):
                            if event["type"] != "done":
                                raise RuntimeError(f"turn {i} failed: {event}")
                            break
                    if i == 0 or (i + 1) % every == 0:
                        rows.append((i + 1, rss_mb(pid)))

    asyncio.run(run())
    return rows


def sensor_reads(home: Path) -> int:
    """Readings the service's sampler has taken so far (every sampled sensor's ``reads``, from
    the ``sensors`` op of its control socket: what ``clawseed-edge sensors`` shows)."""
    from clawseed_edge.service.control import control_request

    answer = asyncio.run(control_request(home / "control.sock", "sensors"))
    result = answer.get("result", answer)
    return sum(int(s.get("reads", 0)) for s in result.get("sampled", []))


def samples(service: Service, count: int, every: int) -> list[tuple[int, float]]:
    """Wait until the sampler has taken ``count`` readings; (readings so far, RSS MB) at each
    checkpoint. A reading is one sensor read once, all its quantities (an ADS1115: four)."""
    rows: list[tuple[int, float]] = []
    deadline = time.monotonic() + STEP_TIMEOUT_S + count / 2  # at least 2 readings a second
    next_mark = every
    while True:
        n = sensor_reads(service.home)
        if n >= next_mark or n >= count:
            rows.append((n, rss_mb(service.pid)))
            next_mark = (n // every + 1) * every
        if n >= count:
            return rows
        if time.monotonic() > deadline or service.proc is None or service.proc.poll() is not None:
            raise RuntimeError(f"only {n} readings were taken of {count}")
        time.sleep(0.5)


MCP_CLIENT = f"""
[[mcp.servers]]
name = "fake"
command = "{sys.executable}"
args = ["-m", "clawseed_edge.testing.fake_servers.mcp_server"]
"""


def increments(runs: int, idle_s: float) -> int:
    """Idle RSS of ``run --sim`` with each way in alone, and with all of them, against the base
    with none, at ``PYTHONOPTIMIZE`` 0 and 2; runs interleaved, medians."""
    from clawseed_edge.testing.fake_servers import FakeOllama
    from clawseed_edge.testing.fake_servers.telegram import FakeBotApi
    from clawseed_edge.testing.mqtt import MosquittoBroker

    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOllama() as ollama,
        FakeBotApi(token=TOKEN) as bot,
        MosquittoBroker(Path(tmp) / "broker") as broker,
    ):
        base = BASE.format(ollama=ollama.url)
        parts = CHANNELS.format(port=0, telegram=bot.url, owner=OWNER, mqtt=broker.port)
        gateway, telegram, mqtt, mcp = (
            "[gateway]" + parts.split("[gateway]")[1].split("[channels.telegram]")[0],
            "[channels.telegram]" + parts.split("[channels.telegram]")[1].split("[mqtt]")[0],
            "[mqtt]" + parts.split("[mqtt]")[1].split("[mcp]")[0],
            "[mcp]" + parts.split("[mcp]")[1],
        )
        cases = {
            "base (no channel)": base,
            "+ gateway": base + gateway,
            "+ gateway + MCP over HTTP": base + gateway + mcp,
            "+ MCP client (one stdio server)": base + MCP_CLIENT,
            "+ Telegram": base + telegram,
            "+ MQTT": base + mqtt,
            "+ 3 sensors at 1 s with history + 2 automations": base + SENSORS,
            "everything on": base + parts + MCP_CLIENT + SENSORS,
        }
        rss: dict[tuple[int, str], list[float]] = {}
        for _ in range(runs):
            for level in (0, 2):
                env = {**os.environ, "PYTHONOPTIMIZE": str(level), "TELEGRAM_BOT_TOKEN": TOKEN}
                env.pop("PYTHONDEVMODE", None)
                for name, config in cases.items():
                    with Service(config, env) as service:
                        time.sleep(idle_s)
                        rss.setdefault((level, name), []).append(rss_mb(service.pid))
    print(f"idle RSS of run --sim {idle_s:g} s after ready, medians of {runs} interleaved runs")
    print(f"{'':50}{'level 0':>16}{'level 2':>16}")
    floor = {level: statistics.median(rss[(level, "base (no channel)")]) for level in (0, 2)}
    for name in cases:
        cells = []
        for level in (0, 2):
            mb = statistics.median(rss[(level, name)])
            cells.append(f"{mb:6.1f} ({mb - floor[level]:+5.1f})")
        print(f"{name:50}{cells[0]:>16}{cells[1]:>16}")
    return 0


def main() -> int:
    from bytecode_state import add_optimize_option, bytecode_line

    from clawseed_edge.testing.fake_servers import FakeOllama, Reply
    from clawseed_edge.testing.fake_servers.telegram import FakeBotApi
    from clawseed_edge.testing.mqtt import MosquittoBroker

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle-s", type=float, default=5.0, help="seconds before idle RSS")
    parser.add_argument("--window-s", type=float, default=60.0, help="idle window for CPU, I/O")
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument(
        "--only",
        choices=("idle", "turns", "samples"),
        help="run one phase alone (the others print nothing)",
    )
    parser.add_argument(
        "--increments",
        action="store_true",
        help="instead: idle RSS of each way in alone against the base, at levels 0 and 2",
    )
    add_optimize_option(parser)
    args = parser.parse_args()
    print(bytecode_line(), flush=True)
    if args.increments:
        return increments(args.runs, args.idle_s)

    env = {**os.environ, "PYTHONOPTIMIZE": str(args.optimize), "TELEGRAM_BOT_TOKEN": TOKEN}
    for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "PYTHONDEVMODE"):
        env.pop(name, None)
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOllama() as ollama,
        FakeBotApi(token=TOKEN) as bot,
        MosquittoBroker(Path(tmp) / "broker") as broker,
    ):
        ollama.default_reply = Reply.text("ok")
        base = BASE.format(ollama=ollama.url)

        def full(port: int, extra: str = "") -> str:
            return (
                base
                + CHANNELS.format(port=port, telegram=bot.url, owner=OWNER, mqtt=broker.port)
                + SENSORS
                + extra
            )

        runs: dict[str, list[dict[str, float]]] = {"base": [], "pi zero": []}
        turn_rows: list[tuple[int, float]] = []
        sample_rows: list[tuple[int, float]] = []
        for i in range(args.runs if args.only in (None, "idle") else 0):  # interleaved
            for name in runs:
                config = base if name == "base" else full(free_port())
                with Service(config, env) as service:
                    runs[name].append(idle_figures(service, args.idle_s, args.window_s))
                print(f"run {i + 1} {name}: {runs[name][-1]}", file=sys.stderr, flush=True)

        if args.only in (None, "turns"):
            port = free_port()
            with Service(full(port), env) as service:
                turn_rows = turns(port, args.turns, service.pid, max(1, args.turns // 10))
            print(f"turns: {turn_rows}", file=sys.stderr, flush=True)
        if args.only in (None, "samples"):
            with Service(full(free_port(), FAST_SENSORS), env) as service:
                sample_rows = samples(service, args.samples, max(1, args.samples // 10))

    if runs["base"]:
        print(f"\nmedians over {args.runs} runs, PYTHONOPTIMIZE={args.optimize}, "
              f"idle window {args.window_s:g} s")  # fmt: skip
        print(f"{'':34}{'Pi Zero config':>16}{'base':>12}{'ratio':>8}")
    for label, key, unit in (
        ()
        if not runs["base"]
        else (
            ("idle RSS", "idle_mb", "MB"),
            ("CPU per idle minute", "cpu_ms_per_min", "ms"),
            ("share of one core", "core_share_pct", "%"),
            ("SD writes per hour (write_bytes)", "write_kb_per_h", "KB"),
            ("write(2) bytes per hour (wchar)", "wchar_kb_per_h", "KB"),
        )
    ):
        p = statistics.median(r[key] for r in runs["pi zero"])
        b = statistics.median(r[key] for r in runs["base"])
        ratio = f"{p / b:.2f}x" if b else "-"
        print(f"{label:34}{p:>12.2f} {unit:<3}{b:>9.2f} {unit:<3}{ratio:>7}")
    if turn_rows:
        print("\nRSS while turns run (one WebSocket):")
    for n, mb in turn_rows:
        print(f"  after {n:>7} turns   {mb:7.2f} MB")
    if sample_rows:
        print("RSS while the sampler reads (readings taken, all sensors):")
    for n, mb in sample_rows:
        print(f"  after {n:>7} readings {mb:7.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
