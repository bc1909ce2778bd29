"""The destination policy: which hosts match the allowlist, which addresses are public, and
how allowed_networks lifts a block (a metadata address only when listed alone)."""

from __future__ import annotations

import ipaddress
import re

import pytest

from clawseed_edge.tools.destinations import (
    DestinationPolicy,
    DestinationRefused,
    address_block_reason,
)


@pytest.mark.parametrize(
    ("patterns", "host", "allowed"),
    [
        (["example.com"], "example.com", True),
        (["example.com"], "EXAMPLE.com.", True),
        (["example.com"], "api.example.com", False),
        (["example.com"], "badexample.com", False),
        (["*.example.com"], "api.example.com", True),
        (["*.example.com"], "example.com", False),
        (["*.example.com"], "evilexample.com", False),
        (["*"], "anything.test", True),
        ([], "example.com", False),
    ],
)
def test_domain_patterns(patterns: list[str], host: str, allowed: bool) -> None:
    assert DestinationPolicy.of(patterns).domain_allowed(host) is allowed


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
        ("127.0.0.1", "a loopback address"),
        ("::1", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("fe80::1", "a link-local address"),
        ("169.254.10.10", "a link-local address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("100.100.100.200", "a cloud metadata address"),
        ("0.0.0.0", "the unspecified address"),
        ("224.0.0.1", "a multicast address"),
        ("::ffff:10.0.0.1", "a private address (inside ::ffff:a00:1)"),
        ("2002:7f00:1::", "a loopback address (inside 2002:7f00:1::)"),
    ],
)
def test_address_block_reason(address: str, reason: str | None) -> None:
    assert address_block_reason(ipaddress.ip_address(address)) == reason


def test_allowed_networks_lift_a_block_but_a_metadata_address_needs_its_own_entry() -> None:
    lan = DestinationPolicy.of(["*"], ["192.168.1.0/24", "169.254.0.0/16"])
    lan.check_address(ipaddress.ip_address("192.168.1.20"))
    lan.check_address(ipaddress.ip_address("169.254.7.7"))
    with pytest.raises(DestinationRefused, match=re.escape("192.168.2.1, a private address")):
        lan.check_address(ipaddress.ip_address("192.168.2.1"))
    with pytest.raises(DestinationRefused, match="cloud metadata"):
        lan.check_address(ipaddress.ip_address("169.254.169.254"))
    DestinationPolicy.of(["*"], ["169.254.169.254/32"]).check_address(
        ipaddress.ip_address("169.254.169.254")
    )


def test_a_bad_network_is_named() -> None:
    with pytest.raises(ValueError, match=re.escape("'192.168.1/33' is not a network")):
        DestinationPolicy.of(["*"], ["192.168.1/33"])


async def test_a_name_that_does_not_resolve_is_refused() -> None:
    async def nothing(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    policy = DestinationPolicy.of(["*"], [], nothing)
    with pytest.raises(DestinationRefused, match=re.escape("cannot resolve 'nowhere.test'")):
        await policy.resolve(policy.check_url("http://nowhere.test/"))


async def test_an_ip_literal_is_checked_without_a_lookup() -> None:
    async def fail(host: str, port: int) -> list[str]:
        raise AssertionError("no lookup for an IP literal")

    policy = DestinationPolicy.of(["[::1]", "::1"], ["::1/128"], fail)
    target = await policy.resolve(policy.check_url("http://[::1]:8080/x"))
    assert (target.address, target.port, target.host) == ("::1", 8080, "::1")


async def test_an_international_name_is_matched_and_resolved_in_ascii() -> None:
    asked: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["93.184.216.34"]

    policy = DestinationPolicy.of(["xn--bcher-kva.example"], [], resolver)
    target = await policy.resolve(policy.check_url("https://bücher.example:8443/a?b=1"))
    assert asked == ["xn--bcher-kva.example"]
    assert target.url == "https://xn--bcher-kva.example:8443/a?b=1"
    # The allowlist may name it either way.
    written = DestinationPolicy.of(["*.bücher.example"], [], resolver)
    assert written.check_url("https://www.bücher.example/").hostname == "www.xn--bcher-kva.example"
