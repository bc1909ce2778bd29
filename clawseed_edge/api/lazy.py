"""Lazy package faces (PEP 562): a package's public names, each imported on first use.

A package whose ``__init__`` would otherwise import every submodule (and what they import) lists
where each name lives and installs the two hooks::

    _LAZY = {"Thing": ".things", "helper": ".util"}
    __getattr__, __dir__ = lazy_face(__name__, _LAZY, __all__)

with the same names imported under ``TYPE_CHECKING`` for type checkers. A name is bound on the
package once resolved, so the hook runs once per name. A lazy name must not equal one of the
package's submodules: once anything imports that submodule, the import system binds the module
under that name and the hook is never asked (tests/test_exports.py checks every lazy face).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_face", "without_httpx_cli"]


def lazy_face(
    package: str, where: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package named ``package``.

    Args:
        package: The package's ``__name__`` (it is being initialised: in ``sys.modules``).
        where: Each lazy name's module, relative to the package (``".things"`` or ``"things"``).
        public: The package's ``__all__`` (what ``dir()`` shows).
    """
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        home = where.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home if home.startswith(".") else f".{home}", package)
        value = getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(public)

    return __getattr__, __dir__


def without_httpx_cli() -> None:
    """Keep httpx's command line out of this process (call before the first ``import httpx``).

    httpx's ``__init__`` tries ``from ._main import main``, whose module imports click and
    pygments before it fails on rich when those happen to be installed: about 2 MB of RSS for a
    command line the service never runs. A None entry for ``httpx._main`` makes that import fail
    at once, and httpx defines its stub ``main`` that asks for ``httpx[cli]``. Does nothing once
    httpx (or its ``_main``) is imported.
    """
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
