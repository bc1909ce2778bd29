"""Cameras: idle RSS with a camera configured, CPU per motion frame, snapshot latency.

Three measurements, each against a baseline taken in the same run:

* idle RSS of ``run --sim`` (the embedded default config) with one simulated camera, motion off
  and motion on (2 fps), against the same service with no camera; measured as
  bench_idle_imports.py measures it (a fresh process, VmRSS after ``--idle-s`` seconds idle,
  runs interleaved, PYTHONOPTIMIZE=2);
* CPU per motion frame (thread CPU time): the DCT-scaled grey thumbnail (80x60) of a 640x480
  JPEG plus the frame difference, against a full decode of the same frame (what a detector
  without DCT scaling would pay); on a photo-like frame (noise: real entropy) and on a
  simulated frame (flat blocks);
* snapshot latency (wall time): ``CameraBank.snapshot`` (worker thread, rate window, file
  write) against the simulated camera's bare ``capture()``.

Run: ``python benchmarks/bench_camera.py [--runs 3] [--idle-s 3] [--frames 50]``. Linux only
(``/proc``). Needs Pillow (the camera extra).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_idle_imports import READY_LINE, measure

from clawseed_edge.peripherals.camera.bank import CameraBank
from clawseed_edge.peripherals.camera.config import CameraConfig
from clawseed_edge.peripherals.camera.motion import THUMBNAIL, MotionDetector
from clawseed_edge.peripherals.camera.pixels import grey_thumbnail
from clawseed_edge.peripherals.camera.sim import SimCamera


def idle_rss(runs: int, idle_s: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        configs = {
            "run --sim, no camera": "",
            "run --sim, 1 camera, motion off": '[[cameras]]\nname = "porch_cam"\n',
            "run --sim, 1 camera, motion 2 fps": '[[cameras]]\nname = "porch_cam"\nfps = 2\n',
        }
        env = {**os.environ, "CLAWSEED_HOME": str(Path(tmp) / "home"), "PYTHONOPTIMIZE": "2"}
        env.pop("PYTHONDEVMODE", None)
        service = [sys.executable, "-m", "clawseed_edge"]
        argvs = {}
        for i, (name, text) in enumerate(configs.items()):
            path = Path(tmp) / f"c{i}.toml"
            path.write_text(text, encoding="utf-8")
            argvs[name] = [*service, "--config", str(path), "run", "--sim"]
        rss: dict[str, list[float]] = {name: [] for name in configs}
        for _ in range(runs):  # interleaved: drift on a shared machine hits every case alike
            for name, argv in argvs.items():
                rss[name].append(measure(argv, env, READY_LINE, idle_s)[1])
    base = statistics.median(rss["run --sim, no camera"])
    print(f"idle RSS, {runs} runs, {idle_s:g} s idle, PYTHONOPTIMIZE=2; medians")
    print(f"{'case':<36} {'RSS':>9} {'vs none':>9} {'ratio':>6}")
    for name, values in rss.items():
        m = statistics.median(values)
        print(f"{name:<36} {m:>6.1f} MB {m - base:>+6.2f} MB {m / base:>6.3f}")


def photo_like(width: int = 640, height: int = 480, seed: int = 1) -> bytes:
    """A JPEG with a photo's entropy: a gradient with noise, quality 80."""
    from PIL import Image

    rnd = random.Random(seed)
    pixels = bytes(
        min(255, max(0, (x + y) // 5 + rnd.randint(-40, 40)))
        for y in range(height)
        for x in range(width)
        for _ in range(3)
    )
    out = io.BytesIO()
    Image.frombytes("RGB", (width, height), pixels).save(out, "JPEG", quality=80)
    return out.getvalue()


def full_decode(data: bytes) -> None:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        im.convert("L").resize(THUMBNAIL)


def cpu_per_frame(frames: int) -> None:
    sim = SimCamera((640, 480))
    cases = {"photo-like 640x480": [photo_like(seed=s) for s in range(2)]}
    cases["simulated 640x480"] = [sim.capture() for _ in range(2)]
    print(f"\nCPU per motion frame (thread CPU), {frames} frames; medians")
    print(f"{'frame':<20} {'thumbnail+diff':>15} {'full decode':>12} {'ratio':>6}")
    for name, pair in cases.items():
        detector = MotionDetector()
        ours, base = [], []
        for i in range(frames):
            data = pair[i % 2]
            t0 = time.thread_time()
            detector.feed(grey_thumbnail(data, THUMBNAIL))
            t1 = time.thread_time()
            full_decode(data)
            t2 = time.thread_time()
            ours.append(t1 - t0)
            base.append(t2 - t1)
        o, b = statistics.median(ours) * 1e3, statistics.median(base) * 1e3
        print(f"{name:<20} {o:>12.2f} ms {b:>9.2f} ms {o / b:>6.2f}")


async def snapshot_latency(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = CameraConfig(name="porch_cam", max_per_minute=60)
        bank = CameraBank([config], Path(tmp), clock=iter(range(0, 10**9, 61)).__next__)
        bare = SimCamera((640, 480))
        ours, base = [], []
        for _ in range(n):
            t0 = time.perf_counter()
            await bank.snapshot("porch_cam")
            t1 = time.perf_counter()
            bare.capture()
            t2 = time.perf_counter()
            ours.append(t1 - t0)
            base.append(t2 - t1)
        await bank.disconnect()
    o, b = statistics.median(ours) * 1e3, statistics.median(base) * 1e3
    print(f"\nsnapshot latency, simulated 640x480, {n} snapshots; medians")
    print(f"{'CameraBank.snapshot':<22} {o:>8.2f} ms {o / b:>6.2f}")
    print(f"{'baseline: capture()':<22} {b:>8.2f} ms {1:>6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle-s", type=float, default=3.0)
    parser.add_argument("--frames", type=int, default=50)
    args = parser.parse_args()
    cpu_per_frame(args.frames)
    asyncio.run(snapshot_latency(args.frames))
    print()
    idle_rss(args.runs, args.idle_s)


if __name__ == "__main__":
    main()
