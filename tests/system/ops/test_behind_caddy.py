"""Two `signoff serve` replicas on PostgreSQL behind Caddy (Debian's package) terminating TLS, as
docs/operations.md sets it up: the replicas listen on Unix sockets only the proxy reaches, and trust
forwarded headers from that socket alone.

What must hold: pages and the API answer over HTTPS through the proxy and both replicas serve;
session cookies are `Secure`; a client's own X-Forwarded-For does not become its address; the same
headers sent over TCP from 127.0.0.1 are not believed; agent streams pass unbuffered; /metrics is
not published through the proxy without the token."""

from __future__ import annotations

import json
import re
import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import _fresh_pg_database, wait_for
from tests.support.cli import run_cli
from tests.support.net import free_port
from tests.support.pg import socket_dir
from tests.support.requires import require_binary
from tests.support.serve import Process, serve, signoff
from tests.support.web import HTTP_WAIT, csrf_of

PASSWORD = "correct horse battery staple 7"
TOKEN = "scrape-token-for-the-caddy-test"
UNIX_SERVING = re.compile(r"serving on unix:(\S+)")


@dataclass
class Site:
    url: str
    ca: ssl.SSLContext
    sockets: list[Path]
    env: dict[str, str]
    agent_id: str
    agent_key: str

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, verify=self.ca, timeout=30)


def _caddyfile(port: int, http_port: int, sockets: list[Path], data: Path) -> str:
    upstreams = " ".join(f"unix/{s}" for s in sockets)
    return f"""{{
\tadmin off
\tstorage file_system {data}
\tskip_install_trust
\thttp_port {http_port}
\thttps_port {port}
\tauto_https disable_redirects
}}
https://localhost:{port} {{
\ttls internal
\treverse_proxy {upstreams} {{
\t\tlb_policy round_robin
\t}}
}}
"""


@pytest.fixture(scope="module")
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    caddy = require_binary("caddy", "apt-get install -y caddy")
    db = _fresh_pg_database(request, request.getfixturevalue("pg_server"))
    root = tmp_path_factory.mktemp("caddy")
    home = root / "home"
    config = root / "signoff.toml"
    config.write_text(f'[web]\ntrusted_proxies = ["unix"]\n\n[serve]\nmetrics_token = "{TOKEN}"\n')
    env = {"SIGNOFF_HOME": str(home), "SIGNOFF_DB": db, "SIGNOFF_CONFIG": str(config), "PATH": "/usr/bin:/bin",
           "HOME": str(root)}
    assert run_cli(["rooms", "init"], env).exit_code == 0
    assert run_cli(["rooms", "user", "add", "ana", "--password"], env, input=PASSWORD + "\n").exit_code == 0
    added = run_cli(["rooms", "agent", "add", "watcher", "--owner", "ana", "--json"], env)
    agent = json.loads(added.stdout)

    sockets_dir = socket_dir("signoff-ux-")
    sockets = [sockets_dir / f"r{i}.sock" for i in (1, 2)]
    processes: list[Process] = []
    try:
        for sock in sockets:
            replica = Process(signoff("serve", "--unix-socket", str(sock)), env)
            processes.append(replica)
            replica.printed(UNIX_SERVING)
        port, http_port = free_port(), free_port()
        (root / "Caddyfile").write_text(_caddyfile(port, http_port, sockets, root / "caddy-data"))
        proxy = subprocess.Popen([caddy, "run", "--config", str(root / "Caddyfile"), "--adapter", "caddyfile"],
                                 env={"PATH": "/usr/bin:/bin", "HOME": str(root), "XDG_CONFIG_HOME": str(root),
                                      "XDG_DATA_HOME": str(root)},
                                 stdout=subprocess.DEVNULL, stderr=(root / "caddy.log").open("wb"))
        root_crt = root / "caddy-data" / "pki" / "authorities" / "local" / "root.crt"
        url = f"https://localhost:{port}"

        def answers() -> bool:
            if not root_crt.exists():
                return False
            try:
                ca = ssl.create_default_context(cafile=str(root_crt))
                return httpx.get(f"{url}/health", verify=ca, timeout=5).status_code == 200
            except (httpx.HTTPError, ssl.SSLError):
                return False

        try:
            assert wait_for(answers, timeout=120), (root / "caddy.log").read_text()[-2000:]
            yield Site(url, ssl.create_default_context(cafile=str(root_crt)), sockets, env, agent["agent_id"],
                       agent["api_key"])
        finally:
            proxy.terminate()
            proxy.wait(timeout=30)
    finally:
        for p in processes:
            p.stop()


def _replica_count(sock: Path, route: str) -> float:
    """This replica's own count of requests to `route`, read on its socket (a local scraper)."""
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://replica") as direct:
        text = direct.get("/metrics").text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("signoff_http_requests_total{") and f'route="{route}"' in line)


def test_both_replicas_serve_https_through_the_proxy(site: Site) -> None:
    with site.client() as client:
        for _ in range(6):
            assert client.get("/ready").json()["ready"] is True
    counts = [_replica_count(sock, "/ready") for sock in site.sockets]
    assert all(c >= 1 for c in counts), counts


def test_sessions_get_secure_cookies_through_the_proxy(site: Site) -> None:
    with site.client() as client:
        csrf = csrf_of(client)
        answer = client.post("/signin", data={"csrf": csrf, "name": "ana", "password": PASSWORD})
        assert answer.status_code == 303, answer.text
        cookies = answer.headers.get_list("set-cookie")
        assert cookies and all("; secure" in c.lower() for c in cookies), cookies
        assert client.get("/").status_code == 200


def test_forwarded_headers_from_127_0_0_1_over_tcp_are_not_believed(site: Site) -> None:
    """The same settings on TCP: a local process that says it is the proxy gets no Secure cookie."""
    server, url = serve(site.env)
    try:
        server.ready(f"{url}/health")
        with httpx.Client(base_url=url, timeout=HTTP_WAIT) as client:
            answer = client.get("/signin", headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "8.8.8.8"})
            assert answer.status_code == 200
            cookies = answer.headers.get_list("set-cookie")
            assert cookies and not any("; secure" in c.lower() for c in cookies), cookies
    finally:
        server.stop()


def test_a_clients_own_forwarded_for_does_not_reach_the_server(site: Site) -> None:
    """Caddy does not pass a client's X-Forwarded-For on as the truth: a scraper claiming to be local
    is still a proxied request, and /metrics stays closed to it without the token."""
    with site.client() as client:
        assert client.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1"}).status_code == 404
        scraped = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert scraped.status_code == 200 and "signoff_http_requests_total" in scraped.text


def test_agent_streams_pass_unbuffered(site: Site) -> None:
    """The stream's first frame (connection_state) reaches the client while the stream stays open;
    a proxy that buffered would hold it until the stream ended."""
    with site.client() as client, client.stream(
            "GET", f"/agents/{site.agent_id}/events?scope=single&connection_id=caddy-watch",
            headers={"Authorization": f"Bearer {site.agent_key}", "Accept": "text/event-stream"}) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        first = b""
        for chunk in stream.iter_bytes():
            first += chunk
            if b"\n\n" in first:
                break
        assert b"event: connection_state" in first, first
