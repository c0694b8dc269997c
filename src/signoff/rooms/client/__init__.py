"""Async client for rooms servers (signoff's own, or a Switch 0.19 core over HTTP).

    transport = HttpTransport(base_url, agent_id, api_key)      # or InProcessTransport(service, api_key)
    async with RoomsClient(transport) as client:
        await client.connect_to_room(room_id)
        receipt = await client.send_targeted_message("please review", ["reviewer"])
"""

from signoff.rooms.client._client import RoomsClient
from signoff.rooms.client._http import HttpTransport, parse_sse
from signoff.rooms.client._inprocess import InProcessTransport
from signoff.rooms.client._transport import IncompatibleServer, Transport
from signoff.rooms.streams import Frame, StreamParams

__all__ = [
    "Frame",
    "HttpTransport",
    "InProcessTransport",
    "IncompatibleServer",
    "RoomsClient",
    "StreamParams",
    "Transport",
    "parse_sse",
]
