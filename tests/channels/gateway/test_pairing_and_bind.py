"""Pairing over a real socket (good code, bad code, lockout) and the bind refusal."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from clawseed_edge.channels.gateway import GatewayBindRefused
from clawseed_edge.channels.gateway.pairing import MAX_FAILURES
from clawseed_edge.config.file import load_config
from clawseed_edge.service import Service, ServiceOptions
from clawseed_edge.testing import ScriptedProvider

from .conftest import CONFIG, base_url, running_service


async def test_a_good_code_pairs_once_and_the_token_opens_the_api(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    async with running_service(clawseed_home, provider) as service:
        assert service.hub is not None
        code = service.hub.pairing.new_code()
        async with httpx.AsyncClient(base_url=base_url(service)) as http:
            assert (await http.get("/api/tools")).status_code == 401
            first = await http.post("/pair", headers={"X-Pairing-Code": code})
            again = await http.post("/pair", headers={"X-Pairing-Code": code})
            token = first.json()["token"]
            tools = await http.get("/api/tools", headers={"Authorization": f"Bearer {token}"})
        assert first.status_code == 200
        assert again.status_code == 409, "a code works once"
        assert again.json()["error"]["code"] == "pairing_no_code"
        assert tools.status_code == 200
        assert "gpio_switch" in {t["name"] for t in tools.json()["tools"]}
        # Stored hashed: the token itself is nowhere in state.db.
        assert token.encode() not in (clawseed_home / "state.db").read_bytes()


async def test_wrong_codes_lock_the_client_out_even_for_the_right_code(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    async with running_service(clawseed_home, provider) as service:
        assert service.hub is not None
        code = service.hub.pairing.new_code()
        wrong = "000000" if code != "000000" else "111111"
        async with httpx.AsyncClient(base_url=base_url(service)) as http:
            answers = [
                await http.post("/pair", headers={"X-Pairing-Code": wrong})
                for _ in range(MAX_FAILURES)
            ]
            locked = await http.post("/pair", headers={"X-Pairing-Code": code})
            health = await http.get("/health")
        assert [a.status_code for a in answers] == [403] * MAX_FAILURES
        assert "tries left" in answers[0].json()["error"]["message"]
        assert locked.status_code == 429
        assert locked.json()["error"]["code"] == "pairing_locked"
        assert int(locked.headers["Retry-After"]) > 0
        assert health.status_code == 200, "the server keeps serving"


def test_lockout_ends_after_five_minutes() -> None:
    import asyncio

    from clawseed_edge.channels.gateway.errors import ClientError
    from clawseed_edge.channels.gateway.pairing import LOCKOUT_S, PairingGate

    now = [1000.0]

    class Tokens:
        async def issue(self, name: str):  # type: ignore[no-untyped-def]
            from clawseed_edge.state import IssuedToken, TokenInfo

            return IssuedToken("cst_x", TokenInfo("id1", name, 0.0))

    gate = PairingGate(Tokens(), clock=lambda: now[0])  # type: ignore[arg-type]
    code = gate.new_code()

    async def attempt(value: str) -> str:
        try:
            await gate.pair("10.0.0.9", value, "phone")
        except ClientError as exc:
            return exc.code
        return "paired"

    async def scenario() -> list[str]:
        out = [await attempt("x") for _ in range(MAX_FAILURES)]
        out.append(await attempt(code))
        now[0] += LOCKOUT_S
        out.append(await attempt(code))
        return out

    results = asyncio.run(scenario())
    assert results[-2] == "pairing_locked"
    assert results[-1] == "paired"


async def test_a_public_address_is_refused_without_allow_public_bind(
    clawseed_home: Path,
) -> None:
    path = clawseed_home / "config.toml"
    path.write_text(CONFIG.replace("port = 0", 'port = 0\nhost = "0.0.0.0"'), encoding="utf-8")
    service = Service(
        load_config(path),
        ServiceOptions(sim=True, assemble={"provider": ScriptedProvider()}, say=lambda _: None),
    )
    with pytest.raises(GatewayBindRefused, match="allow_public_bind = true"):
        await service.start()
    assert service.runtime is None, "refused before any hardware was opened"


async def test_a_public_address_is_served_with_allow_public_bind(clawseed_home: Path) -> None:
    config = CONFIG.replace("port = 0", 'port = 0\nhost = "0.0.0.0"\nallow_public_bind = true')
    async with running_service(clawseed_home, ScriptedProvider(), config) as service:
        assert service.server is not None
        # Reached over loopback only: the test never sends traffic off this machine.
        async with httpx.AsyncClient() as http:
            health = await http.get(f"http://127.0.0.1:{service.server.port}/health")
        assert health.json()["status"] == "ok"


# --- brute force (issue 22 items 1-2) ----------------------------------------------------------


async def test_rotating_x_forwarded_for_from_loopback_gains_no_tries(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    async with running_service(clawseed_home, provider) as service:
        assert service.hub is not None
        code = service.hub.pairing.new_code()
        wrong = "000000" if code != "000000" else "111111"
        async with httpx.AsyncClient(base_url=base_url(service)) as http:
            answers = [
                await http.post(
                    "/pair",
                    headers={"X-Pairing-Code": wrong, "X-Forwarded-For": f"203.0.113.{i}"},
                )
                for i in range(MAX_FAILURES + 3)
            ]
    statuses = [a.status_code for a in answers]
    assert statuses[:MAX_FAILURES] == [403] * MAX_FAILURES
    assert statuses[MAX_FAILURES:] == [429] * 3, "the header did not make new clients"


def _fake_gate(now: list[float], **options: object):  # type: ignore[no-untyped-def]
    from clawseed_edge.channels.gateway.pairing import PairingGate

    class Tokens:
        async def issue(self, name: str):  # type: ignore[no-untyped-def]
            from clawseed_edge.state import IssuedToken, TokenInfo

            return IssuedToken("cst_x", TokenInfo("id1", name, 0.0))

    return PairingGate(Tokens(), clock=lambda: now[0], **options)  # type: ignore[arg-type]


def _attempt(gate, client: str, value: str) -> str:  # type: ignore[no-untyped-def]
    import asyncio

    from clawseed_edge.channels.gateway.errors import ClientError

    try:
        asyncio.run(gate.pair(client, value, "x"))
    except ClientError as exc:
        return exc.code
    return "paired"


def _wrong(code: str) -> str:
    return "000000" if code != "000000" else "111111"


def test_all_clients_together_have_a_budget_of_wrong_codes() -> None:
    now = [1000.0]
    gate = _fake_gate(now, attempts_per_minute=6, max_code_failures=100)
    code = gate.new_code()
    answers = [_attempt(gate, f"10.0.{i}.1", _wrong(code)) for i in range(8)]
    assert answers == ["pairing_code_invalid"] * 6 + ["pairing_locked"] * 2
    assert _attempt(gate, "10.9.9.9", code) == "pairing_locked", "everyone waits"
    now[0] += 61
    assert _attempt(gate, "10.9.9.9", code) == "paired"


def test_a_code_dies_after_too_many_wrong_guesses_in_total() -> None:
    now = [1000.0]
    gate = _fake_gate(now, attempts_per_minute=0, max_code_failures=4)
    code = gate.new_code()
    answers = [_attempt(gate, f"10.0.{i}.1", _wrong(code)) for i in range(4)]
    assert answers == ["pairing_code_invalid"] * 4
    assert not gate.has_code
    assert _attempt(gate, "10.9.9.9", code) == "pairing_no_code"
    fresh = gate.new_code()
    assert _attempt(gate, "10.9.9.9", fresh) == "paired"


def test_a_code_expires() -> None:
    now = [1000.0]
    gate = _fake_gate(now, code_ttl_s=600.0)
    code = gate.new_code()
    now[0] += 599
    assert gate.has_code
    now[0] += 2
    assert not gate.has_code
    assert _attempt(gate, "10.0.0.1", code) == "pairing_no_code"


def test_the_failure_table_is_bounded_and_the_log_line_rate_limited(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    from clawseed_edge.channels.gateway.pairing import MAX_TRACKED_CLIENTS

    now = [1000.0]
    gate = _fake_gate(now, attempts_per_minute=0, max_code_failures=10**9)
    code = gate.new_code()
    with caplog.at_level(logging.WARNING, logger="clawseed_edge.channels.gateway.pairing"):
        for i in range(MAX_TRACKED_CLIENTS * 3):
            _attempt(gate, f"addr-{i}", _wrong(code))
            now[0] += 0.001
    assert len(gate._failures) <= MAX_TRACKED_CLIENTS
    lines = [r for r in caplog.records if "wrong pairing code" in r.getMessage()]
    assert 1 <= len(lines) <= 3, len(lines)
    now[0] += 400  # past the lockout: the next failure sweeps the expired windows
    _attempt(gate, "late", _wrong(code))
    assert len(gate._failures) == 1
