"""Signing in and out in a real browser, and the attacks on it: forged forms, script reading the
session cookie, markup in names, guessing passwords, replaying a one-time link."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from signoff.kernel.tls import tls_context
from tests.support.web import HTTP_WAIT
from tests.system.browser.conftest import PASSWORD, Site, axe_violations, click, make_site, overflow, submit_with_enter


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    s = make_site(tmp_path_factory)
    s.add_user("alice", "Alice")
    s.add_user("mallory", '<img src=x id=pwned onerror="document.title=1">')
    s.start()
    try:
        yield s
    finally:
        s.stop()


@pytest.mark.slow
def test_sign_in_and_out_with_a_password(site: Site, tabs: Any) -> None:
    tab = tabs(site)
    page = tab.page
    page.goto("/")
    assert page.url.endswith("/signin"), "the start page is for signed-in people"
    tab.screenshot("signin")
    assert axe_violations(page) == []
    tab.sign_in("alice")
    page.get_by_role("heading", name="Waiting for me").wait_for()
    assert page.locator(".who").inner_text() == "Signed in as Alice (alice)"
    assert page.locator("#count-cards").inner_text() == "0"
    assert axe_violations(page) == []
    click(page.get_by_role("button", name="Sign out"))
    page.get_by_role("heading", name="Sign in").wait_for()
    page.goto("/")
    assert page.url.endswith("/signin"), "after signing out the session no longer works"


def test_the_keyboard_alone_signs_in(site: Site, tabs: Any) -> None:
    tab = tabs(site)
    page = tab.page
    page.goto("/signin")
    page.keyboard.press("Tab")  # the skip link
    page.keyboard.press("Enter")  # to the content, past the navigation
    page.keyboard.press("Tab")
    page.keyboard.type("alice")
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    submit_with_enter(page)
    page.get_by_role("heading", name="Waiting for me").wait_for()


def test_a_wrong_password_is_refused_and_says_what_to_do(site: Site, tabs: Any) -> None:
    tab = tabs(site)
    tab.expect_refusal(401)
    tab.sign_in("alice", "not the password at all")
    alert = tab.page.get_by_role("alert")
    assert "the name or password is not right" in alert.inner_text()
    assert "What to do:" in alert.inner_text()
    assert tab.page.url.endswith("/signin")
    assert axe_violations(tab.page) == []
    tab.page.goto("/")
    assert tab.page.url.endswith("/signin")


def test_the_session_cookie_is_out_of_reach_of_scripts(site: Site, tabs: Any) -> None:
    tab = tabs(site)
    tab.sign_in("alice")
    tab.page.get_by_role("heading", name="Waiting for me").wait_for()
    cookies = {c["name"]: c for c in tab.context.cookies()}
    session = cookies["signoff_session"]
    assert session["httpOnly"] and session["sameSite"] == "Strict"
    assert session["expires"] > 0, "a session cookie expires"
    assert cookies["signoff_browser"]["httpOnly"]
    assert "signoff_session" not in tab.page.evaluate("document.cookie")
    assert "signoff_browser" not in tab.page.evaluate("document.cookie")


def test_markup_in_a_display_name_is_shown_as_text(site: Site, tabs: Any) -> None:
    tab = tabs(site)
    tab.sign_in("mallory")
    tab.page.get_by_role("heading", name="Waiting for me").wait_for()
    assert tab.page.locator(".who strong").inner_text() == '<img src=x id=pwned onerror="document.title=1">'
    assert tab.page.locator("#pwned").count() == 0
    assert tab.page.title() != "1"


def test_pages_fit_a_small_screen(site: Site, tabs: Any) -> None:
    tab = tabs(site, width=375)
    for path in ("/signin", "/signin/link"):
        tab.page.goto(path)
        assert overflow(tab.page) == 0, path
    tab.sign_in("mallory")
    tab.page.get_by_role("heading", name="Waiting for me").wait_for()
    assert overflow(tab.page) == 0


def test_every_page_sends_the_security_headers(site: Site) -> None:
    for path in ("/signin", "/signin/link", "/", "/static/site.css", "/static/signin-link.js"):
        r = httpx.get(site.url + path, verify=tls_context(), timeout=HTTP_WAIT)
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["x-content-type-options"] == "nosniff"
    page = httpx.get(site.url + "/signin", verify=tls_context(), timeout=HTTP_WAIT).text
    assert "<script>" not in page and " on" + "click=" not in page


def test_forms_without_a_csrf_token_are_refused(site: Site) -> None:
    with httpx.Client(base_url=site.url, verify=tls_context(), timeout=HTTP_WAIT) as victim:
        token = site.csrf(victim)
        signed = victim.post("/signin", data={"csrf": token, "name": "alice", "password": PASSWORD})
        assert signed.status_code == 303
        assert victim.get("/").status_code == 200
        # A forged sign-out (no token, a made-up token, another browser's token) changes nothing.
        with httpx.Client(base_url=site.url, verify=tls_context(), timeout=HTTP_WAIT) as attacker:
            foreign = site.csrf(attacker)
        for data in ({}, {"csrf": "0" * 64}, {"csrf": foreign}):
            refused = victim.post("/signout", data=data)
            assert refused.status_code == 403, data
            assert "no valid CSRF token" in refused.text
        assert victim.get("/").status_code == 200, "the session survived every forged sign-out"
        # Sign-in itself needs the token (no login CSRF).
        with httpx.Client(base_url=site.url, verify=tls_context(), timeout=HTTP_WAIT) as fresh:
            fresh.get("/signin")
            assert fresh.post("/signin", data={"name": "alice", "password": PASSWORD}).status_code == 403


def test_a_one_time_link_signs_in_once(site: Site, tabs: Any) -> None:
    link = site.cli_json("rooms", "user", "link", "alice", "--url", site.url)["link"]
    assert "#sol_" in link, "the secret travels in the fragment"
    tab = tabs(site)
    tab.page.goto(link)
    assert tab.page.url == site.url + "/signin/link", "the script drops the code from the address bar"
    assert axe_violations(tab.page) == []
    click(tab.page.get_by_role("button", name="Sign in"))
    tab.page.get_by_role("heading", name="Waiting for me").wait_for()
    assert tab.page.locator(".who").inner_text() == "Signed in as Alice (alice)"

    again = tabs(site)
    again.expect_refusal(403)
    again.page.goto(link)
    click(again.page.get_by_role("button", name="Sign in"))
    assert "this sign-in link is not valid" in again.page.get_by_role("alert").inner_text()
    again.page.goto("/")
    assert again.page.url.endswith("/signin")


@pytest.fixture(scope="module")
def strict_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    s = make_site(tmp_path_factory, "[web]\nsignin_attempts = 3\n")
    s.add_user("carol")
    s.start()
    try:
        yield s
    finally:
        s.stop()


@pytest.mark.slow
def test_guessing_passwords_is_stopped(strict_site: Site) -> None:
    with httpx.Client(base_url=strict_site.url, verify=tls_context(), timeout=HTTP_WAIT) as guesser:
        token = strict_site.csrf(guesser)
        for i in range(3):
            r = guesser.post("/signin", data={"csrf": token, "name": "carol", "password": f"guess number {i}"})
            assert r.status_code == 401
        # Now even the right password is not tried: the throttle answers first.
        r = guesser.post("/signin", data={"csrf": token, "name": "carol", "password": PASSWORD})
        assert r.status_code == 429
        assert "too many failed sign-ins" in r.text
        assert guesser.get("/", follow_redirects=False).status_code == 303
