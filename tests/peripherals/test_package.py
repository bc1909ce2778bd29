"""The peripherals package's shape: its exact public face, no import cycle, small modules."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import clawseed_edge.peripherals as package
import clawseed_edge.peripherals.gpio as gpio_package
import clawseed_edge.peripherals.wired as wired_package

ROOT = Path(package.__file__).parent
PREFIX = "clawseed_edge.peripherals"

# What users import today; removing one of these is a breaking change.
USED_BY_USERS = {
    "PiGpio",
    "make_pin_factory",
    "mock_pin_factory",
    "HardwareConfig",
    "DeviceConfig",
    "loads_hardware_toml",
    "load_hardware_toml",
    "default_registry",
    "apply_safe_state_all",
    "install_signal_handlers",
    "InputRules",
    "InputEvent",
}


def _public_names(module: types.ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }


def _face(module: types.ModuleType) -> set[str]:
    """The public names once every name of ``__all__`` is loaded (the packages load them on
    first use)."""
    for name in module.__all__:
        getattr(module, name)
    return _public_names(module)


def test_the_package_face_is_exactly_its_all() -> None:
    assert set(package.__all__) == _face(package)
    assert len(package.__all__) == len(set(package.__all__))
    assert USED_BY_USERS <= set(package.__all__)


def test_the_gpio_face_is_exactly_its_all() -> None:
    assert set(gpio_package.__all__) == _face(gpio_package)


def test_the_wired_face_is_exactly_its_all() -> None:
    assert set(wired_package.__all__) == _face(wired_package)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PREFIX, *parts])


def _imports(path: Path) -> set[str]:
    """Every peripherals module ``path`` imports, at any depth, relative imports resolved."""
    name = _module_name(path)
    package_name = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package_name.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        found.update(t for t in targets if t.startswith(PREFIX))
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        # "from .gpio import PiGpio" names gpio.PiGpio: keep only real modules as edges.
        graph[name] = {t for t in _imports(path) if t in modules and t != name}
    return graph


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycle_inside_peripherals() -> None:
    # A package's __init__ re-exports its submodules; an edge into a package __init__ from its
    # own submodule would be a cycle, and it is one we want to catch too.
    graph = _graph()
    assert f"{PREFIX}.wired.tools" in graph  # the walk sees the subpackage
    assert _find_cycle(graph) is None, f"import cycle: {' -> '.join(_find_cycle(graph) or [])}"


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    graph = _graph()
    graph[f"{PREFIX}.wired.port"] = {*graph[f"{PREFIX}.wired.port"], f"{PREFIX}.wired.toolset"}
    assert _find_cycle(graph) is not None


def test_no_module_is_over_500_lines() -> None:
    sizes = {
        str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for p in ROOT.rglob("*.py")
    }
    assert {k: v for k, v in sizes.items() if v > 500} == {}


def _edges_between(sources: tuple[str, ...], targets: tuple[str, ...]) -> list[str]:
    graph = _graph()
    return sorted(
        f"{module} -> {target}"
        for module, imported in graph.items()
        if module.startswith(sources)
        for target in imported
        if target.startswith(targets)
    )


def test_sensor_drivers_do_not_point_back_up_at_the_sensor_bank() -> None:
    # The driver base sits below every transport: i2c/drivers and sysfs/ import it, and
    # sensors/ (the bank) builds on them, never the other way round.
    transports = (f"{PREFIX}.i2c", f"{PREFIX}.sysfs", f"{PREFIX}.sensor_driver")
    assert _edges_between(transports, (f"{PREFIX}.sensors",)) == []
    assert f"{PREFIX}.sensor_driver" in _graph()[f"{PREFIX}.i2c.drivers.bme280"]


def test_the_pi_header_and_the_nucleo_are_backends_of_one_wired_model() -> None:
    # gpio/ and serial/ each build on wired/ and never on each other: what a device is, its
    # checks and tools live once, below both.
    gpio, serial, wired = f"{PREFIX}.gpio", f"{PREFIX}.serial", f"{PREFIX}.wired"
    assert _edges_between((gpio,), (serial,)) == []
    assert _edges_between((serial,), (gpio,)) == []
    assert _edges_between((wired,), (gpio, serial)) == []
    assert wired in _graph()[f"{gpio}.pi_gpio"]
    assert wired in _graph()[f"{serial}.board"]
