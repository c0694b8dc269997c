"""`signoff serve`: the rooms server (agent protocol, user endpoints) plus the routers other
packages contribute: any module `signoff.<pkg>.routes` that defines `routers(settings)`."""

from __future__ import annotations

import importlib
import socket
from typing import Annotated, Any

import typer

from signoff.cli.context import console, settings
from signoff.kernel.errors import UsageError
from signoff.ledger import SqlLedger, checkpointing
from signoff.rooms.domain.signin import LINK_SECONDS, link_url

ROUTE_PACKAGES = ("web", "repair", "desk", "notes", "incident", "bridges")


def _route_modules() -> list[Any]:
    """Each package's `routes` module, for the packages this build ships."""
    modules: list[Any] = []
    for pkg in ROUTE_PACKAGES:
        try:
            modules.append(importlib.import_module(f"signoff.{pkg}.routes"))
        except ModuleNotFoundError as exc:
            if exc.name in (f"signoff.{pkg}", f"signoff.{pkg}.routes"):
                continue
            raise
    return modules


def _contributed(current: Any, name: str = "routers") -> list[Any]:
    """What the packages' `routes` modules give for `name(settings)`: their routers, the proxies
    whose forwarded headers they trust."""
    found: list[Any] = []
    for module in _route_modules():
        factory = getattr(module, name, None)
        if callable(factory):
            found.extend(factory(current))
    return found


def listen(host: str, port: int) -> socket.socket:
    """The bound socket, before anything is printed: the address shown (and a sign-in link) names
    the real port, also for --port 0."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                         "pick another --port (0 picks a free one) or stop what uses it") from exc


def serve(
    host: Annotated[str, typer.Option(help="Interface to bind (loopback unless told otherwise).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0 picks a free one).")] = 8787,
    demo: Annotated[bool, typer.Option("--demo", help="Serve the state `signoff demo` left here, and print a "
                                       "one-time sign-in link to look around.")] = False,
) -> None:
    """Run the rooms server (FastAPI + uvicorn) on the ledger database."""
    import uvicorn

    from signoff.rooms.http.app import create_app

    if not 0 <= port <= 65535:
        raise UsageError(f"port {port} is out of range", "pick a port between 1 and 65535 (or 0)")
    current = settings()
    # Forwarded headers are believed only from the proxies `[web] trusted_proxies` names (uvicorn's
    # default believes any local process): else a client's address, which the sign-in throttle
    # counts by, would be whatever it claims.
    proxies = [str(p) for p in _contributed(current, "trusted_proxies")]
    if demo:
        from signoff.demo.serve import open_demo, require_demo_state

        require_demo_state(current)
    listener = listen(host, port)  # before the database is opened: a taken port changes nothing
    ledger = SqlLedger.open(current)
    app = create_app(ledger, current, routers=_contributed(current, "routers"))
    # The scripted incident the incident pages run (preflight's scratch run, "try to break it"):
    # the demo's, handed in here so that the web face never imports the demo.
    from functools import cache

    from signoff.demo.payco_shopco import scenario

    app.state.incident_scenario = cache(scenario)  # built once, on first use
    for exc_class, handler in _contributed(current, "exception_handlers"):
        app.add_exception_handler(exc_class, handler)
    visit = None
    if demo:
        visit = open_demo(app, current)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{listener.getsockname()[1]}"
    console.print(f"signoff rooms serving on {url} (database {current.db_url.split('?')[0]})", highlight=False)
    if visit is not None:
        desk = f"the desk demo's last run in {visit.desk_home}" if visit.desk_home else "no desk demo run"
        console.print(f"demo: the state `signoff demo` left in {visit.home} ({desk}). Sign in as {visit.user} "
                      f"with this one-time link (valid {LINK_SECONDS // 60} minutes):", highlight=False)
        print(link_url(url, visit.signin_token), flush=True)
        console.print(f"another link: signoff rooms user link {visit.user} --url {url}", highlight=False)
    # No access log: at warning level it printed nothing anyway, and each request still paid for it.
    # The chain head is signed in the background while serving, and once more on the way out.
    with checkpointing(ledger, current):
        uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=bool(proxies),
                                      forwarded_allow_ips=proxies)).run(sockets=[listener])
