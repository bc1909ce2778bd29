"""``http_request`` and ``web_fetch``: the agent's HTTP tools, to allowed hosts only.

Both go through :class:`~clawseed_edge.tools.http_client.PinnedFetcher`: the domain
allowlist, the address check after DNS resolution and on every redirect, the connection to
the checked address, one deadline and a body cap. Both are off unless the config turns them
on (``[tools] http_request`` / ``web_fetch``).

Risk classes (the SecurityPolicy decides by them; a tool's risk does not depend on its
arguments):

* ``web_fetch`` is ``read``: GET only, the page comes back as readable text.
* ``http_request`` is ``act``: it may POST, PUT or DELETE (the methods ``[tools.http] methods``
  lists) and so change something on a server, and any method can carry data out in its URL,
  headers or body. In ``supervised`` autonomy it asks first; ``read_only`` refuses it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from clawseed_edge.api import BaseTool, ResourceAccess, RiskClass, ToolContext, ToolResult

from .destinations import MAX_URL_CHARS, DestinationPolicy, DestinationRefused
from .http_client import Fetched, FetchFailed, PinnedFetcher

__all__ = ["HTTP_METHODS", "HttpRequestTool", "WebFetchTool"]

#: The methods ``http_request`` can be configured to send.
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
# Set by the fetcher (framing and the checked host); a model's value would defeat the checks.
_RESERVED_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer"}
)
_MAX_URL = MAX_URL_CHARS
_MAX_HEADERS = 20
_MAX_BODY_CHARS = 65_536
_SCRUB_MARGIN = 4096  # kept past the cut for scrubbing: a key straddling it is seen whole
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml")


def _unchanged(text: str) -> str:
    return text


def _host_of(arguments: Mapping[str, Any]) -> tuple[str, ...]:
    url = arguments.get("url")
    if not isinstance(url, str):
        return ()
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return ()
    return (host,) if host else ()


class _HttpTool(BaseTool):
    """What both tools share: the fetcher, the output cap and the scrubber."""

    def __init__(
        self,
        policy: DestinationPolicy,
        *,
        timeout_s: float = 10.0,
        max_response_bytes: int = 1_048_576,
        max_redirects: int = 3,
        max_output_chars: int = 8000,
        scrub: Callable[[str], str] | None = None,
    ) -> None:
        self.fetcher = PinnedFetcher(
            policy,
            timeout_s=timeout_s,
            max_response_bytes=max_response_bytes,
            max_redirects=max_redirects,
        )
        self.max_output_chars = max_output_chars
        self.scrub: Callable[[str], str] = scrub if scrub is not None else _unchanged
        # The tool reports its own deadline before the engine's per-tool timeout cancels it.
        self.timeout_s = timeout_s + 5.0

    def describe_access(self, arguments: Mapping[str, Any]) -> ResourceAccess | None:
        return ResourceAccess(hosts=_host_of(arguments))

    async def _fetch(
        self,
        url: Any,
        *,
        method: str = "GET",
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> Fetched | ToolResult:
        """The response, or the failed result the model reads."""
        if not isinstance(url, str) or not url.strip():
            return ToolResult.fail("'url' must be a URL such as 'https://example.com/page'")
        if len(url) > _MAX_URL:
            return ToolResult.fail(f"the URL is {len(url)} characters; at most {_MAX_URL}")
        try:
            return await self.fetcher.fetch(url.strip(), method=method, headers=headers, body=body)
        except DestinationRefused as exc:
            return ToolResult.fail(f"refused: {exc}")
        except FetchFailed as exc:
            return ToolResult.fail(str(exc))

    def _cut(self, text: str, *, longer: bool = False) -> str:
        """Scrubbed, then cut at ``max_output_chars`` with a note (``longer``: the source was
        already cut before it got here)."""
        cap = self.max_output_chars
        full = len(text)
        text = self.scrub(text[: cap + _SCRUB_MARGIN])
        if full > cap or longer:
            text = f"{text[:cap]}\n[... cut at max_output_chars={cap}; there is more ...]"
        return text


class HttpRequestTool(_HttpTool):
    """Send one HTTP request to an allowed host; the status, type and body come back.

    Args:
        policy: Allowed domains and networks, and the resolver.
        methods: The methods the model may use (``GET`` by default).
        timeout_s: Deadline of the whole exchange, redirects included.
        max_response_bytes: A larger body fails the call (nothing past the cap is read).
        max_redirects: Redirects followed (each one checked like the first URL).
        max_output_chars: Body text beyond this is cut with a note.
        scrub: Applied to the body before it is cut (credential redaction).
    """

    name = "http_request"
    description = (
        "Send an HTTP request to an allowed host (an API, a device on the network) and get "
        "back the status, content type and body text."
    )
    risk = RiskClass.ACT
    external_content = True  # an answer from another host: no auto-approval after it

    def __init__(
        self, policy: DestinationPolicy, *, methods: Sequence[str] = ("GET",), **limits: Any
    ) -> None:
        super().__init__(policy, **limits)
        self.methods = tuple(m.upper() for m in methods) or ("GET",)
        self.parameters: Mapping[str, Any] = {
            "type": "object",
            "properties": {
                "url": {"type": "string", "maxLength": _MAX_URL, "description": "http(s) URL"},
                "method": {"type": "string", "enum": list(self.methods), "default": "GET"},
                "headers": {
                    "type": "object",
                    "additionalProperties": {"type": "string", "maxLength": 1024},
                    "maxProperties": _MAX_HEADERS,
                },
                "body": {
                    "type": "string",
                    "maxLength": _MAX_BODY_CHARS,
                    "description": "request body (e.g. JSON text), not for GET or HEAD",
                },
            },
            "required": ["url"],
            "additionalProperties": False,
        }

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        """Send the request. Cancel-safe: the connection is closed."""
        method = str(arguments.get("method") or "GET").upper()
        if method not in self.methods:
            return ToolResult.fail(
                f"method {method!r} is not allowed; allowed: {', '.join(self.methods)} "
                "(the user sets [tools.http] methods)"
            )
        headers = arguments.get("headers") or {}
        if not isinstance(headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            return ToolResult.fail("'headers' must map header names to string values")
        reserved = sorted(k for k in headers if k.lower() in _RESERVED_HEADERS)
        if reserved:
            return ToolResult.fail(
                f"header(s) {', '.join(reserved)} are set by the tool itself; leave them out"
            )
        text = arguments.get("body")
        if text is not None and (not isinstance(text, str) or method in ("GET", "HEAD")):
            return ToolResult.fail(f"a body must be a string, and {method} sends none")
        body = text.encode("utf-8") if isinstance(text, str) else None
        fetched = await self._fetch(arguments.get("url"), method=method, headers=headers, body=body)
        if isinstance(fetched, ToolResult):
            return fetched
        return self._result(fetched, method)

    def _result(self, fetched: Fetched, method: str) -> ToolResult:
        kind = fetched.content_type or "no content type"
        lines = [f"HTTP {fetched.status} {fetched.reason} ({kind}, {len(fetched.body)} bytes)"]
        if fetched.redirects:
            lines.append(f"after redirects from {' -> '.join(fetched.redirects)} to {fetched.url}")
        if method == "HEAD" or not fetched.body:
            pass
        elif not fetched.content_type or fetched.content_type.startswith(_TEXT_TYPES):
            lines += ["", self._cut(fetched.text())]
        else:
            lines += ["", f"[binary body of {len(fetched.body)} bytes not shown]"]
        output = "\n".join(lines)
        if fetched.status >= 400:
            return ToolResult.fail(f"{fetched.url} answered HTTP {fetched.status}", output)
        data = {"status": fetched.status, "url": fetched.url, "content_type": kind}
        return ToolResult.ok(output, data)


class WebFetchTool(_HttpTool):
    """Fetch a web page from an allowed host and return its readable text, not raw HTML.

    Takes the same limits as :class:`HttpRequestTool` (no ``methods``: always GET).
    """

    name = "web_fetch"
    description = (
        "Fetch a web page (GET) from an allowed site and return its readable text: title, "
        "headings, paragraphs and links, without scripts, styles or navigation."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "maxLength": _MAX_URL, "description": "http(s) URL"}
        },
        "required": ["url"],
        "additionalProperties": False,
    }
    risk = RiskClass.READ
    external_content = True  # a web page: no auto-approval after it

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        """Fetch the page. Cancel-safe: the connection is closed."""
        fetched = await self._fetch(
            arguments.get("url"), headers={"Accept": "text/html, text/plain;q=0.9"}
        )
        if isinstance(fetched, ToolResult):
            return fetched
        if fetched.status >= 400:
            return ToolResult.fail(f"{fetched.url} answered HTTP {fetched.status} {fetched.reason}")
        kind = fetched.content_type
        if kind in ("text/html", "application/xhtml+xml") or (
            not kind and fetched.body.lstrip()[:1] == b"<"
        ):
            # Cut the text at the cap plus a margin so the scrubber sees a key whole.
            from .html_text import html_to_text  # html.parser: only when a page is read

            text, longer = html_to_text(
                fetched.text(),
                base_url=fetched.url,
                max_chars=self.max_output_chars + _SCRUB_MARGIN,
            )
        elif kind.startswith("text/") or kind in ("application/json", ""):
            text, longer = fetched.text(), False
        else:
            return ToolResult.fail(
                f"{fetched.url} is {kind}, not a text page; web_fetch reads HTML and text only"
            )
        header = f"{fetched.url}"
        if fetched.redirects:
            header += f" (redirected from {fetched.redirects[0]})"
        return ToolResult.ok(f"{header}\n\n{self._cut(text, longer=longer)}", {"url": fetched.url})
