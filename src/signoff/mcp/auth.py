"""Who is calling: a rooms agent, by its agent id and api key.

Over stdio the agent is fixed when the server starts (SIGNOFF_AGENT_ID and SIGNOFF_AGENT_KEY).
Over streamable HTTP each request carries `Authorization: Bearer <agent id>:<api key>`; the key is
checked by the rooms server itself (GET /agents/{id}/ops) and then every tool call is made with it,
so the rooms server's rules decide everything and this server holds no secret of its own.
"""

from __future__ import annotations

import httpx
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken

from signoff.gate.agent import RoomsAgent
from signoff.kernel.errors import SignoffError, Unauthenticated
from signoff.kernel.ids import is_id


def parse_bearer(url: str, token: str) -> RoomsAgent | None:
    """The agent a bearer token names, or None. The agent id must fit the id grammar: it becomes a
    URL path segment of the key check, where `x/../../health?` would check nothing at all."""
    agent_id, sep, key = token.partition(":")
    if not sep or not is_id(agent_id) or not key:
        return None
    return RoomsAgent(url, agent_id, key)


class AgentKeyVerifier:
    """The SDK's TokenVerifier: a bearer token is valid when the rooms server accepts it."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def verify_token(self, token: str) -> AccessToken | None:
        agent = parse_bearer(self.url, token)
        if agent is None:
            return None
        transport = agent.transport()
        try:
            await transport.operations()
        except (SignoffError, httpx.HTTPError):
            return None  # refused, unknown agent, or the rooms server is down: no access either way
        finally:
            await transport.aclose()
        return AccessToken(token=token, client_id=agent.agent_id, scopes=[])


class Caller:
    """The agent of the current tool call."""

    def __init__(self, url: str, fixed: RoomsAgent | None) -> None:
        self.url = url
        self.fixed = fixed

    def agent(self) -> RoomsAgent:
        if self.fixed is not None:
            return self.fixed
        token = get_access_token()
        agent = parse_bearer(self.url, token.token) if token is not None else None
        if agent is None:
            raise Unauthenticated("no agent key on this request", "send Authorization: Bearer <agent id>:<api key>")
        return agent

