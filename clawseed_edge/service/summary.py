"""The service's one-line summary: the model, each peripheral, the gateway's URL."""

from __future__ import annotations

from typing import Any

__all__ = ["runtime_summary"]


def runtime_summary(runtime: Any, gateway_url: str | None = None) -> str:
    """``model demo/demo-rules; pi: sim with 5 devices; gateway URL`` (what ``status`` and
    Telegram's ``/status`` show; how to stop it is said only on the terminal that started it)."""
    p = runtime.provider
    parts = [f"model {p.name}/{p.model}"]
    for x in runtime.peripherals:
        # A peripheral that is not a pin board (a sensor bank) says what it holds itself.
        contents = getattr(x, "contents", None)
        if callable(contents):
            parts.append(f"{x.name}: {x.board_type} with {contents()}")
            continue
        n = len(getattr(getattr(x, "hardware", None), "devices", ()))
        back = getattr(x, "repl_recoveries", 0)  # a Nucleo found at the REPL and restarted
        again = f" (brought back from the REPL {back}x)" if back else ""
        parts.append(f"{x.name}: {x.board_type} with {n} device{'' if n == 1 else 's'}{again}")
    if gateway_url is not None:
        parts.append(f"gateway {gateway_url}")
    return "; ".join(parts)
