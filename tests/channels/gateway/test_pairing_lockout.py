"""Issue 35 item 10: a neighbour sending wrong pairing codes cannot keep the owner from pairing.

Wrong codes from 40 loopback addresses (127.0.0.x, one or two each: under every per-address
limit) spend the budget all clients share and kill the 6-digit code, as before. The owner,
who asked the running service for the code over the control socket, pairs anyway with the
code's long form; guessing the long form stays impossible (each address has its own budget).
"""

from __future__ import annotations

from pathlib import Path

import httpx

from clawseed_edge.channels.gateway.limits import address_group
from clawseed_edge.channels.gateway.pairing import MAX_FAILURES
from clawseed_edge.service import control_path, control_request
from clawseed_edge.testing import ScriptedProvider

from .conftest import base_url, running_service


def _from(address: str, url: str) -> httpx.AsyncClient:
    """A client whose connections come from ``address`` (a loopback one)."""
    return httpx.AsyncClient(
        base_url=url, transport=httpx.AsyncHTTPTransport(local_address=address)
    )


async def _pair(address: str, url: str, code: str) -> httpx.Response:
    async with _from(address, url) as http:
        return await http.post("/pair", headers={"X-Pairing-Code": code, "X-Client-Name": "p"})


async def test_the_owner_pairs_through_a_neighbours_flood(clawseed_home: Path) -> None:
    async with running_service(clawseed_home, ScriptedProvider()) as service:
        url = base_url(service)
        owner = await control_request(control_path(service.loaded.home), "pair")
        code, long_code = owner["code"], owner["long_code"]
        assert long_code.startswith(code + "-") and len(long_code.replace("-", "")) == 18
        wrong = f"{(int(code) + 1) % 1_000_000:06d}"
        flood = [(await _pair(f"127.0.0.{10 + i}", url, wrong)).status_code for i in range(40)]
        short = await _pair("127.0.0.200", url, code)
        paired = await _pair("127.0.0.200", url, long_code.lower())
        async with httpx.AsyncClient(base_url=url) as http:
            token = paired.json().get("token", "")
            me = await http.get("/api/tools", headers={"Authorization": f"Bearer {token}"})
            again = await _pair("127.0.0.201", url, long_code)
    assert flood.count(403) >= 10 and flood[-1] == 429, flood  # the shared budget is spent
    assert short.status_code in (409, 429), "the 6-digit code is dead or locked, as before"
    assert paired.status_code == 200, paired.text
    assert me.status_code == 200, "the token the long form gave works"
    assert again.status_code == 403, "the long form works once"


async def test_guessing_the_long_form_is_bounded_per_address(clawseed_home: Path) -> None:
    async with running_service(clawseed_home, ScriptedProvider()) as service:
        url = base_url(service)
        owner = await control_request(control_path(service.loaded.home), "pair")
        guess = owner["code"] + "-AAAA-AAAA-AAAA"
        tries = [
            (await _pair("127.0.0.30", url, guess)).status_code for _ in range(MAX_FAILURES + 1)
        ]
        # Neither the neighbour's wrong long forms nor its lockout touch the owner's code.
        ok = await _pair("127.0.0.31", url, owner["code"])
    assert tries == [403] * MAX_FAILURES + [429]
    assert ok.status_code == 200, ok.text


def test_ipv6_clients_are_one_client_per_64() -> None:
    assert address_group("2001:db8:1:2::1") == address_group("2001:db8:1:2:ffff:1:2:3")
    assert address_group("2001:db8:1:2::1") != address_group("2001:db8:1:3::1")
    assert address_group("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_group("192.0.2.7") == "192.0.2.7"
