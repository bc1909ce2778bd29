"""``GET /api/sensors/{name}/history``: what a chart asks for (an hour, a day, a week of bounded
points with the unit), and the answers that tell "no such sensor" from "no history yet"."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from clawseed_edge.state import HistoryPoint
from clawseed_edge.testing import ScriptedProvider

from .conftest import base_url, pair_token, running_service

CONFIG = """
[provider]
name = "demo"
[gateway]
enabled = true
port = 0
[history]
flush_s = 60
[[sensors]]
name = "greenhouse"
driver = "ds18b20"
update_interval = "1h"
[[sensors]]
name = "shed"
driver = "dht22"
update_interval = "never"
"""


async def test_hour_day_and_week_of_bounded_points_and_the_two_kinds_of_missing(
    clawseed_home: Path,
) -> None:
    async with running_service(clawseed_home, ScriptedProvider([]), CONFIG) as service:
        assert service.recorder is not None and service.recorder.history is not None
        history = service.recorder.history
        now = time.time()
        # Six days of a value every 10 minutes (through the real store: raw, minutes, hours).
        for i in range(6 * 24 * 6):
            t = now - 6 * 86400 + i * 600
            history.record(HistoryPoint("greenhouse", "temperature", "°C", t, 10 + i % 7))
        await history.flush()
        token = await pair_token(service)
        async with httpx.AsyncClient(
            base_url=base_url(service), headers={"Authorization": f"Bearer {token}"}
        ) as http:
            answers = {}
            for window in ("1h", "24h", "7d"):
                r = await http.get(
                    "/api/sensors/greenhouse/history", params={"window": window, "points": 60}
                )
                assert r.status_code == 200, r.text
                (q,) = r.json()["quantities"]
                assert q["unit"] == "°C" and q["quantity"] == "temperature"
                assert 0 < len(q["points"]) <= 60
                assert all(r.json()["start"] <= t <= r.json()["end"] for t, _ in q["points"])
                answers[window] = (r.json()["end"] - r.json()["start"], q)
            assert answers["1h"][0] == 3600 and answers["24h"][0] == 86400
            assert answers["7d"][0] == 7 * 86400
            assert answers["1h"][1]["resolution"] == "1m"  # a point per minute: minute rows
            assert answers["7d"][1]["resolution"] == "1h"  # a point per 2.8 h: hour rows
            assert answers["7d"][1]["count"] == 6 * 24 * 6

            unknown = await http.get("/api/sensors/greenhous/history")
            assert unknown.status_code == 404
            assert unknown.json()["error"]["code"] == "sensor_unknown"
            assert "configured sensors: greenhouse, shed" in unknown.json()["error"]["message"]
            # A year-1 time is the client's mistake (400), not the server's (500).
            for params in ({"from": "0001-01-01T00:00"}, {"from": "1", "to": "nan"}):
                r = await http.get("/api/sensors/greenhouse/history", params=params)
                assert r.status_code == 400, r.text
                assert r.json()["error"]["code"] == "window_invalid"
            r = await http.get("/api/sensors/greenhouse/history", params={"from": str(now - 60)})
            assert r.status_code == 200 and r.json()["start"] == float(str(now - 60))
            empty = await http.get("/api/sensors/shed/history")
            assert empty.status_code == 404
            assert empty.json()["error"]["code"] == "history_empty"
            assert "update_interval" in empty.json()["error"]["message"]
