"""``GET/PUT /api/config`` and ``GET/PUT /api/personality/{file}``.

The config is read back with secrets redacted, and written only after it parsed and validated
against the schema (the previous file is kept as ``config.toml.bak``). Everything in the config
is built when the service starts, so the answer lists the changed sections as needing a restart.
Personality files are the workspace's whitelisted identity files only; a change applies from
the next turn on (the system prompt is rebuilt).
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

import msgspec
from starlette.routing import Route

from clawseed_edge.config.file import EMBEDDED_DEFAULT, embedded_default_text
from clawseed_edge.config.load import convert_config
from clawseed_edge.config.paths import default_config_path
from clawseed_edge.config.schema import Config

from .endpoint import RequestContext, endpoint, read_body
from .errors import ClientError
from .hub import GatewayHub
from .limits import clip, loads_bounded

__all__ = ["PERSONALITY_FILES", "config_routes", "redact"]

PERSONALITY_FILES = ("SOUL.md", "IDENTITY.md", "USER.md", "TOOLS.md", "AGENTS.md", "MEMORY.md")
REDACTED = "***"
_SECRET_KEY = re.compile(r"(api_key|token|secret|password)", re.I)
_SECRET_LINE = re.compile(
    r"^(\s*[A-Za-z0-9_]*(?:api_key|token|secret|password)\s*=\s*).*$", re.I | re.M
)
MAX_PERSONALITY_BYTES = 32768


def redact(value: Any) -> Any:
    """``value`` with every secret-looking key's value replaced by ``***``."""
    if isinstance(value, dict):
        return {
            k: (
                REDACTED
                if _SECRET_KEY.search(k) and v not in (None, "") and not k.endswith("_env")
                else redact(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def _config_path(hub: GatewayHub) -> Path:
    source = hub.runtime.loaded.source
    return default_config_path() if source == EMBEDDED_DEFAULT else Path(source)


async def get_config(ctx: RequestContext) -> dict[str, Any]:
    path = _config_path(ctx.hub)
    text = path.read_text("utf-8") if path.exists() else embedded_default_text()
    return {
        "source": ctx.hub.runtime.loaded.source,
        "path": str(path),
        "config": redact(msgspec.to_builtins(ctx.hub.runtime.loaded.config)),
        "toml": _SECRET_LINE.sub(lambda m: f'{m.group(1)}"{REDACTED}"', text),
    }


async def put_config(ctx: RequestContext) -> dict[str, Any]:
    body = await ctx.json_object()
    text = body.get("toml")
    if not isinstance(text, str):
        raise ClientError("body_invalid", 'send {"toml": "<the whole config file>"}')
    if f'"{REDACTED}"' in text:
        raise ClientError(
            "config_redacted_value",
            'the file still holds a redacted "***" value; put the real secret back, or remove '
            "the line and keep the key in $CLAWSEED_HOME/secrets",
        )
    path = _config_path(ctx.hub)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ClientError("config_invalid", f"not valid TOML: {exc}") from None
    try:
        new = convert_config(data, Config, source=str(path))
    except Exception as exc:  # ConfigInvalid names the key
        raise ClientError("config_invalid", str(exc)) from None
    old = msgspec.to_builtins(ctx.hub.runtime.loaded.config)
    changed = sorted(k for k, v in msgspec.to_builtins(new).items() if old.get(k) != v)
    if path.exists():
        os.replace(path, path.with_name(path.name + ".bak"))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, "utf-8")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return {
        "ok": True,
        "path": str(path),
        "changed": changed,
        "restart_required": changed,
        "message": (
            "saved; restart the service to apply: " + ", ".join(changed)
            if changed
            else "saved; nothing changed"
        ),
    }


def _personality_path(ctx: RequestContext) -> Path:
    name = str(ctx.request.path_params["file"])
    if name not in PERSONALITY_FILES:
        raise ClientError(
            "personality_file_refused",
            f"{clip(name, 40)!r} is not a personality file; use one of: "
            + ", ".join(PERSONALITY_FILES),
            404,
        )
    return ctx.hub.runtime.workspace_dir / name


async def get_personality(ctx: RequestContext) -> dict[str, Any]:
    path = _personality_path(ctx)
    text = path.read_text("utf-8") if path.exists() else ""
    return {"file": path.name, "content": text, "exists": path.exists()}


async def put_personality(ctx: RequestContext) -> dict[str, Any]:
    path = _personality_path(ctx)
    raw = await read_body(ctx.request, min(ctx.hub.settings.max_body_bytes, MAX_PERSONALITY_BYTES))
    content_type = ctx.request.headers.get("content-type", "")
    if content_type.startswith("application/json"):
        body = loads_bounded(raw, max_bytes=MAX_PERSONALITY_BYTES)
        content = body.get("content") if isinstance(body, dict) else None
        if not isinstance(content, str):
            raise ClientError("body_invalid", 'send {"content": "..."} or a text/plain body')
    else:
        try:
            content = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ClientError("body_invalid", "the file must be UTF-8 text") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(content, "utf-8")
    os.replace(tmp, path)
    # The system prompt is built from these files: rebuild it for every agent from now on.
    ctx.hub.runtime.agent.invalidate_prompt()
    for conversation in ctx.hub.conversations.all():
        conversation.agent.invalidate_prompt()
    return {
        "ok": True,
        "file": path.name,
        "bytes": len(content.encode("utf-8")),
        "message": "saved; applies from the next turn",
    }


def config_routes(hub: GatewayHub) -> list[Route]:
    return [
        Route("/api/config", endpoint(hub, get_config), methods=["GET"]),
        Route("/api/config", endpoint(hub, put_config), methods=["PUT"]),
        Route("/api/personality/{file}", endpoint(hub, get_personality), methods=["GET"]),
        Route("/api/personality/{file}", endpoint(hub, put_personality), methods=["PUT"]),
    ]
