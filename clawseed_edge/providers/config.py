"""The ``[provider]`` config section: which model server to ask, and what to do when it fails.

The config layer embeds :class:`ProviderConfig` as ``[provider]``; the shape users write::

    [provider]
    name = "ollama"                     # ollama | anthropic | openai (and aliases, see registry)
    model = "qwen2.5:3b"
    base_url = "http://127.0.0.1:11434"
    api_key_env = "ANTHROPIC_API_KEY"   # read the key from this environment variable
    timeout_s = 120

    [[provider.fallbacks]]              # tried in order when the one above cannot answer
    name = "anthropic"
    model = "claude-sonnet-4-6"

    [[provider.routes]]                 # optional: another model for some requests
    hint = "fast"                       # chosen by ChatRequest.model = "hint:fast"
    model = "qwen2.5:0.5b"              # same server, another model

    [[provider.routes]]
    hint = "vision"
    images = true                       # ... or whenever a message carries images
    provider = { name = "anthropic", model = "claude-sonnet-4-6" }

Fields left unset get the defaults of the named provider (:data:`PROVIDER_DEFAULTS`), filled in
when the struct is built, so ``ProviderConfig().model == "qwen2.5:3b"`` and
``ProviderConfig(name="anthropic").api_key_env == "ANTHROPIC_API_KEY"``.
"""

from __future__ import annotations

import math
import os
from typing import Any, Literal

import msgspec

from clawseed_edge.api.errors import ProviderAuthFailed

__all__ = [
    "MAX_RETRIES_LIMIT",
    "PROVIDER_DEFAULTS",
    "ProviderConfig",
    "RouteConfig",
    "ToolMode",
]

#: The largest ``max_retries``: each retry waits longer (exponential backoff), so beyond this a
#: turn only looks hung.
MAX_RETRIES_LIMIT = 10
#: Bounds of ``max_response_bytes`` (1 KiB .. 1 GiB) and of ``deadline_s`` (one day).
_RESPONSE_BYTES_RANGE = (1024, 1024**3)
_DEADLINE_MAX_S = 86400.0

ToolMode = Literal["auto", "native", "prompt"]

_OLLAMA = {"model": "qwen2.5:3b", "base_url": "http://127.0.0.1:11434"}
_ANTHROPIC = {"model": "claude-sonnet-4-6", "api_key_env": "ANTHROPIC_API_KEY"}
_OPENAI = {
    "model": "gpt-4o-mini",
    "base_url": "https://api.openai.com/v1",
    "api_key_env": "OPENAI_API_KEY",
}

#: Defaults per built-in provider name (aliases included): model, base_url, api_key_env.
PROVIDER_DEFAULTS: dict[str, dict[str, str]] = {
    "ollama": _OLLAMA,
    "local": _OLLAMA,
    "anthropic": _ANTHROPIC,
    "claude": _ANTHROPIC,
    "openai": _OPENAI,
    "openai-compatible": {"base_url": "http://127.0.0.1:8080/v1"},
    "llamacpp": {"model": "default", "base_url": "http://127.0.0.1:8080/v1"},
    "vllm": {"base_url": "http://127.0.0.1:8000/v1"},
    "lmstudio": {"base_url": "http://127.0.0.1:1234/v1"},
    "groq": {
        "model": "llama-3.1-8b-instant",
        "base_url": "https://api.groq.com/openai/v1",
        "api_key_env": "GROQ_API_KEY",
    },
    "deepseek": {
        "model": "deepseek-chat",
        "base_url": "https://api.deepseek.com/v1",
        "api_key_env": "DEEPSEEK_API_KEY",
    },
    "openrouter": {
        "base_url": "https://openrouter.ai/api/v1",
        "api_key_env": "OPENROUTER_API_KEY",
    },
    "gemini": {
        "model": "gemini-2.0-flash",
        "base_url": "https://generativelanguage.googleapis.com/v1beta/openai",
        "api_key_env": "GEMINI_API_KEY",
    },
}


class ProviderConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One model server and model, with optional fallbacks and routes.

    Attributes:
        name: Provider name: ``ollama``, ``anthropic``, ``openai`` or an alias (``claude``,
            ``local``, ``groq``, ``deepseek``, ``openrouter``, ``gemini``, ``llamacpp``, ``vllm``,
            ``lmstudio``, ``openai-compatible``) or a plugin's name.
        model: Model id; default per provider (ollama ``qwen2.5:3b``, anthropic
            ``claude-sonnet-4-6``, openai ``gpt-4o-mini``).
        base_url: Server address; default per provider (ollama ``http://127.0.0.1:11434``;
            OpenAI-compatible servers include the ``/v1`` suffix).
        api_key_env: Environment variable holding the API key (anthropic ``ANTHROPIC_API_KEY``,
            openai ``OPENAI_API_KEY`` ...).
        api_key: The key itself; prefer ``api_key_env`` or the secrets file over writing it here.
        timeout_s: Seconds to wait for the server to connect or to send the next bytes.
        deadline_s: Seconds one request may take in all, from sending it to the last byte of
            the answer (a server trickling bytes keeps every read within ``timeout_s``).
        max_response_bytes: Most bytes one answer may have (default 8 MiB); a longer one is
            refused with ProviderBadResponse naming both sizes.
        tool_mode: How tools reach the model: ``native`` (the API's tool calls),
            ``prompt`` (tools described in the prompt, calls parsed from text: for models
            without a tool template), or ``auto`` (Ollama asks ``/api/show``; llama.cpp's
            server is asked for its chat template; other servers get native tools).
        constrained: Ask the server for output that can only be a plain answer or a call of
            an offered tool (Ollama ``format``, OpenAI-compatible ``response_format``): ``on``,
            ``off``, or ``auto`` (on for a local server running a model of at most 2B
            parameters or one without native tools); docs/small-models.md.
        temperature: Sampling temperature, unless the request sets one.
        max_tokens: Upper bound on output tokens, unless the request sets one (anthropic needs
            one: 4096 when unset).
        keep_alive: Ollama only: how long the model stays loaded (``"5m"``, ``"-1"`` forever).
        num_ctx: Ollama only: context window in tokens.
        think: Ollama only: ask a thinking model to think (True/False); None leaves the
            server's default.
        fallbacks: Providers tried in order when this one cannot answer.
        max_retries: Retries per provider on retryable errors (unreachable, timeout, 429, 5xx),
            0..10.
        routes: Rules that send some requests to another model or provider.
        settings: A plugin provider's own table, ``[provider.settings]``, validated by the
            plugin's settings Struct (docs/plugins.md); built-in providers take none.
    """

    name: str = "ollama"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    api_key: str | None = None
    timeout_s: float = 120.0
    deadline_s: float = 600.0
    max_response_bytes: int = 8 * 1024 * 1024
    tool_mode: ToolMode = "auto"
    constrained: Literal["auto", "on", "off"] = "auto"
    temperature: float | None = None
    max_tokens: int | None = None
    keep_alive: str | float | None = None
    num_ctx: int | None = None
    think: bool | None = None
    fallbacks: list[ProviderConfig] = msgspec.field(default_factory=list)
    max_retries: int = 2
    routes: list[RouteConfig] = msgspec.field(default_factory=list)
    settings: dict[str, Any] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        defaults = PROVIDER_DEFAULTS.get(self.name, {})
        if self.model is None:
            self.model = defaults.get("model")
        if self.base_url is None:
            self.base_url = defaults.get("base_url")
        if self.api_key_env is None:
            self.api_key_env = defaults.get("api_key_env")
        if not (self.timeout_s > 0 and math.isfinite(self.timeout_s)):
            raise ValueError(f"timeout_s must be > 0 seconds, got {self.timeout_s}")
        if not 0 < self.deadline_s <= _DEADLINE_MAX_S:  # also refuses NaN
            raise ValueError(
                f"deadline_s must be in (0, {_DEADLINE_MAX_S:g}] seconds, got {self.deadline_s}"
            )
        low, high = _RESPONSE_BYTES_RANGE
        if not low <= self.max_response_bytes <= high:
            raise ValueError(
                f"max_response_bytes must be in {low}..{high}, got {self.max_response_bytes}"
            )
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.max_retries > MAX_RETRIES_LIMIT:
            raise ValueError(
                f"max_retries must be in 0..{MAX_RETRIES_LIMIT}, got {self.max_retries}: "
                "each retry waits longer, so more only makes a turn look hung"
            )

    def resolve_api_key(self, *, required: bool = True) -> str | None:
        """The API key: ``api_key`` if set, else the value of ``api_key_env``.

        Raises:
            ProviderAuthFailed: ``required`` and no key is set (the message names the variable).
        """
        if self.api_key:
            return self.api_key
        if self.api_key_env:
            value = os.environ.get(self.api_key_env, "").strip()
            if value:
                return value
        if not required:
            return None
        env = self.api_key_env or f"{self.name.upper().replace('-', '_')}_API_KEY"
        raise ProviderAuthFailed(
            f"no API key: set {env} (or provider.api_key_env to the variable that holds it)",
            provider=self.name,
            model=self.model,
        )


class RouteConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A rule that sends some requests to another model or provider.

    A route matches when the request's hint equals ``hint`` (``ChatRequest.model =
    "hint:fast"``), or when ``images`` is true and a message carries images, or when the last
    user message contains one of ``keywords`` (case-insensitive). Routes are tried in order.

    Attributes:
        hint: A hint name: ``fast``, ``smart``, ``vision`` or your own.
        keywords: Words that select this route when found in the last user message.
        images: Select this route whenever a message carries images.
        model: Use this model on the main provider (when ``provider`` is unset).
        provider: Use this provider instead (with its own model, fallbacks and retries).
    """

    hint: str | None = None
    keywords: list[str] = msgspec.field(default_factory=list)
    images: bool = False
    model: str | None = None
    provider: ProviderConfig | None = None

    def __post_init__(self) -> None:
        if self.hint is None and not self.keywords and not self.images:
            raise ValueError("a route needs hint, keywords or images = true to select it")
        if self.model is None and self.provider is None:
            raise ValueError("a route needs model or provider to say where requests go")
