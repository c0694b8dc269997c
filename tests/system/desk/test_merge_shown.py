"""A merge merges the head the person reviewed, from the attacker's side: Alice's bug page shows
head H1 and its approval; Bob pushes H2 and approves it himself; Alice's Merge button, from the page
she loaded, must not merge H2, which she never saw (409, nothing merged). Reloaded, the page shows H2
and merges it. The CLI prints the head it merges, or merges only the one named by --head."""

from __future__ import annotations

import re

import pytest

from signoff.cli.main import main
from signoff.rooms import RoomService
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web.routes import routers
from tests.support.fixtures.desk import World
from tests.support.fixtures.rooms import Server
from tests.support.web import password_client

PASSWORD = "alice's own passphrase"


def _merge_form(page: str) -> dict[str, str]:
    form = re.search(r'action="/bugs/[A-Z0-9-]+/merge"(.*?)</form>', page, re.DOTALL)
    assert form, "no merge form on the page"
    return dict(re.findall(r'name="(\w+)" value="([^"]*)"', form.group(1)))


def _bob_pushes_and_approves(w: World) -> str:
    b = w.bug()
    repo, number, head = b.change["repo"], b.change["number"], b.change["head"]
    source = w.desk.forge.read(repo, head, "shoplite/checkout.py") or ""
    new_head = w.desk.forge.push(repo, number, {"shoplite/checkout.py": source + "\n# late change\n"}, "late", "bob")
    w.deliver()
    w.desk.approve(w.actor("bob"), w.bug_id, new_head)
    return new_head


def test_a_merge_from_a_page_loaded_before_a_push_merges_nothing(review: World) -> None:
    w = review
    head = w.bug().change["head"]
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    rooms = RoomService(w.ledger)
    alice, _ = rooms.create_user("alice", "Alice")
    SignIns(w.ledger).set_password(alice.id, PASSWORD)
    server = Server(create_app(w.ledger, w.settings, routers=routers(w.settings)))
    client, csrf = password_client(server.start(), "alice", PASSWORD)
    try:
        seen = _merge_form(client.get(f"/bugs/{w.bug_id}").text)
        new_head = _bob_pushes_and_approves(w)
        refused = client.post(f"/bugs/{w.bug_id}/merge", data={**seen, "csrf": csrf}, follow_redirects=False)
        assert refused.status_code == 409 and "nothing was merged" in refused.text
        assert seen["head"] == head
        assert f"not the {head[:12]} you reviewed" in refused.text
        assert not w.desk.forge.change(w.bug().change["repo"], w.bug().change["number"]).get("merged")
        assert w.bug().state == "in_review"

        fresh = _merge_form(client.get(f"/bugs/{w.bug_id}").text)
        assert fresh["head"] == new_head
        merged = client.post(f"/bugs/{w.bug_id}/merge", data={**fresh, "csrf": csrf}, follow_redirects=False)
        assert merged.status_code == 303
        assert w.bug().state == "merged" and w.bug().merge["head"] == new_head
    finally:
        client.close()
        server.stop()


def test_the_cli_merges_only_the_head_it_names_or_prints(review: World, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    w = review
    head = w.bug().change["head"]
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    new_head = _bob_pushes_and_approves(w)
    w.ledger.close()
    monkeypatch.setenv("SIGNOFF_HOME", str(w.home))
    monkeypatch.delenv("SIGNOFF_DB", raising=False)
    assert main(["desk", "merge", w.bug_id, "--head", head, "--token", w.tokens["alice"]]) == 4
    assert "nothing was merged" in capsys.readouterr().err
    assert main(["desk", "merge", w.bug_id, "--token", w.tokens["alice"]]) == 0
    assert f"merging head {new_head} of {w.bug_id}" in capsys.readouterr().out
