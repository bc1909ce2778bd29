"""``clawseed-edge run``: the long-running service that systemd starts.

It assembles the agent from the config, connects the hardware, and turns input events into
agent turns through the ``on_press`` / ``on_release`` rules of ``[[devices]]`` (rate-limited
per device). SIGTERM (``systemctl stop``), SIGHUP and Ctrl-C apply every output's safe value
first, then shut down in order: stop taking events, abort running turns, disconnect, close memory.
SIGUSR1 applies the safe values and keeps running (``clawseed-edge estop --pid PID``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from typing import TYPE_CHECKING, Any

from .common import add_runtime_options, open_runtime, run_async
from .render import counted

if TYPE_CHECKING:
    from clawseed_edge.config.assemble import Runtime

__all__ = ["register"]

log = logging.getLogger("clawseed_edge.run")

EVENT_SESSION = "events"


def register(sub: Any) -> None:
    run = sub.add_parser(
        "run",
        help="run the service: hardware events become agent turns (what systemd starts)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_runtime_options(run)
    run.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if args.verbose == 0:
        args.verbose = 1  # a service logs its turns at INFO

    async def main() -> int:
        from clawseed_edge.agent.approval import StaticApprover
        from clawseed_edge.agent.observer import LoggingObserver
        from clawseed_edge.peripherals.safety import install_signal_handlers

        # Nobody sits at a terminal: calls that need approval are refused (the gateway will
        # route them to the phone).
        runtime = await open_runtime(
            args,
            approver=StaticApprover(False, "no one is there to approve it (running as a service)"),
            observer=LoggingObserver(),
        )
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        remove = install_signal_handlers(
            loop,
            runtime.peripherals,
            stop=stop.set,
            stop_signals=(signal.SIGTERM, signal.SIGINT, signal.SIGHUP),
        )
        consumers = [
            asyncio.create_task(_consume(runtime, p), name=f"events-{p.name}")
            for p in runtime.peripherals
            if getattr(p, "events", None) is not None
        ]
        try:
            print(f"clawseed-edge running: {_summary(runtime)}", file=sys.stderr, flush=True)
            await stop.wait()
            log.info("stopping")
        finally:
            remove()
            for task in consumers:
                task.cancel()
            await asyncio.gather(*consumers, return_exceptions=True)
            await runtime.aclose()
        print("clawseed-edge stopped; outputs are in their safe state", file=sys.stderr)
        return 0

    return run_async(args, main)


async def _consume(runtime: Runtime, peripheral: Any) -> None:
    """Feed the rule messages of one peripheral's input events to the agent, one at a time."""
    from clawseed_edge.api import ErrorEvent, ToolContext
    from clawseed_edge.peripherals.gpio import InputRules

    rules = InputRules(peripheral.hardware.devices)
    if not rules:
        return
    context = ToolContext(session_id=EVENT_SESSION, channel="event")
    async with peripheral.events() as events:
        async for message in rules.messages(events):
            log.info("event from %s: %s", message.device, message.text)
            async for event in runtime.agent.turn(
                message.text, session_id=EVENT_SESSION, context=context
            ):
                if isinstance(event, ErrorEvent):
                    log.warning("the turn for %s failed: %s", message.device, event.message)


def _summary(runtime: Runtime) -> str:
    p = runtime.provider
    parts = [f"model {p.name}/{p.model}"]
    for x in runtime.peripherals:
        devices = getattr(getattr(x, "hardware", None), "devices", ())
        parts.append(f"{x.name}: {x.board_type} with {counted(len(devices), 'device')}")
    parts.append("SIGTERM or Ctrl-C stops")
    return "; ".join(parts)
