"""One mapping from the error hierarchy to HTTP, on every app signoff serves: the rooms server, the
same server with the pages and the desk's API mounted (what `signoff serve` runs), an
organisation's evidence server and its approver service. Each answers every kind of SignoffError
with the same status and the same `{detail, fix}` body, and reads a bearer header the same way."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import APIRouter, FastAPI
from fastapi.testclient import TestClient

from signoff.demo.incident_walkthrough import approver_for
from signoff.demo.payco_shopco.fixture import parties
from signoff.desk.intake import Quarantined
from signoff.desk.routes import routers as desk_routers
from signoff.incident.approver_service import approver_app
from signoff.incident.budget import BudgetExhausted
from signoff.incident.evidence_server import EvidenceStore, make_app
from signoff.incident.notary import Notary
from signoff.incident.workspace import Workspace
from signoff.kernel.errors import (
    ConflictError,
    IntegrityError,
    InvalidRequest,
    NotFoundError,
    RefusedError,
    SignoffError,
    Unauthenticated,
    UnavailableError,
    UsageError,
)
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.rooms.http.app import create_app
from signoff.trust import KeyStore
from signoff.web.render import PageRoute
from signoff.web.routes import routers as web_routers

ERRORS: dict[str, tuple[SignoffError, int]] = {
    "usage": (UsageError("bad argument", "pass a good one"), 400),
    "invalid": (InvalidRequest("body is not an object", "send an object"), 422),
    "not-found": (NotFoundError("no such case", "list the cases"), 404),
    "conflict": (ConflictError("the case moved", "re-read"), 409),
    "refused": (RefusedError("you may not", "ask an owner"), 403),
    "unauthenticated": (Unauthenticated("who are you?", "send a token"), 401),
    "integrity": (IntegrityError("a digest differs", "restore the file"), 400),
    "unavailable": (UnavailableError("the sandbox is down", "retry later"), 503),
    "budget": (BudgetExhausted("at most 3 per salt", "open a new incident"), 429),
}
TOKEN = "sixteen-chars-at-least"
APPS = ["rooms", "served", "evidence", "approver"]
# A route each app answers only with a bearer token, and the token it takes.
GUARDED = {"rooms": ("GET", "/users/me"), "served": ("GET", "/desk/bugs"), "evidence": ("GET", "/v1/summary"),
           "approver": ("POST", "/v1/approve")}


def _raising() -> APIRouter:
    router = APIRouter()

    @router.get("/test-raise/{kind}")
    def raise_(kind: str) -> None:
        if kind == "quarantined":
            raise Quarantined(["instructions"], "the report holds instructions")
        raise ERRORS[kind][0]

    @router.get("/test-read/{number}")
    def read(number: int) -> dict[str, int]:
        return {"number": number}

    return router


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], TestClient]]:
    root: Path = tmp_path_factory.mktemp("apps")
    settings = Settings.load(root / "home")
    ledger = SqlLedger.open(settings)
    workspace = Workspace(root / "incident", KeyStore(root / "keys"))
    workspace.setup(parties())
    built: dict[str, Callable[[], FastAPI]] = {
        "rooms": lambda: create_app(ledger, settings),
        "served": lambda: create_app(ledger, settings, routers=[*web_routers(settings), *desk_routers(settings)]),
        "evidence": lambda: make_app(EvidenceStore.of("payco", [], ledger), TOKEN, lambda: None),
        "approver": lambda: approver_app(approver_for(workspace, "payco", Notary()), TOKEN),
    }

    def client(name: str) -> TestClient:
        app = built[name]()
        app.include_router(_raising())
        return TestClient(app)

    yield client
    workspace.close()
    ledger.close()


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize("kind", list(ERRORS))
def test_every_app_answers_each_kind_of_error_the_same_way(apps: Callable[[str], TestClient], app: str,
                                                           kind: str) -> None:
    exc, status = ERRORS[kind]
    answer = apps(app).get(f"/test-raise/{kind}")
    assert answer.status_code == status
    assert answer.json() == {"detail": exc.message, "fix": exc.fix}


@pytest.mark.parametrize("app", APPS)
def test_every_app_names_what_an_error_lets_a_client_act_on(apps: Callable[[str], TestClient], app: str) -> None:
    """The airlock's refusal is a 422 that names the families it held, wherever it is raised."""
    answer = apps(app).get("/test-raise/quarantined")
    assert answer.status_code == 422
    assert answer.json() == {"quarantined": True, "families": ["instructions"],
                             "detail": "the report holds instructions",
                             "fix": "describe the bug in your own words, without instructions to anyone"}


@pytest.mark.parametrize("app", APPS)
def test_every_app_answers_a_request_it_cannot_read_in_the_same_shape(apps: Callable[[str], TestClient],
                                                                      app: str) -> None:
    answer = apps(app).get("/test-read/seven")
    assert answer.status_code == 422
    body = answer.json()
    assert set(body) == {"detail", "fix"} and body["detail"].startswith("invalid request: path/number")


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize(("header", "detail"), [
    (None, "missing bearer token"),
    ("Basic dXNlcjpwYXNz", "malformed Authorization header: not one bearer token"),
    ("Bearer", "malformed Authorization header: not one bearer token"),
    (f"Bearer {TOKEN} and more", "malformed Authorization header: not one bearer token"),
])
def test_every_app_refuses_a_missing_or_malformed_bearer_header_as_unauthenticated(
        apps: Callable[[str], TestClient], app: str, header: str | None, detail: str) -> None:
    method, path = GUARDED[app]
    headers = {} if header is None else {"Authorization": header}
    answer = apps(app).request(method, path, headers=headers)
    assert answer.status_code == 401
    if header is None and app == "served":
        # The desk's public endpoints take no credential at all: an engineering one needs one.
        assert answer.json()["detail"] == "read engineering work needs a credential"
    else:
        assert answer.json()["detail"] == detail


@pytest.mark.parametrize("app", ["evidence", "approver"])
def test_a_well_formed_bearer_token_nobody_issued_is_refused(apps: Callable[[str], TestClient], app: str) -> None:
    method, path = GUARDED[app]
    answer = apps(app).request(method, path, headers={"Authorization": "Bearer not-the-token"})
    assert answer.status_code == 403 and answer.json()["fix"]


def test_a_page_refuses_with_the_same_status_as_a_page(apps: Callable[[str], TestClient]) -> None:
    """Pages render their refusals as pages, with the status the one mapping gives."""
    client = apps("served")
    router = APIRouter(route_class=PageRoute)

    @router.get("/test-page/{kind}")
    def page(kind: str) -> Any:
        raise ERRORS[kind][0]

    assert isinstance(client.app, FastAPI)
    client.app.include_router(router)
    for kind, (exc, status) in ERRORS.items():
        answer = client.get(f"/test-page/{kind}")
        assert answer.status_code == status and answer.headers["content-type"].startswith("text/html")
        assert exc.message.replace("?", "") in answer.text
