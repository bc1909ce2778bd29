"""http_request and web_fetch against a real server on loopback: what is allowed comes back,
what is not is refused before anything is sent (checked after DNS and on every redirect)."""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence

import pytest

from clawseed_edge.agent.redact import Scrubber
from clawseed_edge.agent.security import SecurityPolicy
from clawseed_edge.api import RiskClass, ToolCall, ToolContext
from clawseed_edge.tools.destinations import DestinationPolicy
from clawseed_edge.tools.http_tools import HttpRequestTool, WebFetchTool

from .conftest import FAKE_KEY, LocalServer

CTX = ToolContext()


class FakeResolver:
    """Answers from a table; each name's answers are used in turn (the last one repeats)."""

    def __init__(self, table: dict[str, list[list[str]]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        answers = self.table.get(host)
        if not answers:
            raise OSError(f"[Errno -2] Name or service not known: {host!r}")
        return answers.pop(0) if len(answers) > 1 else answers[0]


def loopback_policy(*networks: str, domains: Sequence[str] = ("127.0.0.1",), resolver=None):
    return DestinationPolicy.of(domains, networks, resolver)


# --- allow paths ---------------------------------------------------------------------------------


async def test_web_fetch_returns_readable_text_not_html(local_server: LocalServer) -> None:
    tool = WebFetchTool(loopback_policy("127.0.0.1/32"))
    result = await tool.execute({"url": local_server.url("/page")}, CTX)
    assert result.success, result.error
    text = result.output
    assert "Title: Greenhouse notes" in text
    assert "# Watering" in text and "## Sensors" in text
    assert "Water the tomatoes when the soil is dry." in text
    assert "- soil moisture" in text and "- air temperature" in text
    assert f"watering guide ({local_server.url('/guide')})" in text
    for dropped in ("<p>", "do not show", "color: red", "Home", "Site banner", "Copyright"):
        assert dropped not in text


async def test_web_fetch_passes_plain_text_and_refuses_binary(local_server: LocalServer) -> None:
    tool = WebFetchTool(loopback_policy("127.0.0.1/32"))
    text = await tool.execute({"url": local_server.url("/text")}, CTX)
    assert text.success and "plain text °C" in text.output
    image = await tool.execute({"url": local_server.url("/image")}, CTX)
    assert not image.success and "image/png, not a text page" in (image.error or "")


async def test_http_request_get_and_configured_post(local_server: LocalServer) -> None:
    tool = HttpRequestTool(loopback_policy("127.0.0.1/32"), methods=["GET", "POST"])
    got = await tool.execute({"url": local_server.url("/echo")}, CTX)
    assert got.success and got.output.startswith("HTTP 200 OK (application/json")
    posted = await tool.execute(
        {"url": local_server.url("/echo"), "method": "POST", "body": '{"on": true}'}, CTX
    )
    assert posted.success, posted.error
    echo = json.loads(posted.output.split("\n\n", 1)[1])
    assert echo == {
        "method": "POST",
        "host": f"127.0.0.1:{local_server.port}",
        "body": '{"on": true}',
    }


async def test_a_redirect_within_the_allowed_hosts_is_followed(second_server: LocalServer) -> None:
    tool = WebFetchTool(loopback_policy("127.0.0.2/32", domains=["127.0.0.2"]))
    result = await tool.execute({"url": second_server.url("/redirect?to=/page")}, CTX)
    assert result.success, result.error
    assert "# Watering" in result.output and "redirected from" in result.output
    assert [p for _, p, _ in second_server.seen] == ["/redirect", "/page"]


async def test_the_connection_goes_to_the_checked_address(second_server: LocalServer) -> None:
    # The name resolves to 127.0.0.2 (allowed) first and to 127.0.0.1 (not allowed) after:
    # a client that looked the name up again would land elsewhere (or fail: it is not real).
    resolver = FakeResolver({"site.test": [["127.0.0.2"], ["127.0.0.1"]]})
    policy = loopback_policy("127.0.0.2/32", domains=["site.test"], resolver=resolver)
    result = await HttpRequestTool(policy).execute(
        {"url": f"http://site.test:{second_server.port}/echo"}, CTX
    )
    assert result.success, result.error
    assert (
        json.loads(result.output.split("\n\n", 1)[1])["host"] == f"site.test:{second_server.port}"
    )
    assert resolver.calls == ["site.test"]
    assert second_server.seen == [("GET", "/echo", f"site.test:{second_server.port}")]


# --- refuse paths --------------------------------------------------------------------------------


async def test_loopback_is_refused_unless_its_network_is_allowed(local_server: LocalServer) -> None:
    for tool in (WebFetchTool(loopback_policy()), HttpRequestTool(loopback_policy())):
        result = await tool.execute({"url": local_server.url("/page")}, CTX)
        assert not result.success
        assert "127.0.0.1, a loopback address" in (result.error or "")
        assert "allowed_networks" in (result.error or "")
    assert local_server.seen == []


async def test_a_domain_not_allowed_is_refused_before_any_lookup(local_server: LocalServer) -> None:
    resolver = FakeResolver({"example.com": [["93.184.216.34"]]})
    tool = WebFetchTool(loopback_policy("127.0.0.1/32", domains=["example.com"], resolver=resolver))
    result = await tool.execute({"url": local_server.url("/page")}, CTX)
    assert not result.success
    assert "host '127.0.0.1' is not in [tools.http] allowed_domains" in (result.error or "")
    other = await tool.execute({"url": "https://evil.example.org/"}, CTX)
    assert not other.success and "'evil.example.org' is not in" in (other.error or "")
    assert resolver.calls == [] and local_server.seen == []


@pytest.mark.parametrize(
    ("answers", "words"),
    [
        (["10.0.0.5"], "resolves to 10.0.0.5, a private address"),
        (["192.168.1.20"], "resolves to 192.168.1.20, a private address"),
        (["127.0.0.1"], "resolves to 127.0.0.1, a loopback address"),
        (["169.254.169.254"], "resolves to 169.254.169.254, a cloud metadata address"),
        (["fd00:ec2::254"], "resolves to fd00:ec2::254, a cloud metadata address"),
        (["100.64.3.4"], "resolves to 100.64.3.4, not a public address"),
        (["::ffff:127.0.0.1"], "a loopback address (inside ::ffff:7f00:1)"),
        # One bad answer among good ones refuses: which one a connection uses is not ours.
        (["93.184.216.34", "10.1.2.3"], "resolves to 10.1.2.3, a private address"),
    ],
)
async def test_a_name_that_resolves_to_a_non_public_address_is_refused(
    answers: list[str], words: str
) -> None:
    resolver = FakeResolver({"sensors.test": [answers]})
    tool = WebFetchTool(DestinationPolicy.of(["*.test"], [], resolver))
    result = await tool.execute({"url": "http://sensors.test/data"}, CTX)
    assert not result.success and words in (result.error or ""), result.error
    assert resolver.calls == ["sensors.test"]


async def test_a_redirect_to_127_0_0_1_is_refused(
    local_server: LocalServer, second_server: LocalServer
) -> None:
    # Any domain, but only 127.0.0.2's network: the redirect's address is what refuses it.
    tool = WebFetchTool(loopback_policy("127.0.0.2/32", domains=["*"]))
    target = local_server.url("/page")
    result = await tool.execute({"url": second_server.url(f"/redirect?to={target}")}, CTX)
    assert not result.success
    assert "127.0.0.1, a loopback address" in (result.error or "")
    assert [p for _, p, _ in second_server.seen] == ["/redirect"]
    assert local_server.seen == [], "the refused redirect target was never asked"


async def test_a_redirect_to_a_name_that_resolves_to_127_0_0_1_is_refused(
    local_server: LocalServer, second_server: LocalServer
) -> None:
    resolver = FakeResolver({"inside.test": [["127.0.0.1"]]})
    tool = HttpRequestTool(loopback_policy("127.0.0.2/32", domains=["*"], resolver=resolver))
    target = f"http://inside.test:{local_server.port}/echo"
    result = await tool.execute({"url": second_server.url(f"/redirect?to={target}")}, CTX)
    assert not result.success
    assert "'inside.test' resolves to 127.0.0.1, a loopback address" in (result.error or "")
    assert resolver.calls == ["inside.test"] and local_server.seen == []


async def test_too_many_redirects_fail(second_server: LocalServer) -> None:
    loop = second_server.url("/redirect?to=/redirect%3Fto%3D/page")
    tool = WebFetchTool(loopback_policy("127.0.0.2/32", domains=["127.0.0.2"]), max_redirects=1)
    result = await tool.execute({"url": loop}, CTX)
    assert not result.success and "more than max_redirects=1" in (result.error or "")


@pytest.mark.parametrize("path", ["/big", "/stream"])
async def test_a_body_over_the_cap_fails(local_server: LocalServer, path: str) -> None:
    tool = WebFetchTool(loopback_policy("127.0.0.1/32"), max_response_bytes=100_000)
    result = await tool.execute({"url": local_server.url(path)}, CTX)
    assert not result.success
    assert "max_response_bytes=100000" in (result.error or "")


async def test_output_is_cut_at_max_output_chars(local_server: LocalServer) -> None:
    tool = HttpRequestTool(loopback_policy("127.0.0.1/32"), max_output_chars=500)
    result = await tool.execute({"url": local_server.url("/big")}, CTX)
    assert result.success
    assert "x" * 500 in result.output and "x" * 501 not in result.output
    assert "cut at max_output_chars=500" in result.output


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("file:///etc/passwd", "only http:// and https://"),
        ("ftp://127.0.0.1/", "only http:// and https://"),
        ("http://user:pw@127.0.0.1/", "user name or password"),
        ("http://127.0.0.1:99999/", "not a valid URL"),
        ("", "'url' must be a URL"),
    ],
)
async def test_bad_urls_are_refused(url: str, words: str) -> None:
    result = await WebFetchTool(loopback_policy("127.0.0.1/32")).execute({"url": url}, CTX)
    assert not result.success and words in (result.error or ""), result.error


