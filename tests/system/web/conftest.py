"""A real server of the app with the pages, on a clock the test moves, and a signed-in browser."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from signoff.kernel.clock import FixedClock
from signoff.kernel.tls import tls_context
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web.routes import routers
from tests.support.fixtures.rooms import Server
from tests.support.web import HTTP_WAIT

PASSWORD = "a long enough passphrase"
Clients = Callable[[], httpx.Client]


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(1_800_000_000.0)


@pytest.fixture
def service(db_url: str, clock: FixedClock) -> Iterator[RoomService]:
    ledger = SqlLedger.from_url(db_url, clock)
    s = RoomService(ledger)
    s.init()
    alice, _ = s.create_user("alice", "Alice")
    SignIns(ledger).set_password(alice.id, PASSWORD)
    yield s
    ledger.close()


@pytest.fixture
def clients(service: RoomService) -> Iterator[Callable[[], httpx.Client]]:
    """Browsers (cookie jars) on one real server of the service's app."""
    server = Server(create_app(service=service, routers=routers(None)))
    base = server.start()
    made: list[httpx.Client] = []

    def new() -> httpx.Client:
        made.append(httpx.Client(base_url=base, follow_redirects=False, verify=tls_context(), timeout=HTTP_WAIT))
        return made[-1]

    yield new
    for c in made:
        c.close()
    server.stop()


def csrf_of(client: httpx.Client, path: str = "/signin") -> str:
    return client.get(path).text.split('name="csrf" value="', 1)[1].split('"', 1)[0]


def sign_in(client: httpx.Client, name: str = "alice", password: str = PASSWORD) -> int:
    return client.post("/signin", data={"csrf": csrf_of(client), "name": name, "password": password}).status_code


