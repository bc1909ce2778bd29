"""``WS /ws/chat``: authenticate, pick or resume the session, then hand over to ChatConnection."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Awaitable, Callable

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket

from clawseed_edge.api import SessionStore

from .connection import ChatConnection
from .endpoint import answers_approvals, bearer_token
from .errors import ClientError
from .hub import GatewayHub
from .limits import clip, connect_key
from .protocol import error_frame
from .transcript import shown_messages, shown_title

__all__ = ["chat_routes"]

log = logging.getLogger(__name__)

_SESSION = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


async def _refuse(websocket: WebSocket, exc: ClientError) -> None:
    # Accept first so the client can read why (a bare 403 on the upgrade says nothing).
    await websocket.accept()
    await websocket.send_json(error_frame(exc.code, str(exc)))
    await websocket.close(code=1008 if exc.status in (401, 403) else 1013)


def chat_endpoint(hub: GatewayHub) -> Callable[[WebSocket], Awaitable[None]]:
    """The ``/ws/chat`` handler over ``hub``."""

    async def chat(websocket: WebSocket) -> None:
        try:
            if not hub.accepting:
                raise ClientError("closing", "the gateway is shutting down; reconnect later", 503)
            if len(hub.connections) >= hub.settings.max_connections:
                raise ClientError(
                    "too_many_connections",
                    f"{hub.settings.max_connections} clients are connected, the limit "
                    "([gateway] max_connections); try again later",
                    503,
                )
            who = await hub.pairing.authenticate(
                bearer_token(websocket.headers, websocket.query_params, allow_query=True)
            )
            hub.rate.hit(connect_key(who.id))
            # ?sessionId= is the Android protocol's spelling; ?session_id= ours.
            query = websocket.query_params
            requested = query.get("session_id", query.get("sessionId"))
            if requested is not None and _SESSION.fullmatch(requested) is None:
                raise ClientError(
                    "session_id_invalid",
                    f"session_id {clip(requested, 40)!r} is not valid: 1-64 of A-Z a-z 0-9 _.:-",
                )
        except ClientError as exc:
            await _refuse(websocket, exc)
            return
        session_id = requested or f"ws-{uuid.uuid4().hex[:12]}"
        resumed, count, title = False, 0, f"Chat {session_id[-6:]}"
        store = hub.agent.session_store
        if requested and isinstance(store, SessionStore):
            try:
                count = len(await shown_messages(store, session_id))
                resumed = count > 0
                for info in await store.list_sessions(limit=200):
                    if info.session_id == session_id and info.title:
                        title = shown_title(info.title) or title
            except Exception as exc:  # the turn engine loads history again and says why
                log.warning("could not read session %s from the store: %s", session_id, exc)
        previous = hub.connections.get(session_id)
        if previous is not None:
            # The same session from a new socket (a phone that changed networks): the new one
            # takes over, so there is one history per session; its running turn goes on there.
            await previous.close("the session was opened on another connection", keep_turn=True)
        await websocket.accept()
        connection = ChatConnection(
            hub,
            websocket,
            who,
            session_id,
            resumed=resumed,
            message_count=count,
            title=title,
            answers_approvals=answers_approvals(websocket.query_params),
        )
        hub.connections[session_id] = connection
        log.info("client %s connected to session %s (resumed=%s)", who.name, session_id, resumed)
        hub.publish({"type": "client_connected", "client": who.name, "session_id": session_id})
        try:
            await connection.serve()
        finally:
            hub.publish(
                {"type": "client_disconnected", "client": who.name, "session_id": session_id}
            )

    return chat


def chat_routes(hub: GatewayHub) -> list[WebSocketRoute]:
    return [WebSocketRoute("/ws/chat", chat_endpoint(hub))]
