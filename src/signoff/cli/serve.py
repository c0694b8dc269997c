"""`signoff serve`: the rooms server (agent protocol, user endpoints) plus the routers other
packages contribute: any module `signoff.<pkg>.routes` that defines `routers(settings)`."""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer

from signoff.cli.context import console, settings
from signoff.kernel.errors import UsageError
from signoff.ledger import Ledger

ROUTE_PACKAGES = ("web", "repair", "desk", "notes", "incident", "bridges")


def _contributed(current: Any) -> list[Any]:
    routers: list[Any] = []
    for pkg in ROUTE_PACKAGES:
        try:
            module = importlib.import_module(f"signoff.{pkg}.routes")
        except ModuleNotFoundError as exc:
            if exc.name in (f"signoff.{pkg}", f"signoff.{pkg}.routes"):
                continue
            raise
        factory = getattr(module, "routers", None)
        if callable(factory):
            routers.extend(factory(current))
    return routers


def serve(
    host: Annotated[str, typer.Option(help="Interface to bind (loopback unless told otherwise).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0 picks a free one).")] = 8787,
) -> None:
    """Run the rooms server (FastAPI + uvicorn) on the ledger database."""
    import uvicorn

    from signoff.rooms.app import create_app

    if not 0 <= port <= 65535:
        raise UsageError(f"port {port} is out of range", "pick a port between 1 and 65535 (or 0)")
    current = settings()
    ledger = Ledger.open(current)
    app = create_app(ledger, current, routers=_contributed(current))
    console.print(f"signoff rooms serving on http://{host}:{port} (database {current.db_url.split('?')[0]})")
    uvicorn.run(app, host=host, port=port, log_level="warning")
