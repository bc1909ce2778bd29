"""Credential scrubbing: text that may hold an API key passes :meth:`Scrubber.scrub` first.

What is redacted:

* the configured secrets' actual values (the secrets file's values and the providers' API keys),
  given to :class:`Scrubber` (values shorter than :data:`MIN_SECRET_LENGTH` are skipped: a
  one-letter "secret" would redact every word);
* tokens with a known key prefix: ``sk-ant-``/``sk-`` (Anthropic, OpenAI), ``ghp_``/``gho_``/
  ``ghu_``/``ghs_``/``ghr_``/``github_pat_`` (GitHub), ``xoxb-``/``xoxp-``... (Slack), AWS
  access key ids (``AKIA``/``ASIA``);
* ``Bearer <token>``;
* the value of a ``NAME=value`` / ``NAME: value`` / ``"name": "value"`` pair whose name looks
  like a credential (``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD``, ``*PASSWD``,
  ``SECRET``, ``TOKEN``, ``APIKEY``; any case);
* PEM private-key blocks;
* the password inside a URL (``http://user:password@host``), whatever the scheme.

Each secret keeps its first 4 characters (fewer for short values) so a user can tell which key
leaked, and the rest becomes ``[redacted]``: ``sk-ant-api03-XYZ...`` -> ``sk-a[redacted]``.

Everything is one compiled regular expression whose repetitions are bounded, so the cost is
linear in the text and a hostile input cannot make it backtrack; callers cap what they pass
(tool outputs are capped before they reach the model anyway). Standard library only.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

from clawseed_edge.api.urls import URL_PASSWORD, URL_USER, redact_url

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "RedactingFilter",
    "Scrubber",
    "hide_url_passwords",
    "install_log_redaction",
    "scrub",
]

#: The marker that replaces a secret after its kept prefix.
REDACTED = "[redacted]"
#: Configured values shorter than this are not scrubbed literally (they would match ordinary
#: words); a ``NAME=value`` pair still hides them.
MIN_SECRET_LENGTH = 8
_KEEP = 4

# Known key shapes. The look-behind keeps "task-force" or "mask_" from starting a match.
_PREFIXED = r"""
    (?<![A-Za-z0-9_-])
    (?:
        sk-ant-[A-Za-z0-9_-]{8,300}
      | sk-(?:proj-)?[A-Za-z0-9_-]{16,300}
      | gh[pousr]_[A-Za-z0-9]{20,255}
      | github_pat_[A-Za-z0-9_]{20,255}
      | xox[abposr]-[A-Za-z0-9-]{8,255}
      | (?:AKIA|ASIA)[0-9A-Z]{16}
    )
"""
# A credential-looking name, then = or :, possibly quoted (env files, TOML, JSON, URLs).
_NAME = r"""
    (?<![A-Za-z0-9_])
    (?i:[A-Za-z0-9_]{0,64}(?:_key|_token|_secret|password|passwd|secret|token|apikey))
