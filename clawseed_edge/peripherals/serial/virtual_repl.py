"""The virtual board's REPL: enough of MicroPython's raw REPL for deploy and mpremote.

On a Nucleo, Ctrl-C stops the firmware loop and lands in the REPL; the virtual board does the
same: its UART loop raises KeyboardInterrupt at a Ctrl-C byte, applies the safe state, and this
object takes over the pty until a soft reset (Ctrl-D) restarts the firmware. It implements the
friendly REPL's control keys, the raw REPL (Ctrl-A, code, Ctrl-D -> ``OK`` output ``\\x04``
errors ``\\x04>``), answers raw-paste requests with ``R\\x00`` (not supported, so clients fall
back), and runs the code on CPython in a sandbox whose ``open`` and ``os`` reach only the board's
filesystem directory.

It is not MicroPython: it runs mpremote's file snippets (open/write, hashlib, os.remove), not
arbitrary MicroPython programs; the webassembly tests cover real MicroPython.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

__all__ = ["VirtualRepl"]

RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n>"
MAX_CODE = 64 * 1024  # bytes of one raw-REPL command; more is refused like a full buffer


class _Reset(BaseException):
    """machine.reset() in the emulated REPL: unwinds the code being run."""


class _BoardOs:
    """The part of MicroPython's ``os`` that deploy uses, inside the board directory."""

    def __init__(self, repl: VirtualRepl) -> None:
        self._repl = repl

    def remove(self, name: str) -> None:
        self._repl.path(name).unlink()

    def listdir(self, name: str = "") -> list[str]:
        return sorted(p.name for p in self._repl.path(name or ".").iterdir())

    def stat(self, name: str) -> os.stat_result:
        return self._repl.path(name).stat()

    def mkdir(self, name: str) -> None:
        self._repl.path(name).mkdir()

    def rename(self, old: str, new: str) -> None:
        self._repl.path(old).rename(self._repl.path(new))


class VirtualRepl:
    """Bytes in, bytes out; :attr:`reboot` turns true at a soft reset.

    Args:
        fs_dir: The board's filesystem (what deploy writes into).
        banner: The first line MicroPython prints (version and board).
    """

    def __init__(self, fs_dir: Path, banner: str) -> None:
        self.fs_dir = fs_dir.resolve()
        self.banner = banner
        self.raw = False
        self.reboot = False
        self.hard_reset = False  # the reboot is machine.reset(), not Ctrl-D
        self._code = bytearray()
        self._paste = b""  # a possible raw-paste request being received
        self._namespace: dict[str, Any] = {}
        self._out: list[str] = []

    def path(self, name: str) -> Path:
        """A board path inside :attr:`fs_dir`; anything outside it is refused."""
        candidate = (self.fs_dir / name.lstrip("/")).resolve()
        if candidate != self.fs_dir and self.fs_dir not in candidate.parents:
            raise OSError(1, "EPERM: outside the board filesystem")
        return candidate

    def interrupted(self) -> bytes:
        """What the board prints when Ctrl-C stops the firmware."""
        return b"KeyboardInterrupt: \r\n" + self._friendly_banner()

    def crashed(self, exc: BaseException) -> bytes:
        """What the board prints when ``main.py`` ends with an exception (the firmware loop
        gave up): MicroPython's traceback, then the REPL."""
        trace = (
            "Traceback (most recent call last):\r\n"
            '  File "main.py", line 4, in <module>\r\n'
            f"{type(exc).__name__}: {str(exc)[:200]}\r\n"
        )
        return trace.encode() + self._friendly_banner()

    def _friendly_banner(self) -> bytes:
        return f'{self.banner}\r\nType "help()" for more information.\r\n>>> '.encode()

    def feed(self, data: bytes) -> bytes:
        """Process received bytes; return what the board answers."""
        out = bytearray()
        for byte in data:
            if self.reboot:
                break
            out += self._raw_byte(byte) if self.raw else self._friendly_byte(byte)
        return bytes(out)

    def _friendly_byte(self, byte: int) -> bytes:
        if byte == 0x01:  # Ctrl-A: raw REPL
            self.raw = True
            self._code.clear()
            return b"\r\n" + RAW_BANNER
        if byte == 0x04:  # Ctrl-D: soft reset, then main.py runs the firmware again
            self.reboot = True
            return b"\r\nMPY: soft reboot\r\n"
        if byte in (0x03, 0x0D):
            return b"\r\n>>> "
        return b""  # the friendly REPL's line editing is not emulated

    def _raw_byte(self, byte: int) -> bytes:
        if self._paste or (byte == 0x05 and not self._code):
            self._paste += bytes([byte])
            if self._paste == b"\x05A\x01":
                self._paste = b""
                return b"R\x00"  # raw paste understood, not supported
            if b"\x05A\x01".startswith(self._paste):
                return b""
            pending, self._paste = self._paste, b""
            return b"".join(self._raw_byte(b) for b in pending)
        if byte == 0x01:
            self._code.clear()
            return b"\r\n" + RAW_BANNER
        if byte == 0x02:  # Ctrl-B: friendly REPL
            self.raw = False
            return b"\r\n" + self._friendly_banner()
        if byte == 0x03:
            self._code.clear()
            return b""
        if byte == 0x04:
            if not self._code:
                # Soft reset from the raw REPL: MicroPython stays in the raw REPL afterwards.
                return b"\r\nMPY: soft reboot\r\n" + RAW_BANNER
            code, self._code = bytes(self._code), bytearray()
            return self._exec(code)
        if len(self._code) < MAX_CODE:
            self._code.append(byte)
        return b""

    def _machine_reset(self) -> None:
        # machine.reset(): the board restarts at once; nothing after it is answered.
        self.reboot = self.hard_reset = True
        raise _Reset

    def _exec(self, code: bytes) -> bytes:
        self._out = []
        error = ""
        try:
            exec(compile(code.decode(), "<stdin>", "exec"), self._globals())
        except _Reset:
            return b"OK"
        except Exception as exc:
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            error = f'Traceback (most recent call last):\r\n  File "<stdin>"\r\n{last}\r\n'
        out = "".join(self._out).replace("\n", "\r\n")
        return b"OK" + out.encode() + b"\x04" + error.encode() + b"\x04>"

    def _globals(self) -> dict[str, Any]:
        if not self._namespace:
            board_os = _BoardOs(self)
            machine = SimpleNamespace(reset=self._machine_reset)
            safe_modules = {
                "hashlib": hashlib,
                "os": board_os,
                "binascii": __import__("binascii"),
                "machine": machine,
            }

            def board_open(name: str, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
                return open(self.path(name), mode, *args, **kwargs)

            def board_import(name: str, *args: Any, **kwargs: Any) -> Any:
                if name in safe_modules:
                    return safe_modules[name]
                raise ImportError(f"no module named '{name}'")

            def board_print(*values: Any, sep: str = " ", end: str = "\n", **_: Any) -> None:
                self._out.append(sep.join(str(v) for v in values) + end)

            allowed = {
                k: getattr(builtins, k)
                for k in ("bytes", "bytearray", "memoryview", "len", "range", "repr", "str",
                          "int", "list", "dict", "tuple", "isinstance", "OSError", "Exception",
                          "ImportError", "True", "False", "None", "min", "max", "sorted")
            }  # fmt: skip
            allowed.update(open=board_open, print=board_print, __import__=board_import)
            self._namespace = {"__builtins__": allowed}
        return self._namespace
