"""A person approves exactly what their page showed, from the attacker's side: Alice loads the run
page, Bob edits a sentence in his own session, and Alice's form (approve that sentence, approve all,
ship) still carries what she saw. Each is refused with a fix, and nothing is recorded; once she
reloads, the same buttons decide on the text she now sees (a real server, two signed-in browsers)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.notes.run import start_run
from signoff.rooms import RoomService
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web.routes import routers
from tests.support.deciding import decisions, state_of
from tests.support.fixtures.rooms import Server
from tests.support.gitrepo import Repo
from tests.support.web import password_client

PASSWORD = "a long enough passphrase"
URL = "/notes/decide/release"


@dataclass
class Browser:
    client: httpx.Client
    csrf: str

    def form(self, action: str, sentence: str = "") -> dict[str, str]:
        """The hidden fields of one decision form as the run page renders it now."""
        page = self.client.get("/notes/runs/release").text
        fields = re.escape(f'name="action" value="{action}">')
        if sentence:
            fields += re.escape(f'<input type="hidden" name="sentence" value="{sentence}">')
        found = re.search(fields + r'(?:<input type="hidden" name="shown" value="([0-9a-f]{64})">)?', page)
        assert found, f"no {action} {sentence} form on the page"
        form = {"csrf": self.csrf, "action": action, "sentence": sentence}
        return {**form, "shown": found.group(1)} if found.group(1) else form

    def text_of(self, sentence: str) -> str:
        page = self.client.get("/notes/runs/release").text
        found = re.search(rf'id="{sentence}-title">.*?<p class="text">(.*?)</p>', page, re.DOTALL)
        assert found
        return html.unescape(found.group(1))


@dataclass
class World:
    ledger: SqlLedger
    run: Path
    alice: Browser
    bob: Browser

    def recorded(self) -> list[tuple[str, str | None, str]]:
        return [(d["action"], d.get("target"), d["by"]) for d in decisions(self.ledger, self.run)]


@pytest.fixture
def world(history: Repo, tmp_path: Path) -> Iterator[World]:
    # `[web] notes_deciders` is the former name of `[notes] deciders`, still read.
    with _world(history, tmp_path, '[web]\nnotes_deciders = ["alice", "bob"]\n') as w:
        yield w


@contextmanager
def _world(history: Repo, tmp_path: Path, config_text: str) -> Iterator[World]:
    config = tmp_path / "signoff.toml"
    config.write_text(config_text)
    settings = Settings.load(home=tmp_path / ".signoff", env={"SIGNOFF_CONFIG": str(config)}, cwd=tmp_path)
    run = settings.home / "notes" / "release"
    start_run(history.path, "v0.1.0..v0.2.0", run, settings)
    ledger = SqlLedger.open(settings)
    rooms = RoomService(ledger)
    rooms.init()
    for name in ("alice", "bob"):
        person, _ = rooms.create_user(name, name.title())
        SignIns(ledger).set_password(person.id, PASSWORD)
    server = Server(create_app(ledger, settings, routers=routers(settings)))
    base = server.start()
    browsers = [Browser(*password_client(base, name, PASSWORD)) for name in ("alice", "bob")]
    try:
        yield World(ledger, run, *browsers)
    finally:
        for b in browsers:
            b.client.close()
        server.stop()
        ledger.close()


def _bob_edits(w: World, sentence: str) -> str:
    """Bob, in his own session, rewords `sentence` (keeping what it claims, so it still verifies)."""
    text = "Notably, " + w.bob.text_of(sentence)
    form = {**w.bob.form("edit", sentence), "text": text}
    assert w.bob.client.post(URL, data=form, follow_redirects=False).status_code == 303
    return text


def test_an_approval_from_a_page_loaded_before_an_edit_is_refused(world: World) -> None:
    w = world
    seen = w.alice.form("approve", "S2")  # Alice's page as it loaded
    edited = _bob_edits(w, "S2")
    before = w.recorded()
    refused = w.alice.client.post(URL, data=seen, follow_redirects=False)
    assert refused.status_code == 409
    assert "the sentence S2 changed since it was shown" in refused.text and "Nothing was recorded" in refused.text
    assert "reload the page" in refused.text
    assert w.recorded() == before == [("edit", "S2", "bob")]
    assert state_of(w.ledger, w.run).get("S2").status == "pending"
    # The refusal page shows the text as it is now; deciding from it approves exactly that text.
    assert html.escape(edited, quote=False) in refused.text
    assert w.alice.client.post(URL, data=w.alice.form("approve", "S2"), follow_redirects=False).status_code == 303
    s2 = state_of(w.ledger, w.run).get("S2")
    assert (s2.status, s2.text, s2.by) == ("approved", edited, "alice")


def test_approve_all_and_ship_from_a_stale_page_are_refused(world: World) -> None:
    w = world
    approve_all = w.alice.form("approve_all")
    _bob_edits(w, "S1")
    refused = w.alice.client.post(URL, data=approve_all, follow_redirects=False)
    assert refused.status_code == 409 and "the set of sentences changed since it was shown" in refused.text
    assert w.recorded() == [("edit", "S1", "bob")]
    assert all(s.status == "pending" for s in state_of(w.ledger, w.run).sentences)

    assert w.alice.client.post(URL, data=w.alice.form("approve_all"), follow_redirects=False).status_code == 303
    ship = w.alice.form("ship")  # every sentence approved, as Alice sees it
    assert w.bob.client.post(URL, data=w.bob.form("reject", "S3"), follow_redirects=False).status_code == 303
    refused = w.alice.client.post(URL, data=ship, follow_redirects=False)
    assert refused.status_code == 409 and "changed since it was shown" in refused.text
    assert not state_of(w.ledger, w.run).shipped
    assert w.recorded() == [("edit", "S1", "bob"), ("approve", "all", "alice"), ("reject", "S3", "bob")]


def test_a_form_that_names_no_shown_text_is_refused(world: World) -> None:
    w = world
    for shown in ("", "   ", "#", "abc def", "nothex" * 3):
        form = {**w.alice.form("approve", "S1"), "shown": shown}
        r = w.alice.client.post(URL, data=form, follow_redirects=False)
        assert r.status_code == 400, shown
    # A digest of other text (Bob's form for another sentence) approves nothing either.
    other = {**w.alice.form("approve", "S1"), "shown": w.bob.form("approve", "S2")["shown"]}
    assert w.alice.client.post(URL, data=other, follow_redirects=False).status_code == 409
    assert w.recorded() == []


def test_who_may_decide_is_one_rule_for_the_pages_and_the_cli(history: Repo, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`[notes] deciders` is configured once and the notes service holds every face to it: Bob,
    signed in but not named, is refused in the pages and on the command line alike; Alice decides."""
    with _world(history, tmp_path, '[notes]\ndeciders = ["alice"]\n') as w:
        _bob_is_refused_on_both_faces_and_alice_decides(w, tmp_path, monkeypatch, capsys)


def _bob_is_refused_on_both_faces_and_alice_decides(w: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from signoff.cli.main import main

    # Bob's page shows no forms; he sends one anyway, with the digest of the text as it is.
    forged = {**w.alice.form("approve", "S1"), "csrf": w.bob.csrf}
    refused = w.bob.client.post(URL, data=forged, follow_redirects=False)
    assert refused.status_code == 403 and "bob may not decide on release notes" in refused.text
    monkeypatch.setenv("SIGNOFF_CONFIG", str(tmp_path / "signoff.toml"))
    monkeypatch.setenv("SIGNOFF_HOME", str(tmp_path / ".signoff"))
    capsys.readouterr()
    assert main(["notes", "decide", "release", "approve S1", "--by", "bob"]) == 3
    err = capsys.readouterr().err
    assert "bob may not decide on release notes" in err and "[notes] deciders" in err
    assert w.recorded() == []
    assert main(["notes", "decide", "release", "approve S1", "--by", "alice"]) == 0
    assert w.alice.client.post(URL, data=w.alice.form("reject", "S2"), follow_redirects=False).status_code == 303
    assert w.recorded() == [("approve", "S1", "alice"), ("reject", "S2", "alice")]
