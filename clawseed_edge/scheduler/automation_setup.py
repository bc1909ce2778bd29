"""Building the service's automations: the store, ``[[automations]]`` synced in, the tools on
the agent, the state feeds subscribed; and the tools alone over state.db for ``agent``/``chat``
(:func:`register_automation_book`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import DeviceState, StateFeed

from .automation_spec import known_names, validate_automations
from .automation_store import AutomationStore
from .automation_tools import AutomationBook, automation_tools
from .automations import Automations

if TYPE_CHECKING:
    from clawseed_edge.config.assembly import Runtime
    from clawseed_edge.state import StateDB

__all__ = ["automations_for", "register_automation_book"]

log = logging.getLogger("clawseed_edge.scheduler")


async def automations_for(
    runtime: Runtime,
    state: StateDB,
    *,
    readings: StateFeed | None = None,
    publish: Callable[[dict[str, Any]], object] | None = None,
    clock: Callable[[], float] = time.time,
) -> tuple[Automations, list[Callable[[], None]]]:
    """The runner with its rules loaded (not started) and the unsubscribers of its feeds.

    ``readings`` is the sampler's feed (filtered readings); every peripheral's own feed gives
    the wired devices' states (a button, a PIR, a door contact).

    Raises:
        ConfigInvalid: An ``[[automations]]`` table does not check (naming the key and file).
    """
    loaded = runtime.loaded
    known = known_names(runtime.peripherals)
    automations = Automations(
        runtime.agent, store=AutomationStore(state), clock=clock, publish=publish, known=known
    )
    # Checked in full before anything is stored: a typo stops the start, naming the key.
    declared = validate_automations(
        loaded.config.automations,
        loaded.source or "config.toml",
        known=known,
        check_tool=automations.check_tool(),
    )
    assert automations.store is not None
    removed = await automations.store.sync_declared([c for c, _ in declared], clock())
    if removed:
        log.info("automations no longer declared in the config were removed: %s", removed)
    await automations.load()
    unsubscribe = []
    if readings is not None:
        unsubscribe.append(readings.subscribe(automations.observe))
    for peripheral in runtime.peripherals:
        feed = getattr(peripheral, "states", None)
        if isinstance(feed, StateFeed):
            for update in feed.devices():
                automations.observe(update)
            unsubscribe.append(feed.subscribe(_devices_only(automations)))
    supervised = loaded.config.autonomy.level == "supervised"
    runtime.agent.registry.register_many(
        automation_tools(automations, runtime.agent, supervised=supervised)
    )
    return automations, unsubscribe


def _devices_only(automations: Automations) -> Callable[[Any], None]:
    # A peripheral's own feed carries raw readings too; rules see the sampler's filtered ones.
    def observe(update: Any) -> None:
        if isinstance(update, DeviceState):
            automations.observe(update)

    return observe


def register_automation_book(
    runtime: Runtime, state: StateDB, *, notify: Callable[[], Awaitable[bool]]
) -> AutomationBook:
    """The automation tools for a process that runs no rules (``agent``, ``chat``): they write
    to state.db as ``automations add`` does and ``notify`` the running service."""
    book = AutomationBook(
        AutomationStore(state), notify=notify, known=known_names(runtime.peripherals)
    )
    supervised = runtime.loaded.config.autonomy.level == "supervised"
    runtime.agent.registry.register_many(
        automation_tools(book, runtime.agent, supervised=supervised)
    )
    return book
