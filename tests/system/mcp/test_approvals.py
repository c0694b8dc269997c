"""Approvals asked over MCP (stdio and streamable HTTP, the SDK's own client) and answered over the
rooms API by people: the right person, the wrong person, and after the content changed."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from signoff.gate import RoomsAgent
from signoff.kernel.errors import RefusedError, UsageError
from signoff.kernel.tls import tls_context
from signoff.rooms.domain.bound import bound_content, card_title, content_digest
from tests.support.cards import answer_as_shown
from tests.support.fixtures.mcp import Served, error_text, http_client, result, stdio_client
from tests.support.web import HTTP_WAIT

PLAN = "DROP TABLE sessions;\n-- on db-prod-2, during the maintenance window\n"


def pending_card(served: Served, token: str, request_id: str) -> dict[str, Any]:
    return served.pending_card(token, lambda c: c["request_id"] == request_id)


async def ask(client: Any, content: str = PLAN, responders: list[str] | None = None) -> dict[str, Any]:
    return result(await client.call_tool("request_approval", {
        "question": "Run this migration?", "content": content, "responders": responders or ["alice"]}))


@pytest.mark.slow
def test_stdio_tools_and_an_approval_by_the_right_person(served: Served) -> None:
    async def main() -> None:
        async with stdio_client(served) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"request_approval", "await_approval", "request_harness_approval", "verify_fix",
                             "check_claims", "scan_text", "post_message", "read_room"}
            card = await ask(client)
            assert card["content_digest"] == content_digest(PLAN)
            assert card["request_id"].startswith(f"bound.{content_digest(PLAN)}.")
            # The person sees the exact bytes, bound to the digest in the card itself.
            shown = await asyncio.to_thread(pending_card, served, served.alice_token, card["request_id"])
            bound = bound_content(shown)
            assert bound is not None and bound.content == PLAN and bound.question == "Run this migration?"
            waiting = asyncio.create_task(client.call_tool("await_approval", {
                "request_id": card["request_id"], "timeout": 60, "content": PLAN}))
            answer = await asyncio.to_thread(answer_as_shown, served.person(served.alice_token), card["request_id"],
                                             "yes")
            assert answer["outcome"] == "accepted"
            decision = result(await waiting)
            assert decision["approved"] is True and decision["state"] == "approved"
            assert decision["responder_name"] == "Alice" and decision["content_digest"] == content_digest(PLAN)

    asyncio.run(main())


def test_wrong_person_is_discarded_then_the_right_person_declines(served: Served) -> None:
    async def main() -> None:
        async with stdio_client(served) as client:
            card = await ask(client)
            rid = card["request_id"]
            bob = await asyncio.to_thread(answer_as_shown, served.person(served.bob_token), rid, "yes")
            assert bob["outcome"] == "discarded" and bob["allowed"] is False
            still = result(await client.call_tool("await_approval", {"request_id": rid, "timeout": 0}))
            assert still["approved"] is False and still["state"] == "pending"
            await asyncio.to_thread(answer_as_shown, served.person(served.alice_token), rid, "no")
            decision = result(await client.call_tool("await_approval", {"request_id": rid, "timeout": 5}))
            assert decision["approved"] is False and decision["state"] == "declined"
            assert "'no'" in decision["reason"]

    asyncio.run(main())


def test_an_answer_for_other_content_does_not_approve_this_content(served: Served) -> None:
    changed = PLAN.replace("sessions", "users")

    async def main() -> None:
        async with stdio_client(served) as client:
            card = await ask(client)
            await asyncio.to_thread(answer_as_shown, served.person(served.alice_token), card["request_id"], "yes")
            # The same card, checked against the content the agent now holds: not approved.
            other = result(await client.call_tool("await_approval", {
                "request_id": card["request_id"], "timeout": 0, "content": changed}))
            assert other["approved"] is False and other["state"] == "unbound"
            # Asking for the changed content is a new card that nobody answered yet.
            again = await ask(client, changed)
            assert again["request_id"] != card["request_id"]
            fresh = result(await client.call_tool("await_approval", {
                "request_id": again["request_id"], "timeout": 0, "content": changed}))
            assert fresh["approved"] is False and fresh["state"] == "pending"

    asyncio.run(main())


def test_a_card_whose_title_differs_from_its_digest_approves_nothing(served: Served) -> None:
    """An agent that knows the layout forges a card through the raw agent protocol: the request id
    names the digest of harmless content, the title shows other content. A "yes" to it approves
    neither."""

    harmless = "SELECT 1;\n"
    rid = f"bound.{content_digest(harmless)}.forged-card-0001"
    agent = served.agent

    async def forge() -> None:
        from signoff.rooms.client import RoomsClient

        transport = agent.transport()
        async with RoomsClient(transport) as rooms:
            await rooms.connect_to_room(served.room_id)
            await rooms.request_approval(rid, card_title("Run this?", PLAN), [
                {"id": "yes", "label": "Approve", "decision": "accept"}], 2_000_000_000.0, ["alice"])
        await transport.aclose()

    async def main() -> None:
        await forge()
        await asyncio.to_thread(answer_as_shown, served.person(served.alice_token), rid, "yes")
        async with stdio_client(served) as client:
            for content in (None, harmless, PLAN):
                args = {"request_id": rid, "timeout": 0} | ({"content": content} if content else {})
                decision = result(await client.call_tool("await_approval", args))
                assert decision["approved"] is False and decision["state"] == "unbound"

    asyncio.run(main())


def test_no_label_can_dress_a_yes_as_a_no(served: Served) -> None:
    """The agent offers an option labelled "Reject" that accepts. Over MCP the label is shown with its
    decision's verb first; the rooms server refuses a card made by hand with such a label."""
    from signoff.rooms.client import RoomsClient

    sneaky = [{"id": "reject", "label": "Reject", "decision": "accept"},
              {"id": "ok", "label": "Looks fine", "decision": "decline"}]
    honest = [{"id": "go", "label": "Go ahead", "decision": "accept"},
              {"id": "ok", "label": "Looks fine", "decision": "decline"}]

    async def main() -> None:
        async with stdio_client(served) as client:
            refused = error_text(await client.call_tool("request_approval", {
                "question": "Run this migration?", "content": PLAN, "responders": ["alice"], "options": sneaky}))
            assert "says 'reject' but the option accepts" in refused
            card = result(await client.call_tool("request_approval", {
                "question": "Run this migration?", "content": PLAN, "responders": ["alice"], "options": honest}))
            shown = await asyncio.to_thread(pending_card, served, served.alice_token, card["request_id"])
            assert [o["label"] for o in shown["options"]] == ["Approve: Go ahead", "Refuse: Looks fine"]
        rid = f"bound.{content_digest(PLAN)}.sneaky-labels-0001"
        transport = served.agent.transport()
        async with RoomsClient(transport) as rooms:
            await rooms.connect_to_room(served.room_id)
            with pytest.raises(UsageError, match="says 'reject' but the option accepts"):
                await rooms.request_approval(rid, card_title("Run this migration?", PLAN), sneaky, 2_000_000_000.0,
                                             ["alice"])
        await transport.aclose()

    asyncio.run(main())


