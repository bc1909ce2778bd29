"""Choose a provider/model per request by a hint or by a rule.

A request names a hint through its ``model`` field: ``ChatRequest(..., model="hint:fast")``
selects the route whose ``hint`` is ``fast`` (``fast``, ``smart``, ``vision`` or your own
names). Without a hint, rules are tried in order: a route with ``images=True`` matches when any
message carries images, a route with ``keywords`` matches when the last user message contains
one of them (case-insensitive). No match: the default provider answers with its own model.

A route either names another ``model`` on the default provider, or another ``provider``.
Unknown hints go to the default provider (the hint is dropped, never sent as a model name).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace

from clawseed_edge.api.events import StreamEvent
from clawseed_edge.api.protocols import Provider, ProviderCapabilities
from clawseed_edge.api.types import ChatRequest, ChatResponse

from ._common import HINT_PREFIX
from .reliable import probe_quietly

__all__ = ["Route", "RouterProvider"]


@dataclass(frozen=True, slots=True)
class Route:
    """One routing rule: when it matches, ``provider`` answers (with ``model`` if set).

    Attributes:
        provider: The provider that answers; None means the router's default provider.
        model: The model to ask (None: the provider's own).
        hint: Matches ``ChatRequest.model == "hint:<hint>"``.
        keywords: Match when the last user message contains one (case-insensitive).
        images: Match when any message carries images.
    """

    provider: Provider | None = None
    model: str | None = None
    hint: str | None = None
    keywords: tuple[str, ...] = field(default=())
    images: bool = False


class RouterProvider:
    """A provider that delegates each request to a route's provider, or to the default.

    Args:
        default: Answers requests no route matches.
        routes: Rules tried in order (a hint match always wins over rules).

    ``name``/``model``/``capabilities`` are the default's, except that ``vision`` is reported
    when any route handles images or the ``vision`` hint.
    """

    def __init__(self, default: Provider, routes: Sequence[Route] = ()) -> None:
        self.default = default
        self.routes = tuple(routes)
        self.name = default.name
        self.model = default.model

    @property
    def capabilities(self) -> ProviderCapabilities:
        caps = self.default.capabilities
        if any(r.images or r.hint == "vision" for r in self.routes):
            return replace(caps, vision=True)
        return caps

    @property
    def constrained_output(self) -> bool:
        """The primary's: whether it constrains replies to an answer or a call."""
        return bool(getattr(self.default, "constrained_output", False))

    @property
    def local_small_model(self) -> bool:
        """The primary's: whether it runs a small model on a local server."""
        return bool(getattr(self.default, "local_small_model", False))

    async def probe(self) -> ProviderCapabilities:
        """Probe the default and every routed provider (failures are logged, not raised).

        Returns the router's capabilities afterwards.
        """
        seen: set[int] = set()
        for provider in (self.default, *(r.provider for r in self.routes if r.provider)):
            if id(provider) not in seen:
                seen.add(id(provider))
                await probe_quietly(provider)
        return self.capabilities

    def select(self, request: ChatRequest) -> tuple[Provider, ChatRequest]:
        """The provider that answers ``request`` and the request to send it (hint removed)."""
        hint = None
        if request.model and request.model.startswith(HINT_PREFIX):
            hint = request.model[len(HINT_PREFIX) :].strip()
        route = self._match(request, hint)
        if route is None:
            model = None if hint is not None else request.model
            return self.default, replace(request, model=model)
        provider = route.provider or self.default
        return provider, replace(request, model=route.model)

    def _match(self, request: ChatRequest, hint: str | None) -> Route | None:
        if hint is not None:
            for route in self.routes:
                if route.hint == hint:
                    return route
        has_images = any(m.images for m in request.messages)
        last_user = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        lowered = last_user.lower()
        for route in self.routes:
            if route.images and has_images:
                return route
            if route.keywords and any(k.lower() in lowered for k in route.keywords):
                return route
        return None

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer with the selected provider. Safe to cancel."""
        provider, routed = self.select(request)
        return await provider.chat(routed)

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Stream from the selected provider."""
        provider, routed = self.select(request)
        return provider.stream(routed)

    async def aclose(self) -> None:
        """Close the default and every routed provider. Idempotent."""
        seen: set[int] = set()
        for provider in (self.default, *(r.provider for r in self.routes if r.provider)):
            if id(provider) not in seen:
                seen.add(id(provider))
                await provider.aclose()
