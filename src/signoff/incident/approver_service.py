"""The approver as an HTTP service (FastAPI), so its signing key lives in the service's process only.

Callers (the room server or bridge that saw the messages) send the disclosure, the draft message and
the approval message as the room server recorded them (its text names the digest of what was shown:
`approve D-PAY-1 #<digest>`; `POST /v1/approve`), or a fix request and its approval where the server
has no approval cards (`POST /v1/approve-fix`); the service answers with the signed record or refuses with the
approver's reason (403; 409 when the digest names other content than is there now; 400 when it
names none). Agents never get the key, only what the service returns.
"""

from __future__ import annotations

import secrets
from typing import Any

import httpx
from fastapi import FastAPI, Header, Request

from signoff.incident.approvals import Approver
from signoff.incident.disclosure import Disclosure
from signoff.kernel.errors import NotFoundError, RefusedError, UnavailableError, UsageError
from signoff.kernel.ids import id_path
from signoff.kernel.tls import tls_context
from signoff.kernel.wire import bearer_token, error_of
from signoff.rooms.domain.decisions import Message
from signoff.rooms.http.errors import install_error_handlers


def _message(data: Any) -> Message:
    if not isinstance(data, dict):
        raise UsageError("a message must be an object", "send {msg_id, room, sender, text}")
    try:
        return Message(str(data["msg_id"]), str(data["room"]), str(data["sender"]), str(data["text"]))
    except KeyError as exc:
        raise UsageError(f"message lacks {exc.args[0]}", "send {msg_id, room, sender, text}") from exc


def approver_app(approver: Approver, token: str) -> FastAPI:
    app = install_error_handlers(FastAPI(title=f"{approver.org} approver", docs_url=None, redoc_url=None,
                                         openapi_url=None))

    def authorise(header: str | None) -> None:
        given = bearer_token(header, "only the room server may submit approvals")
        if not secrets.compare_digest(given.encode(), token.encode()):
            raise RefusedError("caller token refused", "only the room server may submit approvals")

    @app.get("/v1/public-key")
    def public_key() -> dict[str, str]:
        return {"org": approver.org, "public_key": approver.public.hex(), "keyid": approver.public.keyid}

    @app.post("/v1/approve", response_model=None)
    async def approve(request: Request, authorization: str | None = Header(default=None)) -> Any:
        authorise(authorization)
        try:
            body = await request.json()
            if not isinstance(body, dict):
                raise UsageError("body must be an object", "send {disclosure, draft_msg, approval_msg}")
            d = Disclosure.from_json(body.get("disclosure") or {})
            return approver.approve(d, _message(body.get("draft_msg")), _message(body.get("approval_msg")))
        except ValueError as exc:
            raise UsageError("body is not JSON", "send {disclosure, draft_msg, approval_msg}") from exc

    @app.post("/v1/approve-fix", response_model=None)
    async def approve_fix(request: Request, authorization: str | None = Header(default=None)) -> Any:
        authorise(authorization)
        usage = "send {request_id, incident, fix, request_msg, approval_msg}"
        try:
            body = await request.json()
        except ValueError as exc:
            raise UsageError("body is not JSON", usage) from exc
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str)
                                                 for k in ("request_id", "incident", "fix")):
            raise UsageError("body must be an object naming request_id, incident and fix as text", usage)
        return approver.approve_fix(body["request_id"], body["incident"], body["fix"],
                                    _message(body.get("request_msg")), _message(body.get("approval_msg")))

    @app.get("/v1/records/{d_id}", response_model=None)
    def record(d_id: str, incident: str | None = None) -> Any:
        found = approver.find(d_id, incident)
        if found is None:
            raise NotFoundError(f"no approval record for {d_id}", "approve the draft first")
        return found

    return app


class ApproverClient:
    def __init__(self, base_url: str, token: str, timeout: float = 30) -> None:
        self.base_url = base_url
        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout,
                                 verify=tls_context())

    def close(self) -> None:
        self.http.close()

    def _send(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:  # down, refused, timed out: a named error, never a traceback
            raise UnavailableError(f"the approver service at {self.base_url} did not answer ({type(exc).__name__})",
                                   "start the organisation's approver (`signoff incident approver`) or fix its "
                                   "address; nothing was signed") from exc
        # The status decides first: an error page (a proxy's, a crash's) need not be JSON at all.
        if response.status_code != 200:
            raise error_of(response, "approver service")
        try:
            return dict(response.json())
        except ValueError as exc:
            raise UnavailableError(f"the approver service at {self.base_url} answered with no JSON object",
                                   "check that the address is the approver's") from exc

    def approve(self, d: Disclosure, draft_msg: Message, approval_msg: Message) -> dict[str, Any]:
        payload = {"disclosure": {k: v for k, v in d.as_json().items() if not k.endswith("_sha256")},
                   "draft_msg": draft_msg.__dict__, "approval_msg": approval_msg.__dict__}
        return self._send("POST", "/v1/approve", json=payload)

    def approve_fix(self, request_id: str, incident: str, fix: str, request_msg: Message,
                    approval_msg: Message) -> dict[str, Any]:
        payload = {"request_id": request_id, "incident": incident, "fix": fix, "request_msg": request_msg.__dict__,
                   "approval_msg": approval_msg.__dict__}
        return self._send("POST", "/v1/approve-fix", json=payload)

    def record(self, d_id: str, incident: str | None = None) -> dict[str, Any]:
        """The record of `d_id` (of `incident`, when given: an approver signs for many incidents)."""
        # `d_id` may come from chat text: checked and quoted, it names one record and nothing else.
        return self._send("GET", id_path("/v1/records/{d_id}", d_id=d_id),
                          params={"incident": incident} if incident is not None else None)

    def public_key(self) -> dict[str, Any]:
        return self._send("GET", "/v1/public-key")
