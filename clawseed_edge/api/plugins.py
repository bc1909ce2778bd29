"""One plugin registry for every kind of part: providers, peripherals, sensors, tools, channels
and hooks. Standard library only, so every package can use it.

Each kind has one entry-point group (:data:`PLUGIN_GROUPS`, ``clawseed_edge.<kind>``). A
:class:`PluginRegistry` holds the built-ins, registered in code the same way an application
registers its own (as objects, or as ``"package.module:attribute"`` paths imported on first
use: simonw/llm's ``default_plugins`` idea), and finds every other name in its group. One set of
rules for every kind:

* **Lookup**: a registered name or alias first; only a name that is not registered reads the
  installed entry points. ``importlib.metadata`` (with its email and zipfile imports, about
  2 MB of an idle service) is imported only then, so a plain start never pays for it.
* **Unknown name**: :class:`~clawseed_edge.api.errors.PluginNotFound` (a ``ConfigInvalid``)
  names the kind, the name, the known names and the group a plugin registers in.
* **Duplicates**: registering a taken name (or alias) in code raises
  :class:`~clawseed_edge.api.errors.PluginConflict` unless ``replace=True`` (an application
  that overrides a built-in says so). A plugin may not shadow a built-in: an entry point with a
  registered name is never loaded, and a warning names it when the group is read. Two installed
  distributions offering one name is a ``PluginConflict`` naming both.
* **Broken plugin**: :class:`~clawseed_edge.api.errors.PluginLoadFailed` names the entry point
  and its distribution; the plugin's own exception is its ``__cause__``.

Example::

    registry: PluginRegistry[ProviderFactory] = PluginRegistry("providers", noun="provider")
    registry.register("ollama", "clawseed_edge.providers.registry:ollama_factory")
    factory = registry.get("my-plugin")  # reads clawseed_edge.providers, loads it, caches it
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .errors import PluginConflict, PluginLoadFailed, PluginNotFound

__all__ = [
    "PLUGIN_GROUPS",
    "PluginInfo",
    "PluginRegistry",
    "describe_settings_error",
    "load_object",
]

_log = logging.getLogger(__name__)

T = TypeVar("T")

#: The entry-point group of each kind of plugin (``[project.entry-points."<group>"]``).
PLUGIN_GROUPS: dict[str, str] = {
    "providers": "clawseed_edge.providers",
    "peripherals": "clawseed_edge.peripherals",
    "sensors": "clawseed_edge.sensors",
    "tools": "clawseed_edge.tools",
    "channels": "clawseed_edge.channels",
    "hooks": "clawseed_edge.hooks",
}

#: Where plugin authors read how to write one (named in every "unknown name" error).
PLUGINS_DOC = "docs/plugins.md"


def entry_points(group: str) -> tuple[Any, ...]:
    """The installed entry points of ``group``.

    ``importlib.metadata`` is imported here, not at module level: only a name that is not
    registered reaches this function. Tests replace it (``monkeypatch.setattr``) or put a fake
    distribution on ``sys.path``.
    """
    from importlib.metadata import entry_points as installed

    return tuple(installed(group=group))


def load_object(path: str) -> Any:
    """The object at ``"package.module:attribute"`` (or ``"package.module"`` itself).

    Raises:
        ImportError / AttributeError: the module or the attribute does not exist.
    """
    module, _, attribute = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in filter(None, attribute.split(".")):
        obj = getattr(obj, part)
    return obj


def describe_settings_error(text: str) -> tuple[str, str]:
    """(message, dotted key) from a settings Struct's validation error.

    A plugin that brings its own settings table validates it with a msgspec Struct; msgspec
    says ``"Object contains unknown field `colour` - at `$.devices[0]`"``. This turns that into
    ``("unknown key 'colour' (check the spelling)", "devices[0].colour")``.
    """
    message, _, key = text.partition(" - at `$")
    key = key.rstrip("`").lstrip(".")
    for prefix, say in (
        ("Object contains unknown field `", "unknown key {!r} (check the spelling)"),
        ("Object missing required field `", "missing required key {!r}"),
    ):
        if message.startswith(prefix):
            field = message.split("`")[1]
            key = f"{key}.{field}" if key else field
            message = say.format(field)
    return message, key


def _distribution(ep: Any) -> str:
    """The name of the distribution that installed ``ep`` (for messages)."""
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    return str(name) if name else "an unknown distribution"


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """Where one registered or installed name comes from.

    Attributes:
        name: The name (not an alias).
        origin: ``"built-in"`` (registered by clawseed-edge or the application) or
            ``"plugin"`` (found in the entry-point group).
        value: The import path, when known (``"pkg.mod:factory"``).
        distribution: The installed distribution of a plugin (None for a built-in).
        problem: Why an installed plugin is not used (it shadows a built-in, or another
            distribution offers the same name); None when it is fine.
    """

    name: str
    origin: str
    value: str | None = None
    distribution: str | None = None
    problem: str | None = None
    aliases: tuple[str, ...] = ()


class PluginRegistry(Generic[T]):
    """Names (and aliases) -> objects of one kind, with lazy entry-point plugins.

    Args:
        kind: One of :data:`PLUGIN_GROUPS` (``"providers"``, ``"tools"`` ...); it picks the
            entry-point group unless ``group`` is given.
        noun: How messages name one of them (``"provider"``, ``"sensor driver"``); default:
            the kind without its final ``s``.
        group: The entry-point group (default: ``PLUGIN_GROUPS[kind]``).
        load_entry_points: Look names that are not registered up in the group (False: an
            application that wants exactly what it registered).
        key: The config key named in errors when the caller gives none (``"provider.name"``).
    """

    def __init__(
        self,
        kind: str,
        *,
        noun: str | None = None,
        group: str | None = None,
        load_entry_points: bool = True,
        key: str | None = None,
    ) -> None:
        if group is None and kind not in PLUGIN_GROUPS:
            raise ValueError(f"unknown plugin kind {kind!r}: one of {', '.join(PLUGIN_GROUPS)}")
        self.kind = kind
        self.group = group or PLUGIN_GROUPS[kind]
        self.noun = noun or kind.removesuffix("s")
        self.key = key
        self.load_entry_points = load_entry_points
        self._objects: dict[str, T] = {}
        self._paths: dict[str, str] = {}
        self._aliases: dict[str, str] = {}
        self._order: list[str] = []
        self._plugins: dict[str, PluginInfo] = {}

    # --- registering ------------------------------------------------------------------------

    def register(
        self,
        name: str,
        obj: T | str,
        *,
        aliases: Iterable[str] = (),
        replace: bool = False,
    ) -> None:
        """Register ``obj`` (or its import path, loaded on first use) under ``name``.

        Raises:
            PluginConflict: ``name`` or an alias is taken and ``replace`` is False.
        """
        aliases = tuple(aliases)
        if not replace:
            for taken in (name, *aliases):
                if taken in self._aliases or self._registered(taken):
                    raise PluginConflict(
                        f"a {self.noun} named {taken!r} is already registered; pass "
                        "replace=True to override it on purpose",
                        key=self.key,
                    )
        self._objects.pop(name, None)
        self._paths.pop(name, None)
        self._plugins.pop(name, None)
        if isinstance(obj, str):
            self._paths[name] = obj
        else:
            self._objects[name] = obj
        if name not in self._order:
            self._order.append(name)
        for alias in aliases:
            self._aliases[alias] = name

    def _registered(self, name: str) -> bool:
        return name in self._objects or name in self._paths

    # --- looking up ---------------------------------------------------------------------------

    def canonical(self, name: str) -> str:
        """The name an alias stands for (the name itself if it is not an alias)."""
        return self._aliases.get(name, name)

    def names(self) -> list[str]:
        """Registered names and aliases (loaded plugins included), sorted; reads no entry
        points."""
        return self._names()

    def _names(self) -> list[str]:
        return sorted({*self._order, *self._aliases})

    def registered(self) -> list[str]:
        """Registered names (no aliases) in the order they were registered: the built-ins
        first, then the application's, then plugins as they were loaded."""
        return list(self._order)

    def available(self) -> list[str]:
        """Every name :meth:`get` can find: registered ones, aliases and installed plugins,
        sorted. Reads the entry-point group (imports ``importlib.metadata``)."""
        names = set(self._names())
        if self.load_entry_points:
            names.update(self._installed())
        return sorted(names)

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered (an alias counts; reads no entry points)."""
        return isinstance(name, str) and self._registered(self.canonical(name))

    def get(self, name: str, *, file: str | None = None, key: str | None = None) -> T:
        """The object registered under ``name``, loading it (and, for a name not registered,
        finding it in the entry-point group) on first use.

        Args:
            name: A name or alias.
            file, key: Named in errors (default key: the registry's ``key``).

        Raises:
            PluginNotFound: Nothing has that name (the message lists the known names and the
                group to install a plugin into).
            PluginConflict: Two installed distributions offer that name.
            PluginLoadFailed: Its module or attribute does not import.
        """
        key = key if key is not None else self.key
        canonical = self.canonical(name)
        if canonical in self._objects:
            return self._objects[canonical]
        path = self._paths.get(canonical)
        if path is not None:
            loaded = self._load(canonical, path, None, file, key)
            self._objects[canonical] = loaded
            return loaded
        installed = self._installed() if self.load_entry_points else {}
        candidates = installed.get(canonical, [])
        if len(candidates) > 1:
            offers = " and ".join(f"{_distribution(ep)} ({ep.value})" for ep in candidates)
            raise PluginConflict(
                f"two installed plugins offer the {self.noun} {name!r} in the entry-point "
                f"group {self.group!r}: {offers}; uninstall one of them",
                file=file,
                key=key,
            )
        if not candidates:
            raise PluginNotFound(self._unknown(name, installed), file=file, key=key)
        ep = candidates[0]
        dist = _distribution(ep)
        loaded = self._load(canonical, str(ep.value), dist, file, key)
        self._objects[canonical] = loaded
        self._order.append(canonical)
        self._plugins[canonical] = PluginInfo(canonical, "plugin", str(ep.value), dist)
        return loaded

    def info(self, name: str) -> PluginInfo:
        """Where a registered (or loaded) name comes from.

        Raises:
            PluginNotFound: The name is neither registered nor loaded.
        """
        canonical = self.canonical(name)
        if canonical in self._plugins:
            return self._plugins[canonical]
        if not self._registered(canonical):
            raise PluginNotFound(self._unknown(name, {}), key=self.key)
        aliases = tuple(sorted(a for a, target in self._aliases.items() if target == canonical))
        return PluginInfo(canonical, "built-in", self._paths.get(canonical), aliases=aliases)

    def catalogue(self) -> list[PluginInfo]:
        """Every registered name and every installed entry point of the group, sorted by
        name, each installed one with the problem that keeps it from being used, if any.
        Reads the group (imports ``importlib.metadata``): for listings, not for a start."""
        rows = [self.info(name) for name in self._order if name not in self._plugins]
        offered: dict[str, list[Any]] = {}
        if self.load_entry_points:
            for ep in entry_points(group=self.group):
                offered.setdefault(ep.name, []).append(ep)
        for name, eps in offered.items():
            dists = sorted({_distribution(ep) for ep in eps})
            for ep in eps:
                problem = None
                if name in self._aliases or (self._registered(name) and name not in self._plugins):
                    problem = f"ignored: a built-in {self.noun} has that name"
                elif len(dists) > 1:
                    problem = f"conflict: offered by {' and '.join(dists)}"
                rows.append(PluginInfo(name, "plugin", str(ep.value), _distribution(ep), problem))
        return sorted(rows, key=lambda row: (row.name, row.origin))

    # --- internals ----------------------------------------------------------------------------

    def _unknown(self, name: str, installed: dict[str, list[Any]]) -> str:
        known = sorted({*self._names(), *installed})
        choice = f"use one of {', '.join(known)}, or" if known else f"no {self.noun} is known;"
        return (
            f"unknown {self.noun} {name!r}: {choice} install a plugin that registers it in the "
            f"entry-point group {self.group!r} (see {PLUGINS_DOC})"
        )

    def _installed(self) -> dict[str, list[Any]]:
        """The group's entry points by name; warns about those a built-in shadows."""
        found: dict[str, list[Any]] = {}
        for ep in entry_points(group=self.group):
            if ep.name in self._aliases or (
                self._registered(ep.name) and ep.name not in self._plugins
            ):
                _log.warning(
                    "%s plugin %r (%s, from %s) is ignored: a built-in %s has that name; "
                    "a plugin may not shadow a built-in, so the plugin must pick another name",
                    self.noun,
                    ep.name,
                    ep.value,
                    _distribution(ep),
                    self.noun,
                )
                continue
            same = found.setdefault(ep.name, [])
            if not any(_distribution(other) == _distribution(ep) for other in same):
                same.append(ep)
        return found

    def _load(self, name: str, path: str, dist: str | None, file: str | None, key: str | None) -> T:
        try:
            loaded: T = load_object(path)
        except Exception as exc:  # a plugin's import may raise anything; say which one failed
            # A built-in named by path is not a plugin: only a plugin names its distribution.
            what, origin = (f"{self.noun} plugin", f", from {dist}") if dist else (self.noun, "")
            raise PluginLoadFailed(
                f"{what} {name!r} ({path}{origin}) failed to load: "
                f"{type(exc).__name__}: {exc}; reinstall it, or uninstall it and stop naming "
                f"{name!r} in the config",
                file=file,
                key=key,
            ) from exc
        return loaded
