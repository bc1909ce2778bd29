"""The test kit's mosquitto: it listens on its port, restarts on the same one, and stops."""

from __future__ import annotations

import socket

from clawseed_edge.testing.mqtt import MosquittoBroker


def test_mosquitto_listens_restarts_and_stops(mosquitto: MosquittoBroker) -> None:
    port = mosquitto.port
    socket.create_connection((mosquitto.host, port), timeout=2).close()
    mosquitto.restart()
    assert mosquitto.port == port
    socket.create_connection((mosquitto.host, port), timeout=2).close()
    mosquitto.stop()
    mosquitto.stop()  # idempotent
    try:
        socket.create_connection((mosquitto.host, port), timeout=1).close()
    except OSError:
        pass
    else:
        raise AssertionError("the stopped broker still accepts connections")
