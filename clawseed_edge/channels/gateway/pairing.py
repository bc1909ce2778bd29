"""Pairing: a 6-digit one-time code, printed at start, traded once for a bearer token.

The code is compared in constant time; a client (its address) that gets it wrong
:data:`MAX_FAILURES` times is locked out for :data:`LOCKOUT_S` seconds. A used code is gone:
``clawseed-edge pair`` asks the running service for a fresh one.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable

from clawseed_edge.state import IssuedToken, PairingTokens, TokenInfo

from .errors import ClientError

__all__ = ["LOCKOUT_S", "MAX_FAILURES", "PairingGate"]

log = logging.getLogger(__name__)

MAX_FAILURES = 5
LOCKOUT_S = 300.0
#: The identity of every client when ``require_pairing = false``.
UNPAIRED = TokenInfo("local", "unpaired client", 0.0)


class PairingGate:
    """The one-time code, the lockout, and token checks.

    Args:
        tokens: Where tokens are stored (hashed).
        clock: Monotonic seconds, for the lockout (tests pass a fake).
        required: False lets every request in as :data:`UNPAIRED` (``require_pairing = false``).
    """

    def __init__(
        self,
        tokens: PairingTokens,
        *,
        clock: Callable[[], float] = time.monotonic,
        required: bool = True,
    ) -> None:
        self.tokens = tokens
        self.required = required
        self._clock = clock
        self._code: str | None = None
        self._failures: dict[str, deque[float]] = {}

    def new_code(self) -> str:
        """A fresh one-time code; the previous one stops working."""
        self._code = f"{secrets.randbelow(1_000_000):06d}"
        return self._code

    @property
    def has_code(self) -> bool:
        return self._code is not None

    def _check_lockout(self, client: str, now: float) -> None:
        window = self._failures.get(client)
        if window is None:
            return
        while window and now - window[0] >= LOCKOUT_S:
            window.popleft()
        if not window:
            del self._failures[client]
        elif len(window) >= MAX_FAILURES:
            wait = int(LOCKOUT_S - (now - window[0])) + 1
            raise ClientError(
                "pairing_locked",
                f"too many wrong pairing codes from this client ({MAX_FAILURES} in "
                f"{LOCKOUT_S / 60:g} min); try again in {wait} s",
                429,
                {"Retry-After": str(wait)},
            )

    async def pair(self, client: str, code: str | None, name: str) -> IssuedToken:
        """Trade the code for a token.

        Raises:
            ClientError: ``pairing_locked`` (429), ``pairing_code_missing`` (400),
                ``pairing_no_code`` (409: none is active) or ``pairing_code_invalid`` (403).

        Safe to cancel: a cancelled pairing issues no token, or one nobody received (list and revoke it).
        """
        now = self._clock()
        self._check_lockout(client, now)
        if not code:
            raise ClientError(
                "pairing_code_missing",
                "send the 6-digit code shown by the device in the X-Pairing-Code header",
            )
        current = self._code
        # Compared in constant time even when no code is active, so timing says nothing.
        expected = current if current is not None else "-" * 6
        if (
            not hmac.compare_digest(expected.encode(), code.strip().encode()[:16])
            or current is None
        ):
            window = self._failures.setdefault(client, deque())
            window.append(now)
            left = MAX_FAILURES - len(window)
            log.warning("wrong pairing code from %s (%d tries left)", client, max(left, 0))
            if current is None:
                raise ClientError(
                    "pairing_no_code",
                    "no pairing code is active (each code works once); run `clawseed-edge pair` "
                    "on the device for a new one",
                    409,
                )
            raise ClientError(
                "pairing_code_invalid",
                f"wrong pairing code; {max(left, 0)} tries left before a "
                f"{LOCKOUT_S / 60:g}-minute lockout. Check the code the device printed",
                403,
            )
        self._code = None  # one time
        self._failures.pop(client, None)
        issued = await self.tokens.issue(name)
        log.warning("paired a new client %r (token id %s)", issued.info.name, issued.info.id)
        return issued

    async def authenticate(self, token: str | None) -> TokenInfo:
        """The paired client holding ``token``.

        Raises:
            ClientError: ``unauthorized`` (401) when the token is missing, unknown or revoked.

        Safe to cancel (reads, and records the time of use).
        """
        if not self.required:
            return UNPAIRED
        if not token:
            raise ClientError(
                "unauthorized",
                "missing token: send 'Authorization: Bearer <token>' (or ?token= on WebSockets); "
                "pair first with POST /pair and the device's code",
                401,
            )
        info = await self.tokens.verify(token)
        if info is None:
            raise ClientError(
                "unauthorized", "unknown or revoked token; pair again with POST /pair", 401
            )
        return info
