"""HTTPS to a pinned address: the connection goes to the checked IP while the TLS server name,
which the certificate is verified against, stays the URL's host.

A local CA and a certificate for ``site.test`` are made with the ``openssl`` program (the test
is skipped where it is missing); the server listens on 127.0.0.1 and the injected resolver
maps ``site.test`` there.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from clawseed_edge.tools.destinations import DestinationPolicy
from clawseed_edge.tools.http_client import FetchFailed, PinnedFetcher

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ca.pem, and site.pem/site.key for DNS:site.test, signed by it."""
    d = tmp_path_factory.mktemp("pki")
    (d / "ca.cnf").write_text(
        "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
        "subjectKeyIdentifier=hash\n",
        encoding="utf-8",
    )
    (d / "site.cnf").write_text(
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:site.test\n"
        "authorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n",
        encoding="utf-8",
    )
    _openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
             "-out", "ca.csr", "-subj", "/CN=clawseed test CA", cwd=d)  # fmt: skip
    _openssl("x509", "-req", "-in", "ca.csr", "-signkey", "ca.key", "-out", "ca.pem",
             "-days", "2", "-extfile", "ca.cnf", cwd=d)  # fmt: skip
    _openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "site.key",
             "-out", "site.csr", "-subj", "/CN=site.test", cwd=d)  # fmt: skip
    _openssl("x509", "-req", "-in", "site.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "site.pem", "-days", "2", "-extfile", "site.cnf",
             cwd=d)  # fmt: skip
    return d


class Hello(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        body = f"hello {self.headers.get('Host')}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def tls_port(pki: Path) -> Iterator[int]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(pki / "site.pem", pki / "site.key")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    httpd.daemon_threads = True
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def fetcher(pki: Path, host: str) -> PinnedFetcher:
    async def resolver(name: str, port: int) -> list[str]:
        return ["127.0.0.1"] if name == host else []

    policy = DestinationPolicy.of([host], ["127.0.0.1/32"], resolver)
    context = ssl.create_default_context(cafile=str(pki / "ca.pem"))
    return PinnedFetcher(policy, ssl_context=context, timeout_s=10)


async def test_the_certificate_is_verified_against_the_name_not_the_ip(
    pki: Path, tls_port: int
) -> None:
    fetched = await fetcher(pki, "site.test").fetch(f"https://site.test:{tls_port}/")
    assert fetched.status == 200 and fetched.body == f"hello site.test:{tls_port}".encode()


async def test_a_certificate_for_another_name_fails(pki: Path, tls_port: int) -> None:
    with pytest.raises(FetchFailed, match=r"(?i)hostname mismatch|doesn.t match"):
        await fetcher(pki, "other.test").fetch(f"https://other.test:{tls_port}/")
