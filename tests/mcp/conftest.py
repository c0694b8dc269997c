"""MCP clients of the SDK's own making, against a real `signoff serve` (tests/support/serve.py)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from signoff.gate import RoomsAgent
from tests.support.net import free_port
from tests.support.serve import Process, Served, served, signoff

__all__ = ["Served", "served"]


@asynccontextmanager
async def stdio_client(served: Served, agent: RoomsAgent | None = None, **env: str) -> AsyncIterator[Client]:
    agent = agent or served.agent
    params = StdioServerParameters(command=sys.executable, args=["-m", "signoff.cli.main", "mcp", "--room", "ops"],
                                   env={**served.env(), "SIGNOFF_ROOMS_URL": served.url,
                                        "SIGNOFF_AGENT_ID": agent.agent_id, "SIGNOFF_AGENT_KEY": agent.key, **env})
    async with Client(params) as client:
        yield client


@pytest.fixture(scope="module")
def mcp_http(served: Served) -> Iterator[str]:
    port = free_port()
    proc = Process(signoff("mcp", "--transport", "http", "--url", served.url, "--port", str(port), "--room", "ops"),
                   served.env())
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        proc.ready(url)
        yield url
    finally:
        proc.stop()


@asynccontextmanager
async def http_client(url: str, bearer: str) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=60) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        yield client


def result(call: Any) -> dict[str, Any]:
    """The structured result of a successful tool call."""
    assert not call.is_error, call.content
    data = call.structured_content
    assert isinstance(data, dict)
    return data.get("result", data) if set(data) == {"result"} else data


def error_text(call: Any) -> str:
    assert call.is_error, call.structured_content
    return " ".join(getattr(c, "text", "") for c in call.content)
