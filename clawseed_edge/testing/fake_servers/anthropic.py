"""A fake Anthropic Messages API server: ``POST /v1/messages``, JSON or SSE."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any

from .base import FakeModelServer, RecordedRequest, _count, _cut_guard, _Http, split_words

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class FakeAnthropic(FakeModelServer):
    """A fake Anthropic Messages API: ``POST /v1/messages``, JSON or SSE.

    Args:
        models: Known model ids; others answer 404 ``not_found_error``. None accepts any.
        api_key: If set, a request whose key (``x-api-key`` or ``Authorization: Bearer``, which
            the anthropic 2.x SDK sends) differs is answered 401.
    """

    def __init__(self, *, models: Iterable[str] | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.models = set(models) if models is not None else None
        self._routes = {("POST", "/v1/messages"): self._messages}

    async def _error(
        self, http: _Http, status: int, message: str, headers: Mapping[str, str] = {}
    ) -> None:
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": message}}
        await http.send_json(status, body, {"request-id": "req_fake", **headers})

    def images_in(self, body: Any) -> list[bytes]:
        """Anthropic's wire: ``image`` blocks, in a message or inside a ``tool_result``."""
        out: list[bytes] = []
        for message in body.get("messages", []):
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            for block in blocks:
                inner = block.get("content") if block.get("type") == "tool_result" else None
                for b in [block, *(inner if isinstance(inner, list) else [])]:
                    if b.get("type") == "image":
                        out.append(base64.b64decode(b["source"]["data"]))
        return out

    async def _messages(self, request: RecordedRequest, http: _Http) -> None:
        data = request.json
        model = data.get("model", "")
        sent_key = request.headers.get("x-api-key") or request.headers.get(
            "authorization", ""
        ).removeprefix("Bearer ")
        if self.api_key is not None and sent_key != self.api_key:
            await self._error(http, 401, "invalid x-api-key")
            return
        if self.models is not None and model not in self.models:
            await self._error(http, 404, f"model: {model}")
            return
        reply = self.reply_for(request)
        stream = bool(data.get("stream"))
        if await self._pre_reply(
            reply, http, "text/event-stream" if stream else "application/json"
        ):
            return
        if reply.status >= 400:
            await self._error(http, reply.status, reply.message, reply.headers)
            return
        blocks: list[dict[str, Any]] = []
        if reply.thinking:
            blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": "sig"})
        if reply.content:
            blocks.append({"type": "text", "text": reply.content})
        for i, (name, args) in enumerate(reply.calls):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{i + 1:02d}",
                    "name": name,
                    "input": args if isinstance(args, Mapping) else {},
                }
            )
        stop = "tool_use" if reply.calls else "end_turn"
        usage = {
            "input_tokens": reply.input_tokens if reply.input_tokens is not None else 10,
            "output_tokens": reply.output_tokens
            if reply.output_tokens is not None
            else _count(reply.content) + len(reply.calls),
            "cache_read_input_tokens": reply.cached_tokens,
            "cache_creation_input_tokens": 0,
        }
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not stream:
            await http.send_json(200, message, {"request-id": "req_fake", **reply.headers})
            return

        async def event(kind: str, **fields: Any) -> None:
            payload = json.dumps({"type": kind, **fields})
            await http.chunk(f"event: {kind}\ndata: {payload}\n\n".encode())

        async def delta(index: int, kind: str, **fields: Any) -> None:
            await event("content_block_delta", index=index, delta={"type": kind, **fields})

        await http.start_chunked("text/event-stream", {"request-id": "req_fake", **reply.headers})
        start = {**message, "content": [], "stop_reason": None}
        await event("message_start", message={**start, "usage": {**usage, "output_tokens": 1}})
        await event("ping")
        sent = 0
        first_call = len(blocks) - len(reply.calls)
        for index, block in enumerate(blocks):
            kind = block["type"]
            empty: dict[str, dict[str, Any]] = {
                "text": {"text": ""},
                "thinking": {"thinking": ""},
                "tool_use": {"input": {}},
            }
            await event("content_block_start", index=index, content_block={**block, **empty[kind]})
            if kind == "text":
                for piece in split_words(block["text"]):
                    _cut_guard(reply, sent)
                    await delta(index, "text_delta", text=piece)
                    sent += 1
                _cut_guard(reply, sent)
            elif kind == "thinking":
                for piece in split_words(block["thinking"]):
                    await delta(index, "thinking_delta", thinking=piece)
                await delta(index, "signature_delta", signature="sig")
            else:
                raw = reply.calls[index - first_call][1]
                text = raw if isinstance(raw, str) else json.dumps(raw)
                for i in range(0, len(text), 7):
                    await delta(index, "input_json_delta", partial_json=text[i : i + 7])
            await event("content_block_stop", index=index)
        await event(
            "message_delta",
            delta={"stop_reason": stop, "stop_sequence": None},
            usage={"output_tokens": usage["output_tokens"]},
        )
        await event("message_stop")
        await http.end_chunked()
