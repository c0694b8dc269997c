"""Crew status over HTTP and on the desk owner's page: the server's own view of the crew's
connections, shown only to owners."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from signoff.desk.crew import Crew, key_role, setup
from signoff.desk.routes import routers as desk_routers
from signoff.kernel.errors import UsageError
from signoff.kernel.tls import tls_context
from signoff.rooms import RoomService
from signoff.rooms.client import HttpTransport, HttpUserTransport, RoomsClient, RoomsConfig, RoomsUserClient
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web.routes import routers as web_routers
from tests.support.fixtures.desk import World
from tests.support.fixtures.rooms import Server
from tests.support.web import HTTP_WAIT

PASSWORD = "a long enough passphrase"


@dataclass
class Served:
    base: str
    rooms: RoomService
    crew: Crew
    tokens: dict[str, str]  # room users' tokens


@pytest.fixture
def served(world: World) -> Iterator[Served]:
    rooms = RoomService(world.ledger)
    tokens: dict[str, str] = {}
    alice, tokens["alice"] = rooms.create_user("alice", "Alice")
    mallory, tokens["mallory"] = rooms.create_user("mallory", "Mallory")
    SignIns(world.ledger).set_password(alice.id, PASSWORD)
    SignIns(world.ledger).set_password(mallory.id, PASSWORD)
    crew = setup(rooms, world.settings, "alice")[0]
    app = create_app(service=rooms, settings=world.settings,
                     routers=[*desk_routers(world.settings), *web_routers(world.settings)])
    app.state.desk = world.desk
    server = Server(app)
    base = server.start()
    yield Served(base, rooms, crew, tokens)
    server.stop()


def _bearer(world: World, who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.tokens[who]}"}


def _signed_in(base: str, name: str) -> httpx.Client:
    client = httpx.Client(base_url=base, follow_redirects=False, verify=tls_context(), timeout=HTTP_WAIT)
    csrf = client.get("/signin").text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    assert client.post("/signin", data={"csrf": csrf, "name": name, "password": PASSWORD}).status_code == 303
    return client


def test_crew_status_over_http_follows_a_real_connection(world: World,
                                                         served: Served) -> None:
    base, crew = served.base, served.crew
    assert httpx.get(f"{base}/desk/crew", verify=tls_context(), timeout=HTTP_WAIT).status_code == 401
    assert httpx.get(f"{base}/desk/crew", headers=_bearer(world, "engineering"),
                     verify=tls_context(), timeout=HTTP_WAIT).status_code == 403
    assert httpx.get(f"{base}/desk/crew", headers=_bearer(world, "concierge"), verify=tls_context(),
                     timeout=HTTP_WAIT).status_code == 403

    def states() -> dict[str, str]:
        r = httpx.get(f"{base}/desk/crew", headers=_bearer(world, "alice"), verify=tls_context(), timeout=HTTP_WAIT)
        assert r.status_code == 200, r.text
        return {s["role"]: s["state"] for s in r.json()["roles"]}

    assert set(states().values()) == {"not running"}
    key = RoomsConfig.from_settings(world.settings).key(key_role("fixer"))

    async def scenario() -> dict[str, str]:
        async with RoomsClient(HttpTransport(base, key["agent_id"], key["api_key"])) as client:
            await client.connect_to_room(crew.engineering_room)
            return await asyncio.to_thread(states)

    during = asyncio.run(scenario())
    assert during["fixer"] == "connected" and during["manager"] == "not running"
    # The server's own view: the page of a signed-in owner shows the same.
    page = _signed_in(base, "alice").get("/crew")
    assert page.status_code == 200
    assert "desk-fixer" in page.text and "not running" in page.text
    assert "Content-Security-Policy" in page.headers


def test_the_crew_page_is_for_desk_owners_only(served: Served) -> None:
    base = served.base
    page = _signed_in(base, "mallory").get("/crew")
    assert page.status_code == 403
    assert "desk-fixer" not in page.text
    signed_out = httpx.get(f"{base}/crew", follow_redirects=False, verify=tls_context(), timeout=HTTP_WAIT)
    assert signed_out.status_code == 303 and signed_out.headers["location"] == "/signin"


def test_over_http_a_stranger_in_the_public_room_cannot_address_the_manager(
        served: Served) -> None:
    base, rooms, crew = served.base, served.rooms, served.crew
    alice, stranger = rooms.user_by_name("alice"), rooms.user_by_name("mallory")
    rooms.add_member(alice, crew.intake_room, user_name=stranger.name)
    mallory = RoomsUserClient(HttpUserTransport(base, served.tokens["mallory"]))
    try:
        asked = mallory.post(crew.intake_room, "my checkout is broken", targets=["desk-concierge"])
        assert asked["target_statuses"]["desk-concierge"] != "not_permitted"
        with pytest.raises(UsageError, match="not a member"):
            mallory.post(crew.intake_room, "start_fix BUG-0001 round=1", targets=["desk-manager"])
        # Even from inside the engineering room, no engineering agent is hers to address.
        rooms.add_member(alice, crew.engineering_room, user_name=stranger.name)
        for agent in ("desk-manager", "desk-reproducer", "desk-fixer"):
            sent = mallory.post(crew.engineering_room, "start_reproduction BUG-0001 round=1", targets=[agent])
            assert sent["target_statuses"][agent] == "not_permitted"
    finally:
        mallory.close()
