"""A small agent on the runtime (`AgentLoop`), run as its own process by tests: it answers every
message addressed to it with one keyed reply in the message's thread. With `--hold`, it blocks
inside the handler of a message containing "hold", after its reply was sent and before the
handler returned, and says so on stdout (so a test can kill it exactly there)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from signoff.ledger import SqlLedger
from signoff.rooms.client import AgentLoop, HttpTransport


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("agent_id")
    parser.add_argument("db")
    parser.add_argument("room")
    parser.add_argument("--hold", action="store_true")
    args = parser.parse_args()
    key = sys.stdin.readline().strip()  # never on the command line
    asyncio.run(serve(args.url, args.agent_id, key, args.db, args.room, args.hold))


async def serve(url: str, agent_id: str, key: str, db: str, room: str, hold: bool) -> None:
    async def answer(agent: AgentLoop, env: dict[str, Any]) -> None:
        p = env.get("payload") or {}
        if env.get("type") != "message" or not p.get("addressed"):
            return
        await agent.send(room, f"seen {p['message_id']}", key=f"reply:{p['message_id']}",
                         thread_id=str(p["message_id"]))
        if hold and "hold" in str(p.get("body")):
            print(f"holding {p['message_id']}", flush=True)
            await asyncio.Event().wait()

    ledger = SqlLedger.from_url(db)
    try:
        async with AgentLoop(HttpTransport(url, agent_id, key), ledger, [room], answer,
                             heartbeat_interval=0.5) as agent:
            print("ready", flush=True)
            await agent.run()
    finally:
        ledger.close()


if __name__ == "__main__":
    main()
