"""`clawseed-edge doctor` on this (non-Pi) machine and on a fake Pi tree: output, --json, exit."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.config.doctor import STATUSES, Machine, make_context
from tests.fake_root import pi5_tree


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


NAMES = ["python", "bytecode", "config", "packages", "board", "gpio", "i2c", "1-wire", "dht", "serial",
         "camera", "provider", "memory", "disk", "service"]  # fmt: skip


def test_on_this_machine_with_the_embedded_default_nothing_fails(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "doctor")
    assert code == 0, out + err
    assert "Traceback" not in err
    lines = [line for line in out.splitlines() if line[:4] in ("ok  ", "WARN", "FAIL", "skip")]
    assert [line.split()[1] for line in lines] == NAMES
    assert "WARN  config" in out and "clawseed-edge init" in out
    # A checkout's edited modules may lack fresh bytecode until imported: that one may warn.
    warnings = 2 if "WARN  bytecode" in out else 1
    assert out.rstrip().endswith(f"no failures, {warnings} warning(s)")


def test_json_for_scripts_and_exit_1_when_the_model_server_is_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens
    config = tmp_path / "config.toml"
    config.write_text(
        f'[provider]\nname = "ollama"\nbase_url = "http://127.0.0.1:{port}"\n', encoding="utf-8"
    )
    code, out, _ = run_cli(capsys, "--config", str(config), "doctor", "--json")
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    assert [c["name"] for c in report["checks"]] == NAMES
    assert {c["status"] for c in report["checks"]} <= set(STATUSES)
    provider = next(c for c in report["checks"] if c["name"] == "provider")
    assert provider["status"] == "fail" and f"127.0.0.1:{port}" in provider["summary"]
    assert "ollama" in provider["fix"]


def test_a_fake_pi_5_tree_through_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = pi5_tree(tmp_path / "root")
    code, out, _ = run_cli(capsys, "doctor", "--json", "--root", str(root))
    report = json.loads(out)
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["board"]["status"] == "ok" and "(rpi5)" in checks["board"]["summary"]
    assert checks["gpio"]["status"] in ("ok", "fail")  # fail here when lgpio is not installed
    assert code == (0 if report["ok"] else 1)
    assert report["ok"] == all(c["status"] != "fail" for c in report["checks"])


async def test_the_service_check_finds_a_running_service_on_its_control_socket(
    clawseed_home: Path,
) -> None:
    from clawseed_edge.cli.doctor_cmd import _service_check
    from clawseed_edge.config.file import load_config
    from clawseed_edge.service.process import Service, ServiceOptions

    check = _service_check(real_machine=False)
    ctx = make_context(None, Machine(root=clawseed_home))
    idle = await check(ctx)
    assert idle.status == "skip" and "service install" in idle.fix
    service = Service(load_config(), ServiceOptions(sim=True, say=lambda line: None))
    async with service:
        running = await check(ctx)
    assert running.status == "ok" and "model demo" in running.summary
    (clawseed_home / "control.sock").touch()  # what a crashed service leaves
    stale = await check(ctx)
    assert stale.status == "warn" and "no service answers" in stale.summary
