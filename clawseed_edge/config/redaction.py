"""Redacting a parsed config document before it is shown (``config show``, ``GET /api/config``).

Redaction works on the parsed document, never on lines of text: TOML can spell one key in many
ways (dotted keys, inline tables, quoted keys, multi-line strings, arrays of tables), and a line
matcher misses some of them. A value is hidden when

* its key looks like a credential (``api_key``, ``token``, ``secret``, ``password``, ``passwd``,
  ``*_key``; but not ``*_env``, which names an environment variable, not a secret), or
* its shape is one (a known key prefix, a bearer token, a password inside a URL such as
  ``http://user:pw@host``), whatever its key, or
* it is the value of a program's environment variable (an ``env`` table, as in
  ``[[mcp.servers]]``: ``env = { HASS = "..." }``), or the argument after a credential flag in
  a program's ``args`` (``["--token", "..."]``, ``"--password=..."``).

A document sent back with a :data:`REDACTED` value in it is refused by its writer (``PUT
/api/config``): a hidden value is never guessed back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clawseed_edge.agent.redact import Scrubber, hide_url_passwords

__all__ = ["REDACTED", "is_secret_key", "redact_document"]

#: What a hidden value becomes.
REDACTED = "***"
#: Containers nested deeper than this are not walked (a config is a few levels deep).
MAX_DEPTH = 32

#: A command-line flag whose value is a credential (``--token``, ``-p``, ``--api-key`` ...).
_SECRET_FLAG = re.compile(
    r"-{1,2}(?:[A-Za-z0-9]+[-_])*(?:api[-_]?key|key|token|secret|password|passwd|pass|pw|auth|"
    r"credentials?|bearer)",
    re.IGNORECASE,
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_SECRET_KEY = re.compile(
    r"(?:api_?key|token|secret|password|passwd|credential|_key$|^key$)", re.IGNORECASE
)


def is_secret_key(key: str) -> bool:
    """Whether a value under ``key`` is a credential (``*_env`` names a variable and
    ``env_from_secrets`` names secrets: names, not secrets)."""
    return not key.lower().endswith(("_env", "_from_secrets")) and bool(_SECRET_KEY.search(key))


def redact_document(
    data: Any, scrubber: Scrubber | None = None, *, _depth: int = 0, _secret: bool = False
) -> Any:
    """A copy of a parsed TOML document with every credential replaced by :data:`REDACTED`.

    Args:
        data: The parsed document (``tomllib.loads`` or ``msgspec.to_builtins`` output).
        scrubber: Also hides the configured secrets' values wherever they appear, and known key
            shapes inside longer strings (the default scrubber knows the shapes only).
    """
    scrub = scrubber if scrubber is not None else Scrubber()
    if _depth > MAX_DEPTH:
        return REDACTED
    if isinstance(data, Mapping):
        out: dict[str, Any] = {}
        for key, value in data.items():
            # A table or array under a credential's key ([tokens], keys = [...]) is hidden
            # string by string.
            secret = _secret or is_secret_key(str(key))
            if key == "env" and isinstance(value, Mapping):
                # A program's environment is where its credentials go: every value hidden.
                out[key] = {k: REDACTED if v else v for k, v in value.items()}
            elif str(key).endswith("_from_secrets") and isinstance(value, Mapping):
                # Variable -> secret names: what a reader needs to see, never a value.
                out[key] = {
                    k: v if isinstance(v, str) and _NAME.fullmatch(v) else REDACTED
                    for k, v in value.items()
                }
            elif key == "args" and isinstance(value, list) and not secret:
                out[key] = _redact_args(value, scrub)
            else:
                out[key] = redact_document(value, scrub, _depth=_depth + 1, _secret=secret)
        return out
    if isinstance(data, list):
        return [redact_document(v, scrub, _depth=_depth + 1, _secret=_secret) for v in data]
    if isinstance(data, str):
        if _secret and data:
            return REDACTED
        return _redact_string(data, scrub)
    return data


def _redact_args(args: list[Any], scrubber: Scrubber) -> list[Any]:
    """A program's arguments with the value after (or in) each credential flag hidden."""
    out: list[Any] = []
    hide_next = False
    for arg in args:
        if not isinstance(arg, str):
            out.append(arg)
            hide_next = False
            continue
        flag, eq, _ = arg.partition("=")
        if hide_next:
            out.append(REDACTED)
            hide_next = False
        elif eq and _SECRET_FLAG.fullmatch(flag):
            out.append(f"{flag}={REDACTED}")
        else:
            out.append(_redact_string(arg, scrubber))
            hide_next = _SECRET_FLAG.fullmatch(arg) is not None
    return out


def _redact_string(value: str, scrubber: Scrubber) -> str:
    text = hide_url_passwords(value, REDACTED)
    scrubbed = scrubber.scrub(text)
    # A string that held a credential shape is hidden whole: a kept prefix of a token is
    # still part of it, and the document is for editing, not for telling keys apart.
    return REDACTED if scrubbed != text else text
