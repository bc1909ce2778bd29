"""Host, Origin and Content-Type checks over a real socket (issue 22 item 5)."""

from __future__ import annotations

from pathlib import Path

import httpx

from clawseed_edge.channels.gateway.origin import gateway_host_names
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import pin_level

from .conftest import CONFIG, base_url, running_service

OPEN = CONFIG.replace("[gateway]\n", "[gateway]\nrequire_pairing = false\n").replace(
    'level = "supervised"', 'level = "full"'
)


async def test_dns_rebinding_and_foreign_origins_are_refused_and_own_clients_pass(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    config = OPEN.replace("[gateway]\n", '[gateway]\nallowed_hosts = ["pi.example.org"]\n')
    async with running_service(clawseed_home, provider, config) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        url = base_url(service)
        port = url.rsplit(":", 1)[1]
        on = {"on": True}
        async with httpx.AsyncClient(base_url=url) as http:
            rebound = await http.get("/api/peripherals", headers={"Host": "attacker.example"})
            rebound_post = await http.post(
                "/api/peripherals/porch_light", json=on, headers={"Host": f"evil.test:{port}"}
            )
            foreign = await http.post(
                "/api/peripherals/porch_light", json=on, headers={"Origin": "http://evil.test"}
            )
            other_port = await http.post(
                "/api/peripherals/porch_light",
                json=on,
                headers={"Origin": "http://127.0.0.1:1"},
            )
            plain = await http.post(
                "/api/peripherals/porch_light",
                content=b'{"on": true}',
                headers={"Content-Type": "text/plain"},
            )
            level_after_attacks = pin_level(gpio, "porch_light")
            same_origin = await http.post(
                "/api/peripherals/porch_light", json=on, headers={"Origin": url}
            )
            proxied = await http.post(
                "/api/peripherals/porch_light",
                json={"on": False},
                headers={"Origin": "https://pi.example.org", "Host": "pi.example.org"},
            )
            no_origin_stop = await http.post("/api/estop")
            lan_ip = await http.get("/health", headers={"Host": f"192.168.1.50:{port}"})
    assert rebound.status_code == 421 and rebound.json()["error"]["code"] == "host_not_allowed"
    assert rebound_post.status_code == 421
    assert foreign.status_code == 403 and foreign.json()["error"]["code"] == "origin_not_allowed"
    assert other_port.status_code == 403
    assert plain.status_code == 415
    assert level_after_attacks == 0
    assert same_origin.status_code == 200, same_origin.text
    assert proxied.status_code == 200, proxied.text
    assert no_origin_stop.status_code == 200, "the app's STOP (no body) passes"
    assert lan_ip.status_code == 200, "a phone on the LAN uses the address"


def test_the_host_names_include_this_machine_and_configured_ones() -> None:
    import socket

    names = gateway_host_names(["Pi.Example.Org."])
    assert "localhost" in names and "pi.example.org" in names
    assert socket.gethostname().lower() in names
