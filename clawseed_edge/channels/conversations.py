"""Conversations: sessions per channel and peer, and the one place their agents are built.

Assembly runs once, for the service (:func:`~clawseed_edge.config.assembly.assemble`). A
conversation (a phone's chat, later a Telegram chat) gets an Agent built here from those
assembled parts, never by assembling again: the provider, memory, session store, peripherals,
observer, the hook pipeline with the service's one SecurityPolicy (its approvals, its rate
limits and the device ledger behind them, shared by every conversation), the system prompt
(one text while the conversation's tools are the service's) and the after-turn memory upkeep
are the service agent's own. What a conversation has
of its own: its tool registry (a copy, so a client's remote tools reach only its own
conversation) and its history.

A client's own (remote) tools are trusted in its own conversation: the approvals broker
approves their calls without asking anyone (the client that runs its tool decides about it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clawseed_edge.agent import Agent
    from clawseed_edge.config.assembly import Runtime

    from .approvals import ApprovalBroker

__all__ = ["Conversation", "Conversations"]

log = logging.getLogger(__name__)


@dataclass(eq=False, slots=True)
class Conversation:
    """One session of one peer in one channel, and the agent that runs its turns.

    Attributes:
        channel: The channel's name (``gateway``).
        peer: Who is on the other side (a paired client's name, a chat id).
        session_id: The session whose history the turns extend.
        agent: Runs its turns; never close it (its parts are the service's).
        own_tools: Names of the peer's own tools (remote tools), trusted in this session.
    """

    channel: str
    peer: str
    session_id: str
    agent: Agent
    own_tools: set[str] = field(default_factory=set)

    def abort(self, reason: str) -> bool:
        """Abort the running turn, if any; returns whether one was running."""
        return self.agent.abort(self.session_id, reason)


class Conversations:
    """Every open conversation of every channel, each with its agent built from ``runtime``.

    Args:
        runtime: The service's assembled runtime (its agent's parts are shared).
        broker: The approvals broker, told which remote tools each session trusts.
    """

    def __init__(self, runtime: Runtime, broker: ApprovalBroker | None = None) -> None:
        self.runtime = runtime
        self.broker = broker
        self._open: dict[tuple[str, str], tuple[Conversation, object]] = {}

    def open(self, channel: str, peer: str, session_id: str) -> Conversation:
        """A conversation for ``session_id`` in ``channel`` (one that was open in the same
        channel is replaced: a phone that reconnected takes its session over)."""
        conversation = Conversation(channel, peer, session_id, self._build_agent())
        self.close(self.get(channel, session_id))
        untrust = None
        if self.broker is not None:
            untrust = self.broker.trust(session_id, conversation.own_tools)
        self._open[(channel, session_id)] = (conversation, untrust)
        return conversation

    def get(self, channel: str, session_id: str) -> Conversation | None:
        entry = self._open.get((channel, session_id))
        return entry[0] if entry is not None else None

    def close(self, conversation: Conversation | None) -> None:
        """Forget ``conversation`` (its turns are the caller's to abort first). Idempotent."""
        if conversation is None:
            return
        key = (conversation.channel, conversation.session_id)
        entry = self._open.get(key)
        if entry is None or entry[0] is not conversation:
            return
        del self._open[key]
        untrust = entry[1]
        if callable(untrust):
            untrust()

    def of_channel(self, channel: str) -> list[Conversation]:
        return [c for (name, _), (c, _) in self._open.items() if name == channel]

    def all(self) -> list[Conversation]:
        return [c for c, _ in self._open.values()]

    def abort_all(self, reason: str, channel: str | None = None) -> int:
        """Abort the running turns of every conversation (of ``channel``, if given); returns
        how many were running."""
        found = self.all() if channel is None else self.of_channel(channel)
        return sum(c.abort(reason) for c in found)

    def _build_agent(self) -> Agent:
        # Every part but the registry and the history is the service agent's own object.
        from clawseed_edge.agent import fork_agent

        return fork_agent(self.runtime.agent)