async def test_http_request_refuses_a_method_not_configured_and_reserved_headers(
    local_server: LocalServer,
) -> None:
    tool = HttpRequestTool(loopback_policy("127.0.0.1/32"))
    post = await tool.execute({"url": local_server.url("/echo"), "method": "POST"}, CTX)
    assert not post.success and "[tools.http] methods" in (post.error or "")
    host = await tool.execute(
        {"url": local_server.url("/echo"), "headers": {"Host": "other.test"}}, CTX
    )
    assert not host.success and "set by the tool itself" in (host.error or "")
    body = await tool.execute({"url": local_server.url("/echo"), "body": "x"}, CTX)
    assert not body.success and "GET sends none" in (body.error or "")
    assert local_server.seen == []
    assert tool.parameters["properties"]["method"]["enum"] == ["GET"]


async def test_an_error_status_is_a_failed_result(local_server: LocalServer) -> None:
    result = await HttpRequestTool(loopback_policy("127.0.0.1/32")).execute(
        {"url": local_server.url("/missing")}, CTX
    )
    assert not result.success and "answered HTTP 404" in (result.error or "")
    assert "no such page" in result.output


async def test_a_server_that_never_answers_times_out() -> None:
    # A listening socket that never accepts: the connection opens, no answer ever comes.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        tool = WebFetchTool(loopback_policy("127.0.0.1/32"), timeout_s=0.3)
        result = await tool.execute({"url": f"http://127.0.0.1:{port}/"}, CTX)
    assert not result.success and "did not answer within 0.3 s" in (result.error or "")


