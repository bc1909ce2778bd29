"""Where the HTTP tools may connect: a domain allowlist and the addresses names resolve to.

A URL passes in two steps, and both run again for every redirect:

1. :meth:`DestinationPolicy.check_url`: the scheme is ``http`` or ``https``, the URL carries no
   user name or password, and the host matches ``allowed_domains`` (``"example.com"`` matches
   that name only, ``"*.example.com"`` its subdomains, ``"*"`` any host).
2. :meth:`DestinationPolicy.resolve`: the host is resolved ONCE, every address it resolves to
   must be public (not loopback, private, link-local, carrier-grade NAT, multicast, reserved,
   or a cloud metadata address such as 169.254.169.254 or fd00:ec2::254) unless it lies in
   ``allowed_networks``; the caller then connects to that checked address (see
   :mod:`clawseed_edge.tools.http_client`), so a second DNS answer cannot swap in another one.

A metadata address is never lifted by a wide network such as ``169.254.0.0/16``: it must be
listed on its own (``"169.254.169.254/32"``), since it hands out cloud credentials.
Standard library only.
"""

from __future__ import annotations

import asyncio
import fnmatch
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

import msgspec

__all__ = [
    "MAX_URL_CHARS",
    "METADATA_ADDRESSES",
    "DestinationPolicy",
    "DestinationRefused",
    "Resolver",
    "Target",
    "address_block_reason",
    "system_resolver",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Resolves ``(host, port)`` to IP address strings (the test suite passes a fake).
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

#: Cloud instance-metadata endpoints (AWS, GCP, Azure: 169.254.169.254; AWS IPv6;
#: Alibaba; Oracle). They hand out credentials to whoever asks from the machine.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200", "192.0.0.192")
)

#: A longer URL (from the model or a redirect) is refused.
MAX_URL_CHARS = 2048
_MAX_ADDRESSES = 16  # a name with more answers than this is odd; checking them all is bounded


class DestinationRefused(ValueError):
    """A URL or an address the policy does not allow; the message says why and what to do."""


class Target(msgspec.Struct, frozen=True):
    """A checked destination: connect to one of ``addresses`` (every one was checked), send
    ``host`` as Host header and TLS server name."""

    url: str
    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]

    @property
    def address(self) -> str:
        """The first checked address (the one tried first)."""
        return self.addresses[0]


async def system_resolver(host: str, port: int) -> Sequence[str]:
    """The operating system's resolver (``getaddrinfo``), TCP addresses only."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def address_block_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public address (``None`` when it is one)."""
    if isinstance(ip, ipaddress.IPv6Address):
        # An IPv4 address wrapped in IPv6 reaches the IPv4 host: judge that one.
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None:
            inner = address_block_reason(embedded)
            return f"{inner} (inside {ip})" if inner else None
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    for test, words in (
        (ip.is_loopback, "a loopback address"),
        (ip.is_link_local, "a link-local address"),
        (ip.is_unspecified, "the unspecified address"),
        (ip.is_multicast, "a multicast address"),
        (ip.is_private, "a private address"),
        (ip.is_reserved, "a reserved address"),
    ):
        if test:
            return words
    if not ip.is_global:  # e.g. 100.64.0.0/10 (carrier-grade NAT), 192.0.0.0/24
        return "not a public address"
    return None


def _ascii_pattern(pattern: str) -> str:
    """An allowlist entry as hosts are matched: lower case, ASCII (IDNA) labels."""
    pattern = pattern.strip().lower().rstrip(".")
    if pattern.isascii():
        return pattern
    labels = []
    for label in pattern.split("."):
        try:
            labels.append(label if label.isascii() else label.encode("idna").decode("ascii"))
        except UnicodeError:
            labels.append(label)  # matches nothing: hosts are ASCII by then
    return ".".join(labels)


