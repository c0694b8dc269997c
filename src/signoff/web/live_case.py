"""Live updates of a page about one ledger case (a repair case, a notes run): server-sent events
whenever the case gets a new version, whoever wrote it (this server, `signoff repair run`,
`signoff notes decide` in another process). Each event carries text for elements of the page by id
and a notice; the page's script (`/static/live-case.js`) sets them with `textContent`.

Other processes' writes wake no one here, so the stream reads the case's version once a second;
it ends after a few minutes and the browser reconnects from the version it saw (`Last-Event-ID`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from signoff.kernel.errors import UsageError
from signoff.ledger import SqlLedger
from signoff.web.state import signed_in, still_signed_in

POLL_SECONDS = 1.0
LIFETIME_SECONDS = 300.0


def after_version(request: Request) -> int:
    """The version the page was rendered at (or the last event's, on a reconnect)."""
    try:
        return int(request.headers.get("last-event-id") or request.query_params.get("after", "0"))
    except ValueError as exc:
        raise UsageError("after must be a case version", "reload the page") from exc


def case_stream(request: Request, ledger: SqlLedger, case: str,
                update: Callable[[], dict[str, Any]]) -> StreamingResponse:
    """Events for `case` after the version the page saw; `update()` gives `{fields, notice}`. The
    page's session is checked before every read: signed out or revoked, the stream ends."""
    seen = after_version(request)
    allowed = still_signed_in(request, signed_in(request))

    async def events() -> AsyncIterator[bytes]:
        nonlocal seen
        yield b"retry: 2000\n\n"
        loop = asyncio.get_running_loop()
        end = loop.time() + LIFETIME_SECONDS
        while loop.time() < end and not await request.is_disconnected() and await allowed():
            version = await run_in_threadpool(ledger.version, case)
            if version != seen:
                seen = version
                data = {"version": version, **await run_in_threadpool(update)}
                if not await allowed():  # asked again after the read: a sign-out meanwhile sends nothing it read
                    return
                yield f"id: {version}\nevent: changed\ndata: {json.dumps(data)}\n\n".encode()
            await asyncio.sleep(POLL_SECONDS)  # the wait between two reads of the case's version

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
