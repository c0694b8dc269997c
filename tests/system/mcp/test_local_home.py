"""`signoff mcp` with no settings, on a fresh local home: the tools work at once, as the home's own
agent on its embedded rooms server, and a card it asks for is answered by the home's admin from
another process on the same database (as the pages of `signoff serve` on that home answer it)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.mcp.local import AGENT, ROOM, local_agent
from signoff.rooms import RoomService
from signoff.rooms.domain.bound import content_digest
from signoff.rooms.storage.tables import rooms_agents
from tests.support.cards import answer_in
from tests.support.fixtures.mcp import result

PLAN = "ALTER TABLE orders ADD COLUMN note TEXT;\n"


def _env(home: Path) -> dict[str, str]:
    # Nothing about rooms: no URL, no agent, no key.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    return {**env, "SIGNOFF_HOME": str(home)}


@asynccontextmanager
async def local_client(home: Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "signoff.cli.main", "mcp"], env=_env(home))
    async with Client(params) as client:
        yield client


def _service(home: Path) -> RoomService:
    return RoomService(SqlLedger.open(Settings.load(home=home)))


def test_a_fresh_home_serves_working_tools_and_its_admin_answers_the_card(tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def scenario() -> None:
        async with local_client(home) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"request_approval", "await_approval", "post_message", "read_room"} <= names
            posted = result(await client.call_tool("post_message", {"body": "starting the migration"}))
            read = result(await client.call_tool("read_room", {}))
            assert read["room_id"] == posted["room_id"] and "starting the migration" in str(read["context"])
            card = result(await client.call_tool("request_approval", {
                "question": "Run this migration?", "content": PLAN, "responders": ["admin"]}))
            waiting = asyncio.create_task(client.call_tool("await_approval", {
                "request_id": card["request_id"], "timeout": 60, "content": PLAN}))
            # The home's admin, in another process's view of the same database, sees the card and answers.
            people = _service(home)
            admin = people.user_by_name("admin")
            assert [c.request_id for c in people.pending_approvals(admin)] == [card["request_id"]]
            answer = await asyncio.to_thread(answer_in, people, admin, card["request_id"], "yes")
            assert answer["outcome"] == "accepted"
            decision = result(await waiting)
            assert decision["approved"] is True and decision["content_digest"] == content_digest(PLAN)

    asyncio.run(scenario())
    # A second start finds what the first made: one agent, one room of that name.
    asyncio.run(_second_start(home))
    service = _service(home)
    agent = service.agent_by_name(AGENT)
    assert agent.owner_user_id == service.user_by_name("admin").id
    assert [r["name"] for r in service.list_rooms(agent) if r["name"] == ROOM] == [ROOM]


async def _second_start(home: Path) -> None:
    async with local_client(home) as client:
        assert "starting the migration" in str(result(await client.call_tool("read_room", {}))["context"])


def test_first_uses_at_the_same_time_make_one_agent_owned_by_the_existing_first_admin(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = Settings.load(home=home)
    service = _service(home)
    first, _ = service.create_user("ops", "Ops", admin=True)
    service.create_user("zed", "Zed", admin=True)
    with ThreadPoolExecutor(4) as pool:
        agents = list(pool.map(lambda _: local_agent(Settings.load(home=home)), range(4)))
    assert {a.agent_id for a in agents} == {agents[0].agent_id}
    rows = service.store.all(rooms_agents.select().where(rooms_agents.c.name == AGENT))
    assert len(rows) == 1 and rows[0].owner_user_id == first.id
    assert [u.name for u in service.users() if u.is_admin] == ["ops", "zed"]  # no admin was added
    assert local_agent(settings).agent_id == agents[0].agent_id
