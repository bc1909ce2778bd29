"""Waiting for a child process with a bound, without leaving it running or unreaped."""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["communicate_within"]


async def communicate_within(proc: asyncio.subprocess.Process, timeout_s: float) -> bytes | None:
    """The child's stdout once it exits, or None when it took longer than ``timeout_s``.

    On a timeout, and on cancellation (which is re-raised), the child is killed and reaped
    first, so no process outlives the call.
    """
    try:
        async with asyncio.timeout(timeout_s):
            out, _ = await proc.communicate()
    except (TimeoutError, asyncio.CancelledError) as exc:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        return None
    return out or b""
