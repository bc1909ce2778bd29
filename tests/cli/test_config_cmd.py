from __future__ import annotations

import tomllib
from pathlib import Path

import msgspec
import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.config.file import load_config

SECRET = "sk-ant-api03-verysecretvalue1234"


def _show(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert main([*argv, "config", "show"]) == 0
    return capsys.readouterr().out


def test_show_round_trips_to_the_same_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _show(capsys)
    assert out.startswith("# effective config: <embedded default>")
    again = tmp_path / "shown.toml"
    again.write_text(out)
    assert main(["config", "check", str(again)]) == 0
    assert load_config(again).config == load_config().config


def test_show_fills_defaults_and_applies_env(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[provider]\nname = "ollama"\n')
    monkeypatch.setenv("CLAWSEED__AGENT__MAX_HISTORY", "7")
    data = tomllib.loads(_show(capsys, "--config", str(config)))
    assert data["provider"]["name"] == "ollama"
    assert data["agent"]["max_history"] == 7
    assert data["gateway"]["port"] == 42617  # a default the file does not mention
    assert "CLAWSEED__AGENT__MAX_HISTORY" in _show(capsys, "--config", str(config))


def test_show_redacts_keys_and_secret_values(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        f'[provider]\nname = "anthropic"\napi_key = "{SECRET}"\n'
        '[[hooks]]\nname = "h"\noptions = { note = "plain-but-configured-value" }\n'
    )
    secrets = clawseed_home / "secrets"
    secrets.write_text("OTHER=plain-but-configured-value\n")
    secrets.chmod(0o600)
    out = _show(capsys, "--config", str(config))
    assert SECRET not in out and "verysecret" not in out
    assert "plain-but-configured-value" not in out
    assert 'api_key = "***"' in out


def test_show_bad_file_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[agent]\nmax_histroy = 3\n")
    assert main(["--config", str(config), "config", "show"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "agent.max_histroy" in err


def test_check_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[agent]\nmax_history = 3\n")
    assert main(["config", "check", str(config)]) == 0
    assert capsys.readouterr().out == f"ok: {config}\n"


def test_check_uses_the_home_config_by_default(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (clawseed_home / "config.toml").write_text("[tools]\nshell = true\n")
    assert main(["config", "check"]) == 0
    assert "config.toml" in capsys.readouterr().out


def test_check_unknown_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[gateway]\nprot = 1\n")
    assert main(["config", "check", str(config)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {config}: gateway.prot: unknown key")
    assert "port" in err and err.count("\n") == 1


def test_check_wrong_type_and_bad_toml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[agent]\nmax_history = "10"\n')
    assert main(["config", "check", str(config)]) == 1
    assert "agent.max_history: expected int" in capsys.readouterr().err
    config.write_text("[agent\n")
    assert main(["config", "check", str(config)]) == 1
    assert "not valid TOML" in capsys.readouterr().err


def test_check_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.toml"
    assert main(["config", "check", str(missing)]) == 1
    err = capsys.readouterr().err
    assert str(missing) in err and "clawseed-edge init" in err
    assert main(["config", "check"]) == 1  # an empty home has no config.toml
    assert "no such config file" in capsys.readouterr().err


def test_check_names_the_environment_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "c.toml"
    config.write_text("")
    monkeypatch.setenv("CLAWSEED__AUTONOMY__LEVEL", "reckless")
    assert main(["config", "check", str(config)]) == 1
    assert "CLAWSEED__AUTONOMY__LEVEL" in capsys.readouterr().err


def test_builtins_are_plain() -> None:
    # dumps() only knows plain data: msgspec.to_builtins must give it nothing else.
    from clawseed_edge.config.toml_text import dumps

    data = msgspec.to_builtins(load_config().config)
    assert tomllib.loads(dumps(data))["provider"]["name"] == "demo"


_PI = '[provider]\nname = "demo"\n[hardware]\nboard = "rpi4b"\n'
_LED = '[[devices]]\nname = "{name}"\npin = "{pin}"\nkind = "led"\n'
REFUSED_BY_A_RUN = {
    "no such pin": (_PI + _LED.format(name="x", pin="GPIO99"), "has no pin 'GPIO99'"),
    "reserved pin": (_PI + _LED.format(name="x", pin="GPIO0"), "is reserved on rpi4b"),
    "pin used twice": (
        _PI + _LED.format(name="x", pin="GPIO17") + _LED.format(name="y", pin="GPIO17"),
        "pin GPIO17 is already used by device 'x'",
    ),
    "unknown sensor driver": (
        _PI + '[[sensors]]\nname = "t"\ndriver = "nosuch"\n',
        "unknown sensor driver 'nosuch'",
    ),
    "unknown provider": ('[provider]\nname = "nosuch"\nmodel = "m"\n', "unknown provider 'nosuch'"),
}


@pytest.mark.parametrize("case", sorted(REFUSED_BY_A_RUN))
def test_check_refuses_what_a_run_refuses_with_the_same_message(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, said = REFUSED_BY_A_RUN[case]
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert main(["--config", str(path), "agent", "-m", "status"]) == 1
    run_error = capsys.readouterr().err.strip().splitlines()[-1]
    assert said in run_error
    assert main(["config", "check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == run_error


def test_check_opens_no_hardware_and_writes_nothing(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Nucleo on a port that does not exist and an I2C sensor: wiring that checks out.
    path = tmp_path / "config.toml"
    path.write_text(
        '[provider]\nname = "ollama"\nmodel = "m"\nbase_url = "http://127.0.0.1:9"\n'
        '[[peripherals]]\nname = "bench"\ntype = "nucleo"\nboard = "nucleo-f401re"\n'
        'port = "/dev/ttyNOPE"\n[[peripherals.devices]]\nname = "l"\npin = "PA5"\nkind = "led"\n'
        '[[sensors]]\nname = "t"\ndriver = "bme280"\naddress = 0x76\n',
        encoding="utf-8",
    )
    before = sorted(clawseed_home.rglob("*"))
    assert main(["config", "check", str(path)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out == f"ok: {path}\n"
    assert sorted(clawseed_home.rglob("*")) == before


def test_check_refuses_a_public_gateway_address_as_run_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[provider]\nname = "demo"\n[gateway]\nenabled = true\nhost = "0.0.0.0"\n',
        encoding="utf-8",
    )
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "clawseed_edge", "--config", str(path), "run", "--sim"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    run_error = run.stderr.strip().splitlines()[-1]
    assert "allow_public_bind" in run_error
    capsys.readouterr()
    assert main(["config", "check", str(path)]) == 1
    assert capsys.readouterr().err.strip() == run_error


def test_show_hides_a_password_inside_a_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        '[provider]\nname = "openai-compatible"\nbase_url = "http://me:hunter2pw@127.0.0.1:8080/v1"\n'
    )
    out = _show(capsys, "--config", str(config))
    assert "hunter2pw" not in out
    assert "http://me:***@127.0.0.1:8080/v1" in out


def test_check_refuses_deeply_nested_toml_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.toml"
    config.write_text("x = " + "[" * 20000 + "\n")
    assert main(["config", "check", str(config)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested 20000 deep" in err and str(config) in err
    assert main(["--config", str(config), "agent", "-m", "hi"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "RecursionError" not in err and "nested" in err


def test_an_error_naming_a_url_hides_its_password(capsys: pytest.CaptureFixture[str]) -> None:
    from clawseed_edge.cli.common import fail

    assert fail("cannot reach http://admin:s3cretpass@10.0.0.1:11434/api/chat") == 1
    err = capsys.readouterr().err
    assert "s3cretpass" not in err and "http://admin:[redacted]@10.0.0.1" in err


def test_check_refuses_an_automation_on_an_unknown_quantity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.toml"
    rule = '[[automations]]\nname = "hot"\nwhen = "{when}"\nnotify = ["log"]\n'
    sensor = '[[sensors]]\nname = "greenhouse"\ndriver = "ds18b20"\n'
    config.write_text(sensor + rule.format(when="greenhouse.temperature > 30"))
    assert main(["config", "check", str(config)]) == 0
    config.write_text(sensor + rule.format(when="greenhouse.wind > 3"))
    assert main(["config", "check", str(config)]) == 1
    err = capsys.readouterr().err
    assert f"{config}: automations[0].when: 'greenhouse.wind': greenhouse has no 'wind'" in err
