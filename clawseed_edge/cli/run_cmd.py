"""``clawseed-edge run``: the long-running service that systemd starts.

It assembles the agent from the config, connects the hardware, turns input events into agent
turns through the ``on_press`` / ``on_release`` rules of ``[[devices]]`` (rate-limited per
device), and hosts the gateway when ``[gateway] enabled = true``. SIGTERM (``systemctl stop``),
SIGHUP and Ctrl-C apply every output's safe value first, then shut down in order: stop
accepting, finish or abort running turns, close sessions, disconnect, close memory. SIGUSR1
applies the safe values and keeps running (``clawseed-edge estop --pid PID``).

Under systemd (``Type=notify``) it sends READY=1 once the peripherals are connected and the
gateway listens, STATUS= lines, STOPPING=1, and WATCHDOG=1 pings from the event loop when the
unit sets ``WatchdogSec=``; log lines carry journald's ``<N>`` priority prefix. ``estop``,
``status`` and ``reload`` reach it over ``$CLAWSEED_HOME/control.sock``. See docs/service.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import (
    add_runtime_options,
    described,
    load_from_args,
    note_default_provider,
    run_async,
)

__all__ = ["register", "run_service"]


def register(sub: Any) -> None:
    run = sub.add_parser(
        "run",
        help="run the service: hardware events become agent turns (what systemd starts)",
        description=described(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_runtime_options(run)
    run.set_defaults(func=lambda args: run_service(args))


def run_service(args: argparse.Namespace, *, gateway: bool | None = None) -> int:
    """Run the service until a stop signal; ``gateway`` forces the gateway on or off."""
    if args.verbose == 0:
        args.verbose = 1  # a service logs its turns at INFO

    async def main() -> int:
        import faulthandler

        from clawseed_edge.service import Service, ServiceOptions
        from clawseed_edge.service.journal import use_journal_format
        from clawseed_edge.service.serve import serve

        use_journal_format()
        # systemd's watchdog kills a hung service with SIGABRT: leave where it hung in the log.
        faulthandler.enable()

        options = ServiceOptions(
            sim=bool(getattr(args, "sim", False)),
            gateway=gateway,
            host=getattr(args, "host", None),
            port=getattr(args, "port", None),
        )
        loaded = load_from_args(args)
        if not getattr(args, "provider", None):
            note_default_provider(loaded)
        service = Service(loaded, options)
        # Handlers first: a SIGTERM that arrives while starting still leads to the safe state.
        remove = service.install_signal_handlers()
        try:
            await serve(service)  # closes it; a stop while starting ends the start-up at once
        finally:
            remove()
        print("clawseed-edge stopped; outputs are in their safe state", file=sys.stderr)
        return 0

    return run_async(args, main)
