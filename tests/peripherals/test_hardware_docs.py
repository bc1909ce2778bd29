"""docs/hardware.md says what the hardware does where no code of ours runs."""

from __future__ import annotations

from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "hardware.md"


def test_the_docs_say_what_a_released_line_does_after_sigkill() -> None:
    text = DOC.read_text(encoding="utf-8")
    for needed in (
        "persist_gpio_outputs",  # Raspberry Pi OS keeps released outputs driven
        "dtparam=strict_gpiod",  # ... unless the user asks for mainline behaviour
        "an output that\n    was on stays on",
        "Pi 5's",  # its boot-time pulls differ from the Pi 3/4's
        "RP1",
    ):
        assert needed in text, needed
