"""One evidence server per organisation (FastAPI on loopback).

It holds the organisation's captured requests and answers only counts, lengths and salted
fingerprints. It requires the organisation's own bearer token; it fingerprints only with the salt
the notary issued for the current incident, and at most `limit` distinct events per salt. That
budget lives in the ledger the server is given (`signoff.incident.budget`), so restarting the
server, or running several servers for one organisation on the same database, never resets or
exceeds it.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI, Header, Request
from starlette.concurrency import run_in_threadpool

from signoff.incident.budget import FINGERPRINTS_PER_SALT, BudgetExhausted, SaltBudget
from signoff.incident.captures import Captured
from signoff.incident.fingerprint import fingerprint, salt_id
from signoff.incident.notary import IssuedSalt
from signoff.kernel.errors import NotFoundError, RefusedError, SignoffError, UnavailableError, UsageError
from signoff.kernel.tls import tls_context
from signoff.kernel.wire import bearer_token, error_of
from signoff.ledger import SqlLedger
from signoff.rooms.http.errors import install_error_handlers

__all__ = ["FINGERPRINTS_PER_SALT", "EvidenceClient", "EvidenceStore", "LoopbackServer", "make_app"]


@dataclass
class EvidenceStore:
    """What one organisation captured, and its durable per-salt fingerprint budget."""

    org: str
    captures: dict[str, Captured]
    budget: SaltBudget

    @property
    def limit(self) -> int:
        return self.budget.limit

    @classmethod
    def of(cls, org: str, captured: list[Captured], ledger: SqlLedger,
           limit: int = FINGERPRINTS_PER_SALT) -> EvidenceStore:
        """`ledger` keeps the budget; the caller opens and closes it (one per organisation)."""
        return cls(org, {c.event_id: c for c in captured}, SaltBudget(ledger, org, limit))


def make_app(store: EvidenceStore, token: str, current_salt: Callable[[], IssuedSalt | None]) -> FastAPI:
    """The evidence server of `store.org`. `current_salt` asks the notary for its current salt."""
    app = FastAPI(title=f"{store.org} evidence server", docs_url=None, redoc_url=None, openapi_url=None)

    install_error_handlers(app)

    def authorise(header: str | None) -> None:
        given = bearer_token(header, f"send {store.org}'s evidence token")
        if not secrets.compare_digest(given.encode(), token.encode()):
            raise RefusedError(f"token refused: this is {store.org}'s evidence server",
                               f"only {store.org} may ask this server")

    @app.get("/v1/summary")
    def summary(authorization: str | None = Header(default=None)) -> dict[str, Any]:
        authorise(authorization)
        by_status: dict[str, int] = {}
        for c in store.captures.values():
            by_status[str(c.status)] = by_status.get(str(c.status), 0) + 1
        return {"org": store.org, "events": len(store.captures), "by_status": by_status}

    @app.get("/v1/events")
    def events(authorization: str | None = Header(default=None)) -> list[dict[str, Any]]:
        authorise(authorization)
        return [{"event_id": c.event_id, "status": c.status, "length": len(c.raw)} for c in store.captures.values()]

    @app.post("/v1/fingerprint")
    async def make_fingerprint(request: Request, authorization: str | None = Header(default=None)) -> dict[str, Any]:
        authorise(authorization)
        try:
            body = await request.json()
            incident, event_id = str(body["incident"]), str(body["event_id"])
            salt = bytes.fromhex(str(body["salt"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError("body must be {incident, salt (hex), event_id}", "send JSON with those fields") from exc
        cur = current_salt()
        if cur is None or cur.incident != incident or not secrets.compare_digest(cur.salt, salt):
            raise RefusedError("salt refused: not the salt the notary issued for the current incident",
                               "ask the notary for the current incident's salt")
        captured = store.captures.get(event_id)
        if captured is None:
            raise NotFoundError(f"no captured event {event_id}", "list events with GET /v1/events")
        # Spend before answering (a failure after this costs a slot, never grants one); the ledger
        # call blocks, so it runs off the event loop and requests really race on the database.
        try:
            await run_in_threadpool(store.budget.spend, salt_id(salt), event_id)
        except BudgetExhausted:
            raise  # 429, its own status
        except SignoffError as exc:
            raise UnavailableError(f"fingerprint budget unavailable: {exc.message}", exc.fix or "retry later") from exc
        fp = fingerprint(event_id, captured.raw, salt, incident)
        fp["org"] = store.org
        fp["status"] = captured.status
        return fp

    return app


class LoopbackServer:
    """Run an ASGI app with uvicorn on 127.0.0.1 and a port the OS picks; a context manager."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False,
                                                    proxy_headers=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise UnavailableError("evidence server did not start", "check that uvicorn is installed")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


class EvidenceClient:
    """What an organisation's agent uses to ask its own evidence server."""

    def __init__(self, base_url: str, token: str) -> None:
        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30,
                                 verify=tls_context())

    def close(self) -> None:
        self.http.close()

    def _check(self, response: httpx.Response) -> Any:
        if response.status_code == 200:
            return response.json()
        raise error_of(response, "evidence server", "check the evidence server")

    def summary(self) -> dict[str, Any]:
        return dict(self._check(self.http.get("/v1/summary")))

    def events(self) -> list[dict[str, Any]]:
        return list(self._check(self.http.get("/v1/events")))

    def fingerprint(self, event_id: str, issued: IssuedSalt) -> dict[str, Any]:
        body = {"incident": issued.incident, "salt": issued.salt.hex(), "event_id": event_id}
        return dict(self._check(self.http.post("/v1/fingerprint", json=body)))
