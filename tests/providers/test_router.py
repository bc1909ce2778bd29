"""RouterProvider: hints from ChatRequest.model, image and keyword rules, config routes."""

from __future__ import annotations

from clawseed_edge.api import ChatMessage, ChatRequest, ChatResponse, ProviderCapabilities
from clawseed_edge.providers import (
    ProviderConfig,
    RouteConfig,
    RouterProvider,
    create_provider,
)
from clawseed_edge.providers.router import Route
from clawseed_edge.testing.fake_servers import FakeAnthropic, FakeOllama, Reply

from .helpers import ask


class Echo:
    """Answers with its name and the model it was asked for."""

    def __init__(self, name: str, vision: bool = False) -> None:
        self.name = name
        self.model = f"{name}-model"
        self.vision = vision
        self.requests: list[ChatRequest] = []
        self.closed = 0

    @property
    def capabilities(self) -> ProviderCapabilities:
        return ProviderCapabilities(vision=self.vision)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(self.name, provider=self.name, model=request.model or self.model)

    def stream(self, request: ChatRequest):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    async def aclose(self) -> None:
        self.closed += 1


def router() -> tuple[RouterProvider, Echo, Echo, Echo]:
    default, fast, vision = Echo("default"), Echo("fast"), Echo("vision", vision=True)
    return (
        RouterProvider(
            default,
            [
                Route(provider=fast, hint="fast", keywords=("quick",)),
                Route(provider=vision, hint="vision", images=True),
                Route(model="big-model", hint="smart"),
            ],
        ),
        default,
        fast,
        vision,
    )


async def test_hint_selects_the_route_and_is_not_passed_on() -> None:
    provider, _, fast, _ = router()
    response = await provider.chat(ask(model="hint:fast"))
    assert response.provider == "fast"
    assert fast.requests[0].model is None


async def test_hint_with_a_model_route_uses_the_default_provider() -> None:
    provider, default, _, _ = router()
    response = await provider.chat(ask(model="hint:smart"))
    assert default.requests[0].model == "big-model"
    assert (response.provider, response.model) == ("default", "big-model")


async def test_unknown_hint_goes_to_the_default_without_the_hint() -> None:
    provider, default, _, _ = router()
    response = await provider.chat(ask(model="hint:cheap"))
    assert response.provider == "default"
    assert default.requests[0].model is None


async def test_images_rule() -> None:
    provider, _, _, vision = router()
    request = ChatRequest((ChatMessage.user("what is this?", images=("aGk=",)),))
    assert (await provider.chat(request)).provider == "vision"
    assert len(vision.requests) == 1


async def test_keyword_rule_reads_the_last_user_message() -> None:
    provider, _, _, _ = router()
    assert (await provider.chat(ask("Give me a QUICK answer"))).provider == "fast"
    assert (await provider.chat(ask("a long answer please"))).provider == "default"


async def test_explicit_model_is_kept_when_no_route_matches() -> None:
    provider, default, _, _ = router()
    await provider.chat(ask(model="other-model"))
    assert default.requests[0].model == "other-model"


async def test_capabilities_report_vision_when_a_route_handles_images() -> None:
    provider, _, _, _ = router()
    assert provider.capabilities.vision is True
    assert RouterProvider(Echo("plain")).capabilities.vision is False


async def test_aclose_closes_each_provider_once() -> None:
    provider, default, fast, vision = router()
    await provider.aclose()
    assert (default.closed, fast.closed, vision.closed) == (1, 1, 1)


async def test_config_routes_through_real_servers(
    ollama: FakeOllama, anthropic_server: FakeAnthropic
) -> None:
    ollama.models["qwen2.5:0.5b"] = ["completion", "tools"]
    ollama.queue(Reply.text("small"), Reply.text("default"))
    anthropic_server.queue(Reply.text("I see a cat"))
    config = ProviderConfig(
        base_url=ollama.url,
        max_retries=0,
        constrained="off",
        routes=[
            RouteConfig(hint="fast", model="qwen2.5:0.5b"),
            RouteConfig(
                hint="vision",
                images=True,
                provider=ProviderConfig(
                    name="anthropic",
                    api_key="sk-test",
                    base_url=anthropic_server.url,
                    max_retries=0,
                ),
            ),
        ],
    )
    provider = create_provider(config)
    assert isinstance(provider, RouterProvider)
    assert (await provider.chat(ask(model="hint:fast"))).model == "qwen2.5:0.5b"
    assert (await provider.chat(ask())).model == "qwen2.5:3b"
    picture = ChatRequest((ChatMessage.user("what is it?", images=("iVBORw0KGgo=",)),))
    answer = await provider.chat(picture)
    assert (answer.text, answer.provider) == ("I see a cat", "anthropic")
    assert [r.json["model"] for r in ollama.requests_to("/api/chat")] == [
        "qwen2.5:0.5b",
        "qwen2.5:3b",
    ]
    await provider.aclose()