@dataclass(frozen=True, slots=True)
class DestinationPolicy:
    """Which hosts and addresses the HTTP tools may reach.

    Args:
        allowed_domains: Host names (exact, ``*.suffix`` for subdomains, ``*`` for any host);
            an IP literal in a URL must be listed as written (``"192.168.1.20"``).
        allowed_networks: CIDR networks (``"192.168.1.0/24"``, ``"127.0.0.1/32"``) whose
            addresses may be reached although they are not public.
        resolver: Resolves a host to addresses (default: the system's, once per request).
    """

    allowed_domains: tuple[str, ...] = ()
    allowed_networks: tuple[IPNetwork, ...] = ()
    resolver: Resolver = system_resolver
    _patterns: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_patterns", tuple(_ascii_pattern(d) for d in self.allowed_domains)
        )

    @classmethod
    def of(
        cls,
        allowed_domains: Iterable[str] = (),
        allowed_networks: Iterable[str] = (),
        resolver: Resolver | None = None,
    ) -> DestinationPolicy:
        """Build from strings; a bad network raises ``ValueError`` naming it."""
        networks = []
        for text in allowed_networks:
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError as exc:
                raise ValueError(
                    f"{text!r} is not a network; write one such as '192.168.1.0/24' or "
                    f"'127.0.0.1/32' ({exc})"
                ) from None
        return cls(
            tuple(allowed_domains), tuple(networks), resolver if resolver else system_resolver
        )

    # --- step 1: the URL ------------------------------------------------------------------

    def check_url(self, url: str) -> SplitResult:
        """The parsed URL when its scheme and host are allowed.

        Raises:
            DestinationRefused: a URL longer than :data:`MAX_URL_CHARS`, another scheme,
                credentials in the URL, no host, or a host ``allowed_domains`` does not list.
        """
        if len(url) > MAX_URL_CHARS:
            raise DestinationRefused(
                f"the URL {url[:80]!r}... is {len(url)} characters; at most {MAX_URL_CHARS}"
            )
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError as exc:
            raise DestinationRefused(f"{url!r} is not a valid URL ({exc})") from None
        if parts.scheme not in ("http", "https"):
            raise DestinationRefused(
                f"{url!r}: only http:// and https:// URLs can be fetched, not "
                f"{parts.scheme or 'a relative URL'!r}"
            )
        if parts.username is not None or parts.password is not None:
            raise DestinationRefused(
                f"{url!r} carries a user name or password; such URLs are refused"
            )
        host = (parts.hostname or "").rstrip(".")
        if not host:
            raise DestinationRefused(f"{url!r} has no host name")
        if not host.isascii():
            # An international name is looked up, matched and sent in its ASCII form.
            try:
                ascii_host = host.encode("idna").decode("ascii")
            except UnicodeError:
                raise DestinationRefused(f"{url!r}: {host!r} is not a valid host name") from None
            port = f":{parts.port}" if parts.port is not None else ""
            parts = parts._replace(netloc=f"{ascii_host}{port}")
            host = ascii_host
        if not self.domain_allowed(host):
            listed = ", ".join(self._patterns) or "none"
            raise DestinationRefused(
                f"host {host!r} is not in [tools.http] allowed_domains (listed: {listed}); the "
                "user can add it to the config"
            )
        return parts

    def domain_allowed(self, host: str) -> bool:
        """Whether ``host`` matches ``allowed_domains`` (case-insensitive)."""
        host = host.lower().rstrip(".")
        for pattern in self._patterns:
            if pattern == "*" or pattern == host:
                return True
            if pattern.startswith("*.") and host.endswith(pattern[1:]):
                return True
            if "*" not in pattern and "?" not in pattern:
                continue
            if fnmatch.fnmatchcase(host, pattern):
                return True
        return False

    # --- step 2: the addresses ------------------------------------------------------------

    async def resolve(self, parts: SplitResult) -> Target:
        """Resolve the URL's host once and check every address; they are the target's addresses.

        Raises:
            DestinationRefused: the name does not resolve, or resolves to an address that is
                not public and not in ``allowed_networks`` (any one such answer refuses all:
                which one a connection would use is not ours to choose).
        """
        host = (parts.hostname or "").rstrip(".")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            addresses = [literal]
        else:
            try:
                answers = await self.resolver(host, port)
            except OSError as exc:
                raise DestinationRefused(f"cannot resolve {host!r}: {exc}") from None
            addresses = []
            for answer in list(answers)[:_MAX_ADDRESSES]:
                try:
                    # getaddrinfo may give an IPv6 scope ("fe80::1%eth0"): judge the address.
                    addresses.append(ipaddress.ip_address(answer.split("%", 1)[0]))
                except ValueError:
                    raise DestinationRefused(
                        f"{host!r} resolved to {answer!r}, which is not an IP address"
                    ) from None
            if not addresses:
                raise DestinationRefused(f"{host!r} resolved to no address")
        for ip in addresses:
            self.check_address(ip, host)
        unique = tuple(dict.fromkeys(str(ip) for ip in addresses))
        return Target(
            url=parts.geturl(), scheme=parts.scheme, host=host, port=port, addresses=unique
        )

    def check_address(self, ip: IPAddress, host: str = "") -> None:
        """Refuse ``ip`` unless it is public or inside ``allowed_networks``.

        Raises:
            DestinationRefused: names the address, why it is blocked and the config key.
        """
        reason = address_block_reason(ip)
        if reason is None:
            return
        lifted = [n for n in self.allowed_networks if n.version == ip.version and ip in n]
        if ip in METADATA_ADDRESSES:
            lifted = [n for n in lifted if n.num_addresses == 1]
        if lifted:
            return
        name = f"{host!r} resolves to {ip}" if host and host != str(ip) else str(ip)
        raise DestinationRefused(
            f"{name}, {reason}; requests there are refused unless the user lists its network "
            "in [tools.http] allowed_networks"
        )
