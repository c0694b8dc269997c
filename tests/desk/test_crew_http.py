"""Crew status over HTTP and on the desk owner's page: the server's own view of the crew's
connections, shown only to owners."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from signoff.desk.crew import Crew, key_role, setup
from signoff.desk.routes import routers as desk_routers
from signoff.rooms import RoomService
from signoff.rooms.app import create_app
from signoff.rooms.client import HttpTransport, RoomsClient, RoomsConfig
from signoff.rooms.signin import SignIns
from signoff.web.routes import routers as web_routers
from tests.desk.conftest import World
from tests.rooms.conftest import Server

PASSWORD = "a long enough passphrase"


@pytest.fixture
def served(world: World) -> Iterator[tuple[str, RoomService, Crew]]:
    rooms = RoomService(world.ledger)
    alice, _ = rooms.create_user("alice", "Alice")
    mallory, _ = rooms.create_user("mallory", "Mallory")
    SignIns(world.ledger).set_password(alice.id, PASSWORD)
    SignIns(world.ledger).set_password(mallory.id, PASSWORD)
    crew = setup(rooms, world.settings, "alice")[0]
    app = create_app(service=rooms, settings=world.settings,
                     routers=[*desk_routers(world.settings), *web_routers(world.settings)])
    app.state.desk = world.desk
    server = Server(app)
    base = server.start()
    yield base, rooms, crew
    server.stop()


def _bearer(world: World, who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.tokens[who]}"}


def _signed_in(base: str, name: str) -> httpx.Client:
    client = httpx.Client(base_url=base, follow_redirects=False)
    csrf = client.get("/signin").text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    assert client.post("/signin", data={"csrf": csrf, "name": name, "password": PASSWORD}).status_code == 303
    return client


def test_crew_status_over_http_follows_a_real_connection(world: World,
                                                         served: tuple[str, RoomService, Crew]) -> None:
    base, _, crew = served
    assert httpx.get(f"{base}/desk/crew").status_code == 401
    assert httpx.get(f"{base}/desk/crew", headers=_bearer(world, "engineering")).status_code == 403
    assert httpx.get(f"{base}/desk/crew", headers=_bearer(world, "concierge")).status_code == 403

    def states() -> dict[str, str]:
        r = httpx.get(f"{base}/desk/crew", headers=_bearer(world, "alice"))
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


def test_the_crew_page_is_for_desk_owners_only(served: tuple[str, RoomService, Crew]) -> None:
    base, _, _ = served
    page = _signed_in(base, "mallory").get("/crew")
    assert page.status_code == 403
    assert "desk-fixer" not in page.text
    signed_out = httpx.get(f"{base}/crew", follow_redirects=False)
    assert signed_out.status_code == 303 and signed_out.headers["location"] == "/signin"
