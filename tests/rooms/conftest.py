"""Fixtures for rooms: a service on a real database, a small world of identities, a real server."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn

from signoff.kernel.clock import FixedClock
from signoff.ledger import SqlLedger
from signoff.rooms import OPEN, Principal, RoomService
from signoff.rooms.client import HttpUserTransport, InProcessUserTransport, RoomsUserClient
from signoff.rooms.http.app import create_app


@dataclass
class World:
    service: RoomService
    admin: Principal
    admin_token: str
    registration_key: str
    alice: Principal
    alice_token: str
    bob: Principal
    bob_token: str
    fixer: Principal
    fixer_key: str
    reviewer: Principal
    reviewer_key: str
    room_id: str


def make_world(service: RoomService) -> World:
    boot = service.init()
    admin = service.user(boot["admin_user_id"])
    alice, alice_token = service.create_user("alice", "Alice")
    bob, bob_token = service.create_user("bob", "Bob")
    fixer, fixer_key = service.create_agent(alice, "fixer", "fixes bugs", policy=OPEN)
    reviewer, reviewer_key = service.create_agent(alice, "reviewer", "reviews", policy=OPEN)
    room = service.create_room(alice, "case-1", agent_names=["fixer", "reviewer"], user_names=["alice", "bob"])
    return World(service, admin, boot["admin_token"], boot["registration_key"], alice, alice_token, bob,
                 bob_token, fixer, fixer_key, reviewer, reviewer_key, room.id)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(1_800_000_000.0)


@pytest.fixture
def service(sqlite_url: str, clock: FixedClock) -> Iterator[RoomService]:
    ledger = SqlLedger.from_url(sqlite_url, clock)
    yield RoomService(ledger)
    ledger.close()


@pytest.fixture
def world(service: RoomService) -> World:
    return make_world(service)


class Server:
    """A real uvicorn server on a free loopback port, in a thread."""

    def __init__(self, app: Any) -> None:
        self.config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.server.force_exit = True
        self.thread.join(timeout=20)


@pytest.fixture
def serve_app() -> Iterator[Any]:
    started: list[Server] = []

    def start(app: Any) -> tuple[str, Server]:
        server = Server(app)
        started.append(server)
        return server.start(), server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def http_world(world: World, serve_app: Any) -> tuple[World, str]:
    app = create_app(service=world.service, keepalive_seconds=0.5)
    base, _ = serve_app(app)
    return world, base


@pytest.fixture(params=["in_process", "http"])
def person_for(request: pytest.FixtureRequest, http_world: tuple[World, str]) -> Iterator[
        Callable[[str], RoomsUserClient]]:
    world, base = http_world
    opened: list[RoomsUserClient] = []

    def make(token: str) -> RoomsUserClient:
        transport = (HttpUserTransport(base, token, timeout=20) if request.param == "http"
                     else InProcessUserTransport(world.service, token))
        opened.append(RoomsUserClient(transport))
        return opened[-1]

    yield make
    for client in opened:
        client.close()


def run(coro: Any) -> Any:
    return asyncio.run(coro)
