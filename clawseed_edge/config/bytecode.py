"""Bytecode of the installed code: which modules have an up-to-date ``.pyc``, and compiling them.

The unit runs with ``ProtectSystem=strict``: the service cannot write ``__pycache__`` into its
venv, so a module without an up-to-date ``.pyc`` is compiled from source at every start (about
0.25 CPU-s for the whole package here, several times that on a Pi 4) and the result thrown
away. ``service install`` therefore byte-compiles the package and its dependencies
(:func:`byte_compile`), and ``doctor`` warns when some have no up-to-date bytecode
(:func:`stale_sources`).

"The installed code" is the ``clawseed_edge`` package (wherever it is: an editable install
keeps it in the checkout) and the files of every installed distribution it requires, followed
recursively; the ``dev`` extra (test and lint tools) is left out, other extras count when
installed. Two ``.pyc`` per source are kept (:data:`OPTIMIZATION_LEVELS`): the plain one, which
the commands people type import, and the ``.opt-2.pyc`` that the service imports (the unit sets
``PYTHONOPTIMIZE=2``: docstrings and ``assert`` statements are left out of its code objects,
docs/service.md); the service's is compiled without column tables (``-X no_debug_ranges``).
The service's level also needs the standard library's ``.opt-2.pyc`` (a distribution ships the
plain ones only), so :func:`service_sources` adds the standard library's modules (not its
tests, GUI and packaging tools), checked and compiled at that level only.
"""

from __future__ import annotations

import compileall
import contextlib
import functools
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "OPTIMIZATION_LEVELS",
    "CompileReport",
    "byte_compile",
    "compile_command",
    "installed_sources",
    "service_sources",
    "stale_sources",
    "stdlib_sources",
]

DISTRIBUTION = "clawseed-edge"
#: Extras whose requirements are tools, not the running code.
_SKIPPED_EXTRAS = frozenset({"dev"})
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
#: Files looked at, at most (a bound on a venv gone wrong, not a limit a real one meets).
MAX_FILES = 50_000
#: ``-O`` levels whose bytecode is kept: 0 for the CLI, 2 for the service (PYTHONOPTIMIZE=2).
OPTIMIZATION_LEVELS = (0, 2)
SERVICE_LEVEL = 2
#: The service's bytecode leaves out each instruction's column span (what draws the ``^^^``
#: under an expression in a traceback; file and line stay): 0.3 MB less at idle.
SERVICE_COMPILE_FLAGS = ("-X", "no_debug_ranges")
#: A whole venv on a Pi 4 compiles in a few minutes; a bound, not an expected time.
CHILD_TIMEOUT_S = 1800


@dataclass(frozen=True, slots=True)
class CompileReport:
    """What :func:`byte_compile` did.

    Attributes:
        total: Source files of the installed code.
        compiled: Of them, compiled now (the rest were up to date).
        failed: Those that could not be compiled (not writable, a syntax error in a
            dependency's test data ...), at most 20 named.
    """

    total: int
    compiled: int
    failed: tuple[str, ...]
    failed_count: int


def _requirement_names(dist: str, *, top: bool) -> Iterator[str]:
    try:
        requires = importlib.metadata.requires(dist) or []
    except importlib.metadata.PackageNotFoundError:
        return
    for spec in requires:
        extra = _EXTRA.search(spec)
        if extra is not None and (not top or extra.group(1) in _SKIPPED_EXTRAS):
            continue  # a dependency's own extras are not installed for us; our dev tools
        match = _NAME.match(spec)
        if match is not None:
            yield match.group(1)


#: Distributions a required one imports whenever they are installed, though none requires them:
#: Starlette's request module imports python-multipart if it is there (another package, a test
#: tool among them, may have installed it), so the service loads it and needs its bytecode.
_IMPORTED_WHEN_INSTALLED = ("python-multipart",)


def _distributions() -> list[str]:
    """This project and every installed distribution it requires, recursively, and those of
    :data:`_IMPORTED_WHEN_INSTALLED` (:func:`installed_sources` skips the ones not installed)."""
    seen: dict[str, None] = {}
    todo = [*_IMPORTED_WHEN_INSTALLED, DISTRIBUTION]
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen[key] = None
        todo.extend(_requirement_names(name, top=name == DISTRIBUTION))
    return list(seen)


def installed_sources() -> list[Path]:
    """The ``.py`` files of the package and of its installed dependencies (see module doc)."""
    import clawseed_edge

    files: dict[Path, None] = dict.fromkeys(
        sorted(Path(clawseed_edge.__file__).resolve().parent.rglob("*.py"))
    )
    for name in _distributions()[1:]:  # the package itself is walked above
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a requirement for another platform (lgpio off a Pi)
        for record in dist.files or ():
            if record.suffix == ".py" and len(files) < MAX_FILES:
                files[Path(str(dist.locate_file(record))).resolve()] = None
    return [f for f in files if f.is_file()]


#: Standard-library directories the service never imports.
_STDLIB_SKIPPED = re.compile(
    r"/(test|tests|idlelib|tkinter|turtledemo|lib2to3|ensurepip|site-packages|dist-packages"
    r"|config-[^/]*|__phello__|pydoc_data)(/|$)"
)


@functools.cache
def _stdlib() -> Path:
    import sysconfig

    return Path(sysconfig.get_paths()["stdlib"]).resolve()


def stdlib_sources() -> list[Path]:
    """The standard library's ``.py`` files the service may import (see module doc)."""
    root = _stdlib()
    return sorted(
        f for f in root.rglob("*.py") if not _STDLIB_SKIPPED.search("/" + str(f.relative_to(root)))
    )


