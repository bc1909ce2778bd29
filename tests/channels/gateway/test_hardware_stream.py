"""``/sse?hardware=1``: live device states, sensor readings and board health; and
``GET /api/sessions/{id}``, a stored conversation for a client that resumes it."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from clawseed_edge.testing import ScriptedProvider

from .conftest import CONFIG, base_url, open_ws, pair_token, recv_until, running_service

SENSOR_CONFIG = (
    CONFIG.replace('[autonomy]\nlevel = "supervised"', '[autonomy]\nlevel = "full"')
    + """
[[sensors]]
name = "greenhouse"
driver = "bme280"
bus = 1
address = 0x76
"""
)


async def _events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    async for line in lines:
        if line.startswith("data: "):
            yield dict(json.loads(line[6:]))


async def _next(events: AsyncIterator[dict[str, Any]], kind: str, **match: Any) -> dict[str, Any]:
    async for event in events:
        if event["type"] == kind and all(event.get(k) == v for k, v in match.items()):
            return event
    raise AssertionError(f"the stream ended before a {kind!r} event")


def _device(frame: dict[str, Any], name: str) -> dict[str, Any]:
    return next(d for d in frame["devices"] if d["device"] == name)


async def test_a_hardware_listener_gets_a_snapshot_then_each_change(clawseed_home: Path) -> None:
    async with running_service(clawseed_home, ScriptedProvider(), SENSOR_CONFIG) as service:
        token = await pair_token(service)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=base_url(service), headers=headers) as http:
            async with http.stream("GET", "/sse?hardware=1") as stream:
                events = _events(stream.aiter_lines())
                first = await _next(events, "devices")
                boards = await _next(events, "boards")
                sensor = await _next(events, "sensor")
                switched = await http.post("/api/peripherals/porch_light", json={"on": True})
                after = await _next(events, "devices")
                stop = await http.post("/api/estop")
                safe = await _next(events, "devices")
    assert _device(first, "porch_light")["value"] == 0
    assert {b["name"]: b["healthy"] for b in boards["boards"]} == {"pi": True, "sensors": True}
    assert sensor["ok"] and sensor["sensor"] == "greenhouse"
    assert sensor["reading"]["units"]["temperature"] == "°C"
    assert sensor["reading"]["units"]["pressure"] == "hPa"
    assert isinstance(sensor["reading"]["values"]["temperature"], float)
    assert switched.status_code == 200 and stop.json()["ok"] is True
    assert _device(after, "porch_light")["value"] == 1
    assert _device(safe, "porch_light")["value"] == 0


async def test_the_hardware_is_read_only_while_someone_asked_for_it(clawseed_home: Path) -> None:
    async with running_service(clawseed_home, ScriptedProvider(), SENSOR_CONFIG) as service:
        assert service.hub is not None
        watch = service.hub.watch
        token = await pair_token(service)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=base_url(service), headers=headers) as http:
            async with http.stream("GET", "/sse") as plain:
                lines = plain.aiter_lines()
                assert (await anext(lines)).startswith(": connected")
                running_plain = watch.running
            async with http.stream("GET", "/sse?hardware=1") as live:
                await _next(_events(live.aiter_lines()), "devices")
                running_live = watch.running
        for _ in range(200):  # the server notices the closed stream a moment later
            if watch.listeners == 0 and not watch.running:
                break
            await asyncio.sleep(0.01)
        listeners_after, running_after = watch.listeners, watch.running
    assert running_plain is False, "a plain SSE listener must not make the gateway poll pins"
    assert running_live is True
    assert listeners_after == 0 and running_after is False


async def test_a_stored_session_is_returned_for_resuming(clawseed_home: Path) -> None:
    provider = ScriptedProvider(["The seed is planted."], streaming=True)
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with await open_ws(service, token, "session_id=garden-1") as ws:
            await recv_until(ws, "connected")
            await ws.send(json.dumps({"type": "message", "content": "plant the seed"}))
            await recv_until(ws, "done")
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=base_url(service), headers=headers) as http:
            stored = await http.get("/api/sessions/garden-1")
            unknown = await http.get("/api/sessions/never-used")
            invalid = await http.get("/api/sessions/" + "x" * 80)
            anonymous = await http.get("/api/sessions/garden-1", headers={"Authorization": ""})
    body = stored.json()
    assert body["session_id"] == "garden-1"
    user, assistant = body["messages"]
    assert user == {"role": "user", "content": "plant the seed", "time": user["time"]}
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+", user["time"])
    assert assistant == {"role": "assistant", "content": "The seed is planted."}
    assert unknown.json() == {"session_id": "never-used", "messages": []}
    assert invalid.status_code == 400 and invalid.json()["error"]["code"] == "session_id_invalid"
    assert anonymous.status_code == 401


async def test_sensor_readings_reach_the_stream_with_no_tool_call(clawseed_home: Path) -> None:
    from clawseed_edge.api import PolicyDecision, ToolExecuted
    from clawseed_edge.testing.observing import RecordingObserver

    observer = RecordingObserver()
    provider = ScriptedProvider()
    options = {"assemble": {"provider": provider, "observer": observer}}
    async with running_service(clawseed_home, provider, SENSOR_CONFIG, **options) as service:
        assert service.runtime is not None
        bank: Any = next(p for p in service.runtime.peripherals if p.name == "sensors")
        bank.sim.sensor("greenhouse").set(temperature=31.25)
        # Every tool counts its runs: the stream and the listing must run none.
        ran: list[str] = []
        registry = service.runtime.agent.registry
        for spec in registry.specs():
            tool: Any = registry.get(spec.name)
            tool.execute = _counting(tool.execute, spec.name, ran)
        token = await pair_token(service)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=base_url(service), headers=headers) as http:
            async with http.stream("GET", "/sse?hardware=1") as stream:
                sensor = await _next(_events(stream.aiter_lines()), "sensor")
                listing = await http.get("/api/peripherals")
    assert abs(sensor["reading"]["values"]["temperature"] - 31.25) < 0.1
    assert _device(listing.json(), "porch_light")["value"] == 0
    assert ran == [] and observer.of(ToolExecuted) == [] and observer.of(PolicyDecision) == [], (
        "the dashboard must not read hardware through model tools"
    )
    assert provider.requests == [], "and no model was asked"


def _counting(execute: Any, name: str, ran: list[str]) -> Any:
    async def counted(*args: Any, **kwargs: Any) -> Any:
        ran.append(name)
        return await execute(*args, **kwargs)

    return counted
