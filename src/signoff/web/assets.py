"""Our own small scripts and the style sheet, served from the package under /static."""

from __future__ import annotations

from fastapi import APIRouter, Response

from signoff.kernel.errors import NotFoundError
from signoff.web.render import HERE, PageRoute

router = APIRouter(route_class=PageRoute)
TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
FILES = {p.name: p for p in (HERE / "static").iterdir() if p.suffix in TYPES}


@router.get("/static/{name}")
def asset(name: str) -> Response:
    path = FILES.get(name)
    if path is None:
        raise NotFoundError(f"no static file {name!r}", "the pages link every file they use")
    return Response(path.read_bytes(), media_type=TYPES[path.suffix], headers={"Cache-Control": "no-cache"})
