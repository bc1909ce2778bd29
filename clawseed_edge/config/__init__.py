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

from typing import TYPE_CHECKING

from clawseed_edge.api.lazy import lazy_face as _lazy_face

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


__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)
