"""The board registry: one TOML file per board, validated with msgspec when first used.

The board files live in ``clawseed_edge/peripherals/boards/`` (package data, so a non-editable
``pip install`` ships them); the repository's top-level ``boards/`` is a symlink to that
directory, so there is one source of truth. A user may add boards of their own by passing more
directories to :meth:`BoardRegistry.load` (a file there replaces a shipped board of the same id).

Errors: a malformed file raises :class:`~clawseed_edge.api.ConfigInvalid` naming the file and the
key; an unknown id raises :class:`~clawseed_edge.api.BoardNotFound` listing the known ids; pin
lookups raise :class:`~clawseed_edge.api.PinInvalid` / :class:`~clawseed_edge.api.PinReserved`.
"""

from __future__ import annotations

import builtins
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import msgspec

from clawseed_edge.api import BoardNotFound, ConfigInvalid, PinInvalid, PinReserved

__all__ = [
    "BOARDS_DIR",
    "CAPABILITIES",
    "BoardRegistry",
    "BoardSpec",
    "PinSpec",
    "ReservedPin",
    "timer_channel",
]

BOARDS_DIR = Path(__file__).with_name("boards")
"""Where the shipped board files are (inside the package)."""

CAPABILITIES = frozenset(
    {
        "digital_in",
        "digital_out",
        "pwm",  # hardware PWM (a timer channel / the Pi's PWM block)
        "pwm_soft",  # software PWM through gpiozero/lgpio on any GPIO
        "adc",
        "i2c_sda",
        "i2c_scl",
        "uart_tx",
        "uart_rx",
        "spi",
    }
)

_ID_RE = r"^[a-z0-9][a-z0-9-]{0,39}$"
_USB_RE = r"^[0-9A-Fa-f]{4}:[0-9A-Fa-f]{4}$"
_TIMER_RE = r"^TIM([0-9]{1,2})_CH([1-4])$"
MPY_MARCHES = frozenset({"armv6m", "armv7m", "armv7emsp", "armv7emdp"})


class PinSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One usable pin of a board.

    Attributes:
        name: The canonical name (``GPIO17``, ``PA5``).
        number: The number a user may also write (the BCM number on a Pi), if any.
        header: The position on the main header (``"11"`` on a Pi, ``"D13"`` on a Nucleo).
        caps: What the pin can do; a subset of :data:`CAPABILITIES`.
        fixed_pull: A pull resistor soldered on the board (``up`` on the Pi's GPIO2/3, 1.8 kΩ):
            an input there cannot have another pull.
        note: A short human note (``"I2C1 SDA"``).
        adc: The ADC input channel number (``ADC1_IN5`` -> 5), for MCU pins with ``adc``.
        timer: The timer channel hardware PWM uses on this pin (``"TIM3_CH2"``), for MCU pins
            with ``pwm``; two pins with the same channel cannot carry different PWM signals.
        unavailable: Capabilities the chip has on this pin that the firmware cannot use, each
            with the reason (``{adc = "MicroPython's pin table gives PB11 no ADC ..."}``); they
            are not in ``caps``, and ``boards show`` and load errors quote the reason.
    """

    name: str
    header: str | None = None
    number: int | None = None
    caps: tuple[str, ...] = ()
    fixed_pull: Literal["up", "down"] | None = None
    note: str = ""
    adc: int | None = None
    timer: str | None = None
    unavailable: dict[str, str] = msgspec.field(default_factory=dict)

    def can(self, capability: str) -> bool:
        """Whether the pin has ``capability``."""
        return capability in self.caps

    def why_not(self, capability: str) -> str | None:
        """Why the chip's ``capability`` on this pin cannot be used, when the board file says."""
        return self.unavailable.get(capability)


class ReservedPin(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A pin the runtime refuses to give to a device, and why."""

    pin: str
    reason: str


class BoardSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A board as described by its TOML file.

    Attributes:
        id: The board id (``rpi4b``, ``nucleo-f401re``, ``sim``), also the file's stem.
        name: A human name.
        family: ``pi`` (GPIO on the host through gpiozero), ``mcu`` (a microcontroller over
            USB serial) or ``sim`` (a Pi-like board on mock pins).
        usb: USB ``VID:PID`` ids the board enumerates with (for MCUs, its debug probe's).
        flash_target: The pyocd target name, for MCUs.
        dt_model: Prefix of ``/proc/device-tree/model`` that identifies the board, for Pis.
        notes: Free text shown by ``boards show``.
        pins: The usable pins.
        reserved: Pins refused to devices, with the reason.
        aliases: Default aliases (``led1 = "PA5"``).
        micropython_board: MicroPython's name for the board (``NUCLEO_F401RE``), for MCUs that
            MicroPython supports; None when it has no such board (``flash`` says so).
        mpy_march: The ``mpy-cross -march`` of the MCU (``armv7emsp``, ``armv6m``).
    """

    id: str
    name: str
    family: Literal["pi", "mcu", "sim"]
    usb: tuple[str, ...] = ()
    flash_target: str | None = None
    dt_model: str | None = None
    notes: str = ""
    pins: tuple[PinSpec, ...] = ()
    reserved: tuple[ReservedPin, ...] = ()
    aliases: dict[str, str] = msgspec.field(default_factory=dict)
    micropython_board: str | None = None
    mpy_march: str | None = None

    def pin_names(self) -> list[str]:
        """Canonical names of every usable pin, in file order."""
        return [p.name for p in self.pins]

    def reserved_reason(self, pin: str) -> str | None:
        """Why ``pin`` (a canonical or ``BOARDn`` name) is reserved, or None if it is not."""
        for r in self.reserved:
            if r.pin == pin:
                return r.reason
        return None

    def pin_reservation(self, pin: PinSpec) -> str | None:
        """Why a usable pin is reserved (by its name or its header position), or None."""
        reason = self.reserved_reason(pin.name)
        if reason is None and pin.header is not None:
            reason = self.reserved_reason(f"BOARD{pin.header}")
        return reason

    def lookup(self, pin: str | int) -> PinSpec:
        """Resolve a user's pin name to the board's pin.

        Accepted: the canonical name (``GPIO17``, case-insensitive), the number (``17`` or
        ``"17"``), ``BCM17``, the header position (``BOARD11``, or ``D13`` on a Nucleo), or an
        alias from the board file (``led1``).

        Raises:
            PinReserved: The pin (or header position) is reserved; the message gives the reason.
            PinInvalid: The board has no such pin; the message lists how to name pins.
        """
        text = str(pin).strip()
        key = text.upper()
        if text in self.aliases:
            key = self.aliases[text].upper()
        found: PinSpec | None = None
        for p in self.pins:
            if p.name.upper() == key:
                found = p
                break
        if found is None:
            # A bare number is the pin number (BCM on a Pi, as in gpiozero); a header position
            # is BOARDn or a connector label (D13).
            number = _number_of(key)
            header = key[5:] if key.startswith("BOARD") else key
            for p in self.pins:
                if number is not None:
                    if p.number == number:
                        found = p
                        break
                elif p.header is not None and p.header.upper() == header:
                    found = p
                    break
        if found is None:
            reason = self.reserved_reason(key) or self.reserved_reason(f"BOARD{key}")
            if reason is not None:
                raise PinReserved(f"pin {text!r} is reserved on {self.id}: {reason}")
            raise PinInvalid(
                f"board {self.id} has no pin {text!r}; name a pin as {self._naming_hint()} "
                f"(see `clawseed-edge boards show {self.id}`)"
            )
        reason = self.pin_reservation(found)
        if reason is not None:
            raise PinReserved(
                f"pin {text!r} ({found.name}) is reserved on {self.id}: {reason}; pick another pin"
            )
        return found

    def _naming_hint(self) -> str:
        if self.family == "mcu":
            return "PA5, its Arduino label (D13) or an alias (" + ", ".join(self.aliases) + ")"
        return "GPIO17, 17, BOARD11 (header position) or an alias"


def _number_of(key: str) -> int | None:
    if key.isdigit():
        return int(key)
    if key.startswith("BCM") and key[3:].isdigit():
        return int(key[3:])
    return None


class BoardRegistry:
    """The known boards, from TOML files; a file is parsed when its board is first asked for.

    Use :meth:`load`; ``BoardRegistry.load().get("rpi4b")``. A board's id is its file's name
    (checked when parsed), so the ids are known without parsing: the service, which uses one
    board, parses one file, not all of them (about 2 ms each).
    """

    def __init__(self, files: dict[str, Path]) -> None:
        self._files = dict(sorted(files.items()))
        self._parsed: dict[str, BoardSpec] = {}

    @classmethod
    def load(cls, *extra_dirs: str | Path) -> BoardRegistry:
        """The shipped boards, then any ``*.toml`` in ``extra_dirs`` (later files win).

        A file is read and validated by :meth:`get` (or :meth:`list`), which raise
        :class:`~clawseed_edge.api.ConfigInvalid` naming the file and key if it is malformed.
        """
        files: dict[str, Path] = {}
        for directory in (BOARDS_DIR, *map(Path, extra_dirs)):
            for path in sorted(Path(directory).glob("*.toml")):
                files[path.stem] = path
        return cls(files)

    def get(self, board_id: str) -> BoardSpec:
        """The board with this id.

        Raises:
            BoardNotFound: Unknown id; the message lists the known ids.
            ConfigInvalid: Its file is not valid TOML or breaks the schema.
        """
        spec = self._parsed.get(board_id)
        if spec is not None:
            return spec
        path = self._files.get(board_id)
        if path is None:
            raise BoardNotFound(
                f"unknown board {board_id!r}; known boards: {', '.join(self._files)}"
            )
        spec = self._parsed[board_id] = load_board_file(path)
        return spec

    def list(self) -> builtins.list[BoardSpec]:
        """Every board, sorted by id (parses every file not parsed yet)."""
        return [self.get(board_id) for board_id in self._files]

    def ids(self) -> builtins.list[str]:
        """Every board id, sorted."""
        return list(self._files)

    def __contains__(self, board_id: object) -> bool:
        return board_id in self._files

    def __len__(self) -> int:
        return len(self._files)


_default: BoardRegistry | None = None


def default_registry() -> BoardRegistry:
    """The shipped boards, loaded once per process."""
    global _default
    if _default is None:
        _default = BoardRegistry.load()
    return _default


def load_board_file(path: Path) -> BoardSpec:
    """Parse and validate one board file.

    Raises:
        ConfigInvalid: Names the file, the key and what is wrong.
    """
    source = str(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigInvalid(f"cannot read board file: {exc}", file=source) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigInvalid(f"not valid TOML: {exc}", file=source) from exc
    return parse_board(raw, source=source, expected_id=path.stem)


def parse_board(raw: object, *, source: str, expected_id: str | None = None) -> BoardSpec:
    """Validate a decoded board table; see :func:`load_board_file`."""
    try:
        spec = msgspec.convert(raw, BoardSpec)
    except msgspec.ValidationError as exc:
        raise ConfigInvalid(_msgspec_message(exc), file=source) from exc
    _check_board(spec, source, expected_id)
    return spec


def _msgspec_message(exc: msgspec.ValidationError) -> str:
    # msgspec says "Expected `str`, got `int` - at `$.pins[3].name`": put the key first.
    text = str(exc)
    if " - at `$." in text:
        message, _, key = text.partition(" - at `$.")
        return f"{key.rstrip('`')}: {message}"
    return text


def _check_board(spec: BoardSpec, source: str, expected_id: str | None) -> None:
    def bad(key: str, message: str) -> ConfigInvalid:
        return ConfigInvalid(message, file=source, key=key)

    if not re.match(_ID_RE, spec.id):
        raise bad("id", f"board id {spec.id!r} must be lowercase letters, digits and '-'")
    if expected_id is not None and spec.id != expected_id:
        raise bad("id", f"board id {spec.id!r} must match the file name ({expected_id}.toml)")
    for i, usb in enumerate(spec.usb):
        if not re.match(_USB_RE, usb):
            raise bad(f"usb[{i}]", f"{usb!r} is not a USB id like '0483:374B'")
    if spec.family == "mcu" and not spec.flash_target:
        raise bad("flash_target", "an mcu board needs its pyocd flash target")
    names: set[str] = set()
    headers: set[str] = set()
    for i, pin in enumerate(spec.pins):
        upper = pin.name.upper()
        if upper in names:
            raise bad(f"pins[{i}].name", f"pin {pin.name!r} is listed twice")
        names.add(upper)
        if pin.header is not None:
            if pin.header.upper() in headers:
                raise bad(f"pins[{i}].header", f"header position {pin.header!r} is used twice")
            headers.add(pin.header.upper())
        unknown = sorted(set(pin.caps) - CAPABILITIES)
        if unknown:
            raise bad(
                f"pins[{i}].caps",
                f"unknown capabilities {unknown}; known: {', '.join(sorted(CAPABILITIES))}",
            )
        _check_mcu_pin(spec, i, pin, bad)
    if spec.mpy_march is not None and spec.mpy_march not in MPY_MARCHES:
        raise bad("mpy_march", f"{spec.mpy_march!r} is not one of {', '.join(sorted(MPY_MARCHES))}")
    for i, r in enumerate(spec.reserved):
        key = r.pin.upper()
        if key not in names and not (key.startswith("BOARD") and key[5:].isdigit()):
            raise bad(f"reserved[{i}].pin", f"{r.pin!r} is neither a listed pin nor BOARDn")
    for alias, target in spec.aliases.items():
        if target.upper() not in names:
            raise bad(f"aliases.{alias}", f"alias target {target!r} is not a listed pin")


def timer_channel(timer: str) -> tuple[int, int]:
    """``"TIM3_CH2"`` -> ``(3, 2)``.

    Raises:
        ValueError: Not a timer channel name.
    """
    match = re.match(_TIMER_RE, timer)
    if match is None:
        raise ValueError(f"{timer!r} is not a timer channel like 'TIM3_CH2'")
    return int(match.group(1)), int(match.group(2))


def _check_mcu_pin(spec: BoardSpec, i: int, pin: PinSpec, bad: Any) -> None:
    # A microcontroller's PWM and ADC need numbers the firmware cannot guess: the timer
    # channel (for MicroPython builds without machine.PWM) and the ADC input.
    if pin.timer is not None:
        if re.match(_TIMER_RE, pin.timer) is None:
            raise bad(f"pins[{i}].timer", f"{pin.timer!r} is not a timer channel like 'TIM3_CH2'")
        if not pin.can("pwm"):
            raise bad(f"pins[{i}].timer", f"{pin.name} has a timer but no 'pwm' capability")
    for cap, reason in pin.unavailable.items():
        if cap not in CAPABILITIES:
            raise bad(f"pins[{i}].unavailable", f"unknown capability {cap!r}")
        if pin.can(cap):
            raise bad(
                f"pins[{i}].unavailable", f"{pin.name} lists {cap!r} in caps and as unavailable"
            )
        if not reason.strip():
            raise bad(f"pins[{i}].unavailable.{cap}", "say why the capability cannot be used")
    if pin.adc is not None:
        if not 0 <= pin.adc <= 31:
            raise bad(f"pins[{i}].adc", f"ADC channel {pin.adc} must be 0..31")
        if not pin.can("adc"):
            raise bad(f"pins[{i}].adc", f"{pin.name} has an ADC channel but no 'adc' capability")
    if spec.family != "mcu":
        return
    if pin.can("pwm") and pin.timer is None:
        raise bad(f"pins[{i}].timer", f"{pin.name} can do PWM: name its timer channel (TIM3_CH2)")
    if pin.can("adc") and pin.adc is None:
        raise bad(f"pins[{i}].adc", f"{pin.name} has an ADC: give its channel number")
