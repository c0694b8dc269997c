"""Streamable HTTP sessions belong to the agent that opened them: another agent's key cannot use one."""

from __future__ import annotations

import httpx
import pytest

from signoff.kernel.tls import tls_context
from tests.support.fixtures.mcp import Served
from tests.support.web import HTTP_WAIT

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "attacker", "version": "0"}}}


@pytest.mark.slow
def test_a_session_cannot_be_borrowed_with_another_agents_key(served: Served, mcp_http: str) -> None:
    owner = {"Authorization": f"Bearer {served.other.agent_id}:{served.other.key}", **ACCEPT}
    thief = {"Authorization": f"Bearer {served.agent.agent_id}:{served.agent.key}", **ACCEPT}
    opened = httpx.post(mcp_http, json=INIT, headers=owner, verify=tls_context(), timeout=HTTP_WAIT)
    assert opened.status_code == 200, opened.text
    session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
    done = httpx.post(mcp_http, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                      headers={**owner, **session}, verify=tls_context(), timeout=HTTP_WAIT)
    assert done.status_code == 202, done.text
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert httpx.post(mcp_http, json=listing, headers={**owner, **session}, verify=tls_context(),
                      timeout=HTTP_WAIT).status_code == 200
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "post_message", "arguments": {"body": "posted by whom?"}}}
    borrowed = httpx.post(mcp_http, json=call, headers={**thief, **session}, verify=tls_context(), timeout=HTTP_WAIT)
    assert borrowed.status_code == 404 and "Session not found" in borrowed.text
    # Nothing was posted under either agent.
    bodies = [m["body"] for m in served.person(served.alice_token).messages(served.room_id)]
    assert "posted by whom?" not in bodies
