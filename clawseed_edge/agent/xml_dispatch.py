"""The prompt-guided dispatcher, at its old path: see
:mod:`clawseed_edge.agent.toolcalls.prompt_guided`."""

from .toolcalls.prompt_guided import XmlToolDispatcher, neutralise_markup

__all__ = ["XmlToolDispatcher", "neutralise_markup"]
