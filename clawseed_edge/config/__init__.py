"""Configuration: the TOML schema, loading with errors that name file and key, assembly.

Start here::

    from clawseed_edge.config import assemble, load_config

    runtime = await assemble(load_config("config.toml"), sim=True)
    async with runtime:
        print(await runtime.agent.run("turn on the red led"))

or, for just the agent, ``agent = await assemble_agent("config.toml", sim=True)``.

Assembly lives here, above the agent layer: the engine knows nothing of files. Importing this
package is cheap: each name is imported on first use, so ``clawseed_edge.config.paths`` does not
pull in the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .assembly import Runtime, assemble, assemble_agent, build_provider
    from .file import EMBEDDED_DEFAULT, LoadedConfig, load_config
    from .paths import clawseed_home, default_config_path
    from .schema import Config
    from .tool_table import BuiltinTool, all_tools, builtin_tools

__all__ = [
    "EMBEDDED_DEFAULT",
    "BuiltinTool",
    "Config",
    "LoadedConfig",
    "Runtime",
    "all_tools",
    "assemble",
    "assemble_agent",
    "build_provider",
    "builtin_tools",
    "clawseed_home",
    "default_config_path",
    "load_config",
]

_LAZY = {
    "EMBEDDED_DEFAULT": ".file",
    "BuiltinTool": ".tool_table",
    "all_tools": ".tool_table",
    "builtin_tools": ".tool_table",
    "Config": ".schema",
    "LoadedConfig": ".file",
    "Runtime": ".assembly",
    "assemble": ".assembly",
    "assemble_agent": ".assembly",
    "build_provider": ".assembly",
    "clawseed_home": ".paths",
    "default_config_path": ".paths",
    "load_config": ".file",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
