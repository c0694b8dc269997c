"""Hostile input over HTTP (issue 24, rooms 5): every bad input gets a 4xx {detail, fix}, never a
500. The named findings first, then a property test that sends hostile JSON to every route."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signoff.rooms.http.app import admin, agents, create_app, users
from signoff.rooms.http.guard import MAX_BODY_BYTES
from signoff.rooms.protocol.operations import OPERATIONS
from tests.support.fixtures.rooms import World


class Client:
    """The rooms app in-process over ASGI, with server errors returned as responses (not raised)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.http = TestClient(create_app(service=world.service, keepalive_seconds=0.01),
                               raise_server_exceptions=False)
        conn, _ = world.service.connections.open(world.fixer.id, "fixer-conn")
        world.service.connections.claim(conn, world.room_id, takeover=True)
        self.connection_id = conn.id

    def op(self, name: str, raw: bytes | str) -> Any:
        return self.http.post(f"/agents/{self.world.fixer.id}/ops/{name}", content=raw, headers={
            "Authorization": f"Bearer {self.world.fixer_key}", "X-Switch-Connection-Id": self.connection_id,
            "Content-Type": "application/json"})


@pytest.fixture
def client(world: World) -> Client:
    return Client(world)


def _refused(response: Any, status: int | None = None) -> dict[str, Any]:
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    if status is not None:
        assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["detail"] and body["fix"], body
    return body


@pytest.mark.parametrize("depth", [100, 1000, 100_000])
def test_deeply_nested_json_on_an_operation_is_a_422(client: Client, depth: int) -> None:
    head = client.world.service.head()
    raw = '{"body": ' + "[" * depth + "]" * depth + "}"
    assert "nested deeper" in _refused(client.op("post_message", raw), 422)["detail"]
    assert client.world.service.head() == head


def test_a_body_over_the_limit_is_a_413_and_changes_nothing(client: Client) -> None:
    head = client.world.service.head()
    raw = b'{"body": "' + b"a" * (MAX_BODY_BYTES + 1) + b'"}'
    assert "over" in _refused(client.op("post_message", raw), 413)["detail"]
    assert client.world.service.head() == head


def test_a_lone_surrogate_in_a_message_or_a_document_name_is_a_400(client: Client) -> None:
    head = client.world.service.head()
    _refused(client.op("post_message", '{"body": "hi \\ud800 there"}'), 400)
    _refused(client.op("create_room_document", '{"name": "\\udfff", "content": "x"}'), 400)
    _refused(client.op("post_message", '{"body": "nul \\u0000 here"}'), 400)
    assert client.world.service.head() == head
    # The service refuses the same text from in-process callers.
    with pytest.raises(Exception, match="lone surrogate"):
        client.world.service.post_message(client.world.fixer, client.world.room_id, "x\ud800")


@pytest.mark.parametrize("limit", [10**30, 2**63, 2**63 - 1])
def test_a_huge_read_context_limit_reads_one_page(client: Client, limit: int) -> None:
    client.world.service.post_message(client.world.alice, client.world.room_id, "one")
    response = client.op("read_context", json.dumps({"limit": limit}))
    assert response.status_code == 200, response.text
    assert [t["root"]["body"] for t in response.json()["result"]["threads"]] == ["one"]


@pytest.mark.parametrize("after", [10**30, 2**63, -1])
def test_an_out_of_range_cursor_on_history_endpoints_is_a_400(client: Client, after: int) -> None:
    w = client.world
    user = client.http.get(f"/users/me/rooms/{w.room_id}/messages", params={"after": str(after)},
                           headers={"Authorization": f"Bearer {w.alice_token}"})
    agent = client.http.get(f"/agents/{w.fixer.id}/rooms/{w.room_id}/history", params={"after": str(after)},
                            headers={"Authorization": f"Bearer {w.fixer_key}"})
    assert "after must be an integer" in _refused(user, 400)["detail"]
    _refused(agent, 400)


@pytest.mark.parametrize("expires_at", ["1" + "0" * 400, "1e308", "true"])
def test_an_approval_that_never_expires_is_a_400(client: Client, expires_at: str) -> None:
    head = client.world.service.head()
    raw = ('{"request_id": "r1", "title": "t", "responders": ["alice"], "expires_at": ' + expires_at
           + ', "options": [{"id": "y", "label": "Yes", "decision": "accept"}]}')
    _refused(client.op("request_approval", raw), 400)
    assert client.world.service.head() == head


def test_targeting_a_role_one_holds_itself_over_http(client: Client) -> None:
    w = client.world
    w.service.define_role(w.fixer, w.room_id, "oncall", "pages")
    w.service.assume_role(w.fixer, w.room_id, "oncall", w.service.connections.get(w.fixer.id, client.connection_id))
    response = client.op("send_targeted_message", json.dumps({"body": "ping", "target_roles": ["oncall"]}))
    assert response.status_code == 200, response.text
    assert response.json()["result"]["target_statuses"] == {}


# -- the property test --------------------------------------------------------------------------

FIELDS = ("body", "name", "room_id", "agent_names", "user_names", "limit", "after", "cursor", "policy",
          "option_id", "content", "target_names", "target_roles", "thread_id", "connection_id", "accept",
          "user_name", "agent_name", "request_id", "expires_at", "options", "responders", "title", "rules",
          "integration_profile", "description", "document_id", "ids", "role", "exclusive", "instructions",
          "group_name", "invitation_id", "type", "value", "display_name", "admin", "takeover", "owner_name")

