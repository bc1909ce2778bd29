from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.api import BoardNotFound, ConfigInvalid, PinInvalid, PinReserved
from clawseed_edge.peripherals.boards import BOARDS_DIR, BoardRegistry, load_board_file

SHIPPED = {
    "rpi3b", "rpi3bplus", "rpi4b", "rpi5", "rpizero2w",
    "nucleo-f401re", "nucleo-f411re", "nucleo-l476rg", "nucleo-g071rb", "nucleo-g0b1re", "sim",
}  # fmt: skip
NUCLEOS = sorted(b for b in SHIPPED if b.startswith("nucleo"))
PIS = ["rpi3b", "rpi3bplus", "rpi4b", "rpi5", "rpizero2w", "sim"]


def test_every_shipped_board_loads() -> None:
    registry = BoardRegistry.load()
    assert set(registry.ids()) == SHIPPED
    assert [b.id for b in registry.list()] == sorted(SHIPPED)


def test_repo_boards_dir_is_the_packaged_one() -> None:
    repo_boards = Path(__file__).parents[2] / "boards"
    assert repo_boards.resolve() == BOARDS_DIR.resolve()


@pytest.mark.parametrize("board_id", NUCLEOS)
def test_nucleo_reserved_pins_aliases_and_target(board_id: str) -> None:
    board = BoardRegistry.load().get(board_id)
    reserved = {r.pin: r.reason for r in board.reserved}
    assert set(reserved) == {"PA2", "PA3", "PA13", "PA14"}
    assert "virtual COM" in reserved["PA2"] and "SWD" in reserved["PA13"]
    assert board.aliases == {"led1": "PA5", "user_button": "PC13"}
    assert board.flash_target and board.flash_target.startswith("stm32")
    assert "0483:374B" in board.usb
    assert board.lookup("led1").name == "PA5"
    with pytest.raises(PinReserved, match="SWCLK"):
        board.lookup("PA14")


@pytest.mark.parametrize("board_id", PIS)
def test_pi_header(board_id: str) -> None:
    board = BoardRegistry.load().get(board_id)
    assert len(board.pins) == 28
    assert board.lookup("GPIO2").can("i2c_sda") and board.lookup("GPIO3").can("i2c_scl")
    assert board.lookup("GPIO14").can("uart_tx") and board.lookup("GPIO15").can("uart_rx")
    hw_pwm = {p.name for p in board.pins if p.can("pwm")}
    assert hw_pwm == {"GPIO12", "GPIO13", "GPIO18", "GPIO19"}
    assert all(p.can("pwm_soft") for p in board.pins)
    with pytest.raises(PinReserved, match="ID EEPROM"):
        board.lookup("GPIO0")


def test_pin_names_accepted() -> None:
    board = BoardRegistry.load().get("rpi4b")
    for name in ("GPIO17", "gpio17", "17", 17, "BCM17", "BOARD11"):
        assert board.lookup(name).name == "GPIO17"
    with pytest.raises(PinReserved, match="5 V power"):
        board.lookup("BOARD2")
    with pytest.raises(PinInvalid, match="no pin 'GPIO40'"):
        board.lookup("GPIO40")


def test_unknown_board_lists_known_ids() -> None:
    with pytest.raises(BoardNotFound, match=r"known boards: .*rpi4b"):
        BoardRegistry.load().get("arduino-uno")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_bad_board_file_names_file_and_key(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "myboard.toml",
        'id = "myboard"\nname = "x"\nfamily = "pi"\npins = [{ name = "P1", caps = ["laser"] }]\n',
    )
    with pytest.raises(ConfigInvalid) as err:
        load_board_file(path)
    assert "myboard.toml" in str(err.value) and "pins[0].caps" in str(err.value)
    assert "laser" in str(err.value)


def test_board_file_type_error_names_key(tmp_path: Path) -> None:
    path = _write(tmp_path, "b2.toml", 'id = "b2"\nname = 3\nfamily = "pi"\n')
    with pytest.raises(ConfigInvalid, match=r"b2.toml: name: Expected `str`"):
        load_board_file(path)


def test_board_id_must_match_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "one.toml", 'id = "two"\nname = "x"\nfamily = "sim"\n')
    with pytest.raises(ConfigInvalid, match=r"one.toml"):
        load_board_file(path)


def test_extra_dir_adds_and_overrides(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "myboard.toml",
        'id = "myboard"\nname = "Mine"\nfamily = "pi"\n'
        'pins = [{ name = "GPIO5", number = 5, caps = ["digital_out"] }]\n'
        'reserved = [{ pin = "BOARD1", reason = "power" }]\n',
    )
    registry = BoardRegistry.load(tmp_path)
    assert "myboard" in registry and "rpi4b" in registry
    assert registry.get("myboard").lookup("5").name == "GPIO5"


def test_alias_to_unknown_pin_refused(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "al.toml",
        'id = "al"\nname = "x"\nfamily = "sim"\n[aliases]\nled1 = "GPIO99"\n',
    )
    with pytest.raises(ConfigInvalid, match=r"aliases.led1"):
        load_board_file(path)


def test_a_board_file_is_parsed_when_its_board_is_asked_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from clawseed_edge.peripherals import boards

    parsed: list[str] = []
    load = boards.load_board_file

    def counting(path: Path) -> boards.BoardSpec:
        parsed.append(path.stem)
        return load(path)

    monkeypatch.setattr(boards, "load_board_file", counting)
    _write(tmp_path, "broken.toml", "not toml [")
    registry = BoardRegistry.load(tmp_path)
    assert "rpi4b" in registry and "broken" in registry.ids()
    assert parsed == [], "ids come from the file names"
    assert registry.get("rpi4b") is registry.get("rpi4b")
    assert parsed == ["rpi4b"], "the service's one board: one file parsed, once"
    with pytest.raises(ConfigInvalid, match=r"broken.toml"):
        registry.get("broken")
