"""A real HTTP server on a loopback address, for the HTTP tools' allow and refuse paths.

Routes: ``/page`` (an HTML page with script, style and navigation), ``/text``, ``/big``
(200 KB with a Content-Length), ``/stream`` (200 KB with no length: the cap must stop the
read), ``/redirect?to=URL`` (302), ``/redirect-long`` (to a 3000-character URL), ``/echo`` (the method, Host header and body as JSON),
``/secret`` (a page holding an API key), ``/missing`` (404), ``/image`` (binary).
Every request is recorded, so a test can show that a refused URL was never asked for.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

PAGE = b"""<!doctype html><html><head><title>Greenhouse  notes</title>
<style>body { color: red }</style><script>var secret = "do not show";</script></head>
<body><nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
<header>Site banner</header>
<main><h1>Watering</h1><p>Water the tomatoes   when the soil is <b>dry</b>.</p>
<h2>Sensors</h2><ul><li>soil moisture</li><li>air <i>temperature</i></li></ul>
<p>See the <a href="/guide">watering guide</a>.</p></main>
<footer>Copyright nobody</footer></body></html>"""
FAKE_KEY = "sk-ant-api03-" + "Q" * 48


@dataclass
class LocalServer:
    """A running server: its base URL and the requests it has seen (method, path, Host)."""

    host: str
    port: int
    seen: list[tuple[str, str, str]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"


def _handler(server: LocalServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            return

        def _reply(self, status: int, body: bytes, kind: str, *, length: bool = True) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            if length:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _handle(self) -> None:
            parts = urlsplit(self.path)
            server.seen.append((self.command, parts.path, self.headers.get("Host", "")))
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size) if size else b""
            if parts.path == "/page":
                self._reply(200, PAGE, "text/html; charset=utf-8")
            elif parts.path == "/text":
                self._reply(200, "plain text °C".encode(), "text/plain; charset=utf-8")
            elif parts.path == "/big":
                self._reply(200, b"x" * 200_000, "text/plain")
            elif parts.path == "/stream":
                self._reply(200, b"y" * 200_000, "text/plain", length=False)
            elif parts.path in ("/redirect", "/redirect-long"):
                if parts.path == "/redirect-long":
                    target = "/page?" + "a" * 3000
                else:
                    target = parse_qs(parts.query)["to"][0]
                self.send_response(302)
                self.send_header("Location", target)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif parts.path == "/echo":
                echo = {
                    "method": self.command,
                    "host": self.headers.get("Host"),
                    "body": body.decode(),
                }
                self._reply(200, json.dumps(echo).encode(), "application/json")
            elif parts.path == "/secret":
                text = f"<html><body><p>the key is {FAKE_KEY}</p></body></html>"
                self._reply(200, text.encode(), "text/html")
            elif parts.path == "/image":
                self._reply(200, b"\x89PNG\r\n\x1a\n" + bytes(64), "image/png")
            else:
                self._reply(404, b"no such page", "text/plain")

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

    return Handler


def _serve(host: str) -> Iterator[LocalServer]:
    info = LocalServer(host, 0)
    httpd = ThreadingHTTPServer((host, 0), _handler(info))
    httpd.daemon_threads = True
    info.port = httpd.server_address[1]
    thread = threading.Thread(
        target=httpd.serve_forever, args=(0.05,), name=f"http-{host}", daemon=True
    )
    thread.start()
    try:
        yield info
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    """A server on 127.0.0.1."""
    yield from _serve("127.0.0.1")


@pytest.fixture
def second_server() -> Iterator[LocalServer]:
    """Another server on 127.0.0.2 (also loopback): the allowed side of redirect tests."""
    yield from _serve("127.0.0.2")
