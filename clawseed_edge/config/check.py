"""Every check a run makes of a config, without opening hardware, memory or the network.

``config check`` loads the file (schema, keys, values) and then calls :func:`check_as_a_run`:
the same builders a run calls before it connects anything, so wiring a run would refuse (a pin
the board does not have, a reserved or doubly used pin, an unknown sensor driver, an unknown
provider, a missing package) fails here with the run's own message. Nothing is connected or
written: peripherals are built unconnected, providers are built and closed unused.
"""

from __future__ import annotations

from typing import Any

from .file import LoadedConfig

__all__ = ["check_as_a_run"]


async def check_as_a_run(loaded: LoadedConfig, *, packages: bool = True) -> list[Any]:
    """Build what a run builds from ``loaded`` before it connects anything, then drop it;
    returns the unconnected peripherals (``config check`` checks ``[[automations]]``' names
    against what they publish).

    ``packages=False`` leaves out the installed-packages check (``doctor`` has its own line).

    Raises:
        ConfigInvalid / HardwareError: what a run would raise at start (names file and key).
    """
    from clawseed_edge.agent.hooks import HookFactoryRegistry

    from .assembly import (
        _build_hooks,
        build_embedder,
        build_policy,
        build_provider,
        secret_scrubber,
    )
    from .hardware import build_peripherals
    from .packages import require_packages

    config = loaded.config
    if packages:
        require_packages(config)
    build_policy(loaded)
    secret_scrubber(loaded)
    _build_hooks(config, loaded.source, HookFactoryRegistry())
    # Built as a run on the device builds them (not simulated), and never connected.
    peripherals = build_peripherals(config, loaded.source, sim=False)
    provider = build_provider(loaded)
    try:
        embedder = build_embedder(loaded)
        close = getattr(embedder, "aclose", None)
        if close is not None:
            await close()
    finally:
        await provider.aclose()
    return list(peripherals)
