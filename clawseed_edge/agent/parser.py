"""The tool-call parser, at its old path: see :mod:`clawseed_edge.agent.toolcalls.parser`."""

from .toolcalls.parser import (
    MAX_INPUT_CHARS,
    TOOL_NAME_RE,
    ParsedCall,
    parse_tool_calls,
    read_tool_calls,
    split_thinking,
)

__all__ = [
    "MAX_INPUT_CHARS",
    "TOOL_NAME_RE",
    "ParsedCall",
    "parse_tool_calls",
    "read_tool_calls",
    "split_thinking",
]
