"""The doctor's checks against fake machine trees: a Pi 5, a laptop, groups and overlays."""

from __future__ import annotations

import importlib.util
import marshal
import os
import py_compile
import sqlite3
from pathlib import Path

import pytest

from clawseed_edge.config.doctor import (
    CheckResult,
    DoctorContext,
    Machine,
    check_memory,
    make_context,
    run_checks,
)
from tests.fake_root import laptop_tree, nucleo_on_usb, pi5_tree, write


def by_name(results: list[CheckResult]) -> dict[str, CheckResult]:
    return {r.name: r for r in results}


def config_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text('[provider]\nname = "demo"\n' + text, encoding="utf-8")
    return path


async def doctor(
    tmp_path: Path, root: Path, text: str = "", **machine: object
) -> dict[str, CheckResult]:
    machine.setdefault("has_module", lambda name: True)  # lgpio exists on the Pi
    m = Machine(root=root, user="pi", **machine)  # type: ignore[arg-type]
    ctx = make_context(config_file(tmp_path, text), m)
    return by_name(await run_checks(ctx))


PI_WIRING = """
[hardware]
board = "rpi5"

[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"
"""


async def test_a_pi_5_with_the_user_in_every_group_passes(tmp_path: Path) -> None:
    root = pi5_tree(tmp_path / "root")
    found = await doctor(tmp_path, root, PI_WIRING, groups=frozenset({"pi", "gpio", "i2c"}))
    assert found["board"].status == "ok" and "(rpi5)" in found["board"].summary
    assert found["gpio"].status == "ok", found["gpio"]
    assert "/dev/gpiochip0, /dev/gpiochip4" in found["gpio"].summary
    assert found["i2c"].status == "ok" and "/dev/i2c-1" in found["i2c"].summary
    assert {found[n].status for n in ("1-wire", "dht", "serial")} == {"skip"}


async def test_lgpio_missing_on_a_pi_is_a_failure_with_its_fix(tmp_path: Path) -> None:
    root = pi5_tree(tmp_path / "root")
    found = await doctor(
        tmp_path, root, PI_WIRING, groups=frozenset({"gpio"}), has_module=lambda name: False
    )
    assert found["gpio"].status == "fail" and "lgpio" in found["gpio"].summary
    assert "pip install" in found["gpio"].fix


async def test_a_user_not_in_the_groups_is_told_the_usermod_line(tmp_path: Path) -> None:
    root = pi5_tree(tmp_path / "root")
    found = await doctor(
        tmp_path, root, PI_WIRING, groups=frozenset({"pi"}), usable=lambda p: False,
        is_root=False,
    )  # fmt: skip
    gpio = found["gpio"]
    assert gpio.status == "fail"
    assert "/dev/gpiochip0 is not usable by pi (pi is not in group gpio)" == gpio.summary
    assert gpio.fix == "sudo usermod -aG gpio pi, then log out and in again"
    assert found["i2c"].status == "fail" and "usermod -aG i2c pi" in found["i2c"].fix


async def test_a_user_added_to_the_group_but_not_logged_in_again_is_told_so(
    tmp_path: Path,
) -> None:
    root = pi5_tree(tmp_path / "root")
    write(root, "etc/group", "root:x:0:\ngpio:x:997:pi,other\ni2c:x:998:\n")
    found = await doctor(
        tmp_path, root, PI_WIRING, groups=frozenset({"pi"}), usable=lambda p: False,
        is_root=False,
    )  # fmt: skip
    assert "log out and in again (or reboot)" in found["gpio"].fix
    assert "in group gpio in /etc/group" in found["gpio"].fix
    assert "usermod -aG i2c pi" in found["i2c"].fix  # not listed in i2c


