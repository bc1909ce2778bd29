"""The package's import graph follows shared/DESIGN.md's layers, and has no cycle.

Every import counts: absolute and relative, at module level, inside functions and under
``TYPE_CHECKING`` (a lazy import is still a dependency; it only moves the failure to run time).

Layers, low to high (a module may import its own package and any lower layer)::

    api                                                     standard library only
    providers  tools  memory  peripherals  state  client    api only; never one another
    agent
    config
    scheduler
    channels                                                what every channel shares
    channels/<x>  (gateway, ...)                            each a channel; never one another
    service
    cli  testing                                            never one another

``testing`` is the users' test kit (scripted provider, mock boards, fixtures): it builds on
agent, providers and peripherals, and nothing in the package imports it (only tests do), so it
sits at the top, beside ``cli``. Inside ``channels``, a subpackage is a channel (its layer is
``channels/<x>``) and a plain module is a shared service (layer ``channels``). ``state``,
``client``, ``scheduler`` and ``service`` may not exist yet: a package that is absent is simply
not checked, and one that appears is already placed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import clawseed_edge

PACKAGE = "clawseed_edge"
ROOT = Path(clawseed_edge.__file__).parent

#: Stands in LAYERS for every channel subpackage (``channels/gateway``, ``channels/telegram`` ...).
CHANNEL = "channels/*"
LAYERS: tuple[tuple[str, ...], ...] = (
    ("api",),
    ("providers", "tools", "memory", "peripherals", "state", "client"),
    ("agent",),
    ("config",),
    ("scheduler",),
    ("channels",),
    (CHANNEL,),
    ("service",),
    ("cli", "testing"),
)
#: Top-level modules that are not a package of their own, and the layer they belong to.
MODULE_LAYER = {"__main__": "cli", "__init__": None}


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement: who imports what, where."""

    module: str  # the importing module, dotted
    target: str  # the imported module, dotted (a module, not an attribute)
    line: int
    typing_only: bool = False  # under ``if TYPE_CHECKING:``: never executed


