"""Input events become agent turns: the ``on_press`` / ``on_release`` rules of ``[[devices]]``."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import ErrorEvent, ToolContext

if TYPE_CHECKING:
    from clawseed_edge.peripherals.sensors.bank import SensorBank

__all__ = ["EVENT_SESSION", "consume_input_events", "find_sensor_bank"]

log = logging.getLogger("clawseed_edge.run")

EVENT_SESSION = "events"

_BANK_MODULE = "clawseed_edge.peripherals.sensors.bank"


def find_sensor_bank(peripherals: Sequence[Any]) -> SensorBank | None:
    """The configured sensor bank among ``peripherals`` (None: no ``[[sensors]]``).

    A process that built no bank never imported its module, and does not import it here.
    """
    bank_module = sys.modules.get(_BANK_MODULE)
    if bank_module is None:
        return None
    for p in peripherals:
        if isinstance(p, bank_module.SensorBank):
            return p  # type: ignore[no-any-return]
    return None


async def consume_input_events(agent: Any, peripheral: Any) -> None:
    """Feed the rule messages of one peripheral's input events to ``agent``, one at a time.

    Returns at once when the peripheral has no rules. Cancel-safe: a cancelled consumer aborts
    its running turn and closes its event stream.
    """
    from clawseed_edge.peripherals import InputRules

    rules = InputRules(peripheral.hardware.devices)
    if not rules:
        return
    context = ToolContext(session_id=EVENT_SESSION, channel="event")
    async with peripheral.events() as events:
        async for message in rules.messages(events):
            log.info("event from %s: %s", message.device, message.text)
            turn = agent.turn(message.text, session_id=EVENT_SESSION, context=context)
            async with contextlib.aclosing(turn) as stream:
                async for event in stream:
                    if isinstance(event, ErrorEvent):
                        log.warning("the turn for %s failed: %s", message.device, event.message)
