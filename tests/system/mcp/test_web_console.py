"""Approvals asked over MCP (`request_approval`, the SDK's own client over stdio) and answered in the
web console's form, as a browser without a script sends it: by the right person, by the wrong
person, after the content changed, and by whoever holds a people's role when the answer arrives;
`await_approval` reads the outcome back from the server."""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from signoff.rooms.domain.bound import content_digest
from tests.support.cli import Result, run_cli
from tests.support.fixtures.mcp import Served, error_text, result, stdio_client

# Content an agent might send: markup in it is shown as text, never run.
PLAN = "UPDATE prices SET cents = cents * 2;\n-- then reload <script>alert('pwned')</script> & notify\n"


async def ask(client: Any, content: str = PLAN, responders: list[str] | None = None) -> dict[str, Any]:
    return result(await client.call_tool("request_approval", {
        "question": "Double every price?", "content": content, "responders": responders or ["alice"]}))


@contextmanager
def console(served: Served, name: str) -> Iterator[tuple[httpx.Client, str]]:
    """The web console signed in as `name`, and its CSRF token."""
    web, csrf = served.web(name)
    try:
        yield web, csrf
    finally:
        web.close()


def card_on_home(served: Served, name: str, request_id: str) -> str | None:
    """The card's form on `name`'s home page (None when it is not listed)."""
    with console(served, name) as (web, _):
        page = web.get("/").text
    for card in page.split('<li class="card"')[1:]:
        if f"<code>{request_id}</code>" in card:  # the card shows its request id (its form sends its card id)
            return card
    return None


def answer(served: Served, name: str, request_id: str, option_id: str, reason: str) -> httpx.Response:
    """Answer as the form does: with the digest of the card the page showed; a card the page does not
    list (not named on it, or decided) is read over the API, as someone who knows its id would."""
    form = card_on_home(served, name, request_id) or ""
    shown = re.search(r'name="digest" value="([0-9a-f]{64})"', form)
    token = {"alice": served.alice_token, "bob": served.bob_token}[name]
    digest = shown.group(1) if shown else served.person(token).approval(request_id)["digest"]
    with console(served, name) as (web, csrf):
        return web.post("/approvals/answer", data={"csrf": csrf, "request_id": request_id, "option_id": option_id,
                                                    "digest": digest, "reason": reason, "back": "/"})


def room_text(served: Served) -> str:
    with console(served, "alice") as (web, _):
        return html.unescape(re.sub(r"<[^>]+>", " ", web.get(f"/rooms/{served.room_id}").text))


@pytest.mark.slow
def test_the_right_person_approves_in_the_web_console(served: Served) -> None:
    async def main() -> None:
        async with stdio_client(served) as client:
            card = await ask(client)
            rid = card["request_id"]
            # Alice's start page lists the card (it reaches her through the server), with the question and
            # the exact bytes, escaped, and their digest.
            shown = await asyncio.to_thread(
                lambda: served.pending_card(served.alice_token, lambda c: c["request_id"] == rid)
                and card_on_home(served, "alice", rid))
            assert shown is not None
            assert "<legend class=\"title\">Double every price?</legend>" in shown
            assert content_digest(PLAN) in shown and f"{len(PLAN.encode())} bytes" in shown
            assert "<script>" not in shown and html.escape(PLAN, quote=False) in shown.replace("&#39;", "'")
            waiting = asyncio.create_task(client.call_tool("await_approval", {
                "request_id": rid, "timeout": 60, "content": PLAN}))
            sent = await asyncio.to_thread(answer, served, "alice", rid, "yes", "Prices were halved by mistake.")
            # Back to the start page, which confirms the answer (a notice kept in her session, by id).
            assert sent.status_code == 303 and sent.headers["location"].startswith("/?notice=")
            assert sent.headers["location"].endswith("#answered")
            decision = result(await waiting)
            assert decision["approved"] is True and decision["state"] == "approved"
            assert decision["responder_name"] == "Alice" and decision["content_digest"] == content_digest(PLAN)
            assert decision["responder_role"] is None  # named on the card
            # The reason is said in the room, and the card has left her list.
            assert "Reason: Prices were halved by mistake." in await asyncio.to_thread(room_text, served)
            assert await asyncio.to_thread(card_on_home, served, "alice", rid) is None

    asyncio.run(main())


def test_the_wrong_person_is_refused_in_the_web_console_then_the_right_one_declines(served: Served) -> None:
    async def main() -> None:
        async with stdio_client(served) as client:
            rid = (await ask(client))["request_id"]
            # Bob is in the room but not named: his form post (he knows the request id from the room) is
            # refused, and the card is still open.
            assert await asyncio.to_thread(card_on_home, served, "bob", rid) is None
            refused = await asyncio.to_thread(answer, served, "bob", rid, "yes", "Looks fine to me.")
            assert refused.status_code == 403 and "not a responder" in refused.text
            still = result(await client.call_tool("await_approval", {"request_id": rid, "timeout": 0}))
            assert still["state"] == "pending" and still["approved"] is False
            # An answer without a reason is refused before anything is recorded.
            bare = await asyncio.to_thread(answer, served, "alice", rid, "yes", "  ")
            assert bare.status_code == 400 and "needs a reason" in bare.text
            still = result(await client.call_tool("await_approval", {"request_id": rid, "timeout": 0}))
            assert still["state"] == "pending"
            no = await asyncio.to_thread(answer, served, "alice", rid, "no", "Not during the sale.")
            assert no.status_code == 303
            decision = result(await client.call_tool("await_approval", {
                "request_id": rid, "timeout": 30, "content": PLAN}))
            assert decision["state"] == "declined" and decision["approved"] is False
            assert decision["responder_name"] == "Alice"
            # The first answer decides: a later "yes" changes nothing.
            late = await asyncio.to_thread(answer, served, "alice", rid, "yes", "Changed my mind.")
            assert late.status_code == 409 and "already answered" in late.text
            again = result(await client.call_tool("await_approval", {"request_id": rid, "timeout": 0}))
            assert again["state"] == "declined"

    asyncio.run(main())