def _typing_only_nodes(tree: ast.AST) -> set[int]:
    """The ids of the nodes inside ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) bodies."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for stmt in node.body:
                    found.update(id(n) for n in ast.walk(stmt))
    return found


def module_name(root: Path, package: str, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts])


def _is_module(root: Path, package: str, dotted: str) -> bool:
    parts = dotted.split(".")
    if parts[0] != package:
        return False
    base = root.joinpath(*parts[1:])
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def iter_imports(root: Path, package: str) -> Iterator[Import]:
    """Every import of ``package``'s own modules found under ``root``, resolved to module names."""
    for path in sorted(root.rglob("*.py")):
        name = module_name(root, package, path)
        is_init = path.name == "__init__.py"
        # The package a relative import starts from: the module's own package.
        here = name.split(".") if is_init else name.split(".")[:-1]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        typing_only = _typing_only_nodes(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == package:
                        yield Import(name, alias.name, node.lineno, id(node) in typing_only)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    if node.level - 1 > len(here) - 1:
                        raise ValueError(f"{path}:{node.lineno}: relative import beyond the top")
                    base = here[: len(here) - (node.level - 1)]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                if source.split(".")[0] != package:
                    continue
                for alias in node.names:
                    # ``from pkg import sub`` imports the module pkg.sub when there is one.
                    candidate = f"{source}.{alias.name}"
                    target = candidate if _is_module(root, package, candidate) else source
                    yield Import(name, target, node.lineno, id(node) in typing_only)


def layer_of(root: Path, package: str, dotted: str) -> str | None:
    parts = dotted.split(".")
    if len(parts) < 2:
        return None  # the root package itself
    top = parts[1]
    if top in MODULE_LAYER:
        return MODULE_LAYER[top]
    if top == "channels" and len(parts) > 2 and (root / top / parts[2] / "__init__.py").is_file():
        return f"channels/{parts[2]}"  # a channel: a subpackage of channels
    return top


def _placed(layer: str) -> bool:
    return any(_matches(layer, names) for names in LAYERS)


def _matches(layer: str, names: tuple[str, ...]) -> bool:
    return layer in names or (CHANNEL in names and layer.startswith("channels/"))


def rank_of(layer: str) -> int:
    for rank, names in enumerate(LAYERS):
        if _matches(layer, names):
            return rank
    raise KeyError(layer)


def layer_violations(root: Path, package: str) -> list[str]:
    """Every import that points up, sideways within a layer, or into an unknown package."""
    found: list[str] = []
    for imp in iter_imports(root, package):
        src, dst = layer_of(root, package, imp.module), layer_of(root, package, imp.target)
        where = f"{imp.module}:{imp.line} imports {imp.target}"
        for layer in (src, dst):
            if layer is not None and not _placed(layer):
                found.append(f"{where}: package {layer!r} has no place in the layer order")
        if src is None or dst is None or src == dst:
            continue
        if not _placed(src) or not _placed(dst):
            continue
        if rank_of(dst) > rank_of(src):
            found.append(f"{where}: {src} may not import the higher layer {dst}")
        elif rank_of(dst) == rank_of(src):
            found.append(f"{where}: {src} may not import {dst}, a package of the same layer")
    return found


def import_cycles(root: Path, package: str) -> list[list[str]]:
    """The import cycles among the package's modules (one per strongly connected set).

    Every import counts, at module level, inside a function (a lazy import that closes a
    circle still ties the two modules together) and under ``TYPE_CHECKING`` (a type-only
    back-reference is still a module that knows its owner: give it a narrow protocol instead,
    as the turn has :class:`~clawseed_edge.agent.turn.TurnParts` rather than the Agent).
    """
    graph: dict[str, set[str]] = {}
    for imp in iter_imports(root, package):
        if imp.target != imp.module:
            graph.setdefault(imp.module, set()).add(imp.target)
    # Tarjan's strongly connected components, iteratively (no recursion limit to hit).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


# --- the package --------------------------------------------------------------------------


def test_the_package_imports_point_down_only() -> None:
    assert layer_violations(ROOT, PACKAGE) == []


def test_every_package_has_a_place_in_the_layer_order() -> None:
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    placed = {name for names in LAYERS for name in names}
    assert packages - placed == set(), "add the new package to LAYERS (and to DESIGN.md)"


def test_the_checker_sees_the_package_imports() -> None:
    # A checker that finds nothing passes everything: make sure it reads real edges of each kind.
    edges = {(i.module, i.target) for i in iter_imports(ROOT, PACKAGE)}
    assert ("clawseed_edge.agent.engine", "clawseed_edge.agent.history") in edges  # relative
    assert ("clawseed_edge.config.assembly", "clawseed_edge.agent.builder") in edges  # absolute
    assert ("clawseed_edge.cli.common", "clawseed_edge.config.assembly") in edges  # in a function


#: The gpio <-> gpio_tools circle (lazy imports both ways) goes with issue 13's peripherals half
#: (tools depend on a small port protocol), done on another branch; nothing else may join it.
def test_the_package_import_graph_has_no_cycle() -> None:
    assert import_cycles(ROOT, PACKAGE) == []


@pytest.mark.parametrize("path", sorted((ROOT / "agent").rglob("*.py")), ids=lambda p: p.name)
def test_no_agent_module_is_over_500_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= 500, f"{path.relative_to(ROOT)} has {lines} lines: split it by concern"


# --- the checker on a planted tree ---------------------------------------------------------


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for rel, text in {
        "__init__.py": "",
        "api/__init__.py": "",
        "api/types.py": "",
        "memory/__init__.py": "",
        "agent/__init__.py": "",
        "agent/engine.py": "from pkg.api import types\n",
        "config/__init__.py": "",
        "config/assembly.py": "from ..agent import engine\n",
        **files,
    }.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_clean_planted_tree_passes(tmp_path: Path) -> None:
    root = _plant(tmp_path, {})
    assert layer_violations(root, "pkg") == []
    assert import_cycles(root, "pkg") == []


@pytest.mark.parametrize(
    "text",
    [
        "from ..config import assemble\n",
        "from ..config.assembly import x\n",
        "import pkg.config.assembly\n",
        "from pkg.config import assemble\n",
        "def later():\n    from pkg.config.assembly import x\n",
        "def later():\n    from .. import config\n",
    ],
    ids=["relative", "relative-from-module", "absolute", "absolute-from", "in-function", "dots"],
)
def test_a_planted_upward_import_fails(tmp_path: Path, text: str) -> None:
    root = _plant(tmp_path, {"agent/history.py": text})
    violations = layer_violations(root, "pkg")
    assert len(violations) == 1
    assert violations[0].startswith("pkg.agent.history:")
    assert "agent may not import the higher layer config" in violations[0]


@pytest.mark.parametrize(
    "text", ["from ..memory import x\n", "import pkg.memory\n"], ids=["relative", "absolute"]
)
def test_a_planted_sideways_import_fails(tmp_path: Path, text: str) -> None:
    root = _plant(tmp_path, {"tools/__init__.py": text})
    assert layer_violations(root, "pkg") == [
        "pkg.tools:1 imports pkg.memory: tools may not import memory, a package of the same layer"
    ]


def test_a_planted_unknown_package_fails(tmp_path: Path) -> None:
    root = _plant(tmp_path, {"web/__init__.py": "from ..api import types\n"})
    assert layer_violations(root, "pkg") == [
        "pkg.web:1 imports pkg.api.types: package 'web' has no place in the layer order"
    ]


def test_a_planted_cycle_is_found(tmp_path: Path) -> None:
    root = _plant(
        tmp_path,
        {"agent/a.py": "from . import b\n", "agent/b.py": "def f():\n    from .a import x\n"},
    )
    assert import_cycles(root, "pkg") == [["pkg.agent.a", "pkg.agent.b"]]


def test_a_type_checking_back_reference_is_a_cycle_too(tmp_path: Path) -> None:
    back = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n"
    root = _plant(tmp_path, {"agent/a.py": "from . import b\n", "agent/b.py": back})
    assert import_cycles(root, "pkg") == [["pkg.agent.a", "pkg.agent.b"]]


def _plant_channels(tmp_path: Path, files: dict[str, str]) -> Path:
    return _plant(
        tmp_path,
        {
            "channels/__init__.py": "",
            "channels/approvals.py": "from ..agent import engine\n",
            "channels/gateway/__init__.py": "from .. import approvals\n",
            "channels/telegram/__init__.py": "from pkg.channels.approvals import x\n",
            "service/__init__.py": "from ..channels import gateway\n",
            **files,
        },
    )


def test_channels_may_use_the_shared_floor_and_the_service_may_host_them(tmp_path: Path) -> None:
    assert layer_violations(_plant_channels(tmp_path, {}), "pkg") == []


def test_a_planted_channel_importing_a_sibling_channel_fails(tmp_path: Path) -> None:
    text = "def later():\n    from ..gateway import hub\n"
    root = _plant_channels(tmp_path, {"channels/telegram/bot.py": text})
    assert layer_violations(root, "pkg") == [
        "pkg.channels.telegram.bot:2 imports pkg.channels.gateway: channels/telegram may not"
        " import channels/gateway, a package of the same layer"
    ]


def test_a_planted_shared_service_importing_a_channel_fails(tmp_path: Path) -> None:
    root = _plant_channels(tmp_path, {"channels/watch.py": "from .gateway import x\n"})
    assert layer_violations(root, "pkg") == [
        "pkg.channels.watch:1 imports pkg.channels.gateway: channels may not import the higher"
        " layer channels/gateway"
    ]
