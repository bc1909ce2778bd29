"""Pairing tokens: bearer tokens for paired clients, stored as SHA-256 hashes only.

A token is shown once, when it is issued; ``state.db`` keeps its hash, so a copied file does not
hand out working tokens. Tokens are 256-bit random values, so a plain hash (no salt, no slow
KDF) is enough: there is nothing to guess from a dictionary.

The people a channel pairs without a bearer token (a Telegram user who sent ``/pair <code>``)
are rows of the same table (:meth:`PairingTokens.add_peer`, id ``<channel>-<peer>``, a hash of
a random value nobody holds), so ``pair --list`` shows them and ``pair --revoke`` removes them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable

import msgspec

from .db import StateDB

__all__ = ["IssuedToken", "PairingTokens", "TokenInfo", "peer_id"]

_PREFIX = "cst_"


class TokenInfo(msgspec.Struct, frozen=True):
    """A paired client, as listed (never the token itself).

    Attributes:
        id: Short public id (``clawseed-edge pair --revoke ID``).
        name: What the client called itself when it paired.
        created_at: Unix seconds.
        last_used_at: Unix seconds of the last authenticated request, or None.
    """

    id: str
    name: str
    created_at: float
    last_used_at: float | None = None


class IssuedToken(msgspec.Struct, frozen=True):
    """A new token: ``token`` is shown to the client once and never stored."""

    token: str
    info: TokenInfo


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class PairingTokens:
    """Issue, verify, list and revoke pairing tokens in a :class:`StateDB`."""

    def __init__(self, db: StateDB, *, clock: Callable[[], float] = time.time) -> None:
        self._db = db
        self._clock = clock

    async def issue(self, name: str) -> IssuedToken:
        """A fresh token for the client ``name`` (cut to 64 characters).

        Safe to cancel: a cancelled issue may have stored a token nobody received (revocable).
        """
        token = _PREFIX + secrets.token_urlsafe(32)
        info = TokenInfo(secrets.token_hex(4), name[:64] or "client", self._clock())
        await self._db.execute(
            "INSERT INTO pairing_tokens (id, name, token_hash, created_at) VALUES (?, ?, ?, ?)",
            (info.id, info.name, hash_token(token), info.created_at),
        )
        return IssuedToken(token, info)

    async def verify(self, token: str) -> TokenInfo | None:
        """The paired client holding ``token``, or None; records the time of use.

        Safe to cancel.
        """
        if not token.startswith(_PREFIX) or len(token) > 128:
            return None
        digest = hash_token(token)
        rows = await self._db.fetchall(
            "SELECT id, name, token_hash, created_at, last_used_at FROM pairing_tokens "
            "WHERE token_hash = ?",
            (digest,),
        )
        # The lookup is by hash; the compare is constant-time all the same, so no code path
        # depends on how much of a secret matched.
        if not rows or not hmac.compare_digest(rows[0][2], digest):
            return None
        row = rows[0]
        now = self._clock()
        await self._db.execute(
            "UPDATE pairing_tokens SET last_used_at = ? WHERE id = ?", (now, row[0])
        )
        return TokenInfo(row[0], row[1], row[3], now)

    async def list(self) -> list[TokenInfo]:
        """Every paired client, oldest first.

        Safe to cancel.
        """
        rows = await self._db.fetchall(
            "SELECT id, name, created_at, last_used_at FROM pairing_tokens ORDER BY created_at"
        )
        return [TokenInfo(r[0], r[1], r[2], r[3]) for r in rows]

    async def revoke(self, token_id: str) -> bool:
        """Delete the token with this id; returns whether one was deleted.

        Safe to cancel.
        """
        return await self._db.execute("DELETE FROM pairing_tokens WHERE id = ?", (token_id,)) > 0

    async def add_peer(self, channel: str, peer: str, name: str) -> TokenInfo:
        """Pair ``peer`` of ``channel`` (a Telegram user id), who holds no bearer token; a peer
        paired before keeps its row. Returns its entry (id ``<channel>-<peer>``).

        Safe to cancel.
        """
        info = TokenInfo(peer_id(channel, peer), name[:64] or peer, self._clock())
        # The hash of a random value nobody holds: the row can never verify as a token.
        unusable = hash_token("peer:" + secrets.token_urlsafe(32))
        await self._db.execute(
            "INSERT OR IGNORE INTO pairing_tokens (id, name, token_hash, created_at) "
            "VALUES (?, ?, ?, ?)",
            (info.id, info.name, unusable, info.created_at),
        )
        return info

    async def peers(self, channel: str) -> tuple[str, ...]:
        """The peers of ``channel`` paired with :meth:`add_peer`, oldest first.

        Safe to cancel.
        """
        prefix = peer_id(channel, "")
        rows = await self._db.fetchall(
            "SELECT id FROM pairing_tokens WHERE substr(id, 1, ?) = ? ORDER BY created_at",
            (len(prefix), prefix),
        )
        return tuple(str(r[0])[len(prefix) :] for r in rows)


def peer_id(channel: str, peer: str) -> str:
    """The pairing entry id of ``peer`` in ``channel`` (``telegram-4242``)."""
    return f"{channel}-{peer}"