"""
_SEP = r"""["']?[ \t]*[=:][ \t]*["']?"""
_VALUE = r"""[^\s"'&;,<>]{1,1000}"""
# scheme://user:password@host: the one pattern of api/urls.py.
_URL_USER = URL_USER
_URL_PASSWORD = URL_PASSWORD
_PEM = r"""
    -----BEGIN[A-Z ]{0,40}PRIVATE\ KEY-----
    [\s\S]{0,20000}?
    -----END[A-Z ]{0,40}PRIVATE\ KEY-----
"""


def hide_url_passwords(text: str, marker: str = REDACTED) -> str:
    """``text`` with the password of every ``scheme://user:password@host`` replaced by
    ``marker`` (:func:`clawseed_edge.api.redact_url`, the one URL rule)."""
    return redact_url(text, marker)


def _mask(value: str) -> str:
    """``value`` reduced to its first characters and the redaction marker."""
    keep = min(_KEEP, len(value) // 4)
    return value[:keep] + REDACTED


class Scrubber:
    """Redacts credentials in text; immutable, thread-safe, cheap to call.

    Args:
        values: The configured secrets' actual values (secrets file, API keys). Values
            shorter than :data:`MIN_SECRET_LENGTH` characters and blank ones are ignored.
    """

    __slots__ = ("_compiled", "_source", "values")

    def __init__(self, values: Iterable[str] = ()) -> None:
        unique = {v.strip() for v in values if isinstance(v, str)}
        #: The literal values this scrubber hides (longest first, so a value that contains
        #: another is hidden whole).
        self.values: tuple[str, ...] = tuple(
            sorted((v for v in unique if len(v) >= MIN_SECRET_LENGTH), key=lambda v: (-len(v), v))
        )
        literal = "|".join(re.escape(v) for v in self.values)
        # A configured value is tried first everywhere, also as the value of a NAME=value
        # pair, so a value holding "," or "&" is hidden whole rather than up to that character.
        parts = [
            f"(?P<lit>{literal})" if literal else "",
            f"(?P<pem>{_PEM})",
            f"(?P<tok>{_PREFIXED})",
            f"(?P<urluser>{_URL_USER})(?P<urlpw>{_URL_PASSWORD})",
            r"(?P<bearer_kw>(?i:\bbearer)[ \t]+)(?P<bearer>[A-Za-z0-9._~+/=-]{8,2000})",
            f"(?P<kvname>{_NAME})(?P<kvsep>{_SEP})(?P<kvval>{literal + '|' if literal else ''}"
            f"{_VALUE})",
        ]
        # Compiled at the first scrub (about 3 ms of start-up otherwise, before the first
        # request); two threads compiling it at once get the same pattern.
        self._source = "|".join(p for p in parts if p)
        self._compiled: re.Pattern[str] | None = None

    @property
    def _pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, re.VERBOSE)
        return self._compiled

    def scrub(self, text: str) -> str:
        """``text`` with every credential redacted (see the module docstring)."""
        if not text:
            return text
        return self._pattern.sub(self._replace, text)

    __call__ = scrub

    def scrub_data(self, value: Any, *, max_depth: int = 64) -> Any:
        """A copy of ``value`` with every string in it scrubbed (dict keys and values, list
        and tuple items): for tool-call arguments and other JSON-like data.

        Containers nested deeper than ``max_depth`` are replaced by a marker rather than
        checked (they cannot be shown safely without walking them).
        """
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, dict | list | tuple):
            if max_depth <= 0:
                return "[too deeply nested to check for credentials]"
            if isinstance(value, dict):
                return {
                    self.scrub_data(k, max_depth=max_depth - 1): self.scrub_data(
                        v, max_depth=max_depth - 1
                    )
                    for k, v in value.items()
                }
            items = [self.scrub_data(v, max_depth=max_depth - 1) for v in value]
            return items if isinstance(value, list) else tuple(items)
        return value

    def union(self, other: Scrubber) -> Scrubber:
        """A scrubber hiding the values of both."""
        return Scrubber((*self.values, *other.values))

    @staticmethod
    def _replace(match: re.Match[str]) -> str:
        if match.group("kvval") is not None:
            if match.group("kvval") == "***":  # hidden already (a redacted config)
                return match.group(0)
            return match.group("kvname") + match.group("kvsep") + _mask(match.group("kvval"))
        if match.group("urlpw") is not None:
            if match.group("urlpw") in ("***", REDACTED):  # hidden already
                return match.group(0)
            return match.group("urluser") + REDACTED  # no kept prefix: it is a password
        if match.group("bearer") is not None:
            return match.group("bearer_kw") + _mask(match.group("bearer"))
        if match.group("pem") is not None:
            return f"-----BEGIN PRIVATE KEY-----{REDACTED}-----END PRIVATE KEY-----"
        return _mask(match.group(0))

    def __repr__(self) -> str:  # never the values themselves
        return f"Scrubber({len(self.values)} configured values)"


_DEFAULT = Scrubber()


def scrub(text: str) -> str:
    """``text`` with known key shapes, bearer tokens and ``NAME=value`` secrets redacted.

    Knows no configured values; use a :class:`Scrubber` built with them where they are known.
    """
    return _DEFAULT.scrub(text)


class RedactingFilter(logging.Filter):
    """A logging filter that scrubs each record's message, arguments and traceback text.

    A logger's own filters see only the records logged on that very logger, not its
    children's; a handler's see everything it emits. :func:`install_log_redaction` attaches it
    to both kinds.
    """

    def __init__(self, scrubber: Scrubber) -> None:
        super().__init__()
        self.scrubber = scrubber

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: let the handler report it as it would
            return True
        record.msg = self.scrubber.scrub(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.scrubber.scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = self.scrubber.scrub(record.stack_info)
        return True


def install_log_redaction(scrubber: Scrubber, logger: logging.Logger | None = None) -> None:
    """Scrub every record of our loggers and every record ``logger``'s handlers emit.

    The filter goes on each handler of ``logger`` (default: the root logger, so library
    records such as a URL with a key are scrubbed too) and on every ``clawseed_edge.*``
    logger that exists (all of ours are created at import), so our records are scrubbed even
    when they reach a handler added later.

    Idempotent: where a :class:`RedactingFilter` is already attached it is given a scrubber
    hiding the values of both (two agents in one process each add their keys).
    """
    target = logger if logger is not None else logging.getLogger()
    filterers: list[logging.Filterer] = list(target.handlers)
    for name, obj in list(logging.Logger.manager.loggerDict.items()):
        if (name == "clawseed_edge" or name.startswith("clawseed_edge.")) and isinstance(
            obj, logging.Logger
        ):
            filterers.append(obj)
    for filterer in filterers:
        existing = next((f for f in filterer.filters if isinstance(f, RedactingFilter)), None)
        if existing is None:
            filterer.addFilter(RedactingFilter(scrubber))
        else:
            existing.scrubber = existing.scrubber.union(scrubber)
