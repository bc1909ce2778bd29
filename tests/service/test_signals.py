"""SIGTERM and SIGHUP stop the service with every output in its safe state, in that order."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from clawseed_edge.config.file import load_config
from clawseed_edge.service import Service, ServiceOptions
from clawseed_edge.testing import ScriptedProvider

CONFIG = """
[provider]
name = "demo"
[hardware]
board = "sim"
[[devices]]
name = "heater"
pin = "GPIO17"
kind = "relay"
initial = "on"
"""


def _heater(service: Service) -> dict[str, object]:
    assert service.runtime is not None
    return dict(service.runtime.peripherals[0].pin_states()["GPIO17"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
async def test_a_stop_signal_applies_the_safe_state_before_the_service_stops(
    clawseed_home: Path, sig: signal.Signals
) -> None:
    path = clawseed_home / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    options = ServiceOptions(
        sim=True, gateway=False, assemble={"provider": ScriptedProvider()}, say=lambda line: None
    )
    service = Service(load_config(path), options)
    remove = service.install_signal_handlers()
    try:
        await service.start()
        on = _heater(service)
        os.kill(os.getpid(), sig)
        await asyncio.wait_for(service.wait(), 10)  # a bound: returns once the signal is handled
        # Still open: the handler, not the ordered close, drove the relay to its safe value.
        after = _heater(service)
    finally:
        remove()
        await service.aclose()
    assert on["value"] is True or on["value"] == 1
    assert after["value"] in (False, 0) and after["level"] != on["level"]


def test_sighup_stops_run_with_the_safe_state_and_exit_code_zero(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(CONFIG, encoding="utf-8")
    env = {**os.environ, "CLAWSEED_HOME": str(tmp_path)}
    env.pop("NOTIFY_SOCKET", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawseed_edge", "run", "--sim"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            if line.startswith("clawseed-edge running"):
                break
        proc.send_signal(signal.SIGHUP)
        rest = proc.stderr.read()
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0, rest
    assert "SIGHUP: applying the safe state of 1 peripheral" in rest
    assert "outputs are in their safe state" in rest
