"""The HTTP tools in an assembled agent: turned on by the config, checked by the
SecurityPolicy by their risk, and their output scrubbed of credentials before the model
reads it."""

from __future__ import annotations

from pathlib import Path

from clawseed_edge.agent.approval import StaticApprover
from clawseed_edge.api import ToolResultEvent
from clawseed_edge.config import assemble_agent
from clawseed_edge.testing import ScriptedProvider

from .conftest import FAKE_KEY, LocalServer


def config(tmp_path: Path, level: str, networks: str = '["127.0.0.1/32"]') -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[autonomy]\nlevel = "{level}"\n[tools]\nhttp_request = true\nweb_fetch = true\n'
        f'[tools.http]\nallowed_domains = ["127.0.0.1"]\nallowed_networks = {networks}\n',
        encoding="utf-8",
    )
    return path


async def results(agent, text: str) -> list[ToolResultEvent]:
    return [e async for e in agent.turn(text) if isinstance(e, ToolResultEvent)]


async def test_a_fetched_key_is_scrubbed_before_the_model_reads_it(
    tmp_path: Path, local_server: LocalServer
) -> None:
    provider = ScriptedProvider(
        [ScriptedProvider.call("web_fetch", url=local_server.url("/secret")), "Read it."]
    )
    agent = await assemble_agent(config(tmp_path, "read_only"), provider=provider)
    async with agent:
        (event,) = await results(agent, "what is on the page?")
    assert event.result.success, event.result.error
    assert "the key is sk-a[redacted]" in event.result.output
    assert FAKE_KEY not in event.result.output
    assert FAKE_KEY not in str(provider.requests), "the model never saw the key"


async def test_http_request_asks_first_in_supervised_and_a_no_sends_nothing(
    tmp_path: Path, local_server: LocalServer
) -> None:
    provider = ScriptedProvider(
        [ScriptedProvider.call("http_request", url=local_server.url("/echo")), "Not done."]
    )
    agent = await assemble_agent(
        config(tmp_path, "supervised"), provider=provider, approver=StaticApprover(False)
    )
    async with agent:
        (event,) = await results(agent, "call the echo service")
    assert not event.result.success and "Refused by the security policy" in (
        event.result.error or ""
    )
    assert local_server.seen == []


async def test_web_fetch_runs_in_read_only_but_loopback_needs_its_network(
    tmp_path: Path, local_server: LocalServer
) -> None:
    provider = ScriptedProvider(
        [ScriptedProvider.call("web_fetch", url=local_server.url("/page")), "Done."]
    )
    agent = await assemble_agent(config(tmp_path, "read_only", "[]"), provider=provider)
    async with agent:
        (event,) = await results(agent, "read the page")
    assert not event.result.success and "a loopback address" in (event.result.error or "")
    assert local_server.seen == []
