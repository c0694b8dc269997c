"""HTTP transport: httpx for operations and heartbeats, a plain SSE reader for the stream."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from signoff.kernel.errors import (
    SignoffError,
    UnavailableError,
)
from signoff.kernel.ids import check_id, id_path
from signoff.kernel.tls import tls_context
from signoff.kernel.wire import error_of
from signoff.rooms.client._transport import IncompatibleServer, Transport
from signoff.rooms.protocol.streams import Frame, StreamParams

CONNECTION_HEADER = "X-Switch-Connection-Id"


def connection_header(connection_id: str | None) -> dict[str, str]:
    """The header naming the connection an operation runs on (checked as an id: it is sent as is)."""
    return {CONNECTION_HEADER: check_id("connection id", connection_id)} if connection_id else {}


def error_from_response(response: httpx.Response) -> SignoffError:
    fix = "check the api key and that the agent may do this" if response.status_code in (401, 403) else (
        "reopen the event stream, then retry" if response.status_code == 409 else None)
    return error_of(response, f"{response.request.method} {response.request.url.path}", fix)


class HttpTransport(Transport):
    def __init__(self, base_url: str, agent_id: str, api_key: str, *, timeout: float = 30.0,
                 read_timeout: float = 60.0, client: httpx.AsyncClient | None = None) -> None:
        self.agent_id = agent_id
        self._base = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}"}
        self._read_timeout = read_timeout
        self._http = client or httpx.AsyncClient(timeout=timeout, verify=tls_context())

    def _url(self, path: str) -> str:
        """`path` (fixed text, or built with `id_path`) under this agent's endpoints."""
        return self._base + id_path("/agents/{agent_id}", agent_id=self.agent_id) + path

    async def _post(self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        try:
            response = await self._http.post(self._url(path), json=body, headers={**self._headers, **(headers or {})})
        except httpx.TransportError as exc:
            raise UnavailableError(f"cannot reach {self._base}: {exc!r}", "is the server running?") from exc
        if response.status_code >= 400:
            raise error_from_response(response)
        return response.json()

    async def call(self, op: str, args: dict[str, Any], connection_id: str | None) -> Any:
        body = await self._post(id_path("/ops/{op}", op=op), args, connection_header(connection_id))
        return body.get("result") if isinstance(body, dict) else body

    async def beat(self, connection_id: str, cursor: int) -> dict[str, Any]:
        result: dict[str, Any] = await self._post("/connection/beat", {
            "connection_id": check_id("connection id", connection_id), "cursor": cursor})
        return result

    async def subscribe(self, connection_id: str, room_id: str, takeover: bool = False) -> dict[str, Any]:
        result: dict[str, Any] = await self._post("/connection/subscribe", {
            "connection_id": check_id("connection id", connection_id), "room_id": check_id("room id", room_id),
            "takeover": takeover})
        return result

    async def unsubscribe(self, connection_id: str, room_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._post("/connection/unsubscribe", {
            "connection_id": check_id("connection id", connection_id), "room_id": check_id("room id", room_id)})
        return result

    async def operations(self) -> dict[str, Any]:
        response = await self._http.get(self._url("/ops"), headers=self._headers)
        if response.status_code >= 400:
            raise error_from_response(response)
        result: dict[str, Any] = response.json()
        return result

    async def events(self, params: StreamParams) -> AsyncIterator[Frame]:
        query: dict[str, str] = {"connection_id": str(params.connection_id), "scope": params.scope,
                                 "filter": params.filter, "start_from": params.start_from}
        for key in ("protocol", "protocol_accepts", "client", "client_version"):
            value = getattr(params, key)
            if value is not None:
                query[key] = str(value)
        if params.spawn_capable:
            query["spawn_capable"] = "true"
        if params.rooms:
            query["rooms"] = ",".join(params.rooms)
        headers = {**self._headers, "Accept": "text/event-stream"}
        if params.last_event_id is not None:
            headers["Last-Event-ID"] = params.last_event_id
        timeout = httpx.Timeout(30.0, read=self._read_timeout)
        try:
            async with self._http.stream("GET", self._url("/events"), params=query, headers=headers,
                                         timeout=timeout) as response:
                if response.status_code == 409:
                    await response.aread()
                    body = response.json()
                    detail = body.get("detail") if isinstance(body, dict) else None
                    if isinstance(detail, dict) and "contract" in detail:
                        raise IncompatibleServer(detail)
                    raise error_from_response(response)
                if response.status_code >= 400:
                    await response.aread()
                    raise error_from_response(response)
                async for frame in parse_sse(response.aiter_lines()):
                    yield frame
        except httpx.TransportError as exc:
            raise UnavailableError(f"event stream from {self._base} broke: {exc!r}", "the client reconnects") from exc

    async def aclose(self) -> None:
        await self._http.aclose()


async def parse_sse(lines: AsyncIterator[str]) -> AsyncIterator[Frame]:
    """SSE fields `id`, `event`, `data`; comment lines are keep-alives."""
    event: str | None = None
    data: list[str] = []
    id_: int | None = None
    async for line in lines:
        if line == "":
            if data or event:
                text = "\n".join(data)
                try:
                    payload = json.loads(text) if text else None
                except ValueError:
                    payload = text
                yield Frame(event or "message", payload, id_)
            event, data, id_ = None, [], None
            continue
        if line.startswith(":"):
            yield Frame(None)
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "id":
            try:
                id_ = int(value)
            except ValueError:
                id_ = None
