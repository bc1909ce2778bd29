"""TLS to the broker: the node checks the broker's certificate against ``ca_file``."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from clawseed_edge.testing.mqtt import MosquittoBroker, require_mosquitto

from .nodes import mqtt_node

pytest.importorskip("aiomqtt")

CONFIG = """
[provider]
name = "demo"
[mqtt]
enabled = true
port = {port}
node_id = "tls"
tls = true
ca_file = "{ca}"
reconnect_max_s = 1
"""


def make_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """(ca, server cert, server key) for 127.0.0.1, made with openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    ca_key, ca = directory / "ca.key", directory / "ca.pem"
    key, csr, cert = directory / "server.key", directory / "server.csr", directory / "server.pem"
    ext = directory / "ext.cnf"
    ext.write_text("subjectAltName = IP:127.0.0.1\n")

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key), "-out", str(ca),
        "-days", "2", "-subj", "/CN=test CA")  # fmt: skip
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
        "-subj", "/CN=127.0.0.1")  # fmt: skip
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
        "-CAcreateserial", "-out", str(cert), "-days", "2", "-extfile", str(ext))  # fmt: skip
    return ca, cert, key


async def connects(home: Path, broker: MosquittoBroker, ca: Path) -> bool:
    async with mqtt_node(home, broker, CONFIG.replace("{ca}", str(ca))) as svc:
        channel = next(c for c in svc.channels if c.name == "mqtt")
        try:
            async with asyncio.timeout(3):
                await channel.connected.wait()  # type: ignore[attr-defined]
        except TimeoutError:
            return False
        return True


async def test_tls_with_the_right_ca_connects_and_with_another_does_not(
    clawseed_home: Path, tmp_path: Path
) -> None:
    binary = require_mosquitto()
    (tmp_path / "good").mkdir()
    (tmp_path / "other").mkdir()
    ca, cert, key = make_certificates(tmp_path / "good")
    other_ca, _, _ = make_certificates(tmp_path / "other")
    with MosquittoBroker(tmp_path / "broker", tls=(cert, key), binary=binary) as broker:
        assert await connects(clawseed_home, broker, ca)
        assert not await connects(clawseed_home, broker, other_ca)
