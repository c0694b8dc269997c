"""Notifications of new "Waiting for me" items leave the server by webhook and e-mail, where
`[notify]` configures them: against a real HTTP receiver and a real SMTP server on loopback. Each new
item is sent once (also across a restart of the notifier), the first look sends nothing (old news),
a failed webhook is sent again at the next look, and what leaves is what the start page shows.
The browser's own notifications (static/notify.js) read `/inbox/waiting`, checked here too."""

from __future__ import annotations

import fcntl
import json
import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web.notify import Notifier, NotifyConfig
from signoff.web.routes import routers
from tests.support.fixtures.rooms import World, make_world
from tests.support.mail import SmtpServer

PASSWORD = "a long enough passphrase"


class Receiver:
    """A webhook receiver on loopback: keeps each JSON body; answers `status`."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.status = 200
        self.on_post: Callable[[], None] = lambda: None  # runs while the sender waits for the answer
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                outer.on_post()
                if outer.status == 200:
                    outer.bodies.append(body)
                self.send_response(outer.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receivers() -> Iterator[tuple[Receiver, SmtpServer]]:
    hook = Receiver()
    try:
        with SmtpServer() as smtp:
            yield hook, smtp
    finally:
        hook.close()


def _home(tmp_path: Path, hook: Receiver, smtp: SmtpServer) -> tuple[Settings, SqlLedger, World]:
    (tmp_path / "signoff.toml").write_text(
        f'[notify]\nwebhook = "{hook.url}"\nsmtp_host = "127.0.0.1"\nsmtp_port = {smtp.port}\n'
        'smtp_from = "signoff@example.com"\nemails = { alice = "alice@example.com" }\n'
        'url = "https://signoff.example"\nevery_seconds = 3600\n')
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    return settings, ledger, make_world(RoomService(ledger))


def _ask(world: World, request_id: str, title: str) -> None:
    s = world.service
    s.request_approval(world.fixer, world.room_id, request_id, title,
                       [{"id": "go", "label": "Ship it", "decision": "accept"},
                        {"id": "no", "label": "Hold", "decision": "decline"}], s.clock.now() + 600, ["alice"])


def test_a_new_item_is_sent_once_by_webhook_and_email(tmp_path: Path, receivers: tuple[Receiver, SmtpServer]) -> None:
    hook, smtp = receivers
    settings, ledger, world = _home(tmp_path, hook, smtp)
    app = create_app(ledger, settings, routers=routers(settings))
    _ask(world, "old-1", "Deploy the old build?")
    notifier = Notifier(app, settings, NotifyConfig.load(settings))
    assert notifier.check_once() == []  # the first look: what waits already is not news
    _ask(world, "deploy-2", "Deploy to production?")
    sent = notifier.check_once()
    assert sorted((s.user, s.channel, s.items) for s in sent) == [("alice", "email", 1), ("alice", "webhook", 1)]
    [body] = hook.bodies
    assert body["user"] == "alice"
    [item] = body["waiting"]
    assert (item["kind"], item["title"]) == ("approval card", "Deploy to production?")
    # The link names the card itself, not its place in a list that changes as cards come and go.
    deploy = next(c for c in world.service.pending_approvals(world.alice) if c.request_id == "deploy-2")
    assert item["link"] == f"https://signoff.example/#card-{deploy.card_id}"
    [(sender, recipients, message)] = smtp.messages
    assert "signoff@example.com" in sender
    assert recipients == ["alice@example.com"] and message["From"] == "signoff@example.com"
    assert message["Subject"] == "signoff: 1 new thing waiting for you"
    assert "Deploy to production?" in message.get_content() and item["link"] in message.get_content()
    # Sent once: the next look, and a new notifier on the same home (a restart), send nothing more.
    assert notifier.check_once() == []
    assert Notifier(app, settings, NotifyConfig.load(settings)).check_once() == []
    assert len(hook.bodies) == 1 and len(smtp.messages) == 1
    ledger.close()


def test_two_servers_on_one_home_take_turns_so_an_item_is_sent_once(
        tmp_path: Path, receivers: tuple[Receiver, SmtpServer]) -> None:
    hook, smtp = receivers
    settings, ledger, world = _home(tmp_path, hook, smtp)
    first = Notifier(create_app(ledger, settings, routers=routers(settings)), settings, NotifyConfig.load(settings))
    second = Notifier(create_app(ledger, settings, routers=routers(settings)), settings, NotifyConfig.load(settings))
    first.check_once()
    _ask(world, "deploy-5", "Deploy the hotfix?")
    held_while_sending: list[bool] = []

    def try_the_lock() -> None:
        # What a second server's look would meet while the first is still sending: the home's lock.
        with open(tmp_path / ".signoff" / "web" / "notified.lock", "a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held_while_sending.append(True)
            else:
                fcntl.flock(fh, fcntl.LOCK_UN)
                held_while_sending.append(False)

    hook.on_post = try_the_lock
    assert [(s.user, s.channel) for s in first.check_once()] == [("alice", "webhook"), ("alice", "email")]
    assert held_while_sending == [True]
    # The other server's next look finds the item already sent.
    assert second.check_once() == []
    assert len(hook.bodies) == 1 and len(smtp.messages) == 1
    ledger.close()


def test_a_webhook_that_failed_is_sent_at_the_next_look(tmp_path: Path,
                                                        receivers: tuple[Receiver, SmtpServer]) -> None:
    hook, _ = receivers
    (tmp_path / "signoff.toml").write_text(f'[notify]\nwebhook = "{hook.url}"\n')
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    world = make_world(RoomService(ledger))
    notifier = Notifier(create_app(ledger, settings, routers=routers(settings)), settings,
                        NotifyConfig.load(settings))
    notifier.check_once()
    _ask(world, "deploy-3", "Roll back?")
    hook.status = 503
    assert notifier.check_once() == []
    hook.status = 200
    assert [(s.user, s.channel) for s in notifier.check_once()] == [("alice", "webhook")]
    assert [b["waiting"][0]["title"] for b in hook.bodies] == ["Roll back?"]
    ledger.close()


@pytest.mark.parametrize("config, message", [
    ('webhook = "file:///etc/passwd"', "webhook must be an http(s) address"),
    ('emails = { alice = "alice@example.com" }', "emails needs smtp_host and smtp_from"),
    ('emails = { alice = "not an address" }', "maps room user names to e-mail addresses"),
    ("every_seconds = 0", "every_seconds must be 1 to 3600"),
    ('hook = "http://x"', "unknown [notify] setting"),
])
def test_bad_notify_settings_are_refused_clearly(tmp_path: Path, config: str, message: str) -> None:
    (tmp_path / "signoff.toml").write_text(f"[notify]\n{config}\n")
    with pytest.raises(UsageError, match=re.escape(message)):
        NotifyConfig.load(Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path))


def test_the_browser_reads_its_own_list_and_nobody_elses(tmp_path: Path) -> None:
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    world = make_world(RoomService(ledger))
    for person in (world.alice, world.bob):
        SignIns(ledger).set_password(person.id, PASSWORD)
    _ask(world, "deploy-4", "Deploy <b>now</b>?")
    with TestClient(create_app(ledger, settings, routers=routers(settings)), base_url="https://testserver") as c:
        assert c.get("/inbox/waiting", follow_redirects=False).status_code in (303, 401)  # signed out: nothing
        for name, expected in (("alice", ["Deploy <b>now</b>?"]), ("bob", [])):
            c.cookies.clear()
            csrf = c.get("/signin").text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
            c.post("/signin", data={"csrf": csrf, "name": name, "password": PASSWORD})
            answer = c.get("/inbox/waiting")
            assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
            assert [w["title"] for w in answer.json()["items"]] == expected and answer.json()["count"] == len(expected)
    ledger.close()
