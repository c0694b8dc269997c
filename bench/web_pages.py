"""Web pages against the JSON API that returns the same data, on SQLite, in one run.

Seeds a home through the public facades: 1,000 bugs (reports filed at the desk's intake, each its
own bug) and a room of 10,000 messages, plus the people and credentials that read them. One step
of the intake is replaced while seeding: clustering, which replays the whole cluster history for
each report (quadratic per report: 1,000 reports would take most of an hour here); every seeded
report opens its own bug, as a report unlike all others does, and all else (the airlock, the
dossier, the bug's events and jobs) is the intake's own. Then, in
this process, the one app `signoff serve` builds (rooms server, desk API, pages) answers each page
and its API twin in turn through an in-process ASGI client, so that what is timed is the server's
work (routing, auth, reading, rendering), not a network:

    page                 API twin
    /                    GET /users/me/approvals
    /rooms               GET /users/me/rooms
    /rooms/{id}          GET /users/me/rooms/{id}/messages?after=<the sequence before the latest 200>&limit=200
                         (the page shows the latest 200; `after=0` would read the room's first 200,
                         so the warm-up checks that both answers hold the same messages)
    /bugs                GET /desk/bugs
    /bugs/{id}           GET /desk/bugs/{id}

The evidence and ledger pages have no JSON twin (the CLI's `evidence verify` and `ledger verify`
are theirs); they are timed alone, for the 100 ms goal. The ledger page is timed twice: as visited
again and again with nothing written in between (its monitor then reuses its last answer), and as
visited after one event is appended before each visit (untimed), so that each visit walks the new
event and starts a read-back of every stored event against the digest of what it walked, in the
monitor's background thread, while later visits are timed: what a busy server pays.

Each run times every pair `--requests` times, interleaved (page, API, page, API...), so the
machine's other load hits both alike. Prints per page: p50 and p95 of page and API (medians over
runs, with min..max), and the page/API ratio of the p95s; then `ratio <x>`: the worst page's p95
ratio (the goal is at most 1.5), and whether every page stays under 100 ms at p95.

    python bench/web_pages.py [--bugs 1000] [--messages 10000] [--runs 5] [--requests 40]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from signoff.cli.serve import _contributed
from signoff.demo.fixture import shoplite_source
from signoff.desk.local import init_local
from signoff.kernel.ids import readable_id
from signoff.kernel.settings import Settings
from signoff.ledger import NewEvent, SqlLedger
from signoff.rooms import OPEN, RoomService
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web.rooms_pages import HISTORY

PASSWORD = "a bench passphrase, long enough"
WORDS = ("coupon", "cart", "checkout", "invoice", "refund", "shipping", "tax", "discount", "currency", "receipt",
         "basket", "voucher", "payment", "address", "profile", "search", "filter", "rating", "stock", "price")
GOAL_RATIO = 1.5
GOAL_MS = 100.0


@dataclass(frozen=True)
class Pair:
    name: str
    page: str
    api: str | None  # None: a page without a JSON twin, timed alone
    write_first: bool = False  # append one event before each visit (untimed)


def seed(home: Path, bugs: int, messages: int) -> tuple[Settings, str, str, str, int]:
    """The seeded home's settings, alice's user token and desk owner token, the room's id, and the
    sequence just before the latest HISTORY messages (the API twin reads after it)."""
    settings = Settings.load(home=home)
    ledger = SqlLedger.open(settings)
    rooms = RoomService(ledger)
    rooms.init()
    alice, alice_token = rooms.create_user("alice", "Alice")
    SignIns(ledger).set_password(alice.id, PASSWORD)
    fixer, _ = rooms.create_agent(alice, "fixer", "proposes fixes", policy=OPEN)
    room = rooms.create_room(alice, "ops", agent_names=["fixer"], user_names=["alice"])
    started = time.perf_counter()
    before_shown = 0
    for i in range(messages):
        sender = alice if i % 3 else fixer
        receipt = rooms.post_message(sender, room.id, f"message {i}: the {WORDS[i % 20]} step {i % 7} is done, "
                                                      f"next up {WORDS[(i * 7) % 20]}")
        if i == messages - HISTORY and receipt.sequence is not None:
            before_shown = receipt.sequence - 1
    print(f"seeded {messages} messages in {time.perf_counter() - started:.1f} s", flush=True)
    local = init_local(settings, ledger, source=shoplite_source(), people=("alice",))
    desk = local.desk
    opened = iter(range(1, bugs + 1))

    def own_bug(report_id: str, component: str, title: str) -> tuple[str, dict[str, Any]]:
        return readable_id(desk.config.prefix, next(opened)), {"component": component, "title": title}

    desk._cluster = own_bug  # type: ignore[method-assign]
    started = time.perf_counter()
    for i in range(bugs):
        # Distinct words per report, so that none joins another's cluster: one bug each.
        a, b, c = WORDS[i % 20], WORDS[(i // 20) % 20], WORDS[(i // 400) % 20]
        desk.submit_report({"title": f"{a} {b} {c} fails on screen {i}", "component": f"area-{i % 40}",
                            "steps": f"Open the {a} page, pick {b}, then {c}.", "actual": f"error {i}"},
                           client=f"198.51.{i // 200}.{i % 200}")
    count = len(desk.bug_ids())
    print(f"seeded {count} bugs in {time.perf_counter() - started:.1f} s", flush=True)
    if count != bugs:
        raise SystemExit(f"expected {bugs} bugs, the desk made {count}: reports joined clusters")
    print(f"the ledger holds {ledger.count_events()} events", flush=True)
    ledger.close()
    return settings, alice_token, local.tokens["alice"], room.id, before_shown


def same_messages(page_html: str, api_json: dict[str, Any]) -> None:
    """Stop unless the room page and its twin hold the same messages (a twin must not read less)."""
    shown = re.findall(r'id="m-([^"]+)"', page_html)
    read = [m["message_id"] for m in api_json["messages"]]
    if shown != read:
        raise SystemExit(f"the room page shows {len(shown)} messages and its API twin reads {len(read)}, "
                         f"not the same ones (first {shown[:1]} against {read[:1]}): fix the twin's query")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def timed(client: httpx.AsyncClient, path: str, headers: dict[str, str]) -> float:
    started = time.perf_counter()
    answer = await client.get(path, headers=headers)
    elapsed = time.perf_counter() - started
    if answer.status_code != 200:
        raise SystemExit(f"GET {path} answered {answer.status_code}: {answer.text[:300]}")
    return elapsed * 1000


async def sign_in(client: httpx.AsyncClient) -> None:
    html = (await client.get("/signin")).text
    csrf = html.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    answer = await client.post("/signin", data={"csrf": csrf, "name": "alice", "password": PASSWORD})
    if answer.status_code != 303:
        raise SystemExit(f"sign-in failed: {answer.status_code}")


async def measure(settings: Settings, pairs: list[Pair], api_headers: dict[str, dict[str, str]], runs: int,
                  requests: int) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """{pair: {"page"|"api": [(p50, p95) per run]}}"""
    ledger = SqlLedger.open(settings)
    app = create_app(ledger, settings, routers=_contributed(settings))
    transport = httpx.ASGITransport(app=app)
    out: dict[str, dict[str, list[tuple[float, float]]]] = {p.name: {"page": [], "api": []} for p in pairs}
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as browser, \
            httpx.AsyncClient(transport=transport, base_url="http://bench") as api:
        await sign_in(browser)
        for p in pairs:  # warm caches, templates and the projection once
            await timed(browser, p.page, {})
            if p.api is not None:
                await timed(api, p.api, api_headers[p.name])
        room = next(p for p in pairs if p.name == "room")
        assert room.api is not None
        twin = await api.get(room.api, headers=api_headers["room"])
        same_messages((await browser.get(room.page)).text, twin.json())
        for run in range(runs):
            for p in pairs:
                pages, apis = [], []
                for i in range(requests):
                    if p.write_first:
                        ledger.append("bench/writes", None, [NewEvent("bench.write", {"run": run, "i": i})])
                    pages.append(await timed(browser, p.page, {}))
                    if p.api is not None:
                        apis.append(await timed(api, p.api, api_headers[p.name]))
                out[p.name]["page"].append((statistics.median(pages), percentile(pages, 0.95)))
                if apis:
                    out[p.name]["api"].append((statistics.median(apis), percentile(apis, 0.95)))
            print(f"run {run + 1}/{runs} done", flush=True)
    ledger.close()
    return out


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.1f} ({min(values):.1f}..{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--bugs", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-web-") as tmp:
        os.environ.pop("SIGNOFF_DB", None)  # SQLite under the temporary home, whatever the shell says
        home = Path(tmp) / ".signoff"
        settings, user_token, owner_token, room_id, before_shown = seed(home, args.bugs, args.messages)
        user = {"Authorization": f"Bearer {user_token}"}
        owner = {"Authorization": f"Bearer {owner_token}"}
        middle = readable_id("BUG", max(1, args.bugs // 2))
        pairs = [Pair("home", "/", "/users/me/approvals"),
                 Pair("rooms", "/rooms", "/users/me/rooms"),
                 Pair("room", f"/rooms/{room_id}",
                      f"/users/me/rooms/{room_id}/messages?after={before_shown}&limit={HISTORY}"),
                 Pair("board", "/bugs", "/desk/bugs"),
                 Pair("bug", f"/bugs/{middle}", f"/desk/bugs/{middle}"),
                 Pair("evidence", "/evidence", None), Pair("ledger", "/ledger", None),
                 Pair("ledger+w", "/ledger", None, write_first=True)]
        headers = {"home": user, "rooms": user, "room": user, "board": owner, "bug": owner, "evidence": {},
                   "ledger": {}, "ledger+w": {}}
        results = asyncio.run(measure(settings, pairs, headers, args.runs, args.requests))
    print(f"\n{args.runs} runs x {args.requests} requests per page and per API call, interleaved; "
          f"os.cpu_count()={os.cpu_count()}, load average {os.getloadavg()[0]:.1f} (a shared, loaded machine)")
    print(f"{'page':<8} {'page p50 ms':>22} {'page p95 ms':>22} {'API p50 ms':>22} {'API p95 ms':>22} "
          f"{'p95 ratio':>10}")
    worst, over = 0.0, []
    for name, timing in results.items():
        page50, page95 = [t[0] for t in timing["page"]], [t[1] for t in timing["page"]]
        if statistics.median(page95) > GOAL_MS:
            over.append(name)
        if not timing["api"]:
            print(f"{name:<8} {spread(page50):>22} {spread(page95):>22} {'(no JSON twin)':>22}")
            continue
        api50, api95 = [t[0] for t in timing["api"]], [t[1] for t in timing["api"]]
        ratio = statistics.median(page95) / statistics.median(api95)
        worst = max(worst, ratio)
        print(f"{name:<8} {spread(page50):>22} {spread(page95):>22} {spread(api50):>22} {spread(api95):>22} "
              f"{ratio:>10.2f}")
    print(f"ratio {worst:.2f} (worst page's p95 / its API call's p95; goal <= {GOAL_RATIO})")
    print(f"pages over {GOAL_MS:.0f} ms at p95: {', '.join(over) if over else 'none'}")


if __name__ == "__main__":
    main()
