"""The HTTP endpoints over a real socket."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import pin_level

from .conftest import CONFIG, base_url, open_ws, pair_token, recv, recv_until, running_service


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_the_webhook_answers_once_per_idempotency_key(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("Answer one.", "Answer two.")
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            key = {"X-Idempotency-Key": "delivery-7"}
            first = await http.post("/webhook", json={"message": "ping"}, headers=key)
            again = await http.post("/webhook", json={"message": "ping"}, headers=key)
            other = await http.post(
                "/webhook", json={"message": "ping"}, headers={"X-Idempotency-Key": "delivery-8"}
            )
    assert first.json()["response"] == "Answer one."
    assert again.json() == first.json()
    assert again.headers["X-Idempotent-Replay"] == "true"
    assert other.json()["response"] == "Answer two."
    assert len(provider.requests) == 2, "the repeated delivery ran no second turn"


async def test_metrics_parse_as_prometheus_text(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("fine")
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            await http.post("/webhook", json={"message": "how are you"})
            response = await http.get("/metrics")
    assert response.headers["content-type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    turns = {s.labels.get("outcome"): s.value for s in families["clawseed_turns"].samples}
    assert turns["done"] == 1
    assert families["clawseed_process_resident_memory_bytes"].samples[0].value > 1_000_000
    devices = {
        s.labels["device"]: s.value for s in families["clawseed_peripheral_device_value"].samples
    }
    assert devices["porch_light"] == 0
    assert "clawseed_memory_entries" in families
    assert families["clawseed_gateway_connections"].samples[0].value == 0


async def test_oversized_and_malformed_bodies_get_json_errors_and_the_server_keeps_serving(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            big = await http.post(
                "/webhook", content=b"x" * 5000, headers={"Content-Type": "application/json"}
            )

            async def chunks():  # type: ignore[no-untyped-def]
                for _ in range(10):
                    yield b"y" * 1000  # no Content-Length: counted while reading

            json_type = {"Content-Type": "application/json"}
            streamed = await http.post("/webhook", content=chunks(), headers=json_type)
            broken = await http.post("/webhook", content=b"{nope", headers=json_type)
            empty = await http.post("/webhook", json={"message": ""})
            missing = await http.get("/api/nothing-here")
            health = await http.get("/health")
    assert big.status_code == 413 and big.json()["error"]["code"] == "body_too_large"
    assert "4096" in big.json()["error"]["message"]
    assert streamed.status_code == 413
    assert broken.status_code == 400 and broken.json()["error"]["code"] == "json_invalid"
    assert empty.status_code == 400 and "message" in empty.json()["error"]["message"]
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert health.status_code == 200


async def test_estop_through_the_api_drives_outputs_to_their_safe_values(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    config = CONFIG.replace('level = "supervised"', 'level = "full"')
    async with running_service(clawseed_home, provider, config) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            switched = await http.post("/api/peripherals/porch_light", json={"on": True})
            on = pin_level(gpio, "porch_light")
            stop = await http.post("/api/estop")
            off = pin_level(gpio, "porch_light")
            listed = await http.get("/api/peripherals")
    assert switched.status_code == 200, switched.text
    assert on == 1
    assert stop.json() == {"ok": True, "failures": []}
    assert off == 0
    devices = {d["device"]: d for d in listed.json()["devices"]}
    assert devices["porch_light"]["value"] == 0
    assert listed.json()["peripherals"][0]["healthy"] is True


async def test_a_device_action_goes_through_the_security_policy(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    config = CONFIG.replace('level = "supervised"', 'level = "read_only"')
    async with running_service(clawseed_home, provider, config) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            refused = await http.post("/api/peripherals/porch_light", json={"on": True})
            wrong = await http.post("/api/peripherals/porch_light", json={"on": "yes"})
            level = pin_level(gpio, "porch_light")
    assert refused.status_code == 403
    assert "read_only" in refused.json()["error"]["message"]
    assert wrong.status_code == 400
    assert level == 0


@pytest.mark.local_intents  # no environment override: the file's own tables only
async def test_config_is_redacted_on_read_and_validated_on_write(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    config = CONFIG.replace('name = "demo"', 'name = "demo"\napi_key = "sk-very-secret"')
    async with running_service(clawseed_home, provider, config) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            read = await http.get("/api/config")
            invalid = await http.put("/api/config", json={"toml": "[autonomy]\nlevel = 'yolo'"})
            redacted = await http.put("/api/config", json={"toml": read.json()["toml"]})
            new_text = CONFIG.replace('level = "supervised"', 'level = "full"')
            saved = await http.put("/api/config", json={"toml": new_text})
    assert "sk-very-secret" not in read.text
    assert read.json()["config"]["provider"]["api_key"] == "***"
    assert invalid.status_code == 400 and "autonomy.level" in invalid.json()["error"]["message"]
    assert redacted.json()["error"]["code"] == "config_redacted_value"
    assert saved.json()["restart_required"] == ["autonomy", "provider"]
    assert (clawseed_home / "config.toml").read_text() == new_text
    assert "sk-very-secret" in (clawseed_home / "config.toml.bak").read_text()


async def test_personality_files_are_whitelisted(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("Ahoy.")
    async with running_service(clawseed_home, provider) as service:
        assert service.runtime is not None
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            put = await http.put(
                "/api/personality/SOUL.md", json={"content": "You speak like a pirate."}
            )
            got = await http.get("/api/personality/SOUL.md")
            bad = await http.put("/api/personality/config.toml", json={"content": "x"})
            escape = await http.get("/api/personality/..%2Fconfig.toml")
            await http.post("/webhook", json={"message": "hi"})
    assert put.status_code == 200 and got.json()["content"] == "You speak like a pirate."
    assert bad.status_code == 404 and "SOUL.md" in bad.json()["error"]["message"]
    assert escape.status_code == 404
    assert "pirate" in provider.requests[0].messages[0].content, "applies from the next turn"


async def test_requests_over_the_rate_limit_are_refused_with_retry_after(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    config = CONFIG.replace("port = 0", "port = 0\nrequests_per_minute = 3")
    async with running_service(clawseed_home, provider, config) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            codes = [(await http.get("/api/sessions")).status_code for _ in range(4)]
            last = await http.get("/api/sessions")
    assert codes == [200, 200, 200, 429]
    assert last.json()["error"]["code"] == "rate_limited" and "Retry-After" in last.headers


async def test_ready_shows_details_only_with_a_token(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service)) as http:
            anonymous = await http.get("/ready")
            detailed = await http.get("/ready", headers=_auth(token))
    assert anonymous.status_code == 200 and anonymous.json()["ready"] is True
    assert anonymous.json()["checks"]["memory"] == {"ok": True}
    assert "scripted" in detailed.json()["checks"]["provider"]["detail"]
    assert detailed.json()["checks"]["peripheral:pi"]["ok"] is True


async def test_websocket_connects_messages_and_requests_are_counted_apart(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("one", "two", "three", "four")
    config = CONFIG.replace("port = 0", "port = 0\nrequests_per_minute = 3")
    async with running_service(clawseed_home, provider, config) as service:
        token = await pair_token(service)
        for _ in range(2):  # a phone that reconnects
            async with await open_ws(service, token) as ws:
                await recv_until(ws, "connected")
        async with await open_ws(service, token) as ws:
            await recv_until(ws, "connected")
            answers = []
            for i in range(3):
                await ws.send(json.dumps({"type": "message", "content": f"turn {i}"}))
                answers.append((await recv_until(ws, "done"))[-1]["full_response"])
            await ws.send(json.dumps({"type": "message", "content": "one too many"}))
            refused_message = await recv(ws)
        async with await open_ws(service, token) as ws:
            refused_connect = await recv(ws)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            codes = [(await http.get("/api/sessions")).status_code for _ in range(3)]
    assert answers == ["one", "two", "three"]
    assert refused_message["code"] == "rate_limited", "the 4th message in a minute"
    assert refused_connect["code"] == "rate_limited", "the 4th connect in a minute"
    assert codes == [200, 200, 200], "connects and messages did not use up the requests"