async def test_no_gpiochip_and_no_i2c_with_i2c_sensors_configured(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(root, "proc/device-tree/model", "Raspberry Pi 4 Model B Rev 1.4")
    wiring = '[hardware]\nboard = "rpi4b"\n[[sensors]]\nname = "air"\ndriver = "bme280"\nbus = 1\n'
    found = await doctor(tmp_path, root, wiring, groups=frozenset({"gpio", "i2c"}))
    assert found["gpio"].status == "fail" and "no /dev/gpiochip*" in found["gpio"].summary
    i2c = found["i2c"]
    assert i2c.status == "fail" and i2c.fix == "sudo raspi-config nonint do_i2c 0, then reboot"


async def test_i2c_off_without_i2c_sensors_is_only_a_skip_with_the_way_to_enable_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    write(root, "proc/device-tree/model", "Raspberry Pi 5 Model B Rev 1.0")
    write(root, "dev/gpiochip0")
    found = await doctor(tmp_path, root, PI_WIRING, groups=frozenset({"gpio"}))
    assert found["i2c"].status == "skip" and "do_i2c 0" in found["i2c"].fix


async def test_one_wire_and_dht_overlays_are_checked_only_when_those_sensors_are_configured(
    tmp_path: Path,
) -> None:
    root = pi5_tree(tmp_path / "root")
    sensors = (
        '[[sensors]]\nname = "water"\ndriver = "ds18b20"\n'
        '[[sensors]]\nname = "shed"\ndriver = "dht22"\n'
    )
    found = await doctor(tmp_path, root, sensors, groups=frozenset({"gpio", "i2c"}))
    assert found["1-wire"].status == "fail" and "dtoverlay=w1-gpio" in found["1-wire"].fix
    assert found["dht"].status == "fail" and "dtoverlay=dht11,gpiopin=" in found["dht"].fix

    write(root, "sys/bus/w1/devices/28-0316a279c6ff/w1_slave", "")
    write(root, "sys/bus/iio/devices/iio:device0/name", "dht11@4\n")
    found = await doctor(tmp_path, root, sensors, groups=frozenset({"gpio", "i2c"}))
    assert found["1-wire"].status == "ok" and "28-0316a279c6ff" in found["1-wire"].summary
    assert found["dht"].status == "ok" and "iio:device0" in found["dht"].summary


async def test_a_nucleo_needs_its_port_and_the_dialout_group(tmp_path: Path) -> None:
    root = nucleo_on_usb(pi5_tree(tmp_path / "root"))
    nucleo = '[[peripherals]]\nname = "bench"\ntype = "nucleo"\nboard = "nucleo-f401re"\n'
    found = await doctor(
        tmp_path, root, nucleo, groups=frozenset({"pi"}), usable=lambda p: "tty" not in p.name,
        is_root=False,
    )  # fmt: skip
    serial = found["serial"]
    assert serial.status == "fail" and "/dev/ttyACM0" in serial.summary
    assert "usermod -aG dialout pi" in serial.fix
    found = await doctor(tmp_path, root, nucleo, groups=frozenset({"dialout"}))
    assert found["serial"].status == "ok" and "0483:374B" in found["serial"].summary


async def test_a_configured_nucleo_that_is_not_plugged_in(tmp_path: Path) -> None:
    root = laptop_tree(tmp_path / "root")
    nucleo = '[[peripherals]]\nname = "bench"\ntype = "nucleo"\nboard = "nucleo-f401re"\n'
    found = await doctor(tmp_path, root, nucleo)
    assert found["serial"].status == "fail" and "data cable" in found["serial"].fix


async def test_a_pi_config_on_a_laptop_fails_the_board_check(tmp_path: Path) -> None:
    found = await doctor(tmp_path, laptop_tree(tmp_path / "root"), PI_WIRING)
    assert found["board"].status == "fail" and "--sim" in found["board"].fix
    assert found["gpio"].status == "skip"


async def test_a_broken_config_fails_its_check_and_the_rest_still_runs(tmp_path: Path) -> None:
    m = Machine(root=laptop_tree(tmp_path / "root"))
    ctx = make_context(config_file(tmp_path, "[agent]\nmax_history = 0\n"), m)
    found = by_name(await run_checks(ctx))
    assert found["config"].status == "fail" and "agent.max_history" in found["config"].summary
    assert found["provider"].status == "skip" and found["disk"].status == "ok"


async def test_a_check_that_raises_or_hangs_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    import asyncio

    def broken(ctx: DoctorContext) -> CheckResult:
        raise RuntimeError("boom")

    async def hangs(ctx: DoctorContext) -> CheckResult:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    ctx = make_context(None, Machine(root=tmp_path))
    results = await run_checks(ctx, [broken, hangs, broken], total_timeout_s=0.2)
    assert [r.status for r in results] == ["fail", "fail", "fail"]
    assert "RuntimeError: boom" in results[0].summary
    assert "did not finish" in results[1].summary
    assert "ran out of time" in results[2].summary


def test_memory_quick_check_reads_a_good_database_and_finds_a_damaged_one(
    tmp_path: Path,
) -> None:
    db = tmp_path / "memory.db"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE t (x TEXT)")
        c.executemany("INSERT INTO t VALUES (?)", [("x" * 500,) for _ in range(200)])
        c.execute("CREATE INDEX tx ON t (x)")
    c.close()
    ctx = make_context(config_file(tmp_path, f'[memory]\npath = "{db}"\n'), Machine(root=tmp_path))
    assert check_memory(ctx).status == "ok"
    before = db.stat().st_mtime_ns
    # Damage a page in the middle of the file: quick_check notices.
    data = bytearray(db.read_bytes())
    page = 4096
    data[3 * page : 3 * page + 200] = b"\xff" * 200
    db.write_bytes(bytes(data))
    result = check_memory(ctx)
    assert result.status == "fail", result
    assert "move" in result.fix
    assert db.stat().st_mtime_ns >= before  # read-only: the check wrote nothing
    assert not (tmp_path / "memory.db-wal").exists()


async def test_ollama_reachable_with_and_without_the_model(tmp_path: Path) -> None:
    from clawseed_edge.config.doctor import check_provider
    from clawseed_edge.testing.fake_servers import FakeOllama

    async with FakeOllama(models={"qwen2.5:1.5b": ("completion", "tools")}) as server:
        for model, status in (("qwen2.5:1.5b", "ok"), ("llama3.2:1b", "fail")):
            path = tmp_path / f"{status}.toml"
            path.write_text(
                f'[provider]\nname = "ollama"\nmodel = "{model}"\nbase_url = "{server.url}"\n',
                encoding="utf-8",
            )
            result = await check_provider(make_context(path, Machine(root=tmp_path)))
            assert result.status == status, result
            if status == "fail":
                assert result.fix == "`ollama pull llama3.2:1b`"
                assert "qwen2.5:1.5b" in result.summary


@pytest.mark.parametrize("present", [True, False])
async def test_a_remote_provider_needs_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, present: bool
) -> None:
    from clawseed_edge.config.doctor import check_provider

    if present:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    path = tmp_path / "c.toml"
    path.write_text('[provider]\nname = "anthropic"\n', encoding="utf-8")
    result = await check_provider(make_context(path, Machine(root=tmp_path)))
    assert result.status == ("ok" if present else "fail")
    assert "sk-ant-test" not in result.summary
    if not present:
        assert result.fix == "`clawseed-edge secrets set ANTHROPIC_API_KEY`"


