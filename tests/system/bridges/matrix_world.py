"""A signoff room and a Matrix room for one test: an in-process rooms server on a fresh SQLite
ledger (admin, the bridge's user, Alice's signoff user, an open agent, an owner-only one and one
whose policy admits Alice by name), and on the session's Synapse a bot account for the bridge and a
person, Alice, who owns the Matrix room."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from mautrix.client import ClientAPI
from mautrix.types import RoomID, UserID

from signoff.bridges.matrix import BridgeStore, MatrixBridge
from signoff.ledger import SqlLedger
from signoff.rooms import OPEN, OWNER_ONLY, RoomService
from signoff.rooms.client import (
    HttpUserTransport,
    InProcessSyncTransport,
    InProcessUserTransport,
    RoomsUserClient,
    SyncRoomsClient,
)
from tests.support.matrix_people import WAIT, Event, MatrixPerson, body_of
from tests.support.synapse import MatrixAccount, Synapse


@dataclass
class World:
    synapse: Synapse
    ledger: SqlLedger
    service: RoomService
    room_id: str
    bridge_token: str
    helper: SyncRoomsClient | None  # an open agent in the room (None where the room is someone else's)
    bot: MatrixAccount
    alice: MatrixAccount
    alice_token: str  # Alice's signoff user token (she claims her Matrix account with it)
    matrix_room: str = ""

    def bridge(self, rooms_url: str | None = None) -> MatrixBridge:
        """A bridge process as `signoff bridge matrix` builds it (a new one after each 'restart'),
        on the rooms server in this ledger or, with `rooms_url`, on a `signoff serve`."""
        matrix = ClientAPI(UserID(self.bot.user_id), self.bot.device_id, base_url=self.synapse.base,
                           token=self.bot.access_token)
        rooms = RoomsUserClient(HttpUserTransport(rooms_url, self.bridge_token) if rooms_url
                                else InProcessUserTransport(self.service, self.bridge_token))
        return MatrixBridge(rooms, BridgeStore(self.ledger, self.room_id, self.matrix_room), matrix,
                            self.room_id, self.matrix_room)

    def person(self, token: str) -> RoomsUserClient:
        return RoomsUserClient(InProcessUserTransport(self.service, token))

    def messages(self) -> list[dict[str, object]]:
        return self.service.read_messages(self.service.user_by_name("admin"), self.room_id, limit=1000)


def make_world(synapse: Synapse, tmp: Path) -> World:
    ledger = SqlLedger.from_url(f"sqlite:///{tmp / 'ledger.db'}")
    service = RoomService(ledger)
    admin = service.user(service.init()["admin_user_id"])
    _, bridge_token = service.create_user("matrix-bridge", external=True)
    _, helper_key = service.create_agent(admin, "helper", policy=OPEN)
    service.create_agent(admin, "guarded", policy=OWNER_ONLY)
    alice, alice_token = service.create_user("alice")
    service.create_agent(admin, "deployer", policy={"rules": [{"users": [alice.id]}]})
    room = service.create_room(admin, "chat", agent_names=["helper", "guarded", "deployer"],
                               user_names=["matrix-bridge", "alice"])
    helper = SyncRoomsClient(InProcessSyncTransport(service, helper_key))
    helper.open("helper-1", room.id)
    tag = uuid.uuid4().hex[:8]
    return World(synapse, ledger, service, room.id, bridge_token, helper,
                 synapse.register(f"bot-{tag}"), synapse.register(f"alice-{tag}"), alice_token)


def world_on(synapse: Synapse, ledger: SqlLedger, service: RoomService, room_id: str, person_token: str,
             person: str) -> World:
    """A world for a room that exists already (made by whoever runs it): the server's admin adds the
    bridge's (external) user to it; on the session's Synapse a bot and `person`'s Matrix account."""
    _, bridge_token = service.create_user("matrix-bridge", external=True)
    service.add_member(service.user_by_name("admin"), room_id, user_name="matrix-bridge")
    tag = uuid.uuid4().hex[:8]
    return World(synapse, ledger, service, room_id, bridge_token, None, synapse.register(f"bot-{tag}"),
                 synapse.register(f"{person}-{tag}"), person_token)


async def open_matrix_room(world: World, alice: MatrixPerson) -> str:
    world.matrix_room = str(await alice.api.create_room(invitees=[UserID(world.bot.user_id)]))
    return world.matrix_room


async def join(person: MatrixPerson, room: str) -> None:
    await person.api.join_room(RoomID(room))


async def until_seen(bridge: MatrixBridge, person: MatrixPerson, match: Callable[[Event], bool],
                     timeout: float = WAIT) -> Event:
    """Step the bridge and the person's sync by turns until the person sees a matching event."""
    async with asyncio.timeout(timeout):
        while True:
            found = [e for e in person.seen if match(e)]
            if found:
                return found[0]
            await bridge.step(timeout_ms=200)
            await person.sync(1000)


@contextlib.asynccontextmanager
async def bridged(synapse: Synapse, tmp: Path) -> AsyncIterator[tuple[World, MatrixPerson, MatrixBridge]]:
    """A world whose Matrix room Alice opened, and a started bridge for it (closed at the end)."""
    world = make_world(synapse, tmp)
    async with MatrixPerson(synapse, world.alice) as alice:
        await open_matrix_room(world, alice)
        bridge = world.bridge()
        await bridge.start()
        try:
            yield world, alice, bridge
        finally:
            await bridge.close()


async def run_until(bridge: MatrixBridge, done: Callable[[], bool], timeout: float = WAIT) -> None:
    """Step the bridge (each step long-polls Matrix for up to a second) until `done()`."""
    async with asyncio.timeout(timeout):
        while not done():
            await bridge.step(timeout_ms=1000)


async def open_direct(world: World, person: MatrixPerson) -> str:
    return str(await person.api.create_room(invitees=[UserID(world.bot.user_id)], is_direct=True))


def from_bot(world: World, room: str, start: str) -> Callable[[Event], bool]:
    """A notice or message the bot wrote in `room` that starts with `start`."""
    def match(event: Event) -> bool:
        return event["room_id"] == room and event.get("sender") == world.bot.user_id \
            and body_of(event).startswith(start)
    return match


async def claim(world: World, bridge: MatrixBridge, person: MatrixPerson, signoff_token: str) -> None:
    """`person` claims the signoff user of `signoff_token` the way people do: a code, sent to the
    bot in a direct message."""
    code = world.person(signoff_token).claim_code("matrix-bridge", str(person.user_id))["code"]
    direct = await open_direct(world, person)
    await person.say(direct, f"claim {code}")
    await until_seen(bridge, person, from_bot(world, direct, "claimed: "))


async def another_person(world: World, owner: MatrixPerson, name: str) -> MatrixAccount:
    """A new Matrix account, invited by `owner` into the bridged Matrix room and joined."""
    account = world.synapse.register(f"{name}-{uuid.uuid4().hex[:8]}")
    await owner.api.invite_user(RoomID(world.matrix_room), UserID(account.user_id))
    joiner = ClientAPI(UserID(account.user_id), account.device_id, base_url=world.synapse.base,
                       token=account.access_token)
    try:
        await joiner.join_room(RoomID(world.matrix_room))
    finally:
        await joiner.api.session.close()
    return account
