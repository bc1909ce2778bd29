"""Two wordings of one refusal: the model's, and a person's.

A refused or failed call is written for the model that made it, and some of its sentences are
instructions to that model ("Do not retry it unless the user asks."). A person who reads the
same result (in the CLI, the web app, Telegram, an MCP host) needs only what happened and what
to do. The model-only sentences are defined here, once; the places that write them use these
constants, and every person-facing surface passes a text through :func:`for_people`, which
takes them out. What the model reads (``ToolResult.as_text`` in the conversation) is untouched.
"""

from __future__ import annotations

__all__ = ["MODEL_ONLY_SENTENCES", "for_people"]

#: A refusal by a person: the model should not ask again on its own.
DO_NOT_RETRY = "Do not retry it unless the user asks."
#: Arguments that do not match a tool's schema.
FIX_OR_TELL = "Fix the arguments and call again, or tell the user what you cannot do."
#: A tool whose own schema is broken.
TOOL_BUG = "This is a bug in the tool: tell the user."

MODEL_ONLY_SENTENCES: tuple[str, ...] = (DO_NOT_RETRY, FIX_OR_TELL, TOOL_BUG)
"""Sentences written for the model only; :func:`for_people` removes them."""


def for_people(text: str) -> str:
    """``text`` without the model-only sentences (and the spaces they leave)."""
    for sentence in MODEL_ONLY_SENTENCES:
        if sentence in text:
            text = text.replace(" " + sentence, "").replace(sentence, "")
    return text.strip()
