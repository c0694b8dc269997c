"""`signoff mcp`: the sign-off tools for any MCP client, over stdio or streamable HTTP."""

from __future__ import annotations

import os
from enum import StrEnum
from typing import Annotated

import typer

from signoff.cli.context import settings
from signoff.gate.agent import ENV_AGENT, ENV_KEY, ENV_URL, RoomsAgent, rooms_url
from signoff.kernel.errors import UsageError


class McpTransport(StrEnum):
    stdio = "stdio"
    http = "http"


def mcp(
    transport: Annotated[McpTransport, typer.Option(
        help="stdio (one agent: from the environment, else the local home's own) or http.")]
    = McpTransport.stdio,
    url: Annotated[str | None, typer.Option(help=f"The rooms server (signoff serve); default ${ENV_URL}.")] = None,
    agent_id: Annotated[str | None, typer.Option(
        help="stdio: the agent id; default $SIGNOFF_AGENT_ID (the key is read from $SIGNOFF_AGENT_KEY only).")]
    = None,
    room: Annotated[str | None, typer.Option(help="The room (id or name) tools use when a call names none.")]
    = None,
    host: Annotated[str, typer.Option(help="http: interface to bind (loopback unless told otherwise).")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option(help="http: TCP port (0 picks a free one).")] = 8788,
) -> None:
    """Serve signoff's tools over MCP, acting as a rooms agent: over stdio with the agent's key from
    the environment (with nothing configured: the local home's own agent, on its embedded rooms
    server), or over streamable HTTP where each client sends Bearer <agent id>:<api key>."""
    from signoff.mcp.auth import Caller
    from signoff.mcp.http import serve_http
    from signoff.mcp.server import build_server

    current = settings()
    if transport is McpTransport.stdio:
        if url is None and agent_id is None and not any(os.environ.get(n) for n in (ENV_URL, ENV_AGENT, ENV_KEY)):
            # Nothing configured: the local home's own agent, on its embedded rooms server.
            from signoff.mcp.local import ROOM, local_agent

            local = local_agent(current)
            build_server(Caller(local.url, local), current, room or ROOM).run("stdio")
            return
        agent = RoomsAgent.resolve(url, agent_id)
        build_server(Caller(agent.url, agent), current, room).run("stdio")
        return
    if agent_id is not None:
        raise UsageError("--agent-id is for stdio", "over http each client sends Bearer <agent id>:<api key>")
    serve_http(rooms_url(url), current, host, port, room)  # keys come with each request