def test_a_yes_in_the_web_console_does_not_approve_changed_content(served: Served) -> None:
    changed = PLAN.replace("* 2", "* 20")

    async def main() -> None:
        async with stdio_client(served) as client:
            rid = (await ask(client))["request_id"]
            await asyncio.to_thread(lambda: served.pending_card(served.alice_token, lambda c: c["request_id"] == rid))
            yes = await asyncio.to_thread(answer, served, "alice", rid, "yes", "Doubling is right.")
            assert yes.status_code == 303
            # The agent now holds other content: the yes was for the bytes Alice saw, not these.
            other = result(await client.call_tool("await_approval", {
                "request_id": rid, "timeout": 0, "content": changed}))
            assert other["approved"] is False and other["state"] == "unbound"
            assert other["content_digest"] == content_digest(PLAN) != content_digest(changed)
            # Asking again for the changed content is a new card, shown with the new bytes, undecided.
            fresh = (await ask(client, changed))["request_id"]
            assert fresh != rid
            shown = await asyncio.to_thread(
                lambda: served.pending_card(served.alice_token, lambda c: c["request_id"] == fresh)
                and card_on_home(served, "alice", fresh))
            assert shown is not None and content_digest(changed) in shown and "* 20" in shown
            pending = result(await client.call_tool("await_approval", {
                "request_id": fresh, "timeout": 0, "content": changed}))
            assert pending["state"] == "pending" and pending["approved"] is False

    asyncio.run(main())


def rooms_cli(served: Served, *args: str) -> Result:
    """`signoff rooms ...` on the served database, as its operator runs it (in this process)."""
    return run_cli(["rooms", *args], {**served.env(), "SIGNOFF_DB": f"sqlite:///{served.home / 'rooms.db'}"})


def test_a_card_for_a_role_is_answered_by_whoever_holds_it_when_the_answer_arrives(served: Served) -> None:
    assert rooms_cli(served, "user", "add", "ops-admin", "--admin").exit_code == 0
    # Only an admin grants: bob cannot make himself the DBA.
    selfmade = rooms_cli(served, "role", "grant", "dba", "bob", "--by", "bob")
    # The first line names the server the command acts on; then the refusal.
    said = selfmade.stderr.splitlines()
    assert selfmade.exit_code != 0 and said[0].startswith("server: ") and said[1].startswith("error: only an admin")
    assert "fix: " in selfmade.stderr and "Traceback" not in selfmade.stderr
    assert json.loads(rooms_cli(served, "role", "list", "--json").stdout) == []
    assert rooms_cli(served, "role", "grant", "dba", "bob", "--by", "ops-admin").exit_code == 0
    assert json.loads(rooms_cli(served, "role", "list", "--json").stdout) == [{"role": "dba", "users": ["bob"]}]

    async def main() -> None:
        async with stdio_client(served) as client:
            card = await ask(client, responders=["role:dba"])
            rid = card["request_id"]
            assert card["responders"] == []  # nobody is named: the role is resolved at each answer
            shown = await asyncio.to_thread(
                lambda: served.pending_card(served.bob_token, lambda c: c["request_id"] == rid)
                and card_on_home(served, "bob", rid))
            assert shown is not None and content_digest(PLAN) in shown
            assert await asyncio.to_thread(card_on_home, served, "alice", rid) is None
            refused = await asyncio.to_thread(answer, served, "alice", rid, "yes", "I can do it.")
            assert refused.status_code == 403 and "not a responder" in refused.text
            # The rota changes while the card waits: bob's role passes to alice.
            assert rooms_cli(served, "role", "grant", "dba", "alice", "--by", "ops-admin").exit_code == 0
            assert rooms_cli(served, "role", "revoke", "dba", "bob", "--by", "ops-admin").exit_code == 0
            late = await asyncio.to_thread(answer, served, "bob", rid, "yes", "Still mine, surely.")
            assert late.status_code == 403
            still = result(await client.call_tool("await_approval", {"request_id": rid, "timeout": 0}))
            assert still["state"] == "pending"
            waiting = asyncio.create_task(client.call_tool("await_approval", {
                "request_id": rid, "timeout": 60, "content": PLAN}))
            sent = await asyncio.to_thread(answer, served, "alice", rid, "yes", "On call for the database now.")
            assert sent.status_code == 303
            decision = result(await waiting)
            assert decision["approved"] is True and decision["responder_name"] == "Alice"
            assert decision["responder_role"] == "dba"
            # A role nobody holds is refused when asked, with what to do.
            error = error_text(await client.call_tool("request_approval", {
                "question": "Run it?", "content": PLAN, "responders": ["role:release-managers"]}))
            assert "nobody holds the role 'release-managers'" in error and "signoff rooms role grant" in error

    asyncio.run(main())
