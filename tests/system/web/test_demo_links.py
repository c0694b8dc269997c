"""signoff as a user installs it, and every link of its demo: the wheel built from this checkout is
installed in a fresh environment outside it (tests/support/package.py); that installation runs
`signoff demo` and `signoff serve --demo`, and a crawler signs in with the printed link and follows
every same-origin link from the menu and from every page it reaches, breadth first: no answer is a
4xx or a 5xx. So the package carries its templates, static files, migrations, guard sources and
examples, and needs nothing from the source tree."""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
import zipfile
from collections import deque
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx
import pytest

from tests.support.package import Installed, install
from tests.support.requires import require_sandbox
from tests.support.serve import Process
from tests.system.web.test_serve_demo import LINK, _redeem

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


def _env() -> dict[str, str]:
    # As after installing: the default home (.signoff in the working folder), nothing configured, and
    # nothing of this checkout on the import path.
    return {k: v for k, v in os.environ.items() if not k.startswith(("SIGNOFF_", "PYTHON"))}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    return install(tmp_path_factory.mktemp("installed"))


@pytest.fixture(scope="module")
def demo_folder(installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_sandbox()  # the demos reproduce and verify in the real sandbox
    folder = tmp_path_factory.mktemp("after-make-demo")
    done = subprocess.run(installed.signoff("demo", "--json"), cwd=folder, env=_env(), capture_output=True,
                          text=True, timeout=900)  # every demo, as `make demo` runs them
    assert done.returncode == 0, f"signoff demo failed: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return folder


@pytest.fixture(scope="module")
def visitor(installed: Installed, demo_folder: Path) -> Iterator[tuple[str, httpx.Client]]:
    server = Process(installed.signoff("serve", "--demo", "--port", "0"), _env(), cwd=demo_folder)
    try:
        found = server.printed(LINK)
        client, signed = _redeem(found.group(1), found.group(2))
        assert signed.status_code == 303, signed.text
        try:
            yield found.group(1), client
        finally:
            client.close()
    finally:
        server.stop()


@pytest.mark.slow  # builds and installs the wheel
def test_the_installed_package_runs_from_its_own_files(installed: Installed, tmp_path: Path) -> None:
    probe = ("import signoff, signoff.demo.fixture as f, signoff.demo.payco_shopco.fixture as p;"
             "print(signoff.__file__); print(f.examples_root()); print(p.fixture_dir())")
    done = subprocess.run([str(installed.bin / "python"), "-c", probe], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    venv = installed.bin.parent.resolve()
    for line in done.stdout.splitlines():
        assert Path(line).resolve().is_relative_to(venv), line  # never the checkout's src/ or examples/


def test_the_wheel_and_sdist_carry_what_signoff_reads_at_run_time(installed: Installed) -> None:
    root = Path(__file__).resolve().parents[3]
    examples = subprocess.run(["git", "ls-files", "examples"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.split()
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
    data = next(n.split("/data/")[0] for n in names if ".data/data/" in n) + "/data/"
    missing = [f for f in examples if f"{data}share/signoff/{f}" not in names]
    assert not missing, f"examples the wheel does not carry (add them to pyproject's data-files): {missing}"
    for kind in ("signoff/web/templates/", "signoff/web/static/", "signoff/ledger/migrations/",
                 "signoff/repair/runner_files/", "signoff/airlock/intent_model.json"):
        assert any(n.startswith(kind) for n in names), kind
    with tarfile.open(installed.sdist) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "requirements/server.lock", *examples} <= members


@pytest.mark.slow
def test_every_link_from_the_menu_and_every_page_reached_answers(visitor: tuple[str, httpx.Client]) -> None:
    base, client = visitor
    # A page's first visit may set something up for seconds on a loaded machine ("try to break it"
    # builds its guards' workspace once): the crawl judges answers, not speed.
    client.timeout = httpx.Timeout(120.0)
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
