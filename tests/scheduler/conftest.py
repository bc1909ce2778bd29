"""A JobStore on a fresh state.db and a runner that records, blocks or fails on demand."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clawseed_edge.scheduler import Job, JobFailed, JobStore
from clawseed_edge.state import StateDB

#: 2026-12-01 00:00 UTC.
T0 = 1_796_083_200.0


class RecordingRunner:
    """Runs jobs instantly, or waits on ``gate`` while it is closed, or raises ``fail``."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.started = asyncio.Event()
        self.fail: str | None = None

    async def run(self, job: Job) -> str:
        self.ran.append(job.name)
        self.started.set()
        await self.gate.wait()
        if self.fail is not None:
            raise JobFailed(self.fail)
        return f"{job.name} done"


@pytest.fixture
async def state_path(tmp_path: Path) -> Path:
    return tmp_path / "state.db"


@pytest.fixture
async def store(state_path: Path) -> AsyncIterator[JobStore]:
    async with await StateDB.open(state_path) as db:
        yield JobStore(db)


@pytest.fixture
def runner() -> RecordingRunner:
    return RecordingRunner()
