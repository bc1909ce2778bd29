"""Each package face exports exactly its public names, httpx's test_exported_members style.

``__all__`` is the face's contract: every public name the face holds is in it (nothing is
public by accident), and every name in it resolves (nothing is promised that is not there).
Lazy faces (``providers``, ``config``, ``agent.toolcalls``) count their ``_LAZY`` names as held.
The peripherals face has its own test in tests/peripherals.
"""

from __future__ import annotations

import importlib
import types

import pytest

FACES = [
    "clawseed_edge.api",
    "clawseed_edge.agent",
    "clawseed_edge.agent.toolcalls",
    "clawseed_edge.config",
    "clawseed_edge.memory",
    "clawseed_edge.providers",
    "clawseed_edge.service",
    "clawseed_edge.tools",
    "clawseed_edge.testing",
]

#: The typing machinery a lazy face needs for its ``TYPE_CHECKING`` imports; not API.
TYPING_MACHINERY = {"annotations", "TYPE_CHECKING", "Any"}


def public_names(module: types.ModuleType) -> set[str]:
    held = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name not in TYPING_MACHINERY
    }
    return held | set(getattr(module, "_LAZY", {}))


@pytest.mark.parametrize("face", FACES)
def test_all_equals_the_public_names(face: str) -> None:
    module = importlib.import_module(face)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{face}.__all__ lists a name twice"
    assert set(exported) == public_names(module)


@pytest.mark.parametrize("face", FACES)
def test_every_exported_name_resolves(face: str) -> None:
    module = importlib.import_module(face)
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert missing == []


def test_a_face_with_an_extra_public_name_fails() -> None:
    # The check must be able to fail: a public helper left out of __all__ is caught.
    face = types.ModuleType("fake_face")
    face.__all__ = ["Thing"]  # type: ignore[attr-defined]
    face.Thing = object  # type: ignore[attr-defined]
    face.helper = len  # type: ignore[attr-defined]
    assert set(face.__all__) != public_names(face)  # type: ignore[attr-defined]
    assert public_names(face) == {"Thing", "helper"}


#: Faces that load their names on first use (PEP 562): a name that is also a submodule's name
#: would lose to the submodule once anything imported it, so such a name is bound eagerly.
LAZY_FACES = [
    "clawseed_edge.api",
    "clawseed_edge.channels.mcp",
    "clawseed_edge.config",
    "clawseed_edge.memory",
    "clawseed_edge.peripherals",
    "clawseed_edge.peripherals.gpio",
    "clawseed_edge.peripherals.sensors",
    "clawseed_edge.peripherals.wired",
    "clawseed_edge.service",
    "clawseed_edge.tools",
]


@pytest.mark.parametrize("face", LAZY_FACES)
def test_no_exported_name_is_shadowed_by_a_submodule(face: str) -> None:
    import pkgutil

    module = importlib.import_module(face)
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    for name in sorted(set(module.__all__) & submodules):
        importlib.import_module(f"{face}.{name}")  # the import system binds it on the face
    shadowed = [n for n in module.__all__ if isinstance(getattr(module, n), types.ModuleType)]
    assert shadowed == []


def test_the_api_table_lists_exactly_each_modules_all() -> None:
    # The api face names each module's public names by hand (importing them to ask would build
    # every dataclass): a name added to a module but not to the table is caught here.
    import pkgutil

    import clawseed_edge.api as api

    modules = {
        f".{info.name}" for info in pkgutil.iter_modules(api.__path__) if info.name != "lazy"
    }
    assert set(api._MODULES) == modules
    for home, names in api._MODULES.items():
        module = importlib.import_module(f"clawseed_edge.api{home}")
        assert sorted(names) == sorted(module.__all__), home


def test_loading_a_config_builds_no_api_dataclass() -> None:
    # What the gateway imports before its door opens (service/process.py _open_door).
    import subprocess
    import sys

    code = (
        "import sys, clawseed_edge.config.file, clawseed_edge.service, "
        "clawseed_edge.channels.gateway.door, clawseed_edge.channels.gateway.server; "
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('clawseed_edge.api.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    heavy = {"clawseed_edge.api.events", "clawseed_edge.api.types", "clawseed_edge.api.protocols"}
    assert loaded & heavy == set(), loaded
