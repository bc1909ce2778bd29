"""``clawseed-edge pair``: a fresh pairing code from the running service; list or revoke tokens.

The running service is asked over ``$CLAWSEED_HOME/control.sock``. ``--list`` and ``--revoke``
also work when no service runs (they then read and write ``state.db`` directly).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from .common import fail, run_async

__all__ = ["register"]


def register(sub: Any) -> None:
    pair = sub.add_parser(
        "pair",
        help="print a one-time pairing code for a phone (asks the running gateway)",
        description=(
            "Print a fresh one-time pairing code from the running service (over "
            "$CLAWSEED_HOME/control.sock). --list and --revoke also work when no service runs."
        ),
    )
    group = pair.add_mutually_exclusive_group()
    group.add_argument("--list", action="store_true", help="list paired clients")
    group.add_argument("--revoke", metavar="ID", help="revoke the token with this id")
    group.add_argument(
        "--telegram",
        action="store_true",
        help="a one-time code for Telegram: the person sends /pair <code> to the bot",
    )
    pair.set_defaults(func=_pair)


def _pair(args: argparse.Namespace) -> int:
    async def main() -> int:
        from clawseed_edge.config.paths import clawseed_home
        from clawseed_edge.service import ControlError, control_path, control_request

        home = clawseed_home()
        path = control_path(home)
        op = "pair_list" if args.list else "pair_revoke" if args.revoke else "pair"
        try:
            extra: dict[str, Any] = (
                {"channel": "telegram"} if getattr(args, "telegram", False) else {}
            )
            answer = await control_request(path, op, id=args.revoke or "", **extra)
        except ControlError as exc:
            if op == "pair" or path.exists():
                return fail(str(exc))
            answer = await _offline(home, op, args.revoke or "")
        return _show(op, answer, args.revoke)

    return run_async(args, main)


async def _offline(home: Any, op: str, token_id: str) -> dict[str, Any]:
    from clawseed_edge.state import PairingTokens, StateDB

    async with await StateDB.open(home / "state.db") as db:
        tokens = PairingTokens(db)
        if op == "pair_list":
            return {
                "tokens": [
                    {
                        "id": t.id,
                        "name": t.name,
                        "created_at": t.created_at,
                        "last_used_at": t.last_used_at,
                    }
                    for t in await tokens.list()
                ]
            }
        return {"revoked": await tokens.revoke(token_id)}


def _show(op: str, answer: dict[str, Any], token_id: str | None) -> int:
    if op == "pair" and answer.get("channel") == "telegram":
        print(f"pairing code: {answer['code']}")
        print("in Telegram: send /pair <code> to the bot; the code works once, for 10 minutes")
        return 0
    if op == "pair":
        print(f"pairing code: {answer['code']}")
        url = answer.get("url", "")
        print(f"on the phone: open {url}/ and type the code (it works once)")
        print(f"other clients: POST {url}/pair with the code in the X-Pairing-Code header")
        if answer.get("long_code"):
            print(f"if wrong codes from others lock pairing: {answer['long_code']} works instead")
        return 0
    if op == "pair_revoke":
        if not answer.get("revoked"):
            return fail(
                f"no paired client has the id {token_id!r}; see `clawseed-edge pair --list`"
            )
        print(f"revoked {token_id}")
        return 0
    tokens = answer.get("tokens", [])
    if not tokens:
        print("no paired clients")
    for t in tokens:
        used = t.get("last_used_at")
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(used)) if used else "never"
        print(f"{t['id']}  {t['name']:<24}  last used {when}")
    return 0
