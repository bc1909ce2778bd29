"""lazy_face: a package's names imported on first use, bound once, unknown names refused."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from clawseed_edge.api.lazy import lazy_face


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    root = tmp_path / "lazypkg"
    root.mkdir()
    (root / "__init__.py").write_text(
        "from clawseed_edge.api.lazy import lazy_face\n"
        '__all__ = ["Thing", "helper"]\n'
        '_LAZY = {"Thing": ".things", "helper": "util"}\n'
        "__getattr__, __dir__ = lazy_face(__name__, _LAZY, __all__)\n",
        encoding="utf-8",
    )
    (root / "things.py").write_text("class Thing:\n    pass\n", encoding="utf-8")
    (root / "util.py").write_text("def helper():\n    return 42\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazypkg  # type: ignore[import-not-found]

    yield lazypkg
    for name in [m for m in sys.modules if m == "lazypkg" or m.startswith("lazypkg.")]:
        del sys.modules[name]


def test_a_name_is_imported_on_first_use_and_bound(package: types.ModuleType) -> None:
    assert "lazypkg.things" not in sys.modules
    thing = package.Thing
    assert "lazypkg.things" in sys.modules and thing.__name__ == "Thing"
    assert vars(package)["Thing"] is thing, "bound: the hook runs once per name"
    assert package.helper() == 42, "a module named without the leading dot"
    assert dir(package) == ["Thing", "helper"]


def test_an_unknown_name_is_an_attribute_error_naming_the_package(
    package: types.ModuleType,
) -> None:
    with pytest.raises(AttributeError, match="module 'lazypkg' has no attribute 'nope'"):
        _ = package.nope
    assert lazy_face  # the helper itself is importable from the api layer
