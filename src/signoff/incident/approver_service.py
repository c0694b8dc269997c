"""The approver as an HTTP service (FastAPI), so its signing key lives in the service's process only.

Callers (the room server or bridge that saw the messages) send the disclosure, the draft message and
the approval message as the room server recorded them; the service answers with the signed record or
refuses with the approver's reason. Agents never get the key, only what the service returns.
"""

from __future__ import annotations

import secrets
from typing import Any

import httpx
from fastapi import FastAPI, Header, Request
from fastapi.responses import JSONResponse

from signoff.incident.approvals import Approver
from signoff.incident.disclosure import Disclosure
from signoff.kernel.errors import NotFoundError, RefusedError, SignoffError, UsageError
from signoff.kernel.ids import id_path
from signoff.kernel.tls import tls_context
from signoff.kernel.wire import error_body, error_of
from signoff.rooms.domain.decisions import Message


def _message(data: Any) -> Message:
    if not isinstance(data, dict):
        raise UsageError("a message must be an object", "send {msg_id, room, sender, text}")
    try:
        return Message(str(data["msg_id"]), str(data["room"]), str(data["sender"]), str(data["text"]))
    except KeyError as exc:
        raise UsageError(f"message lacks {exc.args[0]}", "send {msg_id, room, sender, text}") from exc


def approver_app(approver: Approver, token: str) -> FastAPI:
    app = FastAPI(title=f"{approver.org} approver", docs_url=None, redoc_url=None, openapi_url=None)

    def error(status: int, exc: SignoffError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=status)

    def authorised(header: str | None) -> bool:
        return bool(header) and secrets.compare_digest(str(header).encode(), f"Bearer {token}".encode())

    @app.get("/v1/public-key")
    def public_key() -> dict[str, str]:
        return {"org": approver.org, "public_key": approver.public.hex(), "keyid": approver.public.keyid}

    @app.post("/v1/approve", response_model=None)
    async def approve(request: Request, authorization: str | None = Header(default=None)) -> Any:
        if not authorised(authorization):
            return error(403, RefusedError("caller token refused", "only the room server may submit approvals"))
        try:
            body = await request.json()
            if not isinstance(body, dict):
                raise UsageError("body must be an object", "send {disclosure, draft_msg, approval_msg}")
            d = Disclosure.from_json(body.get("disclosure") or {})
            return approver.approve(d, _message(body.get("draft_msg")), _message(body.get("approval_msg")))
        except RefusedError as exc:
            return error(403, exc)
        except UsageError as exc:
            return error(400, exc)
        except ValueError:
            return error(400, UsageError("body is not JSON", "send {disclosure, draft_msg, approval_msg}"))

    @app.get("/v1/records/{d_id}", response_model=None)
    def record(d_id: str) -> Any:
        found = approver.find(d_id)
        if found is None:
            return error(404, NotFoundError(f"no approval record for {d_id}", "approve the draft first"))
        return found

    return app


class ApproverClient:
    def __init__(self, base_url: str, token: str) -> None:
        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30,
                                 verify=tls_context())

    def close(self) -> None:
        self.http.close()

    def _check(self, response: httpx.Response) -> dict[str, Any]:
        # The status decides first: an error page (a proxy's, a crash's) need not be JSON at all.
        if response.status_code != 200:
            raise error_of(response, "approver service")
        return dict(response.json())

    def approve(self, d: Disclosure, draft_msg: Message, approval_msg: Message) -> dict[str, Any]:
        payload = {"disclosure": {k: v for k, v in d.as_json().items() if not k.endswith("_sha256")},
                   "draft_msg": draft_msg.__dict__, "approval_msg": approval_msg.__dict__}
        return self._check(self.http.post("/v1/approve", json=payload))

    def record(self, d_id: str) -> dict[str, Any]:
        # `d_id` may come from chat text: checked and quoted, it names one record and nothing else.
        return self._check(self.http.get(id_path("/v1/records/{d_id}", d_id=d_id)))

    def public_key(self) -> dict[str, Any]:
        return self._check(self.http.get("/v1/public-key"))
