"""Pairing: a 6-digit one-time code, printed at start, traded once for a bearer token.

The code is compared in constant time. Guessing is bounded three ways, since a client address
is cheap to change (a proxy header, an IPv6 block):

* a client (its address) that gets it wrong :data:`MAX_FAILURES` times is locked out for
  :data:`LOCKOUT_S` seconds;
* all clients together get ``attempts_per_minute`` wrong codes a minute, then everyone waits;
* a code dies after ``max_code_failures`` wrong guesses in total, and after ``code_ttl_s``
  seconds whatever happens.

So one code survives at most ``max_code_failures`` guesses out of a million. A used code is
gone: ``clawseed-edge pair`` asks the running service for a fresh one. The table of failing
addresses is bounded (expiry and a size cap) and the "wrong pairing code" log line is rate
limited, so a flood costs neither memory nor the journal.

The last two bounds are shared by everyone, so a neighbour sending wrong codes could keep the
owner from pairing at all. So every code also has a **long form** (the 6 digits and 12 more
characters, 60 bits: ``123456-ABCD-EFGH-JKMN``), printed only where the owner is: on the
Pi's own console at start and by ``clawseed-edge pair`` over the control socket. The long form
passes the global budget and is not killed by others' wrong guesses (nobody guesses 60 bits);
only its address's own budget applies to it. Using either form uses the code.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from clawseed_edge.state import IssuedToken, PairingTokens, TokenInfo

from .errors import ClientError

__all__ = ["LOCKOUT_S", "LONG_CODE_CHARS", "MAX_FAILURES", "MAX_TRACKED_CLIENTS", "PairingGate"]

log = logging.getLogger(__name__)

MAX_FAILURES = 5
LOCKOUT_S = 300.0
#: Failing client addresses remembered at once (oldest forgotten first).
MAX_TRACKED_CLIENTS = 4096
#: At most one "wrong pairing code" warning in this many seconds (the rest are counted).
LOG_EVERY_S = 10.0
#: Characters the long form adds to a code (5 bits each), and the ones it uses (no 0/O, 1/I).
LONG_CODE_CHARS = 12
_LONG_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
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
        code_ttl_s: float = 600.0,
        max_code_failures: int = 10,
        attempts_per_minute: int = 30,
    ) -> None:
        self.tokens = tokens
        self.required = required
        self.code_ttl_s = code_ttl_s
        self.max_code_failures = max_code_failures
        self.attempts_per_minute = attempts_per_minute
        self._clock = clock
        self._code: str | None = None
        self._long: str | None = None
        self._code_born = 0.0
        self._code_failures = 0
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._recent: deque[float] = deque()  # every client's wrong codes, for the budget
        self._last_log = -LOG_EVERY_S
        self._unlogged = 0

    def new_code(self) -> str:
        """A fresh one-time code; the previous one stops working. Its long form is
        :attr:`long_code` (show it only on the owner's own console)."""
        self._code = f"{secrets.randbelow(1_000_000):06d}"
        tail = "".join(secrets.choice(_LONG_ALPHABET) for _ in range(LONG_CODE_CHARS))
        self._long = self._code + "".join(f"-{tail[i : i + 4]}" for i in range(0, len(tail), 4))
        self._code_born = self._clock()
        self._code_failures = 0
        return self._code

    @property
    def long_code(self) -> str | None:
        """The long form of the current code (None when there is none): it passes the budget
        all clients share and outlives others' wrong guesses (the module docstring)."""
        now = self._clock()
        if self._long is not None and now - self._code_born >= self.code_ttl_s:
            return None
        return self._long

    @property
    def has_code(self) -> bool:
        return self._live_code(self._clock()) is not None

    def _live_code(self, now: float) -> str | None:
        """The code, unless it expired (then it is dropped)."""
        if self._code is not None and now - self._code_born >= self.code_ttl_s:
            log.warning(
                "the pairing code expired after %g min; run `clawseed-edge pair` for a new one",
                self.code_ttl_s / 60,
            )
            self._code = None
        return self._code

    def _check_budget(self, now: float) -> None:
        """All clients' wrong codes together: a rotating address gains nothing."""
        while self._recent and now - self._recent[0] >= 60.0:
            self._recent.popleft()
        if self.attempts_per_minute and len(self._recent) >= self.attempts_per_minute:
            wait = int(60.0 - (now - self._recent[0])) + 1
            raise ClientError(
                "pairing_locked",
                f"too many wrong pairing codes from all clients ({self.attempts_per_minute} a "
                f"minute); try again in {wait} s, or send the long code the device printed "
                "with it (`clawseed-edge pair` on the device shows one)",
                429,
                {"Retry-After": str(wait)},
            )

    def _record_failure(self, client: str, now: float, *, shared: bool = True) -> int:
        """Count a wrong code; the tries ``client`` has left. ``shared``: it also counts in the
        budget of all clients and against the short code (a wrong long form does not)."""
        window = self._failures.pop(client, None) or deque()
        window.append(now)
        self._failures[client] = window  # most recent last
        # Bounded: forget expired windows from the oldest end, then the oldest past the cap.
        for key in list(self._failures):
            oldest = self._failures[key]
            if len(self._failures) <= MAX_TRACKED_CLIENTS and now - oldest[-1] < LOCKOUT_S:
                break
            del self._failures[key]
        if shared:
            self._recent.append(now)
            self._code_failures += 1
        left = MAX_FAILURES - len(window)
        self._log_failure(client, max(left, 0), now)
        return left

    def _log_failure(self, client: str, left: int, now: float) -> None:
        if now - self._last_log < LOG_EVERY_S:
            self._unlogged += 1
            return
        more = f"; {self._unlogged} more wrong codes since the last line" if self._unlogged else ""
        log.warning("wrong pairing code from %s (%d tries left)%s", client, left, more)
        self._last_log, self._unlogged = now, 0

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

    async def _pair_long(self, client: str, given: str, now: float, name: str) -> IssuedToken:
        """The long form: only ``client``'s own budget applies (the module docstring)."""
        expected = self.long_code  # alive until its TTL, even when the short form was killed
        wanted = (expected or "-" * 24).replace("-", "").encode()
        typed = given.replace("-", "").replace(" ", "").upper().encode()[:64]
        if not hmac.compare_digest(wanted, typed) or expected is None:
            left = self._record_failure(client, now, shared=False)
            raise ClientError(
                "pairing_code_invalid",
                f"wrong long pairing code; {max(left, 0)} tries left from this client before a "
                f"{LOCKOUT_S / 60:g}-minute lockout. Run `clawseed-edge pair` on the device "
                "for a fresh one",
                403,
            )
        return await self._issue(client, name)

    async def _issue(self, client: str, name: str) -> IssuedToken:
        self._code = self._long = None  # one time, in either form
        self._failures.pop(client, None)
        issued = await self.tokens.issue(name)
        log.warning("paired a new client %r (token id %s)", issued.info.name, issued.info.id)
        return issued

    async def pair(self, client: str, code: str | None, name: str) -> IssuedToken:
        """Trade the code for a token.

        Raises:
            ClientError: ``pairing_locked`` (429), ``pairing_code_missing`` (400),
                ``pairing_no_code`` (409: none is active) or ``pairing_code_invalid`` (403).

        Safe to cancel: a cancelled pairing issues no token, or one nobody received (list and revoke it).
        """
        now = self._clock()
        self._check_lockout(client, now)
        if code and len(code.strip()) > 6:
            return await self._pair_long(client, code.strip(), now, name)
        self._check_budget(now)
        if not code:
            raise ClientError(
                "pairing_code_missing",
                "send the 6-digit code shown by the device in the X-Pairing-Code header",
            )
        current = self._live_code(now)
        # Compared in constant time even when no code is active, so timing says nothing.
        expected = current if current is not None else "-" * 6
        if (
            not hmac.compare_digest(expected.encode(), code.strip().encode()[:16])
            or current is None
        ):
            left = self._record_failure(client, now)
            if current is not None and self._code_failures >= self.max_code_failures:
                self._code = None  # guessed at too often: a new one must be asked for
                log.warning(
                    "the short pairing code was dropped after %d wrong guesses (its long form "
                    "still works); run `clawseed-edge pair` for a new one",
                    self._code_failures,
                )
            if current is None:
                raise ClientError(
                    "pairing_no_code",
                    "no pairing code is active (each code works once); run `clawseed-edge pair` "
                    "on the device for a new one",
                    409,
                )
            raise ClientError(
                "pairing_code_invalid",
                f"wrong pairing code; {max(left, 0)} tries left from this client before a "
                f"{LOCKOUT_S / 60:g}-minute lockout. Check the code the device printed",
                403,
            )
        return await self._issue(client, name)

    async def is_paired(self, token: str) -> bool:
        """Whether ``token`` is a paired client's (its time of use is recorded, as by a request).

        Safe to cancel.
        """
        return await self.tokens.verify(token) is not None

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
