"""Browser tests: Playwright drives Debian's Chromium against a real `signoff serve` process.

Each module gets its own server on a fresh home (`Site`); each test gets a fresh browser context
(no cookies), and its page fails the test on any console error or uncaught script error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.requires import require
from tests.support.serve import Process, serve
from tests.support.web import csrf_of, password_client

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
PASSWORD = "correct horse battery staple"


def _playwright_importable() -> bool:
    try:
        import axe_playwright_python  # noqa: F401
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


class Site:
    """A signoff home with a running `signoff serve`; `cli` runs more commands against the same home."""

    def __init__(self, root: Path, config: str = "") -> None:
        self.root = root
        self.home = root / ".signoff"
        self.env = {**os.environ, "SIGNOFF_HOME": str(self.home), "SIGNOFF_CONFIG": str(root / "signoff.toml")}
        self.env.pop("SIGNOFF_DB", None)
        (root / "signoff.toml").write_text(config)
        self.url = ""  # the server's, as it printed it, once started (a restart may pick another port)
        self.process: Process | None = None

    def cli(self, *args: str, stdin: str | None = None, ok: bool = True) -> subprocess.CompletedProcess[str]:
        # A process, not run_cli: Playwright's loop runs in this thread (see `browser`), and commands
        # such as `repair run` and `incident demo` call asyncio.run().
        done = subprocess.run([sys.executable, "-m", "signoff.cli.main", *args], cwd=self.root, env=self.env,
                              input=stdin or "", capture_output=True, text=True, timeout=120)
        if ok and done.returncode != 0:
            raise AssertionError(f"signoff {' '.join(args)} failed: {done.stdout}{done.stderr}")
        return done

    def cli_json(self, *args: str, stdin: str | None = None) -> Any:
        return json.loads(self.cli(*args, "--json", stdin=stdin).stdout)

    def add_user(self, name: str, display_name: str | None = None, admin: bool = False) -> dict[str, Any]:
        extra = ["--display-name", display_name] if display_name else []
        extra += ["--admin"] if admin else []
        created: dict[str, Any] = self.cli_json("rooms", "user", "add", name, "--password", *extra,
                                                stdin=PASSWORD + "\n")
        return created

    def csrf(self, client: httpx.Client, path: str = "/signin") -> str:
        """The CSRF token a page gives this client (a browser without a script: its own cookie jar)."""
        return csrf_of(client, path)

    def signed_in(self, name: str) -> tuple[httpx.Client, str]:
        """A plain HTTP client signed in as `name`, and its CSRF token; the caller closes it."""
        return password_client(self.url, name, PASSWORD)

    def start(self) -> None:
        self.process, self.url = serve(self.env, cwd=self.root, log=self.root / "serve.log")
        self.process.ready(f"{self.url}/health")

    def stop(self) -> None:
        if self.process is not None and self.process.proc.poll() is None:
            self.process.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # Module scope, not session: while Playwright's sync API is open it keeps an asyncio loop
    # running in this thread, and every later test that calls asyncio.run() in the same worker
    # would fail ("cannot be called from a running event loop").
    require("chromium", os.path.exists(CHROMIUM), "apt-get install -y chromium")
    require("playwright", _playwright_importable, "pip install -e '.[dev]' (playwright, axe-playwright-python)")
    from playwright.sync_api import sync_playwright

    # Chromium keeps its singleton socket under $TMPDIR; a long TMPDIR (as CI sets) overflows a Unix
    # socket's 108-byte path, so the browser gets a short temporary folder of its own.
    short = tempfile.mkdtemp(prefix="signoff-chromium-", dir="/tmp")
    try:
        with sync_playwright() as p:
            launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                         env={**os.environ, "TMPDIR": short})
            yield launched
            launched.close()
    finally:
        shutil.rmtree(short, ignore_errors=True)


def make_site(tmp_path_factory: pytest.TempPathFactory, config: str = "") -> Site:
    site = Site(tmp_path_factory.mktemp("site"), config)
    site.cli("rooms", "init")
    return site


class Tab:
    """A page in a fresh context, collecting console errors and uncaught script errors."""

    def __init__(self, browser: Any, site: Site, width: int = 1024, scripts: bool = True) -> None:
        self.site = site
        self.context = browser.new_context(viewport={"width": width, "height": 800}, base_url=site.url,
                                           java_script_enabled=scripts)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.refusals: set[int] = set()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def screenshot(self, name: str) -> None:
        """With SIGNOFF_SCREENSHOTS set to a folder (docs/screenshots for the docs), keep a picture
        of the page as it is now."""
        folder = os.environ.get("SIGNOFF_SCREENSHOTS")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(Path(folder) / f"{name}.png"))

    def expect_refusal(self, status: int) -> None:
        """The test means to be refused with `status`: Chromium logs a refused page load as a
        console error, which is then not a fault."""
        self.refusals.add(status)

    def unexpected_errors(self) -> list[str]:
        allowed = {f"Failed to load resource: the server responded with a status of {s} " for s in self.refusals}
        return [e for e in self.errors if not any(e.startswith(a) for a in allowed)]

    def sign_in(self, name: str, password: str = PASSWORD) -> None:
        self.page.goto("/signin")
        self.page.get_by_label("User name").fill(name)
        self.page.get_by_label("Password").fill(password)
        click(self.page.get_by_role("button", name="Sign in"))

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tabs(browser: Any) -> Iterator[Any]:
    """`tabs(site, width=..., scripts=...)` opens a fresh tab (`scripts=False`: a browser with
    JavaScript off); at the end, no tab may have logged an error."""
    opened: list[Tab] = []

    def open_tab(site: Site, width: int = 1024, scripts: bool = True) -> Tab:
        tab = Tab(browser, site, width, scripts)
        opened.append(tab)
        return tab

    yield open_tab
    errors = [e for t in opened for e in t.unexpected_errors()]
    for t in opened:
        t.close()
    assert not errors, f"console errors: {errors}"


def axe_violations(page: Any) -> list[str]:
    """Serious and critical axe-core violations on the page (axe-core ships in axe-playwright-python)."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']]}"
            for v in results.response["violations"] if v.get("impact") in ("serious", "critical")]


def overflow(page: Any) -> int:
    """How many CSS pixels the page is wider than its viewport (0: no horizontal scrolling).

    Measured once the page has loaded: right after a navigation the text is there before the
    style sheet is, and a page without its styles is as wide as its longest line."""
    page.wait_for_load_state("load")
    return int(page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))


def click(target: Any, **options: Any) -> None:
    """Click `target`, then wait until the page the click led to has loaded. Playwright's click
    returns once a navigation it started has committed, when the new document may still be half
    parsed: a count or a read straight after can see an empty page (CI met that). Without a
    navigation the page is already loaded and the wait returns at once. Every click in the browser
    tests goes through here (tests/unit/test_browser_tests_wait.py checks)."""
    target.click(**options)
    target.page.wait_for_load_state("load")


def submit_with_enter(page: Any) -> None:
    """Press Enter on the focused link or form control and wait for the page it leads to; a key
    press, unlike a click, does not wait for the navigation it starts."""
    with page.expect_navigation(wait_until="load"):
        page.keyboard.press("Enter")


def tab_to(page: Any, name: str, limit: int = 300) -> None:
    """Move the focus with the Tab key alone until it is on the control whose text is `name`."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement && document.activeElement.textContent.trim()") == name:
            return
    raise AssertionError(f"{name!r} cannot be reached with the Tab key")
