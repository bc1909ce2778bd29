"""The phone web app's files: served at /, with types, CSP and caching, never over an endpoint."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import httpx
import pytest

from clawseed_edge.channels.gateway.routes_static import CONTENT_SECURITY_POLICY, CONTENT_TYPES
from clawseed_edge.testing import ScriptedProvider

from .conftest import base_url, running_service

STATIC = Path(str(resources.files("clawseed_edge.channels.gateway") / "static"))


def _files() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in STATIC.iterdir()}


async def test_the_app_is_served_with_types_csp_and_revalidation(clawseed_home: Path) -> None:
    expected = _files()
    names = sorted(expected)
    index = expected["index.html"]
    async with running_service(clawseed_home, ScriptedProvider()) as service:
        async with httpx.AsyncClient(base_url=base_url(service)) as http:
            root = await http.get("/")
            files = {name: await http.get(f"/{name}") for name in names}
            etag = files["app.js"].headers["etag"]
            again = await http.get("/app.js", headers={"If-None-Match": etag})
            head = await http.head("/")
    assert root.status_code == 200 and root.content == index
    for name, response in files.items():
        assert response.status_code == 200, name
        assert response.content == expected[name]
        assert response.headers["content-type"] == CONTENT_TYPES[Path(name).suffix], name
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["x-content-type-options"] == "nosniff"
    assert files["sw.js"].headers["service-worker-allowed"] == "/"
    assert again.status_code == 304 and again.content == b""
    assert head.status_code == 200 and head.content == b""


async def test_the_app_never_shadows_an_endpoint_or_serves_outside_its_folder(
    clawseed_home: Path,
) -> None:
    async with running_service(clawseed_home, ScriptedProvider()) as service:
        async with httpx.AsyncClient(base_url=base_url(service)) as http:
            health = await http.get("/health")
            api = await http.get("/api/sessions")
            unknown = await http.get("/api/nothing-here")
            outside = await http.get("/static/../../pyproject.toml")
            python = await http.get("/routes_static.py")
            post = await http.post("/app.js")
    assert health.json()["status"] == "ok"
    assert api.status_code == 401 and api.json()["error"]["code"] == "unauthorized"
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    assert outside.status_code == 404 and python.status_code == 404
    assert post.status_code == 405


def test_the_page_has_no_inline_code_and_every_file_it_names_exists() -> None:
    html = (STATIC / "index.html").read_text("utf-8")
    # The CSP forbids inline scripts, styles and handlers: the page must not need them.
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    assert not re.search(r"\son[a-z]+=", html)
    assert "<style" not in html and "style=" not in html
    named = set(re.findall(r'(?:href|src)="/([^"]+)"', html))
    manifest = json.loads((STATIC / "manifest.webmanifest").read_text("utf-8"))
    named |= {icon["src"].lstrip("/") for icon in manifest["icons"]}
    worker = (STATIC / "sw.js").read_text("utf-8")
    shell = json.loads(re.search(r"const SHELL = (\[.*?\]);", worker, re.S).group(1))  # type: ignore[union-attr]
    named |= {path.lstrip("/") for path in shell if path != "/"}
    assert named and all((STATIC / name).is_file() for name in named), named
    assert set(shell) >= {"/", "/app.js", "/app.css", "/index.html"}


@pytest.mark.parametrize("size", [192, 512])
def test_the_png_icons_have_the_sizes_the_manifest_says(size: int) -> None:
    data = (STATIC / f"icon-{size}.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (size, size)


def test_the_app_stays_small() -> None:
    # No framework, no bundle: the whole shell is a few tens of KB on a Pi's flash and a
    # phone's first load.
    total = sum(p.stat().st_size for p in STATIC.iterdir())
    assert total < 120_000, f"the app's files are {total} bytes"
