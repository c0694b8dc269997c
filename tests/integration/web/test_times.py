"""Times read the same on every page: in UTC to the minute or the second, never with microseconds,
the exact value in `<time datetime>` (the pages over ASGI, in one process)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from signoff.repair import RepairService
from signoff.rooms.domain.model import Approval
from signoff.web.render import moment, when
from tests.integration.web.test_diff_pages import case_page  # noqa: F401  (the fixture)
from tests.integration.web.test_inbox import World, _ask_card, _sign_in, home, notes_run  # noqa: F401  (fixtures)

TIME = re.compile(r'<time datetime="([^"]+)" data-precision="(minute|second)">([^<]+)</time>')


def _check(page: str) -> list[tuple[str, str, str]]:
    """Every time on the page, each checked: the shown text is the exact value's, to its precision."""
    found = TIME.findall(page)
    for exact, precision, shown in found:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", exact)
        width = 16 if precision == "minute" else 19
        assert shown == exact[:width].replace("T", " ") + " UTC"
    text = re.sub(r"<[^>]+>", "", page)
    assert not re.search(r"\d\d:\d\d:\d\d\.\d{3,}", text), "a time is shown with fractions of a second"
    return found


def test_the_filter_says_a_time_once_readable_and_exactly() -> None:
    assert when(1_800_000_000.123456) == ('<time datetime="2027-01-15T08:00:00.123456Z" data-precision="minute">'
                                         "2027-01-15 08:00 UTC</time>")
    assert when("2026-12-06T11:06:06.435123+00:00", seconds=True).endswith(">2026-12-06 11:06:06 UTC</time>")
    assert when(None) == "unknown" and when("<b>soon</b>") == "&lt;b&gt;soon&lt;/b&gt;"


def test_a_rooms_messages_and_cards_carry_their_times(home: tuple[World, TestClient]) -> None:  # noqa: F811
    world, client = home
    world.service.post_message(world.alice, world.room_id, "the coupon applies twice")
    _ask_card(world)
    _sign_in(client, "alice")
    room = client.get(f"/rooms/{world.room_id}").text
    assert [p for _, p, _ in _check(room)].count("second") >= 1  # each message, to the second
    card: Approval = world.service.pending_approvals(world.alice)[0]
    assert card.requested_at is not None and {p for _, p, _ in _check(client.get("/").text)} == {"minute"}


def test_a_repair_cases_timeline_is_to_the_second(case_page: tuple[RepairService, str]) -> None:  # noqa: F811
    service, page = case_page
    events = service.history("coupon-01")
    shown = _check(page)
    assert {moment(x) for x, p, _ in shown if p == "second"} == {moment(e.recorded_at) for e in events}
