"""Ids at the seams (issue 34, findings 2 and 4), against a real `signoff serve`.

An id passed as an unquoted URL path segment is an attack: `x/../<other card>` shows one card and
answers another once httpx removes the dot segments, and an agent id `x/../../health?` turns a key
check into `GET /health`. The server refuses ids outside one grammar when they are created, and every
rooms client method that builds a URL checks and quotes each id before it sends anything.

The property test finds the client methods by introspection: every public method of the HTTP clients
that takes an id (a parameter named `*_id`, or `op`), and every method of an agent's transport under
a hostile agent id. Each hostile id embeds a real target (a pending card, the room, the agent), so a
method that pasted it into a path unquoted would reach that target and succeed, and the test fails.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from signoff.kernel.errors import SignoffError, UsageError
from signoff.kernel.ids import ID_RULE, check_id, id_path, is_id
from signoff.kernel.tls import tls_context
from signoff.mcp.auth import AgentKeyVerifier
from signoff.rooms.client import HttpSyncTransport, HttpTransport, HttpUserTransport, SignoffOperator
from tests.support.serve import Served, served
from tests.support.web import HTTP_WAIT

__all__ = ["served"]

VICTIM = "seams-deploy"  # a pending card every hostile id tries to reach
PERSON_CLIENTS = (HttpUserTransport, SignoffOperator)  # made with a person's token
AGENT_CLIENTS = (HttpSyncTransport, HttpTransport)  # made with an agent id and key
NOT_CALLED = {"close", "aclose", "events"}  # `events` streams; its URL is built as `operations`' is


def _id_params(fn: Callable[..., Any]) -> list[str]:
    return [p for p in inspect.signature(fn).parameters if p.endswith("_id") or p == "op"]


def _methods(cls: type) -> list[str]:
    return sorted(name for name, _ in inspect.getmembers(cls, inspect.isfunction)
                  if not name.startswith("_") and name not in NOT_CALLED)


# (client class, method, the id parameter made hostile; "agent_id" of an agent client: its own)
CASES = [(cls, name, param) for cls in (*PERSON_CLIENTS, *AGENT_CLIENTS) for name in _methods(cls)
         for param in _id_params(getattr(cls, name))]
CASES += [(cls, name, "self.agent_id") for cls in AGENT_CLIENTS for name in _methods(cls)]


def test_the_introspection_finds_the_methods_that_take_ids() -> None:
    found = {(cls.__name__, name, param) for cls, name, param in CASES}
    for case in [("HttpUserTransport", "answer", "request_id"), ("HttpUserTransport", "post", "room_id"),
                 ("HttpUserTransport", "revoke_claim", "claim_id"), ("SignoffOperator", "set_policy", "agent_id"),
                 ("HttpSyncTransport", "call", "op"), ("HttpSyncTransport", "operations", "self.agent_id"),
                 ("HttpTransport", "operations", "self.agent_id"), ("HttpTransport", "call", "op")]:
        assert case in found, case


@pytest.fixture(scope="module")
def victim(served: Served) -> dict[str, Any]:
    """A pending card in the room, which no hostile id may read or answer."""
    async def ask() -> None:
        from signoff.rooms.client import RoomsClient

        transport = served.agent.transport()
        async with RoomsClient(transport) as rooms:
            await rooms.connect_to_room(served.room_id)
            await rooms.request_approval(VICTIM, "Deploy to production?", [
                {"id": "yes", "label": "Deploy", "decision": "accept"},
                {"id": "no", "label": "Hold", "decision": "decline"}], 4_000_000_000.0, ["alice"])
        await transport.aclose()

    asyncio.run(ask())
    return served.person(served.alice_token).approval(VICTIM)


def _head(served: Served) -> int:
    return int(httpx.get(f"{served.url}/health", verify=tls_context(), timeout=HTTP_WAIT).json()["sequence"])


def _valid(served: Served, victim: dict[str, Any]) -> dict[str, Any]:
    """A value for every parameter a client method takes, each naming something real."""
    return {"room_id": served.room_id, "request_id": VICTIM, "option_id": "yes", "digest": victim.get("digest", ""),
            "agent_id": served.agent.agent_id, "claim_id": "0" * 32, "connection_id": "seams-conn",
            "external_id": "@alice:example.org", "body": "hello", "targets": [], "after": 0, "limit": 10,
            "evidence": {}, "args": {}, "op": "list_rooms", "policy": None, "user_name": "bob", "cursor": 0,
            "takeover": False, "start_from": "head", "code": "x", "bridge": "alice", "label": "x",
            "owner_name": None, "name": "x"}


# Hostile ids built around a real target `{v}`: climbing to it, ending a path early, a query or a
# fragment, encoded separators, look-alike and other non-ASCII characters, whitespace, overlong.
TEMPLATES = ["{j}/../{v}", "x/../../{v}", "../{v}", "./{v}", "{v}/.", "{v}/..", "{v}?{j}", "{v}#{j}",
             "{j}%2f..%2f{v}", "%2e%2e/{v}", "{v}%00", "{v}\u2215x", "{v}\uff0f", "{v}\u00e9", "\u0430{v}",
             "{v} ", "{v}\n", "{v}\\..\\x", "..", ".", "", "x" * 201, "{v}/", "/{v}", "{j}@/{v}"]
JUNK = st.text(alphabet="ab./%?#-_\u00e9", max_size=6)


def hostile(target: str) -> st.SearchStrategy[str]:
    return st.builds(lambda t, j: t.format(v=target, j=j), st.sampled_from(TEMPLATES), JUNK).filter(
        lambda s: not is_id(s))


def _call(served: Served, cls: type, method: str, args: dict[str, Any], agent_id: str) -> Any:
    if cls is HttpUserTransport:
        client: Any = HttpUserTransport(served.url, served.alice_token, timeout=10)
    elif cls is SignoffOperator:
        client = SignoffOperator(served.url, served.alice_token, timeout=10)
    elif cls is HttpSyncTransport:
        client = HttpSyncTransport(served.url, agent_id, served.agent.key, timeout=10, poll_wait=0)
    else:
        async def run() -> Any:
            transport = HttpTransport(served.url, agent_id, served.agent.key, timeout=10)
            try:
                return await getattr(transport, method)(**args)
            finally:
                await transport.aclose()
        return asyncio.run(run())
    try:
        return getattr(client, method)(**args)
    finally:
        client.close()


@pytest.mark.parametrize(("cls", "method", "param"), CASES,
                         ids=[f"{c.__name__}.{m}:{p}" for c, m, p in CASES])
# No shrinking: each example is a round trip to the server, and the first failing one says enough.
@settings(max_examples=12, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_client_method_sends_a_hostile_id(served: Served, victim: dict[str, Any], cls: type, method: str,
                                             param: str, data: st.DataObject) -> None:
    valid = _valid(served, victim)
    wanted = inspect.signature(getattr(cls, method)).parameters
    args = {p: valid[p] for p in wanted if p != "self"}
    agent_id = served.agent.agent_id
    if param == "self.agent_id":
        agent_id = data.draw(st.one_of(st.just("x/../../health?"), hostile(served.agent.agent_id)), "agent id")
    else:
        ids = hostile(str(valid[param]))
        if (method, param) == ("call", "connection_id"):
            ids = ids.filter(bool)  # an operation's empty connection id means "on no connection"
        args[param] = data.draw(ids, param)
    head = _head(served)
    with pytest.raises(SignoffError):
        _call(served, cls, method, args, agent_id)
    assert _head(served) == head, "a hostile id changed the server's state"
    assert served.person(served.alice_token).approval(VICTIM)["state"] == "pending"


# -- the server refuses hostile ids where they are created -------------------------------------

EXPLICIT = ["x/../seams-deploy", "..", ".", "a/b", "a%2fb", "a?b", "a#b", "caf\u00e9", "\uff41", "a b", "",
            "a\\b", "x" * 201, "-leading-dash"]


def _op(served: Served, op: str, body: dict[str, Any], connection_id: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {served.agent.key}"}
    if connection_id is not None:
        headers["X-Switch-Connection-Id"] = connection_id
    return httpx.post(f"{served.url}{id_path('/agents/{agent_id}/ops/{op}', agent_id=served.agent.agent_id, op=op)}",
                      json=body, headers=headers, verify=tls_context(), timeout=10)


@pytest.fixture(scope="module")
def connection(served: Served) -> Iterator[str]:
    transport = HttpSyncTransport(served.url, served.agent.agent_id, served.agent.key, timeout=10, poll_wait=0)
    transport.open("seams-asker", served.room_id)
    yield "seams-asker"
    transport.close()


@pytest.mark.parametrize("bad", EXPLICIT)
def test_the_server_refuses_a_hostile_card_or_option_id_when_the_card_is_asked(
        served: Served, victim: dict[str, Any], connection: str, bad: str) -> None:
    """Finding 2's root: a card asked as `x/../<another card>` is refused, so no "yes" can be
    routed from it to the other card."""
    head = _head(served)
    for request_id, option_id in ((bad, "yes"), ("seams-options", bad)):
        response = _op(served, "request_approval", {
            "request_id": request_id, "title": "Harmless?", "expires_at": 4_000_000_000.0, "responders": ["alice"],
            "options": [{"id": option_id, "label": "Approve", "decision": "accept"}]}, connection)
        assert response.status_code == 400, response.text
        assert response.json()["fix"] == ID_RULE
    assert _head(served) == head
    assert served.person(served.alice_token).approval(VICTIM)["state"] == "pending"


@pytest.mark.parametrize("bad", EXPLICIT)
def test_the_server_refuses_a_hostile_connection_id(served: Served, bad: str) -> None:
    response = httpx.get(f"{served.url}/agents/{served.agent.agent_id}/events",
                         params={"connection_id": bad, "start_from": "head", "wait": 0},
                         headers={"Authorization": f"Bearer {served.agent.key}"}, verify=tls_context(), timeout=10)
    assert response.status_code == 400, response.text
    assert response.json()["fix"] == ID_RULE


def test_a_yes_to_a_harmless_card_never_answers_another(served: Served, victim: dict[str, Any],
                                                        connection: str) -> None:
    """The attack end to end: the agent asks a harmless card whose id climbs to the deploy card, and
    the person answers the card they see. The harmless card is refused; the person's client refuses
    the id too, whatever a server stored; the deploy card stays pending."""
    climbing = f"x/../{VICTIM}"
    asked = _op(served, "request_approval", {
        "request_id": climbing, "title": "Is the weather nice?", "expires_at": 4_000_000_000.0,
        "responders": ["alice"], "options": [{"id": "yes", "label": "Yes", "decision": "accept"}]}, connection)
    assert asked.status_code == 400 and "bad request_id" in asked.json()["detail"]
    alice = served.person(served.alice_token)
    with pytest.raises(UsageError, match="bad request id"):
        alice.answer(climbing, "yes", victim["digest"])
    assert alice.approval(VICTIM)["state"] == "pending"


def test_an_answer_carries_the_digest_of_the_card_it_answers(served: Served, victim: dict[str, Any],
                                                             connection: str) -> None:
    """The second lock: a "yes" given to one card, relayed to another, names the first card's digest
    and is refused (409, with a fix), and nothing is decided."""
    response = _op(served, "request_approval", {
        "request_id": "seams-harmless", "title": "Is the weather nice?", "expires_at": 4_000_000_000.0,
        "responders": ["alice"], "options": [{"id": "yes", "label": "Yes", "decision": "accept"}]}, connection)
    assert response.status_code == 200, response.text
    harmless = served.person(served.alice_token).approval("seams-harmless")
    head = _head(served)
    for digest in (harmless["digest"], "", "0" * 64):
        answered = httpx.post(f"{served.url}/users/me/approvals/{VICTIM}", json={"option_id": "yes", "digest": digest},
                              headers={"Authorization": f"Bearer {served.alice_token}"}, verify=tls_context(),
                              timeout=HTTP_WAIT)
        assert answered.status_code in (400, 409), answered.text
        assert "digest" in answered.json()["detail"] and answered.json()["fix"]
    assert _head(served) == head
    assert served.person(served.alice_token).approval(VICTIM)["state"] == "pending"


# -- finding 4: the MCP server's key check -------------------------------------------------------

@pytest.mark.parametrize("bearer", ["x/../../health?:anything", "x/../../health#:anything",
                                    "..%2f..%2fhealth:anything", "../../health?x=:anything"])
def test_a_path_shaped_agent_id_is_no_key(served: Served, bearer: str) -> None:
    """`Bearer x/../../health?:anything` used to make the key check `GET /health` (200): access."""
    assert asyncio.run(AgentKeyVerifier(served.url).verify_token(bearer)) is None


def test_the_real_key_still_passes(served: Served) -> None:
    token = asyncio.run(AgentKeyVerifier(served.url).verify_token(f"{served.agent.agent_id}:{served.agent.key}"))
    assert token is not None and token.client_id == served.agent.agent_id


# -- the grammar itself ------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_an_id_that_passes_the_grammar_is_one_path_segment_as_sent(text: str) -> None:
    if not is_id(text):
        with pytest.raises(UsageError, match="bad thing"):
            check_id("thing", text)
        return
    path = id_path("/a/{x}/b", x=text)
    url = httpx.URL(f"http://h{path}")
    assert url.raw_path.decode() == path and url.path.split("/") == ["", "a", text, "b"], (text, url)
    assert not url.query and not url.fragment and text not in (".", "..")


def test_the_id_rule_keeps_the_ids_signoff_makes() -> None:
    for made in ("3f2a" * 8, "INC-0001-fix-payco", "repair-card:coupon-01:review", "fixer@room",
                 "bound." + "a" * 64 + ".n0nce_-x", os.urandom(4).hex()):
        assert is_id(made), made