def test_an_agent_cannot_answer_approvals(served: Served) -> None:
    async def main() -> str:
        async with stdio_client(served) as client:
            rid = str((await ask(client))["request_id"])
            # Typing an answer into the room is a message, not an answer.
            result(await client.call_tool("post_message", {"body": f"approved {rid}: yes"}))
            still = result(await client.call_tool("await_approval", {"request_id": rid, "timeout": 0}))
            assert still["state"] == "pending"
            return rid

    rid = asyncio.run(main())
    # Neither the asking agent nor another agent in the room can answer with its key.
    for agent in (served.agent, served.other):
        with pytest.raises(RefusedError):
            answer_as_shown(served.person(agent.key), rid, "yes")
    raw = httpx.post(f"{served.url}/users/me/approvals/{rid}", json={"option_id": "yes", "digest": "0" * 64},
                     headers={"Authorization": f"Bearer {served.agent.key}"}, verify=tls_context(), timeout=HTTP_WAIT)
    assert raw.status_code == 403
    card = pending_card(served, served.alice_token, rid)
    assert card["state"] == "pending"


@pytest.mark.slow
def test_http_needs_an_agent_key_and_asks_as_that_agent(served: Served, mcp_http: str) -> None:
    async def main() -> None:
        async with http_client(mcp_http, f"{served.other.agent_id}:{served.other.key}") as client:
            card = await ask(client, "rotate the signing key\n")
            shown = await asyncio.to_thread(pending_card, served, served.alice_token, card["request_id"])
            assert shown["requester_agent_id"] == served.other.agent_id
            await asyncio.to_thread(answer_as_shown, served.person(served.alice_token), card["request_id"], "yes")
            decision = result(await client.call_tool("await_approval", {
                "request_id": card["request_id"], "timeout": 10, "content": "rotate the signing key\n"}))
            assert decision["approved"] is True

    asyncio.run(main())
    # No key, a key without its agent id, a wrong key, another agent's key under this agent's id.
    for bearer in (None, served.other.key, f"{served.other.agent_id}:soa_wrong",
                   f"{served.agent.agent_id}:{served.other.key}"):
        headers = {"Accept": "application/json, text/event-stream"} | (
            {"Authorization": f"Bearer {bearer}"} if bearer else {})
        response = httpx.post(mcp_http, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers,
                              verify=tls_context(), timeout=HTTP_WAIT)
        assert response.status_code == 401, bearer


def test_bad_input_is_an_error_with_a_fix(served: Served) -> None:
    async def main() -> None:
        async with stdio_client(served) as client:
            text = error_text(await client.call_tool("request_approval", {
                "question": "two\nlines", "content": "x", "responders": ["alice"]}))
            assert "error: the question must be one line" in text and "fix:" in text
            text = error_text(await client.call_tool("request_approval", {
                "question": "ok?", "content": "x", "responders": ["alice"], "room": "nowhere"}))
            assert "error: this agent is not a member of a room 'nowhere'" in text
            text = error_text(await client.call_tool("await_approval", {"request_id": "bound/nothing"}))
            assert "error:" in text
        wrong = RoomsAgent(served.url, served.agent.agent_id, "soa_not-the-key")
        async with stdio_client(served, wrong) as client:
            text = error_text(await client.call_tool("post_message", {"body": "hello"}))
            assert "error: POST" in text and "(401): invalid or unknown token" in text and "fix:" in text

    asyncio.run(main())
