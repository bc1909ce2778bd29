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

httpx is imported only when an HTTP tool sends its first request.
"""

from .destinations import DestinationPolicy, DestinationRefused
from .factories import ToolFactoryRegistry, ToolSetup
from .files import FileListTool, FileReadTool, FileWriteTool, file_tools
from .http_tools import HttpRequestTool, WebFetchTool
from .memory_tools import MemoryForgetTool, MemoryRecallTool, MemoryStoreTool, memory_tools
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
