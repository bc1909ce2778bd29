"""SensorRecorder: the history is flushed in the wake-ups of the sampler's passes, with no
timer of its own, and written out whole when the recorder stops."""

from __future__ import annotations

import asyncio
from pathlib import Path

from clawseed_edge.config.schema import HistorySettings
from clawseed_edge.service.recorder import SensorRecorder
from clawseed_edge.testing.sensors import sim_sensor_bank

ONE = '[[sensors]]\nname = "greenhouse"\ndriver = "ds18b20"\nupdate_interval = "1s"\n'


async def test_passes_flush_the_history_without_a_timer_of_its_own(tmp_path: Path) -> None:
    bank = sim_sensor_bank(ONE)
    async with bank:
        recorder = SensorRecorder(bank, tmp_path, HistorySettings(flush_s=1))
        await recorder.start()
        assert recorder.history is not None
        names = {t.get_name() for t in asyncio.all_tasks()}
        assert "sensor-sampler" in names and not {"history-upkeep", "history-flush"} & names
        stored = 0
        for _ in range(300):  # a bound on attempts, not a timing assertion
            s = await recorder.history.summary("greenhouse", "temperature", 0, 4e9, points=1)
            stored = s.count if s is not None else 0
            if stored >= 2:
                break
            await asyncio.sleep(0.05)
        assert stored >= 2  # written by the recorder: this test never flushed
        await recorder.aclose()
        assert recorder.history.pending == 0
