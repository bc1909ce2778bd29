"""The one place a URL's password is hidden before it is shown (standard library only).

A ``base_url`` such as ``http://admin:pw@127.0.0.1:9/v1`` reaches many messages: the CLI's
``error:`` line, ``no provider could answer: ...``, the webhook's error JSON, the WebSocket's
error frame. Each of them passes :func:`redact_url` at the place the message is made (every
:class:`~clawseed_edge.api.ProviderError` and every turn's ``ErrorEvent``), so there is one rule
and no surface of its own to forget. The credential scrubber (``agent/redact.py``) uses the same
pattern.
"""

from __future__ import annotations

import re

__all__ = ["URL_PASSWORD_MARKER", "redact_url"]

#: What a hidden URL password becomes.
URL_PASSWORD_MARKER = "***"

# scheme://user:password@host -- the password part, up to the last "@" before the host (a
# password typed with a raw "@" in it is hidden whole); every repetition is bounded, so the
# cost is linear in the text.
URL_USER = r"""(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s/@:"'<>]{0,256}:"""
URL_PASSWORD = r"""[^\s/"'<>]{1,1000}(?=@[^\s/@"'<>]{0,255}(?:[/\s"'<>?#]|$))"""
_URL_CREDENTIALS = re.compile(f"(?P<urluser>{URL_USER})(?P<urlpw>{URL_PASSWORD})")


def redact_url(text: str, marker: str = URL_PASSWORD_MARKER) -> str:
    """``text`` (one URL, or a message holding any number of them) with the password of every
    ``scheme://user:password@host`` replaced by ``marker``; the rest is kept, so a reader still
    sees which server it is."""
    if "://" not in text:  # the common case: no URL at all
        return text
    return _URL_CREDENTIALS.sub(lambda m: m.group("urluser") + marker, text)
