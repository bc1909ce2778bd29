"""Which installed packages what a config turns on needs, and one error naming the install.

``doctor`` lists them (:func:`package_needs`), and ``run``/``gateway`` refuse to start without
them (:func:`require_packages`) before any hardware is touched: one line with the install
command, not a ``ModuleNotFoundError`` from deep inside start-up (under systemd, a crash loop).
Nothing here imports the packages: :func:`importlib.util.find_spec` only looks for them.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from clawseed_edge.api import ConfigInvalid

from .schema import Config

__all__ = ["PackageNeed", "missing_packages", "package_needs", "require_packages"]

#: The gateway's server stack (base dependencies; the ``gateway`` extra names them too).
GATEWAY_MODULES = ("starlette", "uvicorn", "wsproto")
#: Provider names (and aliases) whose SDK is an extra.
_PROVIDER_SDKS = {"anthropic": ("anthropic", "anthropic"), "claude": ("anthropic", "anthropic")}


@dataclass(frozen=True)
class PackageNeed:
    """What a feature that the config turns on needs installed.

    Attributes:
        feature: What turns it on (``the gateway``, ``provider 'anthropic'``).
        modules: The top-level modules it imports.
        extra: The package extra that installs them (``pip install 'clawseed-edge[extra]'``).
    """

    feature: str
    modules: tuple[str, ...]
    extra: str

    def missing(self) -> list[str]:
        """The modules of :attr:`modules` that are not installed."""
        return [m for m in self.modules if not _installed(m)]

    def install_command(self) -> str:
        return f"pip install 'clawseed-edge[{self.extra}]'"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def package_needs(config: Config, *, gateway: bool | None = None) -> list[PackageNeed]:
    """The packages of everything ``config`` turns on; ``gateway`` overrides ``[gateway] enabled``."""
    needs = []
    if config.gateway.enabled if gateway is None else gateway:
        needs.append(PackageNeed("the gateway", GATEWAY_MODULES, "gateway"))
    if config.mqtt.enabled:
        needs.append(PackageNeed("the MQTT channel ([mqtt])", ("aiomqtt",), "mqtt"))
    sdk = _PROVIDER_SDKS.get(config.provider.name)
    if sdk is not None:
        module, extra = sdk
        needs.append(PackageNeed(f"provider {config.provider.name!r}", (module,), extra))
    return needs


def missing_packages(config: Config, *, gateway: bool | None = None) -> list[PackageNeed]:
    """The needs of :func:`package_needs` with a module that is not installed."""
    return [need for need in package_needs(config, gateway=gateway) if need.missing()]


def require_packages(config: Config, *, gateway: bool | None = None) -> None:
    """Refuse to start what ``config`` turns on without its packages.

    Raises:
        ConfigInvalid: one line per missing feature, each with its install command.
    """
    missing = missing_packages(config, gateway=gateway)
    if not missing:
        return
    lines = [
        f"{need.feature} needs {', '.join(need.missing())}, which is not installed: run "
        f"{need.install_command()}"
        for need in missing
    ]
    raise ConfigInvalid("; ".join(lines))