async def test_output_is_scrubbed(local_server: LocalServer) -> None:
    tool = WebFetchTool(loopback_policy("127.0.0.1/32"), scrub=Scrubber([]).scrub)
    result = await tool.execute({"url": local_server.url("/secret")}, CTX)
    assert result.success and FAKE_KEY not in result.output and "[redacted]" in result.output


# --- risk and policy -----------------------------------------------------------------------------


async def test_risk_classes_and_what_the_policy_does_with_them() -> None:
    policy = loopback_policy("127.0.0.1/32")
    fetch, request = WebFetchTool(policy), HttpRequestTool(policy)
    assert fetch.risk is RiskClass.READ and request.risk is RiskClass.ACT
    assert request.describe_access({"url": "http://a.test/x"}).hosts == ("a.test",)
    read_only = SecurityPolicy(autonomy="read_only")
    call = ToolCall(id="1", name="web_fetch", arguments={"url": "http://a.test/"})
    assert (await read_only.before_tool(call, fetch, CTX)).outcome == "continue"
    call = ToolCall(id="2", name="http_request", arguments={"url": "http://a.test/"})
    decision = await read_only.before_tool(call, request, CTX)
    assert decision.outcome == "cancel" and "read_only" in (decision.reason or "")


async def test_the_next_checked_address_is_tried_when_one_cannot_be_reached(
    second_server: LocalServer,
) -> None:
    # Nothing listens on 127.0.0.3 (as an IPv6 answer on an IPv4-only network): the request
    # goes to the next address the name resolved to, which was checked too.
    resolver = FakeResolver({"site.test": [["127.0.0.3", "127.0.0.2"]]})
    policy = loopback_policy("127.0.0.0/8", domains=["site.test"], resolver=resolver)
    result = await WebFetchTool(policy).execute(
        {"url": f"http://site.test:{second_server.port}/text"}, CTX
    )
    assert result.success, result.error
    assert second_server.seen == [("GET", "/text", f"site.test:{second_server.port}")]
    alone = FakeResolver({"site.test": [["127.0.0.3"]]})
    policy = loopback_policy("127.0.0.0/8", domains=["site.test"], resolver=alone)
    failed = await WebFetchTool(policy).execute(
        {"url": f"http://site.test:{second_server.port}/text"}, CTX
    )
    assert not failed.success and "cannot connect to 127.0.0.3" in (failed.error or "")


async def test_a_redirect_to_an_overlong_url_is_refused(second_server: LocalServer) -> None:
    tool = WebFetchTool(loopback_policy("127.0.0.2/32", domains=["127.0.0.2"]))
    result = await tool.execute({"url": second_server.url("/redirect-long")}, CTX)
    assert not result.success and "at most 2048" in (result.error or "")
    assert len(result.error or "") < 400
    assert [p for _, p, _ in second_server.seen] == ["/redirect-long"]
