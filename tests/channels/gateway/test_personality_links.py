"""A symlinked personality file never carries another file to a phone or the model."""

from __future__ import annotations

from pathlib import Path

import httpx

from clawseed_edge.testing import ScriptedProvider

from .conftest import base_url, pair_token, running_service

SECRET = "sk-ant-api03-thisisthesecretvalue42"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_a_linked_personality_file_is_refused_and_never_written_through(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("Hello.")
    secrets = clawseed_home / "secrets"
    secrets.write_text(f"ANTHROPIC_API_KEY={SECRET}\n")
    secrets.chmod(0o600)
    workspace = clawseed_home / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "USER.md").symlink_to("../secrets")
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            got = await http.get("/api/personality/USER.md")
            await http.post("/webhook", json={"message": "hi"})
            put = await http.put("/api/personality/USER.md", json={"content": "I am Ada."})
            again = await http.get("/api/personality/USER.md")
    assert got.status_code == 409, got.text
    assert got.json()["error"]["code"] == "personality_file_refused"
    assert SECRET not in got.text and "thisisthesecret" not in got.text
    assert "thisisthesecret" not in provider.requests[0].messages[0].content
    assert put.status_code == 200
    assert secrets.read_text() == f"ANTHROPIC_API_KEY={SECRET}\n", "written through the link"
    assert not (workspace / "USER.md").is_symlink()
    assert again.json()["content"] == "I am Ada."


async def test_a_key_inside_a_personality_file_is_scrubbed(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("Hello.")
    workspace = clawseed_home / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "TOOLS.md").write_text(f"the key is {SECRET}\n")
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with httpx.AsyncClient(base_url=base_url(service), headers=_auth(token)) as http:
            got = await http.get("/api/personality/TOOLS.md")
            await http.post("/webhook", json={"message": "hi"})
    assert "thisisthesecret" not in got.text and "the key is" in got.json()["content"]
    assert "thisisthesecret" not in provider.requests[0].messages[0].content
