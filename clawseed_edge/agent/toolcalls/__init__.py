"""How tools reach the model and how its calls come back: dispatchers and the call parser.

Layout (one concern per module)::

    dispatch.py       the ToolDispatcher protocol, the native dispatcher, select_dispatcher
    parsed.py         ParsedResponse: one model response read once (text, calls, history message)
    prompt_guided.py  XmlToolDispatcher: tools described in the prompt, calls parsed from text
    parser.py         parse_tool_calls, the public face of the parser
    scanner.py        the left-to-right scan for call wrappers
    token_formats.py  the special-token formats (Kimi K2, Granite, Phi-4-mini, gpt-oss harmony)
    elements.py       readers of block bodies (one element loop for every XML-like shape)
    calls.py          ParsedCall, UnreadableCall and the JSON decoding
    finder.py         the cached forward search that keeps a scan linear
    text.py           <think> splitting, joining cut spans

The old flat paths (``clawseed_edge.agent.dispatch``, ``.xml_dispatch``, ``.parser``) still
import. The parser and the prompt-guided dispatcher are imported on first use: a process whose
model calls tools natively never loads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawseed_edge.api.lazy import lazy_face as _lazy_face

from .dispatch import (
    NativeToolDispatcher,
    ToolDispatcher,
    ensure_call_ids,
    read_response,
    select_dispatcher,
)
from .parsed import ParsedResponse

if TYPE_CHECKING:
    from .calls import ParsedCall
    from .parser import (
        ToolCallScan,
        parse_tool_calls,
        read_tool_calls,
        scan_tool_calls,
        split_thinking,
    )
    from .prompt_guided import XmlToolDispatcher, neutralise_markup

__all__ = [
    "NativeToolDispatcher",
    "ParsedCall",
    "ParsedResponse",
    "ToolCallScan",
    "ToolDispatcher",
    "XmlToolDispatcher",
    "ensure_call_ids",
    "neutralise_markup",
    "parse_tool_calls",
    "read_response",
    "read_tool_calls",
    "scan_tool_calls",
    "select_dispatcher",
    "split_thinking",
]

_LAZY = {
    "ParsedCall": ".calls",
    "ToolCallScan": ".parser",
    "XmlToolDispatcher": ".prompt_guided",
    "neutralise_markup": ".prompt_guided",
    "parse_tool_calls": ".parser",
    "read_tool_calls": ".parser",
    "scan_tool_calls": ".parser",
    "split_thinking": ".parser",
}


__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)
