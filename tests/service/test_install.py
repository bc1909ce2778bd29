"""``service install`` into a temporary root; the unit passes systemd's own checks.

``systemd-analyze`` comes with Debian's ``systemd`` package; without it the checks are skipped
locally and fail in CI (``CI`` set), where .ci/run installs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.service import install as install_module
from clawseed_edge.service.install import InstallPaths, ServiceInstallError, install, uninstall
from clawseed_edge.service.unit import UNIT_NAME, render_unit

REPO = Path(__file__).resolve().parents[2]
MAX_EXPOSURE = 2.0


def _systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("systemd-analyze is missing in CI: .ci/run installs Debian's systemd")
        pytest.skip("systemd-analyze not installed (apt-get install systemd)")
    return found


def _installed(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "root"
    code = main(["service", "install", "--root", str(root)])
    assert code == 0
    return InstallPaths(root).unit, (InstallPaths(root).unit).read_text()


def test_the_repository_unit_is_the_rendered_default() -> None:
    text = (REPO / "systemd" / UNIT_NAME).read_text(encoding="utf-8")
    assert text == render_unit(), "regenerate systemd/clawseed-edge.service from render_unit()"


def test_install_into_a_root_writes_unit_udev_rule_and_config_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, text = _installed(tmp_path)
    out = capsys.readouterr().out
    paths = InstallPaths(tmp_path / "root")
    exe = Path(sys.executable).parent / "clawseed-edge"
    assert f"ExecStart={exe.absolute()} run\n" in text
    assert f"ExecReload={exe.absolute()} reload\n" in text
    assert "Type=notify" in text and "WatchdogSec=" in text
    assert "SupplementaryGroups=gpio i2c dialout" in text
    rule = paths.udev_rule.read_text()
    assert 'ATTRS{idVendor}=="0483", ATTRS{idProduct}=="374b"' in rule
    assert (paths.state_dir / "config.toml").is_file()
    assert oct(paths.state_dir.stat().st_mode & 0o777) == oct(0o700)
    # Nothing ran on this machine: every system command is only shown.
    for command in ("useradd --system", "systemctl daemon-reload", "systemctl enable"):
        assert f"would run: {command}" in out
    assert "staged under" in out


def test_install_keeps_an_existing_config(tmp_path: Path) -> None:
    paths = InstallPaths(tmp_path)
    paths.state_dir.mkdir(parents=True)
    (paths.state_dir / "config.toml").write_text("# mine\n")
    lines = install(tmp_path, run=_must_not_run)
    assert (paths.state_dir / "config.toml").read_text() == "# mine\n"
    assert any(line.startswith("kept ") for line in lines)


def test_install_with_gateway_writes_a_config_phones_can_reach(tmp_path: Path) -> None:
    from clawseed_edge.cli.main import main
    from clawseed_edge.config.file import load_config

    assert main(["service", "install", "--root", str(tmp_path), "--gateway"]) == 0
    config = load_config(InstallPaths(tmp_path).state_dir / "config.toml").config
    assert config.gateway.enabled and config.gateway.host == "0.0.0.0"
    assert config.gateway.allow_public_bind and config.gateway.require_pairing


def _must_not_run(command: object) -> int:
    raise AssertionError(f"a staged install ran {command}")


def test_install_needs_root_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(install_module.os, "geteuid", lambda: 1000)
    with pytest.raises(ServiceInstallError, match="needs root"):
        install(run=_must_not_run)
    assert main(["service", "install"]) == 1
    err = capsys.readouterr().err
    assert "needs root" in err and "sudo" in err and "--root DIR" in err


def test_a_venv_under_home_gets_protect_home_read_only(tmp_path: Path) -> None:
    install(tmp_path, executable=Path("/home/pi/venv/bin/clawseed-edge"), run=_must_not_run)
    assert "ProtectHome=read-only" in InstallPaths(tmp_path).unit.read_text()


def test_uninstall_removes_unit_and_rule_and_keeps_the_state(tmp_path: Path) -> None:
    install(tmp_path, run=_must_not_run)
    paths = InstallPaths(tmp_path)
    lines = uninstall(tmp_path, run=_must_not_run)
    assert not paths.unit.exists() and not paths.udev_rule.exists()
    assert (paths.state_dir / "config.toml").exists()
    assert any("would run: systemctl disable --now" in line for line in lines)


def test_systemd_analyze_verify_passes_on_the_installed_unit(tmp_path: Path) -> None:
    analyze = _systemd_analyze()
    unit, _ = _installed(tmp_path)
    done = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Unknown key" not in output and "Unknown section" not in output, output
    assert "ignoring" not in output, output


def test_systemd_analyze_security_scores_two_or_lower(tmp_path: Path) -> None:
    analyze = _systemd_analyze()
    unit, _ = _installed(tmp_path)
    done = subprocess.run(
        [analyze, "security", "--offline=true", "--no-pager", str(unit)],
        capture_output=True,
        text=True,
        check=False,
    )
    output = done.stdout + done.stderr
    assert "Unknown key" not in output, output
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", output)
    assert match is not None, output
    assert float(match.group(1)) <= MAX_EXPOSURE, output


def test_the_stack_runs_a_turn_with_write_execute_memory_denied(tmp_path: Path) -> None:
    """``MemoryDenyWriteExecute=yes`` holds: the kernel's own W^X switch (PR_SET_MDWE, the
    same rule systemd's seccomp filter enforces) refuses no mapping a turn, a ctypes callback
    or the gateway's import stack needs."""
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import ctypes; l = ctypes.CDLL(None, use_errno=True); "
            "raise SystemExit(0 if l.prctl(65, 1, 0, 0, 0) == 0 else 1)",
        ],
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip("this kernel has no PR_SET_MDWE (Linux 6.3+)")
    script = (
        "import ctypes, sys\n"
        "assert ctypes.CDLL(None).prctl(65, 1, 0, 0, 0) == 0\n"
        "cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda x: x + 1)\n"
        "assert cb(1) == 2\n"
        "import starlette.applications, uvicorn, httpx, aiosqlite, msgspec, gpiozero, serial\n"
        "from clawseed_edge.cli.main import main\n"
        "raise SystemExit(main(['agent', '--sim', '-m', 'turn on the red led']))\n"
    )
    env = {**os.environ, "CLAWSEED_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "red_led (GPIO17) is now on" in done.stdout


def test_without_systemd_a_live_install_writes_nothing_and_says_why(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Root on "/" with systemd absent (a container): refused before the user and the files.
    # `run` refuses every command, so a regression fails here before touching this machine.
    monkeypatch.setattr(install_module.os, "geteuid", lambda: 0)
    monkeypatch.setattr(install_module, "systemd_booted", lambda: False)
    written: list[object] = []
    monkeypatch.setattr(install_module, "_write", lambda *a, **k: written.append(a))
    with pytest.raises(ServiceInstallError, match="does not run systemd") as refused:
        install(Path("/"), run=_must_not_run, executable=Path("/opt/venv/bin/clawseed-edge"))
    assert "nothing was written" in str(refused.value)
    assert written == []
    monkeypatch.setattr(install_module, "_ensure_config", _must_not_run)
    assert main(["service", "install", "--now", "--gateway"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: this machine does not run systemd")


def test_a_second_install_with_gateway_says_the_kept_config_has_it_off(tmp_path: Path) -> None:
    assert main(["service", "install", "--root", str(tmp_path)]) == 0  # the gateway off
    config = InstallPaths(tmp_path).state_dir / "config.toml"
    before = config.read_text()
    lines = install(tmp_path, run=_must_not_run, init_args=["--gateway"])
    assert config.read_text() == before  # the user's file is not rewritten
    note = next(line for line in lines if "--gateway changed nothing" in line)
    assert "gateway that is off" in note and "[gateway] enabled = true" in note


def test_a_second_install_with_gateway_is_quiet_when_phones_can_reach_it(tmp_path: Path) -> None:
    assert main(["service", "install", "--root", str(tmp_path), "--gateway"]) == 0
    lines = install(tmp_path, run=_must_not_run, init_args=["--gateway"])
    assert not any("--gateway changed nothing" in line for line in lines)


# Imported by `run` and the gateway; the spy below records every module compiled from source.
_IMPORT_CHECK = """
import importlib, json, sys
from importlib import _bootstrap_external as external

compiled = []
source_to_code = external.SourceLoader.source_to_code

def spy(self, data, path, *args, **kwargs):
    compiled.append(str(path))
    return source_to_code(self, data, path, *args, **kwargs)

external.SourceLoader.source_to_code = spy
for name in sys.argv[1:]:
    importlib.import_module(name)
import clawseed_edge
print(json.dumps({"package": clawseed_edge.__file__, "compiled": compiled}))
"""
_SERVICE_MODULES = (
    "clawseed_edge.cli.main",
    "clawseed_edge.service.process",
    "clawseed_edge.config.assembly",
    "clawseed_edge.channels.gateway.app",
    "clawseed_edge.channels.gateway.server",
    "clawseed_edge.memory.sqlite",
    "clawseed_edge.providers.ollama",
    "uvicorn",
    "starlette.applications",
    "uvicorn.protocols.websockets.wsproto_impl",
    "httpx",
    "aiosqlite",
    "gpiozero",
    "msgspec",
)


def test_install_leaves_bytecode_a_read_only_venv_imports_without_compiling(
    tmp_path: Path,
) -> None:
    import json

    import clawseed_edge

    # A copy of the package without any bytecode stands for a fresh (or editable) install.
    src = tmp_path / "src"
    shutil.copytree(
        Path(clawseed_edge.__file__).parent,
        src / "clawseed_edge",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    command = [sys.executable, "-m", "clawseed_edge", "service", "install", "--root"]
    staged = subprocess.run(
        [*command, str(tmp_path / "staged")],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert staged.returncode == 0, staged.stderr
    assert "byte-compiled" not in staged.stdout and "would run: " in staged.stdout
    assert not list(src.rglob("__pycache__")), "staging under a root leaves the live venv alone"
    done = subprocess.run(
        [*command, str(tmp_path / "r"), "--byte-compile"],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "byte-compiled" in done.stdout
    for path in [src, *src.rglob("*")]:  # the service's view of its venv: read-only
        path.chmod(0o555 if path.is_dir() else 0o444)
    runs = {}
    try:
        # As the CLI imports it, and as the unit runs the service (PYTHONOPTIMIZE=2).
        for level in ("0", "2"):
            runs[level] = subprocess.run(
                [sys.executable, "-c", _IMPORT_CHECK, *_SERVICE_MODULES],
                env={**env, "PYTHONOPTIMIZE": level}, cwd=tmp_path, capture_output=True,
                text=True, check=False, timeout=120,
            )  # fmt: skip
    finally:
        for path in [src, *src.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    # The venv, and the standard library (the service's level needs its .opt-2.pyc too).
    installed = (str(src), str(Path(sys.prefix).resolve()), sys.prefix, sys.base_prefix)
    for level, ran in runs.items():
        assert ran.returncode == 0, ran.stderr
        result = json.loads(ran.stdout)
        assert result["package"].startswith(str(src)), "the copy was imported"
        from_source = [p for p in result["compiled"] if p.startswith(installed)]
        assert from_source == [], f"-O level {level} compiled from source: {from_source[:5]}"
    assert list(src.rglob("*.opt-2.pyc")), "the service's level has bytecode"
    assert not any(p.suffix == ".pyc" for p in src.rglob("*") if "__pycache__" not in p.parts), (
        "bytecode only in __pycache__"
    )
