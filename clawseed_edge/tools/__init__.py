"""Built-in tools (memory, files, shell). Depends on api only.

The assembler registers them from the config (``[tools]``); an application may build its own::

    from clawseed_edge.tools import file_tools, memory_tools

    tools = [*memory_tools(memory), *file_tools(workspace_dir)]
"""

from .files import FileListTool, FileReadTool, FileWriteTool, file_tools
from .memory_tools import MemoryForgetTool, MemoryRecallTool, MemoryStoreTool, memory_tools
from .shell import ShellTool

__all__ = [
    "FileListTool",
    "FileReadTool",
    "FileWriteTool",
    "MemoryForgetTool",
    "MemoryRecallTool",
    "MemoryStoreTool",
    "ShellTool",
    "file_tools",
    "memory_tools",
]
