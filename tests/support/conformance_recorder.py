"""Recording what a server answers (HTTP bodies and SSE lines), for replay as test data.

Used by hand against a live server (SIGNOFF_CONFORMANCE_RECORD=<dir>): an httpx transport that
passes every request through and keeps a redacted copy of the exchange. Secrets are never kept:
bearer keys, cookies and any `api_key`/`key`/`token` value become "<redacted>".
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

SECRET_FIELDS = ("api_key", "key", "token", "registration_key", "password")


def redact(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<redacted>" if k in SECRET_FIELDS and isinstance(v, str) else redact(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def _json(raw: bytes) -> Any:
    try:
        return redact(json.loads(raw)) if raw else None
    except ValueError:
        return raw.decode(errors="replace")[:2000]


class _TeeStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, lines: list[str]) -> None:
        self._inner = inner
        self._lines = lines
        self._rest = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._rest += chunk
            *done, self._rest = self._rest.split(b"\n")
            self._lines.extend(line.decode(errors="replace").rstrip("\r") for line in done)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class Recorder(httpx.AsyncBaseTransport):
    """Every exchange, in order: `{step, method, path, query, request, status, response | sse}`."""

    def __init__(self, root: Recorder | None = None) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._root = root or self
        self.exchanges: list[dict[str, Any]] = self._root.exchanges if root else []
        self.step = ""

    def child(self) -> Recorder:
        """Another async transport into the same recording: an httpx transport serves one event
        loop, and a client running its own loop (the sync face's stream thread) needs its own."""
        return Recorder(self._root)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = request.content
        entry: dict[str, Any] = {"step": self._root.step, "method": request.method, "path": request.url.path,
                                 "query": dict(request.url.params), "request": _json(body)}
        if "last-event-id" in request.headers:
            entry["last_event_id"] = request.headers["last-event-id"]
        response = await self._inner.handle_async_request(request)
        entry["status"] = response.status_code
        self.exchanges.append(entry)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            entry["sse"] = []
            assert isinstance(response.stream, httpx.AsyncByteStream)
            return httpx.Response(response.status_code, headers=response.headers,
                                  stream=_TeeStream(response.stream, entry["sse"]), extensions=response.extensions)
        raw = await response.aread()
        entry["response"] = _json(raw)
        return httpx.Response(response.status_code, headers=response.headers, content=raw,
                              extensions=response.extensions)

    def sync(self) -> SyncRecorder:
        """The same recording, for synchronous clients (registration, the operator API)."""
        return SyncRecorder(self)

    def save(self, path: Path, server: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"server": server, "exchanges": self.exchanges}, indent=1, sort_keys=True) + "\n")

    async def aclose(self) -> None:
        await self._inner.aclose()


class SyncRecorder(httpx.BaseTransport):
    def __init__(self, parent: Recorder) -> None:
        self._parent = parent
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        entry: dict[str, Any] = {"step": self._parent.step, "method": request.method, "path": request.url.path,
                                 "query": dict(request.url.params), "request": _json(request.content)}
        response = self._inner.handle_request(request)
        raw = response.read()
        entry["status"] = response.status_code
        entry["response"] = _json(raw)
        if "set-cookie" in response.headers:
            entry["set_cookie_names"] = sorted(h.split("=", 1)[0] for h in response.headers.get_list("set-cookie"))
        self._parent.exchanges.append(entry)
        return httpx.Response(response.status_code, headers=response.headers, content=raw,
                              extensions=response.extensions)

    def close(self) -> None:
        self._inner.close()
