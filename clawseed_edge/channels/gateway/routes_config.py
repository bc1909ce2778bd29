"""``GET/PUT /api/config`` and ``GET/PUT /api/personality/{file}``.

The config is read back with secrets redacted, and written only after it parsed and validated
against the schema (the previous file is kept as ``config.toml.bak``). Everything in the config
is built when the service starts, so the answer lists the changed sections as needing a restart.
Personality files are the workspace's whitelisted identity files only; a change applies from
the next turn on (the system prompt is rebuilt).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import msgspec
from starlette.routing import Route

from clawseed_edge.api import ConfigError
from clawseed_edge.config.assembly import secret_scrubber
from clawseed_edge.config.file import EMBEDDED_DEFAULT, embedded_default_text
from clawseed_edge.config.load import convert_config, parse_toml
from clawseed_edge.config.paths import default_config_path
from clawseed_edge.config.redaction import REDACTED, redact_document
from clawseed_edge.config.schema import Config
from clawseed_edge.config.toml_text import dumps
from clawseed_edge.tools.files import (
    WorkspaceFileRefused,
    read_workspace_file,
    write_workspace_file,
)

from .endpoint import RequestContext, endpoint, read_body
from .errors import ClientError
from .hub import GatewayHub
from .limits import clip, loads_bounded

__all__ = ["PERSONALITY_FILES", "config_routes"]

PERSONALITY_FILES = ("SOUL.md", "IDENTITY.md", "USER.md", "TOOLS.md", "AGENTS.md", "MEMORY.md")
MAX_PERSONALITY_BYTES = 32768


def _config_path(hub: GatewayHub) -> Path:
    source = hub.runtime.loaded.source
    return default_config_path() if source == EMBEDDED_DEFAULT else Path(source)


async def get_config(ctx: RequestContext) -> dict[str, Any]:
    path = _config_path(ctx.hub)
    scrubber = secret_scrubber(ctx.hub.runtime.loaded)
    answer: dict[str, Any] = {
        "source": ctx.hub.runtime.loaded.source,
        "path": str(path),
        "config": redact_document(msgspec.to_builtins(ctx.hub.runtime.loaded.config), scrubber),
    }
    # The file as it is now, redacted on its parsed form and written out again (comments are
    # not kept): matching lines misses dotted keys, inline tables and multi-line strings.
    try:
        text = path.read_text("utf-8") if path.exists() else embedded_default_text()
        answer["toml"] = dumps(redact_document(parse_toml(text, source=str(path)), scrubber))
    except (OSError, UnicodeDecodeError, ConfigError, TypeError) as exc:
        answer["toml"] = None
        answer["toml_error"] = clip(scrubber.scrub(str(exc)), 400)
    return answer


def _holds_redacted(data: Any) -> bool:
    """Whether a parsed document still holds a value hidden by ``GET /api/config``."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and (item == REDACTED or f":{REDACTED}@" in item):
            return True
    return False


async def put_config(ctx: RequestContext) -> dict[str, Any]:
    body = await ctx.json_object()
    text = body.get("toml")
    if not isinstance(text, str):
        raise ClientError("body_invalid", 'send {"toml": "<the whole config file>"}')
    path = _config_path(ctx.hub)
    try:
        data = parse_toml(text)
    except ConfigError as exc:
        raise ClientError("config_invalid", str(exc)) from None
    if _holds_redacted(data):
        raise ClientError(
            "config_redacted_value",
            'the file still holds a redacted "***" value; put the real secret back, or remove '
            "the line and keep the key in $CLAWSEED_HOME/secrets",
        )
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
    # Read like file_read reads (no link followed, one name only) and scrubbed: a
    # USER.md -> ../secrets link must not send the secrets file to a phone.
    scrubber = secret_scrubber(ctx.hub.runtime.loaded)
    try:
        text = await asyncio.to_thread(
            read_workspace_file,
            path.parent,
            path.name,
            max_bytes=MAX_PERSONALITY_BYTES,
            scrub=scrubber.scrub,
        )
    except WorkspaceFileRefused as exc:
        raise ClientError("personality_file_refused", clip(str(exc), 300), 409) from None
    except OSError as exc:
        raise ClientError(
            "personality_file_unreadable", f"cannot read {path.name}: {exc.strerror}", 409
        ) from None
    return {"file": path.name, "content": text or "", "exists": text is not None}


async def put_personality(ctx: RequestContext) -> dict[str, Any]:
    path = _personality_path(ctx)
    raw = await read_body(ctx.request, min(ctx.hub.settings.max_body_bytes, MAX_PERSONALITY_BYTES))
    # JSON only: a text/plain body is what a page on another site can send without asking.
    body = loads_bounded(raw, max_bytes=MAX_PERSONALITY_BYTES)
    content = body.get("content") if isinstance(body, dict) else None
    if not isinstance(content, str):
        raise ClientError("body_invalid", 'send {"content": "..."} as application/json')
    path.parent.mkdir(parents=True, exist_ok=True)
    try:  # atomic, and never through a planted link
        await asyncio.to_thread(write_workspace_file, path.parent, path.name, content)
    except WorkspaceFileRefused as exc:
        raise ClientError("personality_file_refused", clip(str(exc), 300), 409) from None
    # The system prompt is built from these files: rebuild it for every agent from now on.
    ctx.hub.agent.invalidate_prompt()
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