def service_sources() -> list[Path]:
    """Everything the service's level needs: :func:`installed_sources` and the standard
    library's modules."""
    return [*installed_sources(), *stdlib_sources()]


def _levels(source: Path) -> tuple[int, ...]:
    """The levels kept for ``source``: the service's only for the standard library."""
    return (SERVICE_LEVEL,) if source.is_relative_to(_stdlib()) else OPTIMIZATION_LEVELS


def _cached(source: Path, level: int) -> Path:
    """The ``.pyc`` the import system loads for ``source`` at ``-O`` level ``level``."""
    return Path(importlib.util.cache_from_source(str(source), optimization=level or ""))


def _up_to_date(source: Path, levels: tuple[int, ...] | None = None) -> bool:
    """Whether the ``.pyc`` of every kept level (or of ``levels``) is valid for ``source``."""
    return all(_level_up_to_date(source, level) for level in levels or _levels(source))


def _level_up_to_date(source: Path, level: int) -> bool:
    try:
        with _cached(source, level).open("rb") as f:
            header = f.read(16)
        stat = source.stat()
    except (OSError, NotImplementedError):
        return False
    if len(header) < 16 or header[:4] != importlib.util.MAGIC_NUMBER:
        return False
    flags = int.from_bytes(header[4:8], "little")
    if flags & 0b1:  # hash-based: checked against the source by the import system itself
        return True
    mtime = int.from_bytes(header[8:12], "little")
    size = int.from_bytes(header[12:16], "little")
    return mtime == int(stat.st_mtime) & 0xFFFFFFFF and size == stat.st_size & 0xFFFFFFFF


def stale_sources(
    sources: Iterable[Path] | None = None, *, service: bool = True
) -> tuple[list[Path], int]:
    """(the sources without an up-to-date ``.pyc``, how many sources were looked at).

    Args:
        sources: What to check (default: :func:`service_sources`, or :func:`installed_sources`
            without ``service``).
        service: Check the service's level too; without it only the plain ``.pyc`` of the
            package and its dependencies (what the commands people type load).
    """
    if sources is not None:
        files = list(sources)
    else:
        files = service_sources() if service else installed_sources()
    levels = None if service else (0,)
    return [f for f in files if not _up_to_date(f, levels)], len(files)


def byte_compile(sources: Iterable[Path] | None = None) -> CompileReport:
    """Compile every source of the installed code whose ``.pyc`` is missing or stale.

    The plain level is compiled here; the service's level in one child interpreter run with
    ``-X no_debug_ranges`` (:data:`SERVICE_COMPILE_FLAGS`). Never raises for a file: those that
    fail are counted and named in the report.
    """
    files = service_sources() if sources is None else list(sources)
    stale = [f for f in files if not _up_to_date(f)]
    for source in stale:
        if 0 in _levels(source) and not _level_up_to_date(source, 0):
            with contextlib.suppress(OSError):  # compile_file reports most errors itself
                compileall.compile_file(source, quiet=2, force=True, optimize=0)
    _compile_in_child([f for f in stale if not _level_up_to_date(f, SERVICE_LEVEL)])
    compiled = 0
    failed: list[str] = []
    failed_count = 0
    for source in stale:
        if _up_to_date(source):
            compiled += 1
            _give_to_owner(source)
        else:
            failed_count += 1
            if len(failed) < 20:
                failed.append(str(source))
    return CompileReport(len(files), compiled, tuple(failed), failed_count)


_CHILD_SCRIPT = """\
import compileall, sys
for line in sys.stdin:
    try:
        compileall.compile_file(line.rstrip("\\n"), quiet=2, force=True, optimize=int(sys.argv[1]))
    except OSError:
        pass
"""


def _compile_in_child(files: list[Path]) -> None:
    """Compile ``files`` at the service's level in a child with the service's flags."""
    if not files:
        return
    with contextlib.suppress(OSError, subprocess.SubprocessError):  # the caller re-checks
        subprocess.run(
            [sys.executable, *SERVICE_COMPILE_FLAGS, "-c", _CHILD_SCRIPT, str(SERVICE_LEVEL)],
            input="".join(f"{f}\n" for f in files),
            text=True,
            check=False,
            timeout=CHILD_TIMEOUT_S,
        )


def _give_to_owner(source: Path) -> None:
    """Under sudo, hand the new ``.pyc`` and its ``__pycache__`` to the owner of the source's
    directory: a venv in a user's home stays theirs (``pip install -U`` as that user must be
    able to remove what root compiled)."""
    if os.geteuid() != 0:
        return
    with contextlib.suppress(OSError):  # best effort: the bytecode itself is in place
        owner = source.parent.stat()
        if owner.st_uid == 0:
            return
        cached = [_cached(source, level) for level in _levels(source)]
        for path in (cached[0].parent, *cached):
            if path.stat().st_uid != owner.st_uid:
                os.chown(path, owner.st_uid, owner.st_gid)


def compile_command(directory: Path | str) -> str:
    """The command that byte-compiles ``directory`` at every kept level (for messages)."""
    levels = " ".join(f"-o {level}" for level in OPTIMIZATION_LEVELS)
    return f"{sys.executable} -m compileall -q {levels} {directory}"


def describe(stale: list[Path], total: int) -> str:
    """One line for people: how much of the installed code has up-to-date bytecode."""
    if not stale:
        return f"bytecode up to date for all {total} modules of the package and its dependencies"
    return (
        f"{len(stale)} of {total} modules of the package and its dependencies have no up-to-date "
        f"bytecode (first: {stale[0]})"
    )


if __name__ == "__main__":  # pragma: no cover - used by benchmarks: prints describe()
    print(describe(*stale_sources()), file=sys.stdout)
