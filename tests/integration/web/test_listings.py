"""Search, filters and sort on the lists (repair cases, notes runs, incidents, evidence, the
ledger's events), from a plain GET form, on the server; a choice the list does not offer is a 400
that does not repeat it (the pages over ASGI, in one process)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from signoff.web.notes_pages import preview_html
from tests.integration.web.test_inbox import World, _propose_contract, _sign_in, home, notes_run  # noqa: F401


def _events(page: str) -> list[tuple[str, str]]:
    """(seq, type) of each event the ledger page lists, in its order."""
    return re.findall(r"<strong>event (\d+)</strong> · <time[^>]*>[^<]*</time> · <code>([^<]+)</code>", page)


def test_the_ledger_page_lists_its_events_searched_filtered_and_paged(
        home: tuple[World, TestClient], monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    world, client = home
    _propose_contract(world)
    _sign_in(client, "alice")
    monkeypatch.setattr("signoff.web.evidence_pages.EVENTS_PER_PAGE", 3)
    page = client.get("/ledger").text
    newest = _events(page)
    assert len(newest) == 3 and int(newest[0][0]) > int(newest[1][0]) > int(newest[2][0])
    total = int(re.search(r"of (\d+)\.", page).group(1))  # type: ignore[union-attr]
    assert total == world.service.ledger.count_events()
    seen = [seq for seq, _ in newest]
    link: str | None = re.search(r'href="([^"]+)" rel="next"', page).group(1)  # type: ignore[union-attr]
    while link is not None:
        following = client.get(link.replace("&amp;", "&")).text
        seen += [seq for seq, _ in _events(following)]
        found = re.search(r'href="([^"]+)" rel="next"', following)
        link = found.group(1) if found else None
    assert sorted(map(int, seen), reverse=True) == list(range(total, 0, -1)), "every event once, newest first"

    repair = client.get("/ledger", params={"state": "repair.contract_proposed"}).text
    assert [t for _, t in _events(repair)] == ["repair.contract_proposed"]
    assert '<a href="/repair/coupon-01">repair.case.coupon-01</a>' in repair  # an event links to its case
    searched = client.get("/ledger", params={"q": "COUPON-01 reported"}).text  # every word, any case
    assert [t for _, t in _events(searched)] == ["repair.reported"]
    oldest = client.get("/ledger", params={"sort": "oldest"}).text
    assert _events(oldest)[0][0] == "1"


def test_a_list_refuses_what_it_does_not_offer_without_repeating_it(
        home: tuple[World, TestClient]) -> None:  # noqa: F811
    _, client = home
    _sign_in(client, "alice")
    every = ("/ledger", "/notes", "/repair", "/evidence", "/incident")
    for query, paths in (({"state": "no.such-PWNED"}, every), ({"sort": "PWNED"}, every), ({"page": "PWNED"}, every),
                         ({"q": "PWNED" * 41}, every), ({"owner": "PWNED"}, ("/repair", "/evidence"))):
        for path in paths:
            answer = client.get(path, params=query)
            assert answer.status_code == 400, (path, query)
            assert "PWNED" not in answer.text


def test_repair_cases_and_notes_runs_are_filtered_by_state_owner_and_text(
        home: tuple[World, TestClient]) -> None:  # noqa: F811
    world, client = home
    _propose_contract(world)
    _sign_in(client, "alice")
    cases = client.get("/repair", params={"state": "contract proposed", "owner": "alice", "q": "applies ONCE"}).text
    assert '<a href="/repair/coupon-01">coupon-01</a>' in cases and "1 to 1 of 1 matching (of 1)." in cases
    assert f'<a href="/rooms/{world.room_id}">' in cases  # each case links to its room
    assert "coupon-01" not in client.get("/repair", params={"q": "nothing like it"}).text.split("<form", 2)[2]
    runs = client.get("/notes", params={"state": "in review", "q": "v1"}).text
    assert '<a href="/notes/runs/v1.2">v1.2</a>' in runs
    assert 'href="/notes/runs/v1.2"' not in client.get("/notes", params={"state": "shipped"}).text
    assert '<option value="shipped">shipped (0)</option>' in runs  # each choice says how many it holds


def test_the_notes_preview_is_rendered_markdown_with_no_raw_html() -> None:
    html = preview_html('# Release notes: a..b\n\n- Fixed it [F1]\n\n## Facts\n\n- <a id="f1"></a>**F1** commit '
                        '<script>alert(1)</script> [x](javascript:alert(1))')
    assert "<h3>Release notes: a..b</h3>" in html and "<strong>F1</strong>" in html
    assert "&lt;a id" not in html and "<script>" not in html and 'href="javascript' not in html
