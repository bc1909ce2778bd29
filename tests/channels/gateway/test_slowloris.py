"""1,100 slow sockets cannot take the device's emergency stop away (issue 22 item 4).

The attacker is another process (as it would be), holding 1,100 sockets that send a request
line and then nothing more. The service runs with the descriptor limit a unit without
``LimitNOFILE`` gets (1,024): before the admission checks, the gateway accepted until no
descriptor was left, and the control socket could accept nothing (no ``estop``, no
``status``), nor could ``/health``.
"""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from clawseed_edge.service import control_path, control_request
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import pin_level

from .conftest import CONFIG, base_url, pair_token, running_service

pytestmark = pytest.mark.slow

SOCKETS = 1100

ATTACKER = r"""
import json, resource, socket, sys
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the attacker has its own limit
port, count = int(sys.argv[1]), int(sys.argv[2])
held = []
for _ in range(count):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port))
        s.send(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
        held.append(s)
    except OSError:
        s.close()
print(json.dumps({"opened": len(held)}), flush=True)

def still_open():
    n = 0
    for s in held:
        s.setblocking(False)
        try:
            n += s.recv(1) != b""
        except BlockingIOError:
            n += 1  # nothing to read and not closed
        except OSError:
            pass
    return n

for line in sys.stdin:
    print(json.dumps({"open": still_open()}), flush=True)
"""


@pytest.fixture
def service_fd_limit() -> object:
    """The soft descriptor limit of a unit without LimitNOFILE, for the service (this process)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def _ask(proc: asyncio.subprocess.Process) -> dict[str, int]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"report\n")
    await proc.stdin.drain()
    return dict(json.loads(await asyncio.wait_for(proc.stdout.readline(), 30)))


async def test_a_slowloris_of_1100_sockets_leaves_estop_and_health_working(
    clawseed_home: Path, provider: ScriptedProvider, service_fd_limit: object
) -> None:
    config = CONFIG.replace('level = "supervised"', 'level = "full"').replace(
        "[gateway]\n", "[gateway]\nheader_timeout_s = 3.0\n"
    )
    async with running_service(clawseed_home, provider, config) as service:
        assert service.runtime is not None and service.server is not None
        (gpio,) = service.runtime.peripherals
        token = await pair_token(service)
        url = base_url(service)
        async with httpx.AsyncClient(base_url=url) as http:
            lit = await http.post(
                "/api/peripherals/porch_light",
                json={"on": True},
                headers={"Authorization": f"Bearer {token}"},
            )
        assert lit.status_code == 200 and pin_level(gpio, "porch_light") == 1
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            ATTACKER,
            str(service.server.port),
            str(SOCKETS),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        try:
            assert proc.stdout is not None
            opened = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))["opened"]
            await asyncio.sleep(0.5)  # the server accepts (and refuses) the backlog
            stop = await control_request(control_path(clawseed_home), "estop", timeout_s=10)
            level = pin_level(gpio, "porch_light")
            # Another client address (all of 127/8 is loopback) still gets an answer.
            transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
            async with httpx.AsyncClient(base_url=url, transport=transport, timeout=10) as other:
                health = await other.get("/health")
            during = await _ask(proc)
            await asyncio.sleep(3.5)  # past header_timeout_s
            after = await _ask(proc)
            status = await control_request(control_path(clawseed_home), "status", timeout_s=10)
            refused = service.server.admission.refused
            timed_out = service.server.admission.timed_out
        finally:
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
    assert opened == SOCKETS, "the attacker got its sockets in (the backlog holds them)"
    assert stop["ok"] and level == 0, "the estop went through and drove the output safe"
    assert health.status_code == 200
    assert during["open"] <= 32, during
    assert refused + timed_out >= SOCKETS - 32, (refused, timed_out)
    assert after["open"] == 0, "slow headers are closed after header_timeout_s"
    assert status["ok"]
