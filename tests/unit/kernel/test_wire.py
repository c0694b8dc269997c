"""kernel.wire: one mapping from SignoffError to HTTP and back, one error body {detail, fix}."""

from __future__ import annotations

import pytest

from signoff.kernel.errors import (
    ConflictError,
    IntegrityError,
    NotFoundError,
    RefusedError,
    SignoffError,
    Unauthenticated,
    UnavailableError,
    UsageError,
)
from signoff.kernel.wire import bearer_token, error_body, error_from, status_of


class _Unauthenticated(RefusedError):
    http_status = 401


@pytest.mark.parametrize(("exc", "status"), [
    (UsageError("bad", "fix it"), 400), (RefusedError("no", "ask"), 403), (NotFoundError("gone", "list"), 404),
    (ConflictError("moved", "re-read"), 409), (UnavailableError("down", "retry"), 503),
    (_Unauthenticated("who?", "send a token"), 401), (IntegrityError("tampered", "restore"), 400),
])
def test_an_error_crosses_the_wire_as_its_own_kind_with_its_fix(exc: SignoffError, status: int) -> None:
    assert status_of(exc) == status
    body = error_body(exc)
    assert body == {"detail": exc.message, "fix": exc.fix}
    back = error_from(status, body, "", "server")
    expected = {400: UsageError, 401: RefusedError, 403: RefusedError, 404: NotFoundError, 409: ConflictError,
                503: UnavailableError}[status]
    assert type(back) is expected
    assert exc.message in back.message and f"({status})" in back.message and back.fix == exc.fix


def test_bodies_that_are_not_ours_still_give_a_clear_error() -> None:
    page = error_from(502, None, "<html>Bad Gateway</html>", "approver service")
    assert isinstance(page, UnavailableError) and "Bad Gateway" in page.message and page.fix
    limited = error_from(429, {"detail": "slow down"}, "", "evidence server", "wait")
    assert isinstance(limited, RefusedError) and limited.fix == "wait"
    contract = error_from(409, {"detail": {"message": "incompatible protocol", "contract": {}}}, "", "rooms")
    assert isinstance(contract, ConflictError) and "incompatible protocol" in contract.message
    empty = error_from(400, {}, "", "server")
    assert isinstance(empty, UsageError) and "no detail" in empty.message and empty.fix


@pytest.mark.parametrize("header", ["Bearer sou_abc-DEF_123", "bearer sou_abc-DEF_123", "BEARER  sou_abc-DEF_123 "])
def test_a_bearer_header_gives_its_token(header: str) -> None:
    assert bearer_token(header) == "sou_abc-DEF_123"


@pytest.mark.parametrize(("header", "detail"), [
    (None, "missing bearer token"), ("", "missing bearer token"), ("   ", "missing bearer token"),
    ("Basic dXNlcjpwYXNz", "malformed"), ("Bearer", "malformed"), ("Bearer ", "malformed"),
    ("Bearersou_abc", "malformed"), ("Bearer a b", "malformed"), ("Bearer a\tb", "malformed"),
    ("Bearer a\x00b", "malformed"), ("Bearer t\u00f6ken", "malformed"), ("Token sou_abc", "malformed"),
])
def test_a_missing_or_malformed_bearer_header_is_unauthenticated(header: str | None, detail: str) -> None:
    with pytest.raises(Unauthenticated, match=detail) as refused:
        bearer_token(header, "send the evidence token")
    assert status_of(refused.value) == 401 and refused.value.fix == "send the evidence token"


def test_an_error_body_carries_what_the_error_lets_a_client_act_on() -> None:
    class Held(RefusedError):
        http_status = 422

        def facts(self) -> dict[str, object]:
            return {"families": ["instructions"], "detail": "not this one"}

    held = Held("held", "rewrite it")
    assert status_of(held) == 422
    assert error_body(held) == {"families": ["instructions"], "detail": "held", "fix": "rewrite it"}
