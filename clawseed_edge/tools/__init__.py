"""Built-in tools (memory, files, shell, system info, HTTP). Depends on api only.

The assembler registers them from the config (``[tools]``; every built-in is listed in
:func:`clawseed_edge.config.all_tools`); an application may build its own::

    from clawseed_edge.tools import DestinationPolicy, WebFetchTool, file_tools, memory_tools

    tools = [
        *memory_tools(memory),
        *file_tools(workspace_dir),
        WebFetchTool(DestinationPolicy.of(["example.com"])),
    ]

Tool plugins: a factory registered in the entry-point group ``clawseed_edge.tools`` builds
tools from a :class:`ToolSetup` (see :mod:`.factories` and docs/plugins.md).

httpx is imported only when an HTTP tool sends its first request, and each name below only when
it is first used: a process without the HTTP or shell tools never loads them.
"""

import typing

from clawseed_edge.api.lazy import lazy_face as _lazy_face

# Loaded now: the function ``memory_tools`` shares its module's name, and a lazy name would lose
# to the submodule once anything imported it (the memory tools are always on anyway).
from .memory_tools import MemoryForgetTool, MemoryRecallTool, MemoryStoreTool, memory_tools

if typing.TYPE_CHECKING:
    from .destinations import DestinationPolicy, DestinationRefused
    from .factories import ToolFactoryRegistry, ToolSetup
    from .files import FileListTool, FileReadTool, FileWriteTool, file_tools
    from .http_tools import HttpRequestTool, WebFetchTool
    from .shell import ShellTool
    from .system_info import SystemInfoTool

__all__ = [
    "DestinationPolicy",
    "DestinationRefused",
    "FileListTool",
    "FileReadTool",
    "FileWriteTool",
    "HttpRequestTool",
    "MemoryForgetTool",
    "MemoryRecallTool",
    "MemoryStoreTool",
    "ShellTool",
    "SystemInfoTool",
    "ToolFactoryRegistry",
    "ToolSetup",
    "WebFetchTool",
    "file_tools",
    "memory_tools",
]

_LAZY = {
    "DestinationPolicy": ".destinations",
    "DestinationRefused": ".destinations",
    "ToolFactoryRegistry": ".factories",
    "ToolSetup": ".factories",
    "FileListTool": ".files",
    "FileReadTool": ".files",
    "FileWriteTool": ".files",
    "file_tools": ".files",
    "HttpRequestTool": ".http_tools",
    "WebFetchTool": ".http_tools",
    "ShellTool": ".shell",
    "SystemInfoTool": ".system_info",
}


__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)
