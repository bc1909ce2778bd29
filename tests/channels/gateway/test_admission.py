"""The admission rules one at a time, on fake connections (no sockets): eviction of the oldest
idle handshake, the places kept for paired clients, /64 grouping, the deadline under pressure."""

from __future__ import annotations

import asyncio

from clawseed_edge.channels.gateway.admission import Admission

TOKEN = "cst_" + "a" * 43


class FakeTransport:
    def __init__(self) -> None:
        self.aborted = False

    def is_closing(self) -> bool:
        return self.aborted

    def abort(self) -> None:
        self.aborted = True


class FakeConn:
    def __init__(self, idle: bool = True) -> None:
        self.transport = FakeTransport()
        self.idle = idle


def _admission(verify: object = None) -> Admission:
    async def paired(token: str) -> bool:
        return token == TOKEN

    return Admission(
        per_address=4, total=20, header_timeout_s=10.0, reserved=4, pressure_timeout_s=1.0,
        verify=paired if verify is None else verify,  # type: ignore[arg-type]
    )  # fmt: skip


async def test_a_paired_phone_keeps_its_place_through_a_flood() -> None:
    admission = _admission()
    flood = [FakeConn() for _ in range(16)]
    for i, conn in enumerate(flood):
        assert admission.admit(conn, f"10.0.{i}.1") is None
    phone = FakeConn()
    assert admission.admit(phone, "10.9.9.9") is None  # the oldest idle one made way
    assert flood[0].transport.aborted and admission.evicted == 1
    assert admission.saw(
        phone, f"POST /api/estop HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n".encode()
    )
    await asyncio.sleep(0)  # the token check
    more = [FakeConn() for _ in range(100)]
    for i, conn in enumerate(more):
        assert admission.admit(conn, f"10.1.{i}.1") is None
    assert not phone.transport.aborted, "a paired client's connection is not pushed out"
    assert admission.evicted == 1 + 99, "its move to a reserved place freed one shared place"


async def test_a_token_that_is_not_paired_gives_the_place_back() -> None:
    admission = _admission()
    liar = FakeConn()
    admission.admit(liar, "10.0.0.1")
    admission.saw(liar, b"GET /ws/chat?token=cst_notapairedtoken123 HTTP/1.1\r\n")
    await asyncio.sleep(0)
    for i in range(16):
        admission.admit(FakeConn(), f"10.0.{i + 1}.1")
    assert liar.transport.aborted, "back among everyone's, it was the oldest idle one"


def test_busy_connections_are_not_evicted_and_then_new_ones_are_refused() -> None:
    admission = _admission()
    for i in range(16):
        assert admission.admit(FakeConn(idle=False), f"10.0.{i}.1") is None
    reason = admission.admit(FakeConn(), "10.5.5.5")
    assert reason is not None and "none is idle" in reason and admission.refused == 1


def test_ipv6_clients_share_their_64_and_pressure_shortens_the_deadline() -> None:
    admission = _admission()
    assert admission.header_deadline() == 10.0
    for i in range(4):
        assert admission.admit(FakeConn(), f"2001:db8:1:2::{i + 1}") is None
    assert admission.admit(FakeConn(), "2001:db8:1:2:ffff::9") is not None  # same /64
    assert admission.admit(FakeConn(), "2001:db8:1:3::1") is None
    for i in range(4):
        admission.admit(FakeConn(), f"10.0.{i}.1")
    assert admission.header_deadline() == 1.0, "more than half the shared places are taken"
