"""`signoff mcp --transport http`: the MCP server over streamable HTTP, one bearer agent key per request."""

from __future__ import annotations

import socket

from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.mcp.auth import AgentKeyVerifier, Caller
from signoff.mcp.server import build_server


def bind(host: str, port: int) -> socket.socket:
    if not 0 <= port <= 65535:
        raise UsageError(f"port {port} is out of range", "pick a port between 1 and 65535 (or 0 for a free one)")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}", "pick another --port or --host") from exc
    return sock


def serve_http(rooms_url: str, settings: Settings, host: str, port: int, room: str | None) -> None:
    import uvicorn
    from mcp.server.auth.settings import AuthSettings

    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}/mcp"
    auth = AuthSettings(issuer_url=rooms_url, resource_server_url=url)  # type: ignore[arg-type]
    server = build_server(Caller(rooms_url, None), settings, room, token_verifier=AgentKeyVerifier(rooms_url),
                          auth=auth)
    app = server.streamable_http_app(host=host)
    print(f"signoff mcp serving on {url} (rooms {rooms_url})", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=False)).run(sockets=[sock])