short_text = st.one_of(
    st.text(st.characters(codec=None, categories=None), max_size=30),  # surrogates and controls included
    st.sampled_from(["\ud800", "\udfff", "x\x00y", "victim\n", "../../etc", "%00", "$nope", "a" * 300]),
)
hostile_text = st.one_of(short_text, st.just("a" * 70_000))
hostile_number = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40), st.sampled_from([2**63, 2**63 - 1, -(2**63) - 1, 10**30]),
    st.floats(allow_nan=False, allow_infinity=False),
)
scalars = st.one_of(st.none(), st.booleans(), hostile_number, hostile_text)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(FIELDS) | hostile_text, inner, max_size=5)),
    max_leaves=12)
shaped = st.dictionaries(st.sampled_from(FIELDS), values, max_size=6)
depths = st.sampled_from([33, 999, 1000, 5000, 100_000])
raw_bodies = st.one_of(
    depths.map(lambda n: "[" * n + "]" * n),
    depths.map(lambda n: '{"body":' * n + "1" + "}" * n),
    st.sampled_from(["1" * 5000, '{"limit": ' + "9" * 5000 + "}", '{"expires_at": 1e999}', "NaN",
                     '{"body": NaN}', '{"body": "\\ud800"}', "\xff\xfe", "{", '{"a": 1} trailing', "", "null"]),
)
bodies = st.one_of(shaped.map(json.dumps), values.map(json.dumps), raw_bodies)


ROUTE_OBJECTS = {(method, r.path): r for router in (agents, users, admin) for r in router.routes
                 if isinstance(r, APIRoute) for method in sorted(r.methods)}
ROUTES = [*ROUTE_OBJECTS, ("GET", "/health")]


def _wire(text: str) -> str:
    """Text as an attacker puts it in a URL: its bytes percent-encoded, surrogates included."""
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


@st.composite
def requests(draw: st.DrawFn, world: World, method: str, route_path: str
             ) -> tuple[str, str, dict[str, str], dict[str, Any], str]:
    route = ROUTE_OBJECTS.get((method, route_path))
    known = {"agent_id": world.fixer.id, "room_id": world.room_id, "request_id": "case-1.merge",
             "name": draw(st.sampled_from(sorted(OPERATIONS))), "invitation_id": "x", "group_id": "g"}
    path = route.path_format if route is not None else route_path
    for param in route.param_convertors if route is not None else ():
        value = known.get(param, "x") if draw(st.booleans()) else draw(short_text.filter(bool))
        path = path.replace("{" + param + "}", _wire(value))
    if path.startswith("/agents/"):
        token = world.fixer_key
    elif path == "/agents":
        token = world.registration_key
    elif path.startswith("/admin"):
        token = world.admin_token
    else:
        token = world.alice_token
    headers = {"Authorization": f"Bearer {token}", "X-Switch-Connection-Id": "fixer-conn",
               "Content-Type": "application/json"}
    if draw(st.booleans()):
        headers["Last-Event-ID"] = str(draw(hostile_number))
    query = draw(st.dictionaries(st.sampled_from(["after", "limit", "start_from", "scope", "filter",
                                                  "connection_id", "rooms"]),
                                 st.one_of(hostile_number.map(str), short_text), max_size=3))
    body = draw(bodies) if method in ("POST", "PUT") else ""
    return method, path, headers, query, body


@pytest.mark.parametrize(("method", "route"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
def test_no_route_answers_hostile_json_with_a_5xx(client: Client, method: str, route: str,
                                                  data: st.DataObject) -> None:
    method, path, headers, query, body = data.draw(requests(client.world, method, route))
    query_string = "&".join(f"{_wire(k)}={_wire(v)}" for k, v in query.items())
    response = client.http.request(method, f"{path}?{query_string}" if query_string else path, headers=headers,
                                   content=body.encode("utf-8", "surrogatepass"))
    assert response.status_code < 500, (method, path, query, body[:300], headers, response.text[:500])
    if response.status_code >= 400:
        assert "detail" in response.json()


def _arguments(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments shaped like the operation's schema (its names, its required keys) with hostile
    values, so that they get past the schema check into the service often."""
    schema = OPERATIONS[name].schema
    fields = sorted(schema["properties"])
    typed = st.one_of(hostile_text, hostile_number, st.lists(hostile_text, max_size=3), values)
    required = st.fixed_dictionaries({key: typed for key in schema["required"]})
    optional = st.dictionaries(st.sampled_from(fields), typed, max_size=4) if fields else st.just({})
    return st.tuples(required, optional).map(lambda pair: {**pair[1], **pair[0]})


@pytest.mark.parametrize("name", sorted(OPERATIONS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
def test_no_operation_answers_hostile_arguments_with_a_5xx(client: Client, name: str, data: st.DataObject) -> None:
    args = data.draw(_arguments(name))
    response = client.op(name, json.dumps(args).encode("utf-8", "surrogatepass"))
    assert response.status_code < 500, (name, args, response.text[:500])
    if response.status_code >= 400:
        assert response.json()["detail"]
