"""One HTTP exchange for the agent's tools, to checked addresses only, bounded in time and size.

:class:`PinnedFetcher` follows redirects itself, and for each hop: checks the URL against the
:class:`~clawseed_edge.tools.destinations.DestinationPolicy`, resolves the host once, checks
every address, then connects to THAT address (the URL's host is replaced by the checked IP;
the Host header and the TLS server name, which the certificate is verified against, stay the
original host). There is no second lookup between the check and the connection, so a DNS
answer that changes (DNS rebinding) cannot lead a request to 127.0.0.1 or a metadata address.

Each hop gets a fresh connection (no pooling: a pooled connection opened for one host name
must not carry a request for another), proxies from the environment are ignored (a proxy
would make its own lookup), and the whole exchange, redirects included, has one deadline.
A body is read in chunks and abandoned as soon as it passes ``max_response_bytes``.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

import msgspec

from .destinations import DestinationPolicy, Target

if TYPE_CHECKING:
    import httpx

__all__ = ["FetchFailed", "Fetched", "PinnedFetcher", "pinned_url"]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class FetchFailed(Exception):
    """The exchange did not complete (timeout, connection error, a body over the cap ...)."""


class Fetched(msgspec.Struct, frozen=True):
    """A response: final URL, status, headers and the body (at most the cap, decoded)."""

    url: str
    status: int
    reason: str
    headers: Mapping[str, str]
    body: bytes
    redirects: tuple[str, ...]

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    def text(self) -> str:
        """The body as text, in the charset the server declared (UTF-8 otherwise)."""
        charset = "utf-8"
        for param in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "charset" and value.strip():
                charset = value.strip().strip("\"'")
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:  # an unknown charset name
            return self.body.decode("utf-8", errors="replace")


class PinnedFetcher:
    """Send requests to checked addresses only; see the module docstring.

    Args:
        policy: Which hosts and addresses may be reached.
        timeout_s: Deadline of one whole exchange, redirects included.
        max_response_bytes: A body larger than this (after decompression) fails the call.
        max_redirects: Redirects followed before the call fails.
        user_agent: Sent with every request.
        ssl_context: Verifies servers' certificates (default: httpx's, with the certifi CAs).
    """

    def __init__(
        self,
        policy: DestinationPolicy,
        *,
        timeout_s: float = 10.0,
        max_response_bytes: int = 1_048_576,
        max_redirects: int = 3,
        user_agent: str = "clawseed-edge",
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.policy = policy
        self.timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes
        self.max_redirects = max_redirects
        self.user_agent = user_agent
        self._ssl = ssl_context

    async def fetch(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> Fetched:
        """One request, redirects followed (each hop checked again). Cancel-safe.

        Raises:
            DestinationRefused: a URL or address the policy refuses (first hop or a redirect;
                from :mod:`~clawseed_edge.tools.destinations`).
            FetchFailed: timeout, connection failure, too many redirects, a body over the cap.
        """
        try:
            async with asyncio.timeout(self.timeout_s):
                return await self._follow(url, method, dict(headers or {}), body)
        except TimeoutError:
            raise FetchFailed(f"{url} did not answer within {self.timeout_s:g} s") from None

    async def _follow(
        self, url: str, method: str, headers: dict[str, str], body: bytes | None
    ) -> Fetched:
        seen: list[str] = []
        while True:
            target = await self.policy.resolve(self.policy.check_url(url))
            fetched = await self._send(target, method, headers, body, tuple(seen))
            location = fetched.headers.get("location")
            if fetched.status not in _REDIRECTS or not location:
                return fetched
            if len(seen) >= self.max_redirects:
                raise FetchFailed(
                    f"{seen[0] if seen else url} redirected more than max_redirects="
                    f"{self.max_redirects} times (last to {location[:200]})"
                )
            seen.append(url)
            next_url = urljoin(url, location)
            if fetched.status == 303 or (fetched.status in (301, 302) and method == "POST"):
                method, body = "GET", None  # what browsers do; 307/308 keep the method
            if _origin(next_url) != _origin(url):
                # Credentials meant for one site are not handed to the next.
                headers = {
                    k: v for k, v in headers.items() if k.lower() not in ("authorization", "cookie")
                }
            url = next_url

    async def _send(
        self,
        target: Target,
        method: str,
        headers: dict[str, str],
        body: bytes | None,
        redirects: tuple[str, ...],
    ) -> Fetched:
        """One hop to the checked addresses in turn (the next one only when a connection could
        not be made, so nothing was sent: an IPv6 answer on an IPv4-only network); the body
        read up to the cap."""
        import httpx  # lazily: only a device with the HTTP tools on pays for the import

        own = {k: v for k, v in headers.items() if k.lower() != "host"}
        for index, address in enumerate(target.addresses):
            pinned, host, extensions = pinned_url(httpx.URL(target.url), target, address)
            request_headers = {"User-Agent": self.user_agent, **own, "Host": host}
            try:
                async with httpx.AsyncClient(
                    trust_env=False,
                    follow_redirects=False,
                    verify=self._ssl_context(),
                    timeout=httpx.Timeout(self.timeout_s),
                ) as client:
                    request = client.build_request(
                        method, pinned, headers=request_headers, content=body, extensions=extensions
                    )
                    response = await client.send(request, stream=True)
                    try:
                        data = await self._read_capped(response, target)
                    finally:
                        await response.aclose()
            except httpx.ConnectError as exc:
                if index + 1 < len(target.addresses):
                    continue
                raise FetchFailed(
                    f"{method} {target.url} failed: cannot connect to {address}: {exc}"
                ) from None
            except httpx.HTTPError as exc:
                raise FetchFailed(
                    f"{method} {target.url} failed: {type(exc).__name__}: {exc or 'no detail'}"
                ) from None
            return Fetched(
                url=target.url,
                status=response.status_code,
                reason=response.reason_phrase,
                headers={k.lower(): v for k, v in response.headers.items()},
                body=data,
                redirects=redirects,
            )
        raise AssertionError("a Target always has an address")  # resolve() guarantees it

    async def _read_capped(self, response: httpx.Response, target: Target) -> bytes:
        cap = self.max_response_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise FetchFailed(
                f"{target.url} answered with {int(declared)} bytes, more than "
                f"max_response_bytes={cap}; nothing was read"
            )
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > cap:
                raise FetchFailed(
                    f"{target.url} sent more than max_response_bytes={cap} bytes; the rest "
                    "was not read"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _ssl_context(self) -> ssl.SSLContext:
        # One context per fetcher: building one loads the CA bundle (slow on a Pi).
        if self._ssl is None:
            import httpx

            self._ssl = httpx.create_ssl_context()
        return self._ssl


def pinned_url(url: Any, target: Target, address: str) -> tuple[Any, str, dict[str, Any]]:
    """How a request for ``url`` reaches the checked ``address`` and nothing else.

    Args:
        url: An httpx URL (or the same class of another httpx, such as the MCP SDK's) on
            ``target``'s host.
        target: The checked destination.
        address: One of ``target.addresses``.

    Returns:
        The URL with the IP in place of the host name (no lookup is left to make), the Host
        header to send, and the request extensions that keep the TLS server name (which the
        certificate is verified against) the original host.
    """
    extensions: dict[str, Any] = {"sni_hostname": target.host} if target.scheme == "https" else {}
    return url.copy_with(host=address), _host_header(target), extensions


def _host_header(target: Target) -> str:
    host = f"[{target.host}]" if ":" in target.host else target.host
    default = 443 if target.scheme == "https" else 80
    return host if target.port == default else f"{host}:{target.port}"


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port
