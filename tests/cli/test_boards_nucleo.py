"""``boards show`` on Nucleos: the MicroPython board (or its absence), ADC and timer channels."""

from __future__ import annotations

import io

from clawseed_edge.cli.boards_cmd import show_board


def test_g071rb_says_micropython_has_no_board() -> None:
    out = io.StringIO()
    assert show_board("nucleo-g071rb", out=out) == 0
    assert "MicroPython has no NUCLEO_G071RB board" in out.getvalue()


def test_f401re_shows_micropython_board_adc_and_timer_channels() -> None:
    out = io.StringIO()
    assert show_board("nucleo-f401re", out=out) == 0
    text = out.getvalue()
    assert "MicroPython board: NUCLEO_F401RE (mpy-cross -march=armv7emsp)" in text
    line = next(x for x in text.splitlines() if x.strip().startswith("PA5 "))
    assert "ADC ch5" in line and "TIM2_CH1" in line and "user LED LD2" in line


def test_g0b1re_shows_a4_a5_d1_not_analog_under_micropython() -> None:
    out = io.StringIO()
    assert show_board("nucleo-g0b1re", out=out) == 0
    lines = {x.split()[0]: x for x in out.getvalue().splitlines() if x.startswith("  P")}
    for name in ("PB11", "PB12", "PC4"):
        assert "no adc: not analog under MicroPython" in lines[name], lines[name]
        assert "ADC ch" not in lines[name]
    assert "ADC ch18" in lines["PC5"] and "no adc" not in lines["PC5"]