def test_bytecode_missing_or_stale_is_a_warning_until_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawseed_edge.config import bytecode
    from clawseed_edge.config.doctor import UNIT_FILE, check_bytecode

    module = tmp_path / "pkg" / "mod.py"
    module.parent.mkdir()
    module.write_text("X = 1\n", encoding="utf-8")
    monkeypatch.setattr(bytecode, "installed_sources", lambda: [module])
    monkeypatch.setattr(bytecode, "stdlib_sources", list)
    ctx = make_context(config_file(tmp_path, ""), Machine(root=tmp_path, user="pi"))

    checkout = check_bytecode(ctx)  # no service, code this user can write: Python compiles it
    unit = tmp_path / UNIT_FILE
    unit.parent.mkdir(parents=True)
    unit.write_text("[Service]\n", encoding="utf-8")
    missing = check_bytecode(ctx)
    unit.unlink()
    py_compile.compile(str(module))  # what a plain pip install leaves: no service level
    without_unit = check_bytecode(ctx)
    unit.write_text("[Service]\n", encoding="utf-8")
    plain_only = check_bytecode(ctx)
    report = bytecode.byte_compile()
    compiled = check_bytecode(ctx)
    module.write_text("X = 22\n", encoding="utf-8")  # edited after compiling: stale
    stale = check_bytecode(ctx)

    assert checkout.status == "ok" and "compiled as they are imported" in checkout.summary
    assert missing.status == "warn" and "1 of 1 modules" in missing.summary
    assert "service install" in missing.fix and "compileall" in missing.fix
    assert without_unit.status == "ok", "no service: the plain level is all that is used"
    assert plain_only.status == "warn", "the service's PYTHONOPTIMIZE=2 bytecode is missing"
    assert "-o 0 -o 2" in plain_only.fix
    assert (report.total, report.compiled, report.failed_count) == (1, 1, 0)
    assert compiled.status == "ok", compiled
    plain = Path(importlib.util.cache_from_source(str(module)))
    service = Path(importlib.util.cache_from_source(str(module), optimization=2))
    columns = {
        level: [p[2] for p in marshal.loads(pyc.read_bytes()[16:]).co_positions()]
        for level, pyc in ((0, plain), (2, service))
    }
    assert any(c is not None for c in columns[0]), "the CLI's bytecode keeps column spans"
    assert set(columns[2]) == {None}, "the service's is compiled with -X no_debug_ranges"
    assert stale.status == "warn" and str(module) in stale.summary


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root (sudo)")
def test_bytecode_compiled_as_root_belongs_to_the_owner_of_the_code(tmp_path: Path) -> None:
    from clawseed_edge.config import bytecode

    package = tmp_path / "venv" / "pkg"
    package.mkdir(parents=True)
    module = package / "mod.py"
    module.write_text("X = 1\n", encoding="utf-8")
    os.chown(package, 1000, 1000)  # a user's venv; `sudo ... service install` compiles it
    os.chown(module, 1000, 1000)

    report = bytecode.byte_compile([module])

    cached = Path(importlib.util.cache_from_source(str(module)))
    service = Path(importlib.util.cache_from_source(str(module), optimization=2))
    assert report.compiled == 1
    assert (cached.stat().st_uid, cached.parent.stat().st_uid) == (1000, 1000)
    assert service.stat().st_uid == 1000


def test_the_doctor_looks_for_the_unit_where_service_install_writes_it() -> None:
    from clawseed_edge.config.doctor import UNIT_FILE
    from clawseed_edge.service.install import InstallPaths

    assert InstallPaths(Path("/")).unit == Path("/") / UNIT_FILE


def test_the_service_level_covers_the_standard_library_but_not_its_tests() -> None:
    import asyncio
    import json

    from clawseed_edge.config import bytecode

    names = {p.name for p in bytecode.stdlib_sources()}
    paths = [str(p) for p in bytecode.stdlib_sources()]
    assert Path(asyncio.__file__).resolve() in set(bytecode.stdlib_sources())
    assert Path(json.__file__).resolve() in set(bytecode.stdlib_sources())
    assert "__init__.py" in names
    assert not [p for p in paths if "/test/" in p or "/idlelib/" in p or "/site-packages/" in p]
