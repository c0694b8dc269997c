"""Sessions, one-time links and the sign-in throttle in-process, on a clock the test moves."""

from __future__ import annotations

import threading
from pathlib import Path

import argon2
import pytest

from signoff.kernel.clock import FixedClock
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.domain import signin
from signoff.rooms.domain.signin import SignIns
from tests.support.cli import Result, run_cli
from tests.system.web.conftest import PASSWORD, Clients, csrf_of, sign_in


def test_a_session_expires(service: RoomService, clock: FixedClock, clients: Clients) -> None:
    client = clients()
    assert sign_in(client) == 303
    assert client.get("/").status_code == 200
    clock.advance(11.9 * 3600)
    assert client.get("/").status_code == 200
    clock.advance(0.2 * 3600)
    r = client.get("/")
    assert r.status_code == 303 and r.headers["location"] == "/signin"


def test_sign_out_ends_the_session_even_for_a_copied_cookie(service: RoomService, clients: Clients) -> None:
    client = clients()
    assert sign_in(client) == 303
    stolen = client.cookies["signoff_session"]
    csrf = csrf_of(client, "/")
    assert client.post("/signout", data={"csrf": csrf}).status_code == 303
    thief = clients()
    thief.cookies.set("signoff_session", stolen)
    assert thief.get("/").status_code == 303


def test_an_unknown_user_and_a_wrong_password_get_the_same_answer(service: RoomService, clients: Clients) -> None:
    client = clients()
    csrf = csrf_of(client)
    nobody = client.post("/signin", data={"csrf": csrf, "name": "nobody", "password": PASSWORD})
    wrong = client.post("/signin", data={"csrf": csrf, "name": "alice", "password": "wrong password here"})
    assert nobody.status_code == wrong.status_code == 401
    assert nobody.text.replace("nobody", "alice") == wrong.text


def test_a_sign_in_for_an_unknown_name_hashes_nothing_then(clients: Clients, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hash verified against for a name without a password is made when the pages start (not at
    import, which cost every process half a second), so no sign-in pays for making it: one that did
    would take longer, and tell that the name has no password."""
    signin._dummy_hash.cache_clear()  # as in a process that has not served a page yet
    client = clients()
    csrf = csrf_of(client)
    made: list[str] = []
    original = argon2.PasswordHasher.hash

    def counting(self: argon2.PasswordHasher, password: str | bytes, **kwargs: object) -> str:
        made.append("hash")
        return original(self, password, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(argon2.PasswordHasher, "hash", counting)
    assert client.post("/signin", data={"csrf": csrf, "name": "nobody", "password": PASSWORD}).status_code == 401
    assert made == []


def test_a_user_without_a_password_cannot_sign_in_with_any(service: RoomService, clients: Clients) -> None:
    service.create_user("bob")
    client = clients()
    for guess in ("", "no password is set for this user", PASSWORD):
        assert sign_in(client, "bob", guess) == 401


def test_the_throttle_forgives_after_its_window(service: RoomService, clock: FixedClock, clients: Clients) -> None:
    client = clients()
    for _ in range(5):
        assert sign_in(client, password="not it, not it") == 401
    assert sign_in(client) == 429
    clock.advance(15 * 60 + 1)
    assert sign_in(client) == 303


def test_a_link_expires_and_is_spent_once_under_a_race(service: RoomService, clock: FixedClock) -> None:
    signins = SignIns(service.ledger)
    alice = service.user_by_name("alice")
    late = signins.issue_link(alice.id, seconds=60)
    clock.advance(61)
    with pytest.raises(Exception, match="not valid"):
        signins.redeem_link(late)

    token = signins.issue_link(alice.id)
    won: list[str] = []
    lost: list[str] = []
    barrier = threading.Barrier(4)

    def redeem() -> None:
        barrier.wait()
        try:
            won.append(signins.redeem_link(token))
        except Exception as exc:  # the refusal
            lost.append(str(exc))

    threads = [threading.Thread(target=redeem) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert won == [alice.id] and len(lost) == 3
    assert all("not valid" in m for m in lost)


def test_passwords_are_stored_as_argon2id_only(service: RoomService) -> None:
    alice = service.user_by_name("alice")
    stored = [e.payload for e in service.ledger.read(f"signin.password.{alice.id}")]
    assert stored and stored[-1]["hash"].startswith("$argon2id$")
    assert all(PASSWORD not in str(p) for p in stored)


def _cli(home: Path, *args: str, stdin: str = "") -> Result:
    return run_cli(args, {"SIGNOFF_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}, cwd=home.parent,
                   input=stdin)


@pytest.mark.slow
def test_cli_passwords_and_links(tmp_path: Path) -> None:
    home = tmp_path / ".signoff"
    short = _cli(home, "rooms", "user", "add", "dave", "--password", stdin="short\n")
    assert short.exit_code != 0
    assert "error: a password is 10 to 1024 characters" in short.stderr + short.stdout
    listed = _cli(home, "rooms", "user", "list", "--json")
    assert "dave" not in listed.stdout, "a refused password creates no user"
    assert _cli(home, "rooms", "user", "add", "dave", "--password", stdin=PASSWORD + "\n").exit_code == 0
    assert _cli(home, "rooms", "user", "password", "dave", stdin="another long passphrase\n").exit_code == 0
    ledger = SqlLedger.from_url(f"sqlite:///{home / 'signoff.db'}")
    dave = RoomService(ledger).user_by_name("dave")
    assert SignIns(ledger).check_password(dave.id, "another long passphrase")
    assert not SignIns(ledger).check_password(dave.id, PASSWORD)
    ledger.close()
    bad = _cli(home, "rooms", "user", "link", "dave", "--url", "javascript:alert(1)")
    assert bad.exit_code != 0 and "is not an http(s) address" in bad.stderr + bad.stdout
    link = _cli(home, "rooms", "user", "link", "dave", "--url", "https://signoff.example.org/")
    assert "https://signoff.example.org/signin/link#sol_" in link.stdout


def test_cookies_are_secure_behind_https(service: RoomService, clients: Clients) -> None:
    # A proxy on this machine that terminated TLS says so (uvicorn trusts it from loopback).
    client = clients()
    https = {"X-Forwarded-Proto": "https"}
    page = client.get("/signin", headers=https)
    assert "secure" in page.headers["set-cookie"].lower()
    csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    client.cookies.set("signoff_browser", page.cookies["signoff_browser"])
    signed = client.post("/signin", headers=https, data={"csrf": csrf, "name": "alice", "password": PASSWORD})
    assert signed.status_code == 303
    cookie = signed.headers["set-cookie"].lower()
    assert "signoff_session=" in cookie and "secure" in cookie and "httponly" in cookie
    assert "samesite=strict" in cookie
    # Over plain HTTP the cookie is not marked Secure (the browser would drop it).
    plain = clients().get("/signin")
    assert "secure" not in plain.headers["set-cookie"].lower()
