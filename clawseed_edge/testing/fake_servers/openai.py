"""A fake OpenAI-compatible server: ``/v1/chat/completions`` (JSON, SSE), ``/v1/embeddings``."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

from .base import FakeModelServer, RecordedRequest, _count, _cut_guard, _Http, split_words


class FakeOpenAI(FakeModelServer):
    """A fake OpenAI-compatible server: ``/v1/chat/completions`` (JSON, SSE) and ``/v1/embeddings``.

    Args:
        models: Known model ids; others answer 404 ``model_not_found``. None accepts any.
        api_key: If set, a request whose bearer token differs is answered 401.
        dimensions: Length of the vectors ``/v1/embeddings`` returns.
        props: If set, ``GET /props`` answers it, as llama.cpp's server does (its
            ``chat_template`` tells whether the model has a tool template).
    """

    def __init__(
        self,
        *,
        models: Iterable[str] | None = None,
        dimensions: int = 8,
        props: Mapping[str, Any] | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.models = set(models) if models is not None else None
        self.dimensions = dimensions
        self.props = props
        self._routes = {
            ("POST", "/v1/chat/completions"): self._chat,
            ("POST", "/v1/embeddings"): self._embeddings,
        }
        if props is not None:
            self._routes[("GET", "/props")] = self._props

    async def _props(self, request: RecordedRequest, http: _Http) -> None:
        await http.send_json(200, dict(self.props or {}))

    async def _error(
        self,
        http: _Http,
        status: int,
        message: str,
        code: str | None = None,
        headers: Mapping[str, str] = {},
    ) -> None:
        body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
        await http.send_json(status, body, headers)

    async def _check(self, request: RecordedRequest, http: _Http) -> bool:
        auth = request.headers.get("authorization", "")
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            await self._error(http, 401, "Incorrect API key provided", "invalid_api_key")
            return False
        model = (request.json or {}).get("model", "")
        if self.models is not None and model not in self.models:
            await self._error(http, 404, f"The model `{model}` does not exist", "model_not_found")
            return False
        return True

    async def _embeddings(self, request: RecordedRequest, http: _Http) -> None:
        if not await self._check(request, http):
            return
        data = request.json
        texts = data["input"] if isinstance(data["input"], list) else [data["input"]]
        await http.send_json(
            200,
            {
                "object": "list",
                "model": data.get("model"),
                "data": [
                    {
                        "object": "embedding",
                        "index": i,
                        "embedding": self.fake_vector(t, self.dimensions),
                    }
                    for i, t in enumerate(texts)
                ],
                "usage": {"prompt_tokens": sum(map(_count, texts)), "total_tokens": 0},
            },
        )

    def images_in(self, body: Any) -> list[bytes]:
        """The OpenAI wire: ``image_url`` parts holding ``data:`` URLs."""
        out: list[bytes] = []
        for message in body.get("messages", []):
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                if part.get("type") == "image_url":
                    url = part["image_url"]["url"]
                    out.append(base64.b64decode(url.split(";base64,", 1)[1]))
        return out

    async def _chat(self, request: RecordedRequest, http: _Http) -> None:
        if not await self._check(request, http):
            return
        data = request.json
        model = data.get("model", "")
        reply = self.reply_for(request)
        stream = bool(data.get("stream"))
        if await self._pre_reply(
            reply, http, "text/event-stream" if stream else "application/json"
        ):
            return
        if reply.status >= 400:
            await self._error(http, reply.status, reply.message, headers=reply.headers)
            return
        calls: list[dict[str, Any]] = [
            {
                "id": f"call_{i + 1}",
                "type": "function",
                "function": {"name": name, "arguments": a if isinstance(a, str) else json.dumps(a)},
            }
            for i, (name, a) in enumerate(reply.calls)
        ]
        finish = "tool_calls" if calls else "stop"
        usage = {
            "prompt_tokens": reply.input_tokens if reply.input_tokens is not None else 10,
            "completion_tokens": reply.output_tokens
            if reply.output_tokens is not None
            else _count(reply.content),
            "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]  # type: ignore[operator]
        base = {"id": "chatcmpl-fake", "created": int(time.time()), "model": model}
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
            if reply.thinking:
                message["reasoning_content"] = reply.thinking
            if calls:
                message["tool_calls"] = calls
            await http.send_json(
                200,
                {
                    **base,
                    "object": "chat.completion",
                    "usage": usage,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                },
                reply.headers,
            )
            return

        async def chunk(
            delta: dict[str, Any], finish_reason: str | None = None, **extra: Any
        ) -> None:
            payload = {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
                **extra,
            }
            await http.chunk(f"data: {json.dumps(payload)}\n\n".encode())

        await http.start_chunked("text/event-stream", reply.headers)
        await chunk({"role": "assistant", "content": ""})
        for piece in split_words(reply.thinking):
            await chunk({"reasoning_content": piece})
        sent = 0
        for piece in split_words(reply.content):
            _cut_guard(reply, sent)
            await chunk({"content": piece})
            sent += 1
        _cut_guard(reply, sent)
        for i, call in enumerate(calls):
            fn = call["function"]
            head = {"index": i, "id": call["id"], "type": "function"}
            await chunk({"tool_calls": [{**head, "function": {**fn, "arguments": ""}}]})
            for j in range(0, len(fn["arguments"]), 6):
                part = {"index": i, "function": {"arguments": fn["arguments"][j : j + 6]}}
                await chunk({"tool_calls": [part]})
        await chunk({}, finish)
        if (data.get("stream_options") or {}).get("include_usage"):
            payload = {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}
            await http.chunk(f"data: {json.dumps(payload)}\n\n".encode())
        await http.chunk(b"data: [DONE]\n\n")
        await http.end_chunked()
