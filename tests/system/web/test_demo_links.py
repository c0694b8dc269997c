"""After `signoff demo` (what `make demo` runs) and `signoff serve --demo`, every link a visitor can
follow answers: a crawler signs in with the printed link and follows every same-origin link from the
menu and from every page it reaches, breadth first, and no answer is a 4xx or a 5xx."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx
import pytest

from tests.support.requires import require_sandbox
from tests.support.serve import Process, signoff
from tests.system.web.test_serve_demo import LINK, _env, _redeem, _signoff

MAX_PAGES = 400  # the demo's pages number in the tens; the bound only stops a link loop
# Links that act rather than show: signing out would end the crawl, and a GET must never act anyway.
ACTIONS = ("/signout", "/signin")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.found += [value for name, value in attrs if name == "href" and value]


def links(base: str, url: str, html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    out = []
    for href in parser.found:
        target, _ = urldefrag(urljoin(url, href))
        if urlsplit(target).netloc == urlsplit(base).netloc and not urlsplit(target).path.startswith(ACTIONS):
            out.append(target)
    return out


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_sandbox()  # the demos reproduce and verify in the real sandbox
    folder = tmp_path_factory.mktemp("after-make-demo")
    done = _signoff(folder, "demo", "--json")  # every demo, as `make demo` runs them
    assert done.exit_code == 0, f"signoff demo failed: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return folder


@pytest.fixture(scope="module")
def visitor(demo_folder: Path) -> Iterator[tuple[str, httpx.Client]]:
    server = Process(signoff("serve", "--demo", "--port", "0"), _env(), cwd=demo_folder)
    try:
        found = server.printed(LINK)  # the base URL and the sign-in secret of the link printed at start
        base, secret = found.group(1), found.group(2)
        client, signed = _redeem(base, secret)
        assert signed.status_code == 303, signed.text
        try:
            yield base, client
        finally:
            client.close()
    finally:
        server.stop()


@pytest.mark.slow
def test_every_link_from_the_menu_and_every_page_reached_answers(visitor: tuple[str, httpx.Client]) -> None:
    base, client = visitor
    start = f"{base}/"
    seen = {start}
    queue = deque([(start, "the start")])
    broken: list[str] = []
    while queue and len(seen) <= MAX_PAGES:
        url, source = queue.popleft()
        answer = client.get(url, headers={"Accept": "text/html"})
        if answer.status_code >= 400:
            broken.append(f"{answer.status_code} {urlsplit(url).path} (linked from {source})")
            continue
        if "text/html" not in answer.headers.get("content-type", ""):
            continue  # a download (evidence, a recording): it answered, and has no links
        for target in links(base, url, answer.text):
            if target not in seen:
                seen.add(target)
                queue.append((target, urlsplit(url).path))
    assert not queue, f"more than {MAX_PAGES} pages: the crawl did not finish"
    paths = {urlsplit(u).path for u in seen}
    # The crawl reached each kind of page the demo fills, and the evidence files behind them.
    for expected in ("/crew", "/incident", "/evidence", "/ledger"):
        assert expected in paths
    assert any(re.match(r"^/bugs/[^/]+/evidence/.+", p) for p in paths)
    assert any(re.match(r"^/incident/runs/run-[^/]+", p) for p in paths)
    assert not broken, "\n".join(broken)


@pytest.mark.slow
def test_an_unknown_address_is_a_page_for_a_browser_and_json_for_a_client(
        visitor: tuple[str, httpx.Client]) -> None:
    _, client = visitor
    page = client.get("/no/such/page", headers={"Accept": "text/html,application/xhtml+xml"})
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "Not found" in page.text and "there is no page at this address" in page.text
    assert page.headers["X-Frame-Options"] == "DENY" and "default-src 'none'" in page.headers[
        "Content-Security-Policy"]
    api = client.get("/no/such/page", headers={"Accept": "application/json"})
    assert api.status_code == 404 and api.json() == {"detail": "Not Found"}


@pytest.mark.slow
def test_a_bugs_evidence_link_serves_that_bugs_files_only(visitor: tuple[str, httpx.Client]) -> None:
    _, client = visitor
    pages = {bug: client.get(f"/bugs/{bug}").text for bug in ("BUG-0001", "BUG-0002")}
    own = {bug: set(re.findall(rf'href="/bugs/{bug}/evidence/([^"]+)"', html)) for bug, html in pages.items()}
    assert own["BUG-0001"] and own["BUG-0002"]
    for name in own["BUG-0001"]:
        download = client.get(f"/bugs/BUG-0001/evidence/{name}")
        assert download.status_code == 200 and download.json()["payloadType"]
    # An attacker names another bug's file, a file outside the evidence folder, or a way out of it.
    others = own["BUG-0002"] - own["BUG-0001"]
    for probe in [*(f"/bugs/BUG-0001/evidence/{n}" for n in others), "/bugs/BUG-0001/evidence/..%2F..%2Fsignoff.db",
                  "/bugs/BUG-0001/evidence/%2Fetc%2Fpasswd", "/bugs/BUG-0001/evidence/..%2Fkeys%2Fx.intoto.json"]:
        refused = client.get(probe, headers={"Accept": "text/html"})
        assert refused.status_code == 404 and "payloadType" not in refused.text, probe
