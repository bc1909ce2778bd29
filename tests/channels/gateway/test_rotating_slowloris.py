"""Issue 35 item 11: a slowloris from ~1,100 rotating addresses leaves a paired phone's STOP.

Another process (the attacker) keeps 400 sockets open, each from the next of 1,100 loopback
addresses (127.1.x.y: all of 127/8 is loopback; nothing leaves the machine), each sending a
request line and then nothing; whenever one is closed it opens the next, from the next address.
It is bounded: at most 6,000 connects and 30 s. On today's main the gateway's places filled with
these handshakes (each address under its own cap) and every new connection was refused. Now a
new connection takes the place of the oldest idle handshake, and the phone's request, whose
first bytes carry its token, takes a place kept for paired clients: its STOP answers and drives
the output safe; ``/health`` from yet another address answers too.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import pin_level

from .conftest import CONFIG, base_url, pair_token, running_service

pytestmark = pytest.mark.slow

ATTACKER = r"""
import json, resource, selectors, socket, sys, time
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
port, addresses, held_at_once = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
MAX_CONNECTS, MAX_S = 6000, 30.0
start = time.monotonic()
sel = selectors.DefaultSelector()
sel.register(sys.stdin, selectors.EVENT_READ)
n = connects = closed = 0
used = set()

def open_one():
    global n, connects
    address = f"127.1.{n % addresses // 250}.{n % addresses % 250 + 1}"
    n += 1
    s = socket.socket()
    s.settimeout(1.0)
    try:
        s.bind((address, 0))
        s.connect(("127.0.0.1", port))
        s.send(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
    except OSError:
        s.close()
        return
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
    connects += 1
    used.add(address)

for _ in range(held_at_once):
    open_one()
print(json.dumps({"ready": connects}), flush=True)
done = False
while not done and connects < MAX_CONNECTS and time.monotonic() - start < MAX_S:
    for key, _ in sel.select(timeout=0.05):
        if key.fileobj is sys.stdin:
            done = True
            continue
        sel.unregister(key.fileobj)
        key.fileobj.close()  # the server closed it: open the next, from the next address
        closed += 1
        open_one()
held = len(sel.get_map()) - 1
print(json.dumps({"connects": connects, "closed": closed, "held": held,
                  "addresses": len(used)}), flush=True)
"""


async def test_a_paired_phones_stop_answers_through_a_rotating_slowloris(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    config = CONFIG.replace('level = "supervised"', 'level = "full"').replace(
        "[gateway]\n", "[gateway]\nmax_connections = 64\n"
    )
    async with running_service(clawseed_home, provider, config) as service:
        assert service.runtime is not None and service.server is not None
        (gpio,) = service.runtime.peripherals
        token = await pair_token(service)
        url = base_url(service)
        auth = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=url, headers=auth) as http:
            lit = await http.post("/api/peripherals/porch_light", json={"on": True})
        assert lit.status_code == 200 and pin_level(gpio, "porch_light") == 1
        total = service.server.admission.total
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", ATTACKER, str(service.server.port), "1100", "400",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip
        try:
            assert proc.stdin is not None and proc.stdout is not None
            ready = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))["ready"]
            await asyncio.sleep(1.0)  # the flood churns: closed ones come back from new addresses
            phone = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
            async with httpx.AsyncClient(
                base_url=url, transport=phone, headers=auth, timeout=10
            ) as http:
                stop = await http.post("/api/estop", json={})
            level = pin_level(gpio, "porch_light")
            other = httpx.AsyncHTTPTransport(local_address="127.0.0.3")
            async with httpx.AsyncClient(base_url=url, transport=other, timeout=10) as http:
                health = await http.get("/health")
            proc.stdin.write(b"stop\n")
            await proc.stdin.drain()
            flood = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
            evicted = service.server.admission.evicted
        finally:
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
    assert ready >= total, "the attacker held more sockets than the gateway has places"
    assert stop.status_code == 200, stop.text
    assert level == 0, "the STOP drove the output safe"
    assert health.status_code == 200
    assert flood["addresses"] >= 400 and flood["connects"] > ready, flood
    # The places were full: new connections (the flood's own among them) took idle ones' places.
    assert evicted > 0, "idle handshakes made way for new connections"
