"""`clawseed-edge init`: the config for the detected board, flags, questions, nothing half-written."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from clawseed_edge.api import ConfigError
from clawseed_edge.cli.main import main
from clawseed_edge.config.file import load_config
from clawseed_edge.config.init_text import InitChoices, starter_config
from tests.fake_root import laptop_tree, nucleo_on_usb, pi5_tree


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class Terminal(io.StringIO):
    """Stdin that says it is a terminal, with the user's answers queued."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("provider", ["ollama", "anthropic", "openai", "demo"])
@pytest.mark.parametrize(
    ("kind", "board"),
    [("pi", "rpi5"), ("pi", "rpizero2w"), ("nucleo", "nucleo-f411re"), ("sim", "sim")],
)
@pytest.mark.parametrize("gateway", [True, False])
def test_every_variant_loads_with_the_real_loader(
    tmp_path: Path, provider: str, kind: str, board: str, gateway: bool
) -> None:
    text = starter_config(
        InitChoices(board_kind=kind, board_id=board, provider=provider, gateway=gateway,
                    detected="Raspberry Pi 5 Model B Rev 1.0 (rpi5)", other_boards=("nucleo-f401re",))
    )  # fmt: skip
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    config = load_config(path).config
    assert config.provider.name == provider
    assert config.gateway.enabled is gateway
    # A gateway is for phones: it listens on the network (pairing still required).
    assert (config.gateway.host, config.gateway.allow_public_bind) == (
        ("0.0.0.0", True) if gateway else ("127.0.0.1", False)
    )
    assert config.gateway.require_pairing
    if kind == "nucleo":
        assert config.peripherals[0]["board"] == board
    else:
        assert config.hardware.board == board
    if kind == "pi":
        assert config.devices == [], "nothing is driven on a real Pi until the user wires it"
    assert config.tools.system_info and not config.tools.web_fetch


