"""The one mapping between SignoffError and HTTP: status codes, the `{detail, fix}` error body,
and the one reading of an `Authorization: Bearer` header.

Servers answer an error with `status_of(exc)` and `error_body(exc)` (every FastAPI app installs
them once, with `signoff.rooms.http.errors.install_error_handlers`); clients turn any error
response back into the matching SignoffError with `error_from`, so a refusal stays a refusal
across the wire and its `fix` survives.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from signoff.kernel.errors import (
    ConflictError,
    NotFoundError,
    RefusedError,
    SignoffError,
    Unauthenticated,
    UnavailableError,
    UsageError,
)

STATUS: dict[type[SignoffError], int] = {UsageError: 400, RefusedError: 403, NotFoundError: 404, ConflictError: 409,
                                         UnavailableError: 503}


def status_of(exc: SignoffError) -> int:
    """The HTTP status of an error: its own `http_status` (401 for unauthenticated), else by kind, else 400."""
    own = getattr(exc, "http_status", None)
    if isinstance(own, int):
        return own
    for kind, code in STATUS.items():
        if isinstance(exc, kind):
            return code
    return 400


def error_body(exc: SignoffError) -> dict[str, Any]:
    """`{detail, fix}`, and whatever else the error says a client may act on (`exc.facts()`)."""
    return {**exc.facts(), "detail": exc.message, "fix": exc.fix}


# RFC 7235: the scheme is case-insensitive; the credential is one run of visible ASCII (the grammar of
# each kind of token is checked where that kind is known: `signoff.mcp.auth`, `rooms.tokens`).
_BEARER = re.compile(r"bearer +([\x21-\x7e]+) *", re.IGNORECASE)
BEARER_FIX = "send Authorization: Bearer <token>"


# A peer on `signoff serve --unix-socket`, as `[web] trusted_proxies` names it: the socket file's
# permissions decide who may connect. (A proxy on the same machine over TCP comes from 127.0.0.1,
# which every local process can; a Unix socket is the proxy's alone.)
UNIX_PEER = "unix"


def bearer_token(authorization: str | None, fix: str = BEARER_FIX) -> str:
    """The token of an `Authorization: Bearer <token>` header. A missing header, another scheme or a
    token with spaces or control characters in it is `Unauthenticated` (401): the caller is not known."""
    if not authorization or not authorization.strip():
        raise Unauthenticated("missing bearer token", fix)
    found = _BEARER.fullmatch(authorization)
    if found is None:
        raise Unauthenticated("malformed Authorization header: not one bearer token", fix)
    return found.group(1)


class Response(Protocol):
    """What `error_of` reads of an HTTP client's response (httpx's, for one)."""

    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...

    def json(self) -> Any: ...


def error_of(response: Response, where: str, fix: str | None = None) -> SignoffError:
    """`error_from` for a whole response, whose body may not be JSON at all (a proxy's page)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    return error_from(response.status_code, body, response.text, where, fix)


def error_from(status: int, body: Any, text: str, where: str, fix: str | None = None) -> SignoffError:
    """The SignoffError an error response stands for. `body` is the parsed JSON (or None), `text` the
    raw body, `where` names the server and request for the message, `fix` is used when it sent none."""
    detail = body.get("detail") if isinstance(body, dict) else None
    if isinstance(detail, dict):
        detail = detail.get("message") or json.dumps(detail, sort_keys=True)
    message = f"{where} ({status}): {detail or text[:300] or 'no detail'}"
    sent = body.get("fix") if isinstance(body, dict) else None
    fix = str(sent) if sent else fix
    if status in (401, 403, 429):
        return RefusedError(message, fix or "check the credential and that it may do this")
    if status == 404:
        return NotFoundError(message, fix)
    if status == 409:
        return ConflictError(message, fix or "re-read, then retry")
    if status >= 500:
        return UnavailableError(message, fix or "the server failed; retry later")
    return UsageError(message, fix or "check the request")
