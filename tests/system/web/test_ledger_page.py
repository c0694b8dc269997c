"""The ledger page keeps what it verified between visits, reads old events back in the background,
and shows the chain broken on a visit soon after someone edits an old, already verified event
straight in SQLite (a real server, a signed-in person, the attacker on a sqlite3 connection of
their own)."""

from __future__ import annotations

import html
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger, sign_checkpoint
from signoff.rooms import RoomService
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.trust import KeyStore
from signoff.web.routes import routers
from tests.conftest import wait_for
from tests.support.fixtures.rooms import Server
from tests.support.web import password_client
from tests.system.ledger.test_checkpoints import _rewrite

PASSWORD = "a long enough passphrase"


@dataclass
class Site:
    client: httpx.Client
    ledger: SqlLedger
    db: Path

    def chain(self) -> str:
        answer = self.client.get("/ledger")
        assert answer.status_code == 200, answer.text
        section = answer.text.split('id="chain-title"', 1)[1].split("</section>", 1)[0]
        return html.unescape(section)

    def attack(self, statement: str) -> None:
        db = sqlite3.connect(self.db)
        assert db.execute(statement).rowcount == 1
        db.commit()
        db.close()

    def first_with(self, text: str) -> int:
        db = sqlite3.connect(self.db)
        seq = db.execute("SELECT min(seq) FROM events WHERE instr(payload, ?) > 0", (text,)).fetchone()[0]
        db.close()
        return int(seq)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    rooms = RoomService(ledger)
    rooms.init()
    alice, _ = rooms.create_user("alice", "Alice")
    SignIns(ledger).set_password(alice.id, PASSWORD)
    rooms.create_room(alice, "ops", user_names=["alice"])
    sign_checkpoint(ledger, KeyStore(settings.keys_dir).ensure("ledger"))
    server = Server(create_app(ledger, settings, routers=routers(settings)))
    client, _ = password_client(server.start(), "alice", PASSWORD)
    try:
        yield Site(client, ledger, settings.home / "signoff.db")
    finally:
        client.close()
        server.stop()
        ledger.close()


def test_an_old_event_edited_after_a_visit_shows_the_chain_broken(site: Site) -> None:
    first = site.chain()
    assert "intact" in first and "Last signed checkpoint at event" in first
    site.client.get("/ledger")  # visited more than once: the page now answers from what it kept
    # The same length, the stored hash left as it was: only re-reading the row can tell.
    seq = site.first_with('"alice"')
    assert seq < site.ledger.head()[0]  # an old event, verified on the visits before
    site.attack(f"UPDATE events SET payload = replace(payload, '\"alice\"', '\"ALICE\"') WHERE seq = {seq}")
    # Each visit may start a read-back of the old events (one at a time, spaced by its cost); the
    # visit after the one that follows the edit shows it.
    assert wait_for(lambda: "broken" in site.chain(), timeout=30)
    chain = site.chain()
    assert "broken" in chain and f"event seq {seq} " in chain and "altered" in chain
    assert "intact" not in chain


def test_a_rewrite_of_verified_history_with_its_hashes_shows_the_chain_broken(site: Site) -> None:
    assert "intact" in site.chain()
    _rewrite(site.ledger, 2, {"forged": True})
    chain = site.chain()
    assert "broken" in chain and "history up to it was rewritten" in chain


def test_the_page_says_how_recently_old_events_were_read_back(site: Site) -> None:
    first = site.chain()
    count = site.ledger.head()[0]
    assert "intact" in first and f"Events 1 to {count} were last read back" in first
