"""Errors as HTTP answers, installed once on every FastAPI app signoff serves: the rooms server (and
with it the desk's API and the pages), each organisation's evidence server and approver service.

A SignoffError raised anywhere in a request answers `status_of(exc)` with `error_body(exc)` (the
one mapping, `signoff.kernel.wire`); a body or parameter FastAPI cannot read answers 422 in the
same `{detail, fix}` shape. Pages render their refusals as pages (`signoff.web.render.PageRoute`)
with the same status.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from signoff.kernel.errors import InvalidRequest, SignoffError
from signoff.kernel.wire import error_body, status_of


def error_response(exc: SignoffError) -> JSONResponse:
    return JSONResponse(error_body(exc), status_code=status_of(exc))


def invalid_request(exc: RequestValidationError) -> InvalidRequest:
    problems = "; ".join(f"{'/'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors())
    return InvalidRequest(f"invalid request: {problems}", "check the body and parameters")


async def _signoff_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, SignoffError)
    return error_response(exc)


async def _invalid(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(invalid_request(exc))


def install_error_handlers(app: FastAPI) -> FastAPI:
    """Answer every SignoffError, and every request FastAPI cannot read, by the one mapping."""
    app.add_exception_handler(SignoffError, _signoff_error)
    app.add_exception_handler(RequestValidationError, _invalid)
    return app
