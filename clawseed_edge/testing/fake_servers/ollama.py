"""A fake Ollama server: NDJSON ``/api/chat``, ``/api/show``, ``/api/embed``, ``/api/tags``."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any

from .base import FakeModelServer, RecordedRequest, _count, _cut_guard, _Http, split_words


class FakeOllama(FakeModelServer):
    """A fake Ollama: NDJSON ``/api/chat``, ``/api/show``, ``/api/embed``, ``/api/tags``.

    Args:
        models: Pulled models and their capabilities (``/api/show``'s ``capabilities``);
            other models answer 404 "not found, try pulling it first" like Ollama.
        dimensions: Length of the vectors ``/api/embed`` returns.
    """

    def __init__(
        self,
        *,
        models: Mapping[str, Iterable[str]] | None = None,
        dimensions: int = 8,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        if models is None:
            models = {"qwen2.5:3b": ("completion", "tools")}
        self.models = {name: list(caps) for name, caps in models.items()}
        self.dimensions = dimensions
        self._routes = {
            ("POST", "/api/chat"): self._chat,
            ("POST", "/api/show"): self._show,
            ("POST", "/api/embed"): self._embed,
            ("GET", "/api/tags"): self._tags,
        }

    async def _not_pulled(self, model: str, http: _Http) -> bool:
        if model in self.models:
            return False
        await http.send_json(404, {"error": f'model "{model}" not found, try pulling it first'})
        return True

    async def _show(self, request: RecordedRequest, http: _Http) -> None:
        model = request.json.get("model") or request.json.get("name", "")
        if model not in self.models:
            await http.send_json(404, {"error": f"model '{model}' not found"})
            return
        await http.send_json(
            200,
            {
                "modelfile": "",
                "parameters": "",
                "template": "{{ .Prompt }}",
                "details": {"format": "gguf", "family": "fake", "parameter_size": "3B"},
                "model_info": {"general.architecture": "fake"},
                "capabilities": self.models[model],
            },
        )

    async def _tags(self, request: RecordedRequest, http: _Http) -> None:
        await http.send_json(
            200,
            {
                "models": [
                    {"name": m, "model": m, "size": 1, "digest": "0" * 12, "details": {}}
                    for m in self.models
                ]
            },
        )

    async def _embed(self, request: RecordedRequest, http: _Http) -> None:
        data = request.json
        if await self._not_pulled(data.get("model", ""), http):
            return
        texts = data["input"] if isinstance(data["input"], list) else [data["input"]]
        vectors = [self.fake_vector(t, self.dimensions) for t in texts]
        await http.send_json(200, {"model": data["model"], "embeddings": vectors})

    def images_in(self, body: Any) -> list[bytes]:
        """Ollama's wire: ``images`` (base64) on any message."""
        return [base64.b64decode(i) for m in body.get("messages", []) for i in m.get("images", [])]

    async def _chat(self, request: RecordedRequest, http: _Http) -> None:
        data = request.json
        model = data.get("model", "")
        if await self._not_pulled(model, http):
            return
        if data.get("tools") and "tools" not in self.models[model]:
            await http.send_json(400, {"error": f"{model} does not support tools"})
            return
        reply = self.reply_for(request)
        stream = data.get("stream", True)
        ctype = "application/x-ndjson" if stream else "application/json; charset=utf-8"
        if await self._pre_reply(reply, http, ctype):
            return
        if reply.status >= 400:
            await http.send_json(reply.status, {"error": reply.message}, reply.headers)
            return
        calls = [
            {"function": {"name": name, "arguments": args if isinstance(args, Mapping) else {}}}
            for name, args in reply.calls
        ]
        final = {
            "model": model,
            "created_at": "2026-01-01T00:00:00Z",
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": reply.input_tokens
            if reply.input_tokens is not None
            else sum(_count(str(m.get("content", ""))) for m in data.get("messages", [])),
            "eval_count": reply.output_tokens
            if reply.output_tokens is not None
            else _count(reply.content),
        }
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": reply.content}
            if reply.thinking:
                message["thinking"] = reply.thinking
            if calls:
                message["tool_calls"] = calls
            await http.send_json(200, {**final, "message": message}, reply.headers)
            return

        def line(message: dict[str, Any]) -> bytes:
            return (
                json.dumps(
                    {
                        "model": model,
                        "created_at": final["created_at"],
                        "message": message,
                        "done": False,
                    }
                ).encode()
                + b"\n"
            )

        await http.start_chunked(ctype, reply.headers)
        for piece in split_words(reply.thinking):
            await http.chunk(line({"role": "assistant", "content": "", "thinking": piece}))
        sent = 0
        for piece in split_words(reply.content):
            _cut_guard(reply, sent)
            await http.chunk(line({"role": "assistant", "content": piece}))
            sent += 1
        _cut_guard(reply, sent)
        if calls:
            await http.chunk(line({"role": "assistant", "content": "", "tool_calls": calls}))
        end = {**final, "message": {"role": "assistant", "content": ""}}
        await http.chunk(json.dumps(end).encode() + b"\n")
        await http.end_chunked()
