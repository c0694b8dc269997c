"""The diff a person approves on the repair case page: per file, numbered, highlighted, and the
accept form still bound to the digest of the review (the diff's text), not to its markup (the
pages over ASGI, in one process)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.ledger.aggregate import event_class
from signoff.repair import RepairService
from signoff.repair.model import case_key
from signoff.rooms import RoomService
from signoff.rooms.domain.signin import SignIns
from signoff.rooms.http.app import create_app
from signoff.web.routes import routers
from tests.integration.web.test_inbox import CONTRACT, PASSWORD, _sign_in
from tests.support.fixtures.rooms import make_world

DIFF = ('diff --git a/shop/cart.py b/shop/cart.py\nindex 1111111..2222222 100644\n--- a/shop/cart.py\n'
        '+++ b/shop/cart.py\n@@ -40,3 +40,3 @@ class Cart:\n     def total(self) -> int:\n'
        '-        return sum(self.prices) - self.coupon\n+        return max(0, sum(self.prices) - self.coupon)\n'
        '         # <b>done</b>\n')


def _case(room_id: str, operator: str) -> list[tuple[str, dict[str, Any]]]:
    """A case awaiting the operator's review of a VERIFIED candidate whose diff is DIFF."""
    return [
        ("repair.reported", {"case_id": "coupon-01", "room_id": room_id, "message_id": "m1", "reporter": "user:bob",
                             "report": "applied twice", "operator": operator, "operator_name": "alice",
                             "verifier_name": "verifier", "contract": CONTRACT, "base": "b" * 40,
                             "harness_digest": "d" * 64}),
        ("repair.contract_proposed", {"harness_digest": "d" * 64, "base": "b" * 40}),
        ("repair.approved", {"message_id": "m3", "by": operator, "harness_digest": "d" * 64}),
        ("repair.candidate", {"attempt": 1, "commit": "a" * 40}),
        ("repair.verdict", {"attempt": 1, "candidate": "a" * 40, "verdict": "VERIFIED", "reasons": [],
                            "fingerprint": "f" * 64, "evidence": "", "diff": DIFF, "tamper": [], "signals": []}),
        ("repair.review_requested", {}),
    ]


@pytest.fixture(params=["", "?diff=split"], ids=["unified", "split"])
def case_page(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[RepairService, str]]:
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    world = make_world(RoomService(ledger))
    SignIns(ledger).set_password(world.alice.id, PASSWORD)
    ledger.append(case_key("coupon-01"), None, [event_class(t)(**p).new_event()  # type: ignore[misc]
                                                for t, p in _case(world.room_id, world.alice.sender)])
    with TestClient(create_app(ledger, settings, routers=routers(settings)), base_url="https://testserver") as c:
        _sign_in(c, "alice")
        yield RepairService(ledger, settings), c.get("/repair/coupon-01" + request.param).text
    ledger.close()


def test_the_diff_to_accept_is_per_file_numbered_and_highlighted(case_page: tuple[RepairService, str]) -> None:
    _, page = case_page
    assert page.count('class="diff-file"') == 1 and "<code>shop/cart.py</code>" in page
    if 'class="diff split"' in page:  # old line 41 on the left, beside new line 41 that replaced it
        side = '<td class="ln {0}" data-ln="41"></td><td class="code {0}">(.*?)</td>'
        removed, added = re.search(side.format("del"), page), re.search(side.format("add"), page)
    else:
        row = '<tr class="{}"><td class="ln"{}></td><td class="ln"{}></td><td class="code">(.*?)</td>'
        removed = re.search(row.format("del", ' data-ln="41"', ""), page)  # old line 41, no new number
        added = re.search(row.format("add", "", ' data-ln="41"'), page)
    assert removed and added
    assert '<span class="k">return</span>' in added.group(1) and '<span class="nb">max</span>' in added.group(1)
    # The text of each line, indentation included, is exactly the diff's; markup in it stays text.
    text = html.unescape(re.sub(r"<[^>]+>", "", added.group(1)))
    assert text == "+        return max(0, sum(self.prices) - self.coupon)"
    assert "&lt;b&gt;done&lt;/b&gt;" in page and "<b>done</b>" not in page


def test_the_accept_form_is_bound_to_the_review_not_to_the_markup(case_page: tuple[RepairService, str]) -> None:
    service, page = case_page
    st = service.case("coupon-01")
    assert st.state == "AWAITING_REVIEW"
    shown = re.findall(r'name="shown" value="([0-9a-f]+)"', page)
    assert shown and set(shown) == {RepairService.review_shown(st)}
