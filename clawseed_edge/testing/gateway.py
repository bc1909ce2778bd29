"""A gateway on 127.0.0.1 for tests of your own client (a phone app, a script, a dashboard).

::

    from clawseed_edge.testing import ScriptedProvider
    from clawseed_edge.testing.gateway import running_gateway

    async def test_my_client(tmp_path):
        provider = ScriptedProvider(["Hello from the device."])
        async with running_gateway(tmp_path, provider) as gateway:
            token = await gateway.pair("my-app")
            ...  # connect to gateway.ws_url with the token

The service runs in your test's event loop on an ephemeral port, with simulated pins and the
provider you pass; ``$CLAWSEED_HOME`` is the directory you give it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawseed_edge.api import Provider

__all__ = ["DEFAULT_CONFIG", "RunningGateway", "running_gateway"]

DEFAULT_CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "supervised"
[gateway]
enabled = true
port = 0
[hardware]
board = "sim"
[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"
[[devices]]
name = "doorbell"
pin = "GPIO22"
kind = "button"
on_press = "the doorbell button was pressed"
"""


@dataclass(slots=True)
class RunningGateway:
    """A started service with its gateway; ``service`` is the :class:`~clawseed_edge.service.
    Service` (its ``runtime``, ``hub`` and ``server``)."""

    service: Any

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return str(self.service.server.url)

    @property
    def ws_url(self) -> str:
        """``ws://127.0.0.1:PORT/ws/chat``."""
        return self.url.replace("http://", "ws://", 1) + "/ws/chat"

    async def pair(self, name: str = "test-client") -> str:
        """A bearer token for a new paired client (through ``POST /pair``, as a phone would).

        Safe to cancel.
        """
        import httpx

        code = self.service.hub.pairing.new_code()
        async with httpx.AsyncClient(base_url=self.url) as http:
            response = await http.post(
                "/pair", headers={"X-Pairing-Code": code, "X-Client-Name": name}
            )
        response.raise_for_status()
        return str(response.json()["token"])


@contextlib.asynccontextmanager
async def running_gateway(
    home: str | os.PathLike[str],
    provider: Provider,
    config: str = DEFAULT_CONFIG,
    **options: Any,
) -> AsyncIterator[RunningGateway]:
    """Start the service with the gateway on in ``home``; stop it in order on exit.

    Args:
        home: Used as ``$CLAWSEED_HOME`` for the config file, memory and ``state.db`` (the
            control socket is off, so several can run at once).
        provider: The model (a :class:`~clawseed_edge.testing.ScriptedProvider`).
        config: The config file's text (``[gateway] enabled = true`` and ``port = 0``).
        **options: More :class:`~clawseed_edge.service.ServiceOptions` fields
            (``remote_timeout_s`` ...); ``assemble`` keywords join the provider.
    """
    from clawseed_edge.config.file import load_config
    from clawseed_edge.service import Service, ServiceOptions

    path = Path(home) / "config.toml"
    path.write_text(config, encoding="utf-8")
    loaded = load_config(path)
    opts = ServiceOptions(
        sim=True,
        assemble={"provider": provider, **options.pop("assemble", {})},
        say=lambda line: None,
        **{"control_socket": False, **options},
    )
    async with Service(loaded, opts) as service:
        yield RunningGateway(service)
