"""Errors of the client SDK.

::

    ClawseedError
     +-- GatewayClientError
          +-- PairingFailed (PermissionError)       the code was wrong, used, or locked out
          +-- ClientConnectionError (ConnectionError)  cannot reach or lost the gateway
          +-- TurnFailed                             a turn ended in an error or was aborted
               +-- TurnLost                          the connection dropped during the turn
"""

from __future__ import annotations

from clawseed_edge.api import ClawseedError

__all__ = [
    "ClientConnectionError",
    "GatewayClientError",
    "PairingFailed",
    "TurnFailed",
    "TurnLost",
]


class GatewayClientError(ClawseedError):
    code = "gateway_client_error"


class PairingFailed(GatewayClientError, PermissionError):
    code = "pairing_failed"


class ClientConnectionError(GatewayClientError, ConnectionError):
    code = "gateway_connection_error"


class TurnFailed(GatewayClientError):
    """A turn ended with ``error`` or ``aborted``; ``server_code`` is the frame's code."""

    code = "turn_failed"

    def __init__(self, message: str, server_code: str = "") -> None:
        super().__init__(message)
        self.server_code = server_code


class TurnLost(TurnFailed):
    """The connection dropped while a turn ran: its answer did not reach this client.

    The gateway keeps the session; ``session_id`` names it, so a client that resumes it reads
    the stored conversation.
    """

    code = "turn_lost"

    def __init__(self, message: str, session_id: str = "") -> None:
        super().__init__(message, "turn_lost")
        self.session_id = session_id