def test_on_a_pi_5_it_writes_the_pi_header_and_a_model_that_fits(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = pi5_tree(tmp_path / "root", memory_kb=4_000_000)  # a 4 GB Pi 5
    code, out, err = run_cli(capsys, "init", "--root", str(root), "--yes")
    assert code == 0, err
    config = load_config(clawseed_home / "config.toml").config
    assert config.hardware.board == "rpi5"
    assert config.provider.name == "ollama" and config.provider.model == "qwen2.5:1.5b"
    assert "Raspberry Pi 5 Model B Rev 1.0 (rpi5)" in out
    assert "ollama pull qwen2.5:1.5b" in out and "clawseed-edge doctor" in out
    assert code == main(["config", "check", str(clawseed_home / "config.toml")])


def test_a_nucleo_on_usb_gets_a_peripherals_table(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = nucleo_on_usb(laptop_tree(tmp_path / "root"))
    code, out, _ = run_cli(capsys, "init", "--root", str(root), "--provider", "demo")
    assert code == 0
    text = (clawseed_home / "config.toml").read_text(encoding="utf-8")
    config = load_config(clawseed_home / "config.toml").config
    assert config.peripherals[0]["type"] == "nucleo"
    assert config.peripherals[0]["board"] == "nucleo-f401re"
    assert "nucleo-l476rg" in text, "the other boards with the same ST-LINK are named"
    assert "0483:374B" in out


def test_flags_choose_board_provider_model_and_gateway(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        capsys, "init", "--root", str(laptop_tree(tmp_path)), "--board", "rpi4b",
        "--provider", "anthropic", "--model", "claude-haiku-4-5", "--gateway",
    )  # fmt: skip
    assert code == 0, err
    config = load_config(clawseed_home / "config.toml").config
    assert config.hardware.board == "rpi4b"
    assert (config.provider.name, config.provider.model) == ("anthropic", "claude-haiku-4-5")
    assert config.provider.api_key_env == "ANTHROPIC_API_KEY"
    assert config.gateway.enabled


def test_on_this_machine_it_falls_back_to_simulated_pins(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "init", "--root", str(laptop_tree(tmp_path)))
    assert code == 0
    config = load_config(clawseed_home / "config.toml").config
    assert config.hardware.board == "sim" and config.devices[0].name == "red_led"
    assert config.provider.model == "qwen2.5:3b"  # no Pi: the default model
    assert "chat --sim" in out


def test_bad_board_flags_are_explained_and_nothing_is_written(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(laptop_tree(tmp_path))
    code, _, err = run_cli(capsys, "init", "--root", root, "--board", "rpi9")
    assert code == 2 and "'rpi9'" in err and "rpi5" in err
    code, _, err = run_cli(capsys, "init", "--root", root, "--board", "pi")
    assert code == 2 and "this is not a Pi" in err
    assert not (clawseed_home / "config.toml").exists()


def test_force_keeps_its_behaviour(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(laptop_tree(tmp_path))
    assert run_cli(capsys, "init", "--root", root)[0] == 0
    code, _, err = run_cli(capsys, "init", "--root", root)
    assert code == 1
    assert err.strip() == (
        f"error: {clawseed_home / 'config.toml'} exists; edit it, or pass --force to replace it"
    )
    code, _, _ = run_cli(capsys, "init", "--root", root, "--force", "--provider", "demo")
    assert code == 0
    assert load_config(clawseed_home / "config.toml").config.provider.name == "demo"


def test_on_a_terminal_it_asks_with_the_detected_defaults(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    root = pi5_tree(tmp_path / "root")
    # board: Enter (pi, detected); wiring: Enter (detected); server: a wrong answer, then
    # openai; model: Enter; gateway: yes
    monkeypatch.setattr("sys.stdin", Terminal("\n\nchatgpt\nopenai\n\nyes\n"))
    code, out, err = run_cli(capsys, "init", "--root", str(root))
    assert code == 0, err
    assert "board [pi/nucleo/sim] (pi): " in out
    assert "wiring: keep the demo's, or start from the detected hardware [demo/detected]" in out
    assert "please answer one of" in err
    config = load_config(clawseed_home / "config.toml").config
    assert config.hardware.board == "rpi5"
    assert (config.provider.name, config.provider.model) == ("openai", "gpt-4o-mini")
    assert config.gateway.enabled


def test_end_of_input_or_ctrl_c_leaves_nothing_written(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    root = str(pi5_tree(tmp_path / "root"))
    monkeypatch.setattr("sys.stdin", Terminal("sim\n"))  # ends after the first answer
    code, _, err = run_cli(capsys, "init", "--root", root)
    assert code == 130 and "nothing was written" in err
    assert list(clawseed_home.iterdir()) == []

    def interrupt(prompt: str = "") -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("sys.stdin", Terminal(""))
    monkeypatch.setattr("builtins.input", interrupt)
    code, _, err = run_cli(capsys, "init", "--root", root)
    assert code == 130 and "nothing was written" in err
    assert list(clawseed_home.iterdir()) == []
    with pytest.raises(ConfigError):
        load_config(clawseed_home / "config.toml")


def test_a_pi_with_a_nucleo_on_its_usb_gets_both(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = nucleo_on_usb(pi5_tree(tmp_path / "root"))
    code, out, err = run_cli(capsys, "init", "--root", str(root), "--yes")
    assert code == 0, err
    config = load_config(clawseed_home / "config.toml").config
    assert config.hardware.board == "rpi5"
    assert [(p["type"], p["board"]) for p in config.peripherals] == [("nucleo", "nucleo-f401re")]
    assert "0483:374B" in out


def test_on_a_simulated_pi_it_proposes_the_bme280_and_the_nucleo_it_finds(
    tmp_path: Path, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Pi 5 tree with a Nucleo's ST-LINK on USB, and (--sim) the simulated I2C bus with a
    BME280 at 0x76: both become tables, and the sensor reads through the new config."""
    root = nucleo_on_usb(pi5_tree(tmp_path / "root"))
    code, out, err = run_cli(capsys, "init", "--yes", "--root", str(root), "--sim",
                             "--wiring", "detected", "--provider", "demo")  # fmt: skip
    assert code == 0, err
    assert "found: i2c-1 0x76: BME280 (chip id 0x60 at register 0xD0)" in out
    assert "found: USB 1-1.2" in out
    config = load_config(clawseed_home / "config.toml").config
    assert [(s.name, s.driver, s.bus, s.address) for s in config.sensors] == [
        ("bme280", "bme280", 1, 0x76)
    ]
    assert [(p["type"], p["board"]) for p in config.peripherals] == [("nucleo", "nucleo-f401re")]
    assert "sensors:   bme280 (bme280)" in out and "boards:    nucleo (nucleo-f401re)" in out
    code, out, err = run_cli(
        capsys, "agent", "--sim", "--autonomy", "full", "-m", "how warm is it?"
    )
    assert code == 0, err
    assert "bme280: temperature 21.0 °C" in out


def test_after_init_the_quick_start_commands_work_on_the_demo_wiring(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "init", "--yes", "--board", "sim", "--provider", "demo")
    assert code == 0, err
    assert "devices:   red_led, lamp, fan, door, doorbell (the demo wiring)" in out
    assert "autonomy:  full" in out
    code, out, err = run_cli(capsys, "agent", "-m", "turn on the red led")
    assert code == 0, err
    assert "[pin] GPIO17 (red_led): off -> on (line 0 -> 1)" in err
    code, out, err = run_cli(capsys, "agent", "-m", "how warm is it?")
    assert code == 0 and "greenhouse: temperature 21.0 °C" in out, err


def test_init_says_a_pi_camera_needs_a_venv_with_system_site_packages(
    tmp_path: Path,
    clawseed_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    root = pi5_tree(tmp_path / "root")
    venv = tmp_path / "venv"
    venv.mkdir()
    cfg = venv / "pyvenv.cfg"
    cfg.write_text("home = /usr/bin\ninclude-system-site-packages = false\n", encoding="utf-8")
    monkeypatch.setattr(sys, "prefix", str(venv))  # this venv, as the note reads it
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    # A plain Pi (no picamera2 on the system, no camera configured): nothing about cameras.
    code, out, err = run_cli(capsys, "init", "--root", str(root), "--yes")
    assert code == 0, err
    assert "picamera2" not in out + err
    # Raspberry Pi OS's python3-picamera2 is installed, the venv cannot see it.
    (root / "usr/lib/python3/dist-packages/picamera2").mkdir(parents=True)
    code, out, err = run_cli(capsys, "init", "--root", str(root), "--yes", "--force")
    assert code == 0, err
    assert "note: picamera2 is installed for the system's Python" in out
    assert f"python3 -m venv --system-site-packages {venv}" in out
    # The same venv made with --system-site-packages: nothing to say.
    cfg.write_text("home = /usr/bin\ninclude-system-site-packages = true\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "init", "--root", str(root), "--yes", "--force")
    assert code == 0, err
    assert "picamera2" not in out + err


def test_init_speaks_of_the_users_pi_camera_even_when_it_keeps_the_config(
    tmp_path: Path,
    clawseed_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("include-system-site-packages = false\n", encoding="utf-8")
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    config = clawseed_home / "config.toml"
    config.write_text(
        '[provider]\nname = "demo"\n[[cameras]]\nname = "bird_box"\nsource = "picamera"\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(capsys, "init", "--root", str(laptop_tree(tmp_path)))
    assert code == 1 and "exists" in err  # nothing replaced ...
    # ... and what the camera needs: the package, then a venv that sees it.
    assert 'note: a camera has source = "picamera" but picamera2 is not installed' in err
    assert "sudo apt install -y python3-picamera2" in err
    assert f"python3 -m venv --system-site-packages {venv}" in err
    assert config.read_text(encoding="utf-8").count("picamera") == 1
