"""`signoff mcp` on the local home, with no settings: the tools act as the home's own MCP agent on
its embedded rooms server (the home's database, the one `signoff serve` on the same home serves), so
a card it asks for is answered in those pages. Nothing is registered by hand.

On first use the agent (`mcp-local`, owner-only: only its owner addresses it) and its room (`mcp`,
the default when a call names none, with the owner as member) are created, owned by the home's
first admin, who is created as `signoff rooms init` would when the home has none yet. Creation is
idempotent and race-safe: processes starting at once queue on a lock file in the home, and a writer
that still loses (another machine on a shared PostgreSQL home) finds what the winner made.
"""

from __future__ import annotations

import fcntl
from dataclasses import dataclass, field

from sqlalchemy import select

from signoff.gate.agent import RoomsAgent
from signoff.kernel.errors import ConflictError, NotFoundError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import InProcessTransport, Transport, embedded_rooms
from signoff.rooms.client._config import EMBEDDED_FOLLOW_SECONDS
from signoff.rooms.domain.model import Principal
from signoff.rooms.storage.tables import rooms_users

AGENT = "mcp-local"
ROOM = "mcp"
LOCAL_URL = "embedded:"  # not a network address: the tools run in this process on the home's database


@dataclass(frozen=True)
class LocalAgent(RoomsAgent):
    """The home's MCP agent, acting in process (no key: the embedded server is this process)."""

    service: RoomService = field(repr=False, compare=False, kw_only=True)
    principal: Principal = field(repr=False, compare=False, kw_only=True)

    def transport(self) -> Transport:
        # Waits on a card wake up this often to read what `signoff serve` (another process) wrote.
        return InProcessTransport(self.service, agent=self.principal, keepalive_seconds=EMBEDDED_FOLLOW_SECONDS)


def local_agent(settings: Settings) -> LocalAgent:
    """The home's MCP agent, created with its owner and room on first use."""
    service = embedded_rooms(SqlLedger.open(settings))
    settings.home.mkdir(parents=True, exist_ok=True)
    with open(settings.home / "mcp-local.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two first uses: one creates, the other finds
        principal = _agent(service)
    return LocalAgent(LOCAL_URL, principal.id, "", service=service, principal=principal)


def first_admin(service: RoomService) -> Principal:
    """The home's first admin (the oldest), created as `signoff rooms init` does when there is none."""
    row = service.store.one(select(rooms_users.c.user_id).where(rooms_users.c.is_admin.is_(True))
                            .order_by(rooms_users.c.created_at, rooms_users.c.name).limit(1))
    if row is not None:
        return service.user(row.user_id)
    try:
        service.init()  # its tokens are not kept: the admin signs in with `signoff rooms user link admin`
    except ConflictError:
        pass  # another process made the first admin meanwhile
    return first_admin(service)


def _agent(service: RoomService) -> Principal:
    service.store.ensure_fresh()
    try:
        return service.agent_by_name(AGENT)
    except NotFoundError:
        pass
    owner = first_admin(service)
    try:
        agent, _ = service.create_agent(owner, AGENT, "the local home's MCP server (signoff mcp)")
    except ConflictError:
        return service.agent_by_name(AGENT)  # another writer registered it first; its room is theirs to make
    # The agent's key is not kept: it acts in process, as the principal it is.
    service.create_room(owner, ROOM, "cards and messages from signoff mcp on this home", agent_names=[AGENT],
                        user_names=[owner.name])
    return agent
