"""Python client for the clawseed-edge gateway: what the Android SDK does, for Python.

Pair once, connect, offer your own tools, chat, answer approvals::

    token = await pair("http://127.0.0.1:42617", "123456", name="laptop")
    async with GatewayClient("http://127.0.0.1:42617", token=token) as client:
        @client.tool("laptop_battery", "Battery level of the laptop in percent")
        async def battery(arguments):
            return "87"

        await client.connect()
        print(await client.ask("how full is my laptop's battery?"))

Built on httpx and websockets; depends on the api layer only. The connection reconnects with
backoff and resumes its session (``?session_id=``), re-registering its tools.
"""

from .client import GatewayClient, RemoteToolHandler, TurnFailed, pair
from .errors import ClientConnectionError, GatewayClientError, PairingFailed, TurnLost

__all__ = [
    "ClientConnectionError",
    "GatewayClient",
    "GatewayClientError",
    "PairingFailed",
    "RemoteToolHandler",
    "TurnFailed",
    "TurnLost",
    "pair",
]
