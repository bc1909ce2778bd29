"""``/metrics``: the agent's MetricsObserver text plus the gateway's own gauges.

Turns, tool calls by outcome and provider latency come from
:meth:`~clawseed_edge.agent.MetricsObserver.prometheus_text`; this adds connections, memory
entries, peripheral output state and the process's resident memory.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .hub import GatewayHub

__all__ = ["gateway_metrics_text", "rss_bytes"]

log = logging.getLogger(__name__)


def rss_bytes() -> int:
    """This process's resident set size in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    import os

    return pages * os.sysconf("SC_PAGE_SIZE")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _gauge(out: list[str], name: str, help_text: str, samples: list[tuple[str, float]]) -> None:
    full = f"clawseed_{name}"
    out.append(f"# HELP {full} {help_text}")
    out.append(f"# TYPE {full} gauge")
    out.extend(f"{full}{labels} {value:g}" for labels, value in samples)


async def gateway_metrics_text(hub: GatewayHub) -> str:
    """Everything ``/metrics`` shows, in Prometheus text format 0.0.4.

    Safe to cancel (reads only).
    """
    head = hub.metrics.prometheus_text() if hub.metrics is not None else ""
    out: list[str] = []
    _gauge(
        out,
        "gateway_connections",
        "Connected WebSocket clients.",
        [("", float(len(hub.connections)))],
    )
    _gauge(
        out,
        "gateway_remote_tools",
        "Remote tools registered by connected clients.",
        [("", float(sum(len(c.remote_names) for c in hub.connections.values())))],
    )
    _gauge(
        out,
        "gateway_pending_approvals",
        "Approval requests waiting for an answer.",
        [("", float(len(hub.broker.pending())))],
    )
    try:
        async with asyncio.timeout(2.0):
            entries = await hub.runtime.memory.count(namespace=None)
        _gauge(out, "memory_entries", "Entries in memory.", [("", float(entries))])
    except Exception:
        log.debug("memory count failed for /metrics", exc_info=True)
    states: list[tuple[str, float]] = []
    for p in hub.peripherals:
        pin_states = getattr(p, "pin_states", None)
        if pin_states is None:
            continue
        try:
            for pin, state in pin_states().items():
                value = state.get("value")
                if isinstance(value, int | float):
                    labels = (
                        f'{{peripheral="{_escape(p.name)}",device="'
                        f'{_escape(str(state.get("device")))}",pin="{_escape(pin)}"}}'
                    )
                    states.append((labels, float(value)))
        except Exception:
            log.debug("pin states failed for /metrics", exc_info=True)
    _gauge(out, "peripheral_device_value", "Current value of each wired device (0..1).", states)
    _gauge(
        out,
        "estop_latched",
        "1 while the emergency stop is latched (until a person resets it), else 0.",
        [("", 1.0 if hub.estop.latched else 0.0)],
    )
    _gauge(
        out,
        "process_resident_memory_bytes",
        "Resident memory of the service process.",
        [("", float(rss_bytes()))],
    )
    return head + "\n".join(out) + "\n"
