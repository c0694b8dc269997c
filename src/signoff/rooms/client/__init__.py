"""The rooms client: how anything above the rooms layer reaches a rooms server (signoff's own, in
process or over HTTP, or a Switch 0.19 core over HTTP). Two faces over the same server calls:

async, with a live event stream (resumes, heartbeats, receipts):

    transport = HttpTransport(base_url, agent_id, api_key)      # or InProcessTransport(service, api_key)
    async with RoomsClient(transport) as client:
        await client.connect_to_room(room_id)
        receipt = await client.send_targeted_message("please review", ["reviewer"])

one agent's durable loop over that client (cursor, inbox, serial sends; see `_agent_loop`):

    async with AgentLoop(transport, ledger, [room_id], handler) as agent:
        await agent.run(idle=5.0)

sync, polling durable events from a cursor the caller keeps (deterministic workflows), and a
person's face over the user endpoints:

    agent = SyncRoomsClient(StreamSyncTransport(base_url, agent_id, api_key))  # any server; or InProcessSyncTransport
    agent.open("me@shared", room_id)
    events = agent.events("me@shared", room_id, after=cursor)
    person = RoomsUserClient(HttpUserTransport(base_url, token))           # or InProcessUserTransport
"""

from signoff.rooms.client._agent_loop import AgentLoop, AgentStore, Undecided, agent_case, event_key, ref_tag
from signoff.rooms.client._capabilities import Capabilities
from signoff.rooms.client._client import RoomsClient
from signoff.rooms.client._config import Role, RoomsConfig, write_private_json
from signoff.rooms.client._context import ContextPager, page_back, page_back_sync, read_room, read_room_sync
from signoff.rooms.client._embedded import embedded_rooms
from signoff.rooms.client._http import HttpTransport, parse_sse
from signoff.rooms.client._identity import Identities, Person, probe_sender
from signoff.rooms.client._inprocess import InProcessTransport
from signoff.rooms.client._missed import is_automated_notice, recovered_message
from signoff.rooms.client._operator import Operator, SignoffOperator, SwitchOperator, operator_for
from signoff.rooms.client._provision import ServerSetup
from signoff.rooms.client._refusal import is_refusal_text, refused_by, refuses
from signoff.rooms.client._register import Registered, integration_profile, register_agent, registration_body
from signoff.rooms.client._stream_sync import StreamSyncTransport, joined_as
from signoff.rooms.client._sync import (
    HttpSyncTransport,
    HttpUserTransport,
    InProcessSyncTransport,
    InProcessUserTransport,
    RoomsUserClient,
    SyncRoomsClient,
    SyncTransport,
    UserTransport,
)
from signoff.rooms.client._transport import IncompatibleServer, Transport
from signoff.rooms.protocol.streams import Frame, StreamParams

__all__ = [
    "AgentLoop",
    "AgentStore",
    "Capabilities",
    "ContextPager",
    "Frame",
    "HttpSyncTransport",
    "HttpTransport",
    "HttpUserTransport",
    "Identities",
    "InProcessSyncTransport",
    "InProcessTransport",
    "InProcessUserTransport",
    "IncompatibleServer",
    "Operator",
    "Person",
    "Registered",
    "Role",
    "RoomsClient",
    "RoomsConfig",
    "RoomsUserClient",
    "ServerSetup",
    "SignoffOperator",
    "StreamParams",
    "StreamSyncTransport",
    "SwitchOperator",
    "SyncRoomsClient",
    "SyncTransport",
    "Transport",
    "Undecided",
    "UserTransport",
    "agent_case",
    "embedded_rooms",
    "event_key",
    "integration_profile",
    "is_automated_notice",
    "is_refusal_text",
    "joined_as",
    "operator_for",
    "page_back",
    "page_back_sync",
    "parse_sse",
    "probe_sender",
    "read_room",
    "read_room_sync",
    "recovered_message",
    "ref_tag",
    "refused_by",
    "refuses",
    "register_agent",
    "registration_body",
    "write_private_json",
]
