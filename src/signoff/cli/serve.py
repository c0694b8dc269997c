"""`signoff serve`: the rooms server (agent protocol, user endpoints) plus the routers other
packages contribute: any module `signoff.<pkg>.routes` that defines `routers(settings)`."""

from __future__ import annotations

import importlib
import os
import socket
import stat
from pathlib import Path
from typing import Annotated, Any, cast

import typer

from signoff.cli.context import console, settings
from signoff.kernel.errors import UsageError
from signoff.kernel.logs import LogConfig
from signoff.kernel.logs import configure as configure_logging
from signoff.kernel.wire import UNIX_PEER
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


def _listen_unix(path: Path) -> socket.socket:
    """A Unix socket at `path`, readable and writable by its owner and group only (a proxy reaches it
    through its group). A socket left by a server that died is replaced; any other file is refused."""
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise UsageError(f"{path} exists and is not a socket", "name a path for the socket, not an existing file")
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        old = os.umask(0o117)  # the socket is made 0660 at bind: never a moment when anyone may connect
        try:
            listener.bind(str(path))
        finally:
            os.umask(old)
        listener.listen(2048)
    except OSError as exc:
        listener.close()
        raise UsageError(f"cannot listen on {path}: {exc.strerror or exc}",
                         "pick a path in a folder you may write, short enough for a socket (about 100 bytes)") from exc
    return listener


class _UnixPeer:
    """Names a Unix-socket peer "unix" (uvicorn leaves its address empty), so `[web] trusted_proxies =
    ["unix"]` can trust the proxy on the socket, and only it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and not scope.get("client"):
            scope["client"] = (UNIX_PEER, 0)
        await self.app(scope, receive, send)


def serve(
    host: Annotated[str, typer.Option(help="Interface to bind (loopback unless told otherwise).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0 picks a free one).")] = 8787,
    unix_socket: Annotated[Path | None, typer.Option(
        "--unix-socket", help="Listen on this Unix socket (mode 0660) instead of TCP: for a reverse proxy on the "
                              "same machine; trust it with \\[web] trusted_proxies = \\[\"unix\"].")] = None,
    demo: Annotated[bool, typer.Option("--demo", help="Serve the state `signoff demo` left here, and print a "
                                       "one-time sign-in link to look around.")] = False,
) -> None:
    """Run the rooms server (FastAPI + uvicorn) on the ledger database."""
    import uvicorn

    from signoff.rooms.http.app import create_app

    if not 0 <= port <= 65535:
        raise UsageError(f"port {port} is out of range", "pick a port between 1 and 65535 (or 0)")
    current = settings()
    logs = LogConfig.load(current)  # a bad [log] is refused before anything listens
    configure_logging(logs)
    # Forwarded headers are believed only from the proxies `[web] trusted_proxies` names (uvicorn's
    # default believes any local process): else a client's address, which the sign-in throttle
    # counts by, would be whatever it claims.
    proxies = [str(p) for p in _contributed(current, "trusted_proxies")]
    if demo:
        from signoff.demo.serve import open_demo, require_demo_state

        require_demo_state(current)
    # before the database is opened: a taken port changes nothing
    listener = _listen_unix(unix_socket) if unix_socket is not None else listen(host, port)
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
    url = f"unix:{unix_socket}" if unix_socket is not None else f"http://{shown}:{listener.getsockname()[1]}"
    console.print(f"signoff rooms serving on {url} (database {current.db_url.split('?')[0]})", highlight=False)
    if visit is not None:
        desk = f"the desk demo's last run in {visit.desk_home}" if visit.desk_home else "no desk demo run"
        console.print(f"demo: the state `signoff demo` left in {visit.home} ({desk}). Sign in as {visit.user} "
                      f"with this one-time link (valid {LINK_SECONDS // 60} minutes):", highlight=False)
        print(link_url(url, visit.signin_token), flush=True)
        console.print(f"another link: signoff rooms user link {visit.user} --url {url}", highlight=False)
    # No access log: at warning level it printed nothing anyway, and each request still paid for it.
    # The chain head is signed in the background while serving, and once more on the way out.
    served: Any = app
    if proxies:
        # uvicorn's own middleware, applied here rather than by uvicorn so that a Unix-socket peer has a
        # name ("unix") it can be trusted by; with no proxy named, forwarded headers are never read.
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        served = _UnixPeer(ProxyHeadersMiddleware(cast(Any, app), trusted_hosts=proxies))
    with checkpointing(ledger, current):
        # log_config None: uvicorn keeps the handlers `[log]` set up (one format for the whole process)
        uvicorn.Server(uvicorn.Config(served, log_config=None, log_level=logs.level, access_log=False,
                                      proxy_headers=False)).run(sockets=[listener])
