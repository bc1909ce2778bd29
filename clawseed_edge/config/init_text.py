"""The commented config ``clawseed-edge init`` writes, for the board it found and the chosen model.

:func:`starter_config` is pure: choices in, TOML text out (the tests load every variant with
the real loader). Detection lives in :mod:`clawseed_edge.peripherals.detect`; the questions and
the writing in ``cli/init_cmd.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from clawseed_edge.providers.config import PROVIDER_DEFAULTS

__all__ = [
    "BOARD_KINDS",
    "DEMO_SENSOR_ADDRESSES",
    "PROVIDERS",
    "InitChoices",
    "default_model",
    "demo_wiring_text",
    "ollama_model_for_memory",
    "starter_config",
]

BoardKind = Literal["pi", "nucleo", "sim"]
BOARD_KINDS: tuple[str, ...] = ("pi", "nucleo", "sim")
PROVIDERS: tuple[str, ...] = ("ollama", "anthropic", "openai", "demo")


@dataclass(frozen=True, slots=True)
class InitChoices:
    """What the starter config is for.

    Attributes:
        board_kind: ``pi`` (the header of the Pi this runs on), ``nucleo`` (a Nucleo on USB)
            or ``sim`` (simulated pins: nothing is driven).
        board_id: The board file's id (``rpi5``, ``nucleo-f401re``, ``sim``).
        provider: ``ollama``, ``anthropic``, ``openai`` or ``demo``.
        model: The model name ("" for the provider's default).
        gateway: Whether ``run`` hosts the gateway (phones, the web app).
        detected: One line on what was detected, written as a comment ("" for none).
        other_boards: Other board ids the detected hardware may be (every Nucleo-64 has the
            same ST-LINK), listed in a comment.
        nucleo_id: With ``board_kind = "pi"``: a Nucleo also on this Pi's USB, written as a
            ``[[peripherals]]`` table beside the header.
        demo_wiring: Write the embedded default's devices and sensors (the quick start's LED,
            lamp, fan, door, doorbell and BME280) on this board, instead of only a commented
            example. On simulated pins the demo's autonomy (``full``) comes with it.
        found: ``[[sensors]]`` / ``[[displays]]`` tables for what ``hardware scan`` found
            (:func:`clawseed_edge.peripherals.scan.proposal_toml`), written as they are.
    """

    board_kind: BoardKind = "sim"
    board_id: str = "sim"
    provider: str = "ollama"
    model: str = ""
    gateway: bool = False
    detected: str = ""
    other_boards: tuple[str, ...] = ()
    nucleo_id: str | None = None
    demo_wiring: bool = False
    found: str = ""


def ollama_model_for_memory(memory_mb: int | None) -> str:
    """An Ollama model that fits this much RAM next to the OS and the runtime.

    Typical sizes (quantised, as Ollama ships them): qwen2.5:0.5b ~0.4 GB, qwen2.5:1.5b
    ~1 GB, qwen2.5:3b ~2 GB. Unknown RAM (not a Pi, or no /proc/meminfo) gets the default.
    """
    if memory_mb is None:
        return PROVIDER_DEFAULTS["ollama"]["model"]
    if memory_mb < 2500:  # Pi 3 / Zero 2 W / 2 GB boards
        return "qwen2.5:0.5b"
    if memory_mb < 6000:  # 4 GB boards
        return "qwen2.5:1.5b"
    return "qwen2.5:3b"


def default_model(provider: str, memory_mb: int | None = None) -> str:
    """The model ``init`` proposes for ``provider`` ("" where the provider has none)."""
    if provider == "ollama":
        return ollama_model_for_memory(memory_mb)
    if provider == "demo":
        return "demo-rules"
    return PROVIDER_DEFAULTS.get(provider, {}).get("model", "")


def _q(value: str) -> str:
    """A TOML basic string (JSON's escaping is valid TOML for these)."""
    return json.dumps(value)


def _provider_block(c: InitChoices) -> list[str]:
    defaults = PROVIDER_DEFAULTS.get(c.provider, {})
    model = c.model or default_model(c.provider)
    lines = ["[provider]"]
    if c.provider == "demo":
        lines += [
            'name = "demo"                        # offline rules, not a language model: try',
            "                                     # the tools; switch to ollama for real answers",
        ]
        return lines
    lines.append(f"name = {_q(c.provider):<29} # ollama | anthropic | openai (+ aliases) | demo")
    lines.append(f"model = {_q(model)}")
    if c.provider == "ollama":
        lines += [
            f"base_url = {_q(defaults['base_url'])}",
            f"# first: `ollama pull {model}` (docs/models.md: which model fits)",
            "timeout_s = 120                      # a small board answers slowly: keep it generous",
        ]
    else:
        if "base_url" in defaults:
            lines.append(f"base_url = {_q(defaults['base_url'])}")
        env = defaults.get("api_key_env", "")
        lines += [
            f"api_key_env = {_q(env)}",
            f"# the key: `clawseed-edge secrets set {env}` (stored 0600), or the environment",
        ]
    return lines


def demo_wiring_text() -> str:
    """The embedded default's ``[[devices]]`` and ``[[sensors]]`` tables, as written there."""
    from importlib import resources

    text = resources.files("clawseed_edge.config").joinpath("default.toml").read_text("utf-8")
    return text[text.index("[[devices]]") :].strip()


DEMO_SENSOR_ADDRESSES = frozenset({(1, 0x76)})
"""The I2C (bus, address) pairs the demo wiring's sensors use (its BME280 ``greenhouse``)."""


def _demo_block(c: InitChoices) -> list[str]:
    header = [
        "[hardware]",
        f"board = {_q(c.board_id):<28} # `clawseed-edge boards show {c.board_id}`: pins and "
        "reserved pins",
        "",
        "# The demo wiring (the embedded default's devices and sensor); change it to yours",
        "# (docs/hardware.md)."
        + (" On this board the pins are driven for real." if c.board_kind == "pi" else ""),
    ]
    return [*header, *demo_wiring_text().splitlines()]


def _pi_block(c: InitChoices) -> list[str]:
    if c.demo_wiring:
        return _demo_block(c)
    return [
        "[hardware]",
        f"board = {_q(c.board_id):<28} # `clawseed-edge boards show {c.board_id}`: pins and "
        "reserved pins",
        "",
        "# Your wiring, one table per device (docs/hardware.md). Uncomment once it is wired:",
        "# the pins are driven for real on this board.",
        "# [[devices]]",
        '# name = "red_led"',
        '# pin = "GPIO17"                     # header pin 11, through a 330 ohm resistor to GND',
        '# kind = "led"',
        '# safe = "off"',
    ]


def _nucleo_block(c: InitChoices, board_id: str) -> list[str]:
    lines = ["[[peripherals]]", 'name = "nucleo"', 'type = "nucleo"']
    lines.append(f"board = {_q(board_id):<28} # `clawseed-edge boards list`: the mcu boards")
    if c.other_boards:
        lines.append(f"# the ST-LINK's USB ids fit {', '.join(c.other_boards)} as well: check the")
        lines.append("# label on your board and change `board` if it is another one")
    lines += [
        '# port = "/dev/serial/by-id/..."     # default: the one Nucleo on USB',
        "# MicroPython and the firmware first: `clawseed-edge flash` then `clawseed-edge deploy`",
        "# (docs/nucleo.md).",
        "",
        "[[peripherals.devices]]",
        'name = "ld2"',
        'pin = "D13"                          # the green user LED on every NUCLEO-64',
        'kind = "led"',
    ]
    return lines


def _sim_block(c: InitChoices) -> list[str]:
    if c.demo_wiring:
        return _demo_block(c)
    return [
        "[hardware]",
        'board = "sim"                        # simulated pins; rpi4b, rpi5 ... on a Pi',
        "",
        "# Example wiring: an LED on GPIO17 (header pin 11) through a 330 ohm resistor to GND.",
        "[[devices]]",
        'name = "red_led"',
        'pin = "GPIO17"',
        'kind = "led"',
        'safe = "off"',
    ]


def starter_config(c: InitChoices) -> str:
    """The commented TOML text for these choices (valid for ``clawseed-edge config check``).

    Raises:
        ValueError: an unknown board kind or provider (the CLI checks its flags first).
    """
    if c.board_kind not in BOARD_KINDS:
        raise ValueError(f"board kind {c.board_kind!r}: expected one of {', '.join(BOARD_KINDS)}")
    if c.provider not in PROVIDERS:
        raise ValueError(f"provider {c.provider!r}: expected one of {', '.join(PROVIDERS)}")
    head = [
        "# clawseed-edge configuration, written by `clawseed-edge init`. Every key is optional;",
        "# every table and key with its default: docs/config.md. Check it after an edit with",
        "# `clawseed-edge config check`, and the machine with `clawseed-edge doctor`.",
    ]
    if c.detected:
        head.append(f"# detected: {c.detected}")
    if c.board_kind == "pi":
        board = _pi_block(c)
        if c.nucleo_id:
            board += ["", "# A Nucleo on this Pi's USB:", *_nucleo_block(c, c.nucleo_id)]
    elif c.board_kind == "nucleo":
        board = _nucleo_block(c, c.board_id)
    else:
        board = _sim_block(c)
        if c.nucleo_id:
            board += ["", "# The virtual Nucleo (with --sim):", *_nucleo_block(c, c.nucleo_id)]
    if c.found:
        board += ["", "# Found by `clawseed-edge hardware scan`:", *c.found.splitlines()]
    # The demo on simulated pins runs as the embedded default does; real pins get supervised.
    full = c.demo_wiring and c.board_kind == "sim"
    autonomy = (
        'level = "full"                       # simulated pins: the demo runs unasked (the fan '
        "still asks: approval = true); supervised on real pins"
        if full
        else 'level = "supervised"                 # read_only | supervised | full'
    )
    sections = [
        head,
        _provider_block(c),
        [
            "[agent]",
            "max_tool_iterations = 10",
            "max_history = 50",
            'workspace_dir = "workspace"          # SOUL.md, USER.md ... live here',
        ],
        [
            "[autonomy]",
            autonomy,
            "max_actions_per_hour = 120",
        ],
        ["[memory]", 'backend = "sqlite"                   # sqlite | none'],
        [
            "[tools]                              # `clawseed-edge tools list` shows what is on "
            "(docs/tools.md)",
            "system_info = true                   # temperature, load, disk, a Pi's throttling "
            "flags",
            "web_fetch = false                    # true: read web pages from [tools.http] "
            "allowed_domains",
            "http_request = false                 # true: HTTP requests (asks first in supervised)",
            "",
            "# [tools.http]",
            '# allowed_domains = ["api.open-meteo.com"]   # "*.example.com" for subdomains, '
            '"*" for any',
            '# allowed_networks = ["192.168.1.0/24"]      # LAN devices (private addresses are '
            "refused)",
        ],
        [
            "[gateway]                            # for phones and other clients (docs/gateway.md)",
            f"enabled = {'true' if c.gateway else 'false':<26} # true: `clawseed-edge run` "
            "hosts it",
            *(
                [
                    'host = "0.0.0.0"                     # every address: phones on your '
                    "network reach http://<this device>:42617/",
                    "allow_public_bind = true             # each phone pairs once with a "
                    "code from `clawseed-edge pair`",
                ]
                if c.gateway
                else [
                    'host = "127.0.0.1"                   # another address also needs '
                    "allow_public_bind = true",
                ]
            ),
            "port = 42617",
        ],
        board,
    ]
    return "\n\n".join("\n".join(s) for s in sections) + "\n"
