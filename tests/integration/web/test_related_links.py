"""Related objects link both ways (a repair case and its room, evidence and the case it was made
for), and a refusal offers the page where to act besides the command (the pages over ASGI, in one
process)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from signoff.repair.model import Reproduced, case_key
from signoff.web.render import places_to_act
from tests.integration.web.test_inbox import World, _propose_contract, _sign_in, home, notes_run  # noqa: F401


def test_a_case_and_its_room_and_its_evidence_link_each_other(home: tuple[World, TestClient]) -> None:  # noqa: F811
    world, client = home
    _propose_contract(world)
    settings = client.app.state.settings  # type: ignore[attr-defined]
    evidence = settings.evidence_dir / "repair" / "coupon-01-base.intoto.json"
    evidence.parent.mkdir(parents=True, exist_ok=True)
    evidence.write_text("{}")  # not a signed file: listed as not verifying, and still linked to its case
    ledger = world.service.ledger
    ledger.append(case_key("coupon-01"), ledger.version(case_key("coupon-01")), [
        Reproduced(message="assert 2 == 1", fingerprint="f" * 16, evidence=str(evidence)).new_event()])
    _sign_in(client, "alice")
    case = client.get("/repair/coupon-01").text
    assert f'room <a href="/rooms/{world.room_id}">' in case
    assert '<a href="/ledger?q=coupon-01#events">its events in the ledger</a>' in case
    room = client.get(f"/rooms/{world.room_id}").text
    assert 'Repair case of this room: <a href="/repair/coupon-01">coupon-01</a> (' in room
    listed = client.get("/evidence").text
    assert 'repair/coupon-01-base.intoto.json</a> · for <a href="/repair/coupon-01">repair case coupon-01</a>' in listed


def test_a_refusal_offers_the_page_where_to_act() -> None:
    assert places_to_act("/repair/nope", "pick a case from the repair page") == [("/repair", "the repair cases")]
    assert places_to_act("/bugs", "an admin issues one: signoff desk credential owner bob") == []
    assert places_to_act("/notes/runs/x", "link your account: signoff repair link") == [
        ("/repair", "the repair cases"), ("/notes", "the release notes runs")]
    assert places_to_act("/", "run `signoff incident setup`") == [("/incident", "the incidents")]


def test_the_refusal_page_links_where_to_act(home: tuple[World, TestClient]) -> None:  # noqa: F811
    _, client = home
    _sign_in(client, "alice")
    answer = client.get("/repair/no-such-case")
    assert answer.status_code == 404
    assert 'Where to act in the pages: <a href="/repair">the repair cases</a>' in answer.text
