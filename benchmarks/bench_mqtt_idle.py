"""Idle RSS of ``run --sim`` with the MQTT channel on and off.

Starts a mosquitto (Debian's package; :class:`clawseed_edge.testing.mqtt.MosquittoBroker`) on a
free port, then ``python -m clawseed_edge run --sim`` in a fresh process with the same devices
and sensors, ``[mqtt] enabled`` false and true, interleaved. RSS (VmRSS of ``/proc/PID/status``)
is read ``--idle-s`` seconds after the start-up line; with MQTT on, the node has connected and
published its discovery config by then. Baseline in the same run: MQTT off.

Run: ``python benchmarks/bench_mqtt_idle.py [--runs 5] [--idle-s 3]``; prints medians.
Linux only (``/proc``); needs the ``mqtt`` extra and mosquitto.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_idle_imports import READY_LINE, measure

from clawseed_edge.testing.mqtt import MosquittoBroker

CONFIG = """
[provider]
name = "demo"
[hardware]
board = "sim"
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
[[devices]]
name = "desk_lamp"
pin = "GPIO18"
kind = "pwm_led"
[[devices]]
name = "front_door"
pin = "GPIO5"
kind = "digital_in"
[[sensors]]
name = "greenhouse"
driver = "bme280"
bus = 1
address = 0x76
[mqtt]
enabled = {enabled}
port = {port}
node_id = "bench"
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle-s", type=float, default=3.0, help="seconds idle before RSS")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, MosquittoBroker(Path(tmp) / "broker") as broker:
        env = {**os.environ, "CLAWSEED_HOME": str(Path(tmp) / "home")}
        env.pop("PYTHONDEVMODE", None)
        cases = {}
        for name, enabled in (("run --sim, MQTT off", "false"), ("run --sim, MQTT on", "true")):
            path = Path(tmp) / f"{enabled}.toml"
            path.write_text(
                CONFIG.replace("{enabled}", enabled).replace("{port}", str(broker.port))
            )
            cases[name] = [
                sys.executable,
                "-m",
                "clawseed_edge",
                "--config",
                str(path),
                "run",
                "--sim",
            ]
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(args.runs):  # interleaved, so drift on a shared machine hits both alike
            for name, argv in cases.items():
                results[name].append(measure(argv, env, READY_LINE, args.idle_s))

    base = statistics.median(m for _, m in results["run --sim, MQTT off"])
    print(f"{args.runs} runs, RSS after {args.idle_s:g} s idle; medians")
    print(f"{'case':<24} {'to ready':>9} {'idle RSS':>9} {'vs off':>8}")
    for name, rows in results.items():
        t = statistics.median(r[0] for r in rows)
        m = statistics.median(r[1] for r in rows)
        print(f"{name:<24} {t:>7.2f} s {m:>6.1f} MB {m - base:>+6.1f} MB")


if __name__ == "__main__":
    main()
