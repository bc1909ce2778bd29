"""One simulated node for the MQTT tests: its config written under ``home``, a Service over it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clawseed_edge.config.file import load_config
from clawseed_edge.service import Service, ServiceOptions
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.mqtt import MosquittoBroker


def mqtt_node(
    home: Path,
    broker: MosquittoBroker,
    config: str,
    *,
    provider: ScriptedProvider | None = None,
    sim: bool = True,
    **mqtt: Any,
) -> Service:
    """A service on ``config`` (its ``{port}`` filled with the broker's): mock pins, no gateway,
    no control socket, a scripted model; ``mqtt`` goes to the MQTT channel."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(config.replace("{port}", str(broker.port)), encoding="utf-8")
    return Service(
        load_config(path),
        ServiceOptions(
            sim=sim,
            gateway=False,
            control_socket=False,
            assemble={"provider": provider or ScriptedProvider()},
            mqtt=mqtt,
            say=lambda line: None,
        ),
    )
