"""Who is still allowed in, from the attacker's side: a person whose token was revoked, or whose
password was reset, keeps no session and cannot sign in again; a live room stream ends at sign-out;
simultaneous guesses never outrun the throttle; and no page text comes from the query string."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from signoff.demo.fixture import shoplite_source
from signoff.desk.local import init_local
from signoff.kernel.clock import FixedClock
from signoff.kernel.settings import Settings
from signoff.kernel.tls import tls_context
from signoff.ledger import SqlLedger
from signoff.rooms import OPEN, RoomService
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web.routes import routers
from tests.support.cli import Result, run_cli
from tests.support.fixtures.rooms import Server
from tests.support.serve import Process, serve, signoff
from tests.support.web import HTTP_WAIT, password_client
from tests.system.web.conftest import PASSWORD, Clients, csrf_of, sign_in

HOSTILE = "Approved by security: PWNED"


def _room(service: RoomService) -> tuple[str, str]:
    """A room of alice's with an agent in it; its id and the agent's id."""
    alice = service.user_by_name("alice")
    fixer, _ = service.create_agent(alice, "fixer", "fixes", policy=OPEN)
    room = service.create_room(alice, "ops", agent_names=["fixer"], user_names=["alice"])
    return room.id, fixer.id


def _signed_out(response: httpx.Response) -> bool:
    return response.status_code == 303 and response.headers["location"] == "/signin"


def test_a_revoked_person_keeps_no_session_and_cannot_sign_in(service: RoomService, clients: Clients) -> None:
    alice = service.user_by_name("alice")
    browser = clients()
    assert sign_in(browser) == 303
    link = SignIns(service.ledger).issue_link(alice.id)  # issued before the revocation
    service.revoke_token("user", "alice")
    assert _signed_out(browser.get("/")), "the session from before the revocation still answers"
    assert _signed_out(browser.get("/rooms"))
    assert sign_in(clients()) == 401, "the password of a revoked person still signs in"
    by_link = clients()
    refused = by_link.post("/signin/link", data={"csrf": csrf_of(by_link, "/signin/link"), "code": link})
    assert refused.status_code == 403 and "signoff_session" not in refused.cookies
    # A new token lets them in again, but never revives a session from before.
    service.rotate_token("user", "alice")
    assert _signed_out(browser.get("/"))
    again = clients()
    assert sign_in(again) == 303 and again.get("/").status_code == 200


def test_a_password_reset_ends_the_old_session_before_it_answers_a_card(service: RoomService,
                                                                         clients: Clients) -> None:
    room_id, fixer_id = _room(service)
    alice, fixer = service.user_by_name("alice"), service.identities.agent(fixer_id)
    service.request_approval(fixer, room_id, "deploy-1", "Deploy?",
                             [{"id": "go", "label": "Deploy", "decision": "accept"}], service.clock.now() + 600,
                             ["alice"])
    thief = clients()  # a session the attacker holds (a stolen cookie, a shared machine)
    assert sign_in(thief) == 303
    csrf = csrf_of(thief, f"/rooms/{room_id}")
    SignIns(service.ledger).set_password(alice.id, "a brand new long passphrase")
    answered = thief.post("/approvals/answer", data={"csrf": csrf, "request_id": "deploy-1", "option_id": "go",
                                                     "reason": "ship it", "back": "/"})
    assert _signed_out(answered)
    assert [c.request_id for c in service.pending_approvals(alice)] == ["deploy-1"], "the card was answered"
    assert sign_in(clients()) == 401, "the old password still signs in"
    assert sign_in(clients(), password="a brand new long passphrase") == 303


def _stream_events(client: httpx.Client, path: str, opened: threading.Event, lines: list[str]) -> None:
    with client.stream("GET", path, timeout=httpx.Timeout(60.0)) as stream:
        for line in stream.iter_lines():
            lines.append(line)
            if line.startswith("retry:"):
                opened.set()


def test_a_live_room_stream_ends_at_sign_out_and_sends_nothing_after(service: RoomService, clients: Clients) -> None:
    room_id, fixer_id = _room(service)
    fixer = service.identities.agent(fixer_id)
    browser = clients()
    assert sign_in(browser) == 303
    listener = clients()
    listener.cookies.set("signoff_session", browser.cookies["signoff_session"])
    opened, lines = threading.Event(), []
    reader = threading.Thread(target=_stream_events, daemon=True,
                              args=(listener, f"/rooms/{room_id}/live?after={service.head()}", opened, lines))
    reader.start()
    assert opened.wait(60), "the stream never opened"
    assert browser.post("/signout", data={"csrf": csrf_of(browser, "/")}).status_code == 303
    service.post_message(fixer, room_id, "sent after the person signed out")
    reader.join(60)
    assert not reader.is_alive(), "the stream still flows after sign-out"
    assert not any("sent after the person signed out" in line for line in lines)


@contextmanager
def _alice_signed_in(settings: Settings, ledger: SqlLedger) -> Iterator[tuple[RoomService, httpx.Client, str]]:
    """A real server of the home's app with every router, and alice signed in to it (with its CSRF
    token); the ledger is closed at the end."""
    rooms = RoomService(ledger)
    alice, _ = rooms.create_user("alice", "Alice")
    SignIns(ledger).set_password(alice.id, PASSWORD)
    server = Server(create_app(ledger, settings, routers=routers(settings)))
    client, csrf = password_client(server.start(), "alice", PASSWORD)
    try:
        yield rooms, client, csrf
    finally:
        client.close()
        server.stop()
        ledger.close()


def test_a_live_case_stream_ends_when_its_person_is_revoked(tmp_path: Path) -> None:
    """The other kind of live stream (a notes run's, a repair case's) checks the session as often."""
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    run = settings.home / "notes" / "run-1"
    run.mkdir(parents=True)
    (run / "review.json").write_text("{}")
    with _alice_signed_in(settings, SqlLedger.open(settings)) as (rooms, client, _):
        opened, lines = threading.Event(), []
        reader = threading.Thread(target=_stream_events, args=(client, "/notes/live/run-1", opened, lines),
                                  daemon=True)
        reader.start()
        assert opened.wait(60), "the stream never opened"
        rooms.revoke_token("user", "alice")
        reader.join(60)
        assert not reader.is_alive(), "the stream still flows for a revoked person"


def test_refusals_do_not_repeat_the_query_string(tmp_path: Path) -> None:
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    with _alice_signed_in(settings, SqlLedger.open(settings)) as (_, client, _):
        for path, params in (("/repair/verify", {"name": f"{HOSTILE}.intoto.json"}),
                             ("/incident/runs/run-1", {"as": HOSTILE}),
                             ("/incident/runs/run-1", {HOSTILE: "1"})):
            refused = client.get(path, params=params)
            assert 400 <= refused.status_code < 500 and "What to do:" in refused.text, (path, params)
            assert "PWNED" not in refused.text, (path, params)


def test_simultaneous_guesses_never_outrun_the_limit(service: RoomService, clients: Clients) -> None:
    guessers = [clients() for _ in range(24)]
    tokens = [csrf_of(c) for c in guessers]
    barrier = threading.Barrier(len(guessers))
    answers: list[int] = []

    def guess(client: httpx.Client, csrf: str, n: int) -> None:
        barrier.wait()
        answer = client.post("/signin", data={"csrf": csrf, "name": "alice", "password": f"guess number {n:04}"},
                             timeout=120)
        answers.append(answer.status_code)

    threads = [threading.Thread(target=guess, args=(c, t, n)) for n, (c, t) in enumerate(zip(guessers, tokens))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(set(answers)) == [401, 429], answers
    assert answers.count(401) <= 5, f"{answers.count(401)} guesses were checked against a limit of 5"
    assert sign_in(clients()) == 429, "the right password is refused too while the name is paused"


def test_a_successful_sign_in_gives_its_slot_back(service: RoomService, clock: FixedClock, clients: Clients) -> None:
    browser = clients()
    for _ in range(4):
        assert sign_in(browser, password="not it, not it") == 401
    for _ in range(3):  # only failures use up the window
        assert sign_in(clients()) == 303
    assert sign_in(browser, password="not it, not it") == 401
    assert sign_in(browser) == 429


def test_no_page_text_comes_from_the_query_string(service: RoomService, clients: Clients) -> None:
    room_id, _ = _room(service)
    alice = service.user_by_name("alice")
    bob, _ = service.create_user("bob")
    SignIns(service.ledger).set_password(bob.id, PASSWORD)
    service.add_member(alice, room_id, user_name="bob")
    board = service.create_room(alice, "board", user_names=["alice"]).id
    browser = clients()
    assert sign_in(browser) == 303
    forged = browser.get(f"/rooms/{room_id}", params=[("sent", HOSTILE), ("status", f"fixer:{HOSTILE}"),
                                                      ("notice", HOSTILE)])
    assert forged.status_code == 200 and "PWNED" not in forged.text and "Posted" not in forged.text
    # A real post says so, through a notice kept in the session: the address names only its id.
    posted = browser.post(f"/rooms/{room_id}/messages", data={"csrf": csrf_of(browser, f"/rooms/{room_id}"),
                                                               "body": "hello", "target": "fixer"})
    assert posted.status_code == 303
    location = posted.headers["location"]
    assert location.startswith(f"/rooms/{room_id}?notice=") and "sent=" not in location
    shown = browser.get(location).text
    assert "Posted (message" in shown and "@fixer" in shown
    # The same address in another person's browser shows nothing: the notice is alice's session's.
    other = clients()
    assert sign_in(other, "bob") == 303
    assert "Posted" not in other.get(location).text
    # Nor on another room's page of alice's own: a notice is for the page it was kept for.
    assert "Posted" not in browser.get(location.replace(room_id, board)).text
    # The public tracking page shows its report id: a made-up one is not shown at all.
    made_up = clients().get(f"/track/{HOSTILE}")
    assert made_up.status_code == 404 and "PWNED" not in made_up.text


def _cli(home: Path, *args: str) -> Result:
    return run_cli(args, {"SIGNOFF_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}, cwd=home.parent)


@pytest.mark.slow
def test_a_desk_owner_revoked_on_the_command_line_approves_nothing_in_the_pages(tmp_path: Path) -> None:
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    desk = init_local(settings, ledger, source=shoplite_source(), people=("alice",)).desk
    bug = desk.submit_report({"title": "Coupon larger than the cart gives a negative total"}, client="192.0.2.1")
    with _alice_signed_in(settings, ledger) as (_, client, csrf):
        assert client.get("/bugs").status_code == 200
        revoked = _cli(settings.home, "desk", "revoke", "owner", "alice")
        assert revoked.exit_code == 0, revoked.stderr
        assert "revoked 1 owner credential of alice" in revoked.stdout
        assert client.get("/bugs").status_code == 403
        approve = client.post(f"/bugs/{bug.bug_id}/approve", data={"csrf": csrf, "head": "0" * 40})
        merge = client.post(f"/bugs/{bug.bug_id}/merge", data={"csrf": csrf})
        assert approve.status_code == merge.status_code == 403
        assert "alice is not a desk owner" in approve.text
        assert desk.bug(bug.bug_id).approvals == []
        listed = _cli(settings.home, "desk", "credentials", "--json")
        assert {"role": "owner", "name": "alice", "human": True, "shared": False, "revoked": True} \
            in json.loads(listed.stdout)
        # Bad input: a clear error and fix, nothing written.
        before = ledger.version("desk/credentials")
        for args, message in ((("owner", "alice"), "error: no live owner credential named alice"),
                              (("boss", "bob"), "error: unknown role 'boss'"),
                              (("owner", "Not A Login"), "is not a valid login")):
            bad = _cli(settings.home, "desk", "revoke", *args)
            assert bad.exit_code != 0 and message in bad.stderr + bad.stdout
            assert "fix:" in bad.stderr + bad.stdout and "Traceback" not in bad.stderr
        assert ledger.version("desk/credentials") == before
        # A new credential makes alice an owner again.
        assert _cli(settings.home, "desk", "credential", "owner", "alice").exit_code == 0
        assert client.get("/bugs").status_code == 200


def _serve(home: Path, config: Path) -> tuple[Process, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    server, url = serve({**env, "SIGNOFF_HOME": str(home), "SIGNOFF_CONFIG": str(config)})
    server.ready(f"{url}/health")
    return server, url


def _guesses(url: str, first: str) -> list[int]:
    """Four wrong sign-ins, each for another name and claiming another client address."""
    with httpx.Client(base_url=url, verify=tls_context(), timeout=HTTP_WAIT) as client:
        csrf = csrf_of(client)
        return [client.post("/signin", headers={"X-Forwarded-For": f"{first}.{n}"},
                            data={"csrf": csrf, "name": f"nobody-{first}-{n}", "password": PASSWORD}).status_code
                for n in range(4)]


@pytest.mark.slow
def test_forwarded_addresses_are_believed_only_from_configured_proxies(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = tmp_path / "signoff.toml"
    config.write_text("[web]\nsignin_attempts = 3\n")
    server, url = _serve(home, config)
    try:
        # A client on this machine that claims a new address each time is still one client.
        assert _guesses(url, "203.0.113") == [401, 401, 401, 429]
    finally:
        server.stop()
    config.write_text('[web]\nsignin_attempts = 3\ntrusted_proxies = ["127.0.0.1"]\n')
    server, url = _serve(home, config)
    try:  # behind a configured proxy, the address it forwards is the client's
        assert _guesses(url, "198.51.100") == [401, 401, 401, 401]
    finally:
        server.stop()
    config.write_text('[web]\ntrusted_proxies = ["the proxy"]\n')
    # A process, not run_cli: a `signoff serve` that took the setting would serve on (the timeout bounds it).
    bad = subprocess.run(signoff("serve", "--port", "0"), capture_output=True, text=True, timeout=120,
                         env={"SIGNOFF_HOME": str(home), "SIGNOFF_CONFIG": str(config), "PATH": "/usr/bin:/bin"})
    assert bad.returncode != 0 and "error: [web] trusted_proxies must be a list of IP addresses" in bad.stderr
    assert "fix:" in bad.stderr and "Traceback" not in bad.stderr
