"""A guard in front of the rooms routes: every request body is bounded in size and nesting, is JSON,
and holds only text and numbers the service can store. Without it a body nested a thousand levels
deep overflows the parser's recursion, a lone surrogate fails when the database encodes it, and
`1e999` becomes an infinity no canonical JSON can hold: each a 500 instead of a 4xx."""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY_BYTES = 8 * 1024 * 1024  # a 1 MiB document escaped as \uXXXX fits
MAX_DEPTH = 32
PATHS = ("/agents", "/users/", "/admin/")


class BadBody(ValueError):
    def __init__(self, status: int, detail: str, fix: str) -> None:
        super().__init__(detail)
        self.status, self.detail, self.fix = status, detail, fix


def nesting(raw: bytes) -> int:
    """The deepest nesting of arrays and objects, counted without parsing (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadBody(422, f"the number {text[:40]} is out of range", "send finite numbers")
    return value


def _no_constant(text: str) -> Any:
    raise BadBody(422, f"{text} is not JSON", "send finite numbers")


def _check_strings(value: Any) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if "\x00" in item:
                raise BadBody(400, "the body holds a NUL character", "remove NUL (\\u0000) characters")
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise BadBody(400, "the body holds a lone surrogate (text that is not valid Unicode)",
                              "send UTF-8 text; encode characters beyond U+FFFF as one pair") from exc


def check_body(raw: bytes) -> None:
    """Raise BadBody unless `raw` is empty or JSON the service can take."""
    if not raw.strip():
        return
    if nesting(raw) > MAX_DEPTH:
        raise BadBody(422, f"the JSON body is nested deeper than {MAX_DEPTH} levels", "send a flatter body")
    try:
        value = json.loads(raw, parse_float=_finite, parse_constant=_no_constant)
    except BadBody:
        raise
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, too many digits
        raise BadBody(422, f"malformed JSON body: {str(exc)[:200]}", "send a JSON object") from exc
    _check_strings(value)


class BodyGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(PATHS):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, receive, send)  # a disconnect: let the app see it
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size <= MAX_BODY_BYTES:  # past it, stop keeping the body (the answer is 413)
                chunks.append(chunk)
            more = bool(message.get("more_body"))
        raw = b"".join(chunks)
        try:
            if size > MAX_BODY_BYTES:
                raise BadBody(413, f"the body is over {MAX_BODY_BYTES} bytes",
                              "send less; put large text in documents")
            check_body(raw)
        except BadBody as exc:
            await _respond(send, exc.status, {"detail": exc.detail, "fix": exc.fix})
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _respond(send: Send, status: int, body: dict[str, str]) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})
