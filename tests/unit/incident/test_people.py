"""What waits for a person's decision on a running incident's page, read from the console's rows:
each undecided draft exactly as it will cross with the digest the approver signs, fix requests and a
proposed root cause; nothing once signed, refused or confirmed, nothing in a finished run."""

from __future__ import annotations

import json
from typing import Any

from signoff.incident.console import Console, Step
from signoff.incident.decisions import shown_disclosure
from signoff.incident.disclosure import Disclosure, published_text
from signoff.incident.people import WRITES, awaiting, decides_for, writes_for
from signoff.incident.playbooks.posts import fix_request, root_cause_shown
from signoff.incident.stack import DEMO_CAST_PARTIES
from signoff.kernel.shown import shown_digest

DRAFT = "PayCo's delivery log for INC-0001: 6 of 60 rejected.\n\nApprove with: approve D-PAY-1"
EVIDENCE = {"rejected": 6, "events": 60}
CAUSE = "data.customer.name is \\u-escaped by payco only"


def message(lane: str, who: str, text: str) -> dict[str, Any]:
    return {"kind": "message", "lane": lane, "who": who, "row": {"id": f"${len(text)}", "t": 0, "text": text,
                                                                  "room": f"{lane}-room"}}


def document(name: str, text: str) -> dict[str, Any]:
    return {"kind": "document", "lane": "payco", "who": "payco-agent", "row": {"name": name, "text": text,
                                                                              "room": "payco-internal"}}


def signed(d_id: str) -> dict[str, Any]:
    return {"kind": "approval_record", "lane": None, "who": "approver",
            "row": {"room": "payco ledger", "data": {"d_id": d_id}}}


def view(*rows: dict[str, Any], recorded: bool = False) -> Console:
    steps = [Step(n, 0, r["kind"], r["lane"], r["who"], "", r["row"]) for n, r in enumerate(rows)]
    return Console("run-x", "payco", recorded, steps, {}, len(steps), ("payco", "shared", "shopco"),
                   {"payco": "PayCo", "shopco": "ShopCo"}, DEMO_CAST_PARTIES)


DOC = document("D-PAY-1", json.dumps({"incident": "INC-0001", "evidence": EVIDENCE, "text": DRAFT}))
POSTED = message("payco", "payco-agent", DRAFT)


def test_a_posted_draft_waits_exactly_as_it_will_cross_with_the_digest_the_approver_signs() -> None:
    [item] = awaiting(view(DOC, POSTED), "payco")
    d = Disclosure("D-PAY-1", "INC-0001", "payco", EVIDENCE, DRAFT)
    assert (item.kind, item.ref, item.refusable) == ("disclosure", "D-PAY-1", True)
    assert item.shown == published_text(d, "priya")
    assert item.digest == shown_digest(shown_disclosure(d, DRAFT))


def test_nothing_waits_that_was_not_posted_is_decided_or_is_mangled() -> None:
    assert awaiting(view(DOC), "payco") == []  # the document without the draft message
    assert awaiting(view(DOC, POSTED, signed("D-PAY-1")), "payco") == []
    refused = message("payco", "priya", "refuse D-PAY-1 #0123456789abcdef: not approved by priya")
    assert awaiting(view(DOC, POSTED, refused), "payco") == []
    assert awaiting(view(document("D-PAY-1", "{not json"), POSTED), "payco") == []
    assert awaiting(view(DOC, POSTED, recorded=True), "payco") == []
    # Someone else's message that names the draft decides nothing.
    other = message("payco", "dave", "approve D-PAY-1 #0123456789abcdef")
    assert [a.ref for a in awaiting(view(DOC, POSTED, other), "payco")] == ["D-PAY-1"]


def test_a_fix_request_and_a_proposed_root_cause_wait_until_decided() -> None:
    ask = message("payco", "payco-agent", fix_request("payco", "INC-0001"))
    proposal = message("shared", "mediator", f"Proposed root cause for INC-0001: {CAUSE}\nPriya and Sam, ...")
    items = {a.kind: a for a in awaiting(view(ask, proposal), "payco")}
    assert items["fix"].ref == "INC-0001-fix-payco" and not items["fix"].refusable
    assert items["fix"].digest == shown_digest(fix_request("payco", "INC-0001"))
    assert items["root_cause"].digest == shown_digest(root_cause_shown("INC-0001", CAUSE))
    confirmed = message("shared", "priya", f"@incident-commander confirm root cause INC-0001 #{'a' * 64}")
    assert [a.kind for a in awaiting(view(ask, proposal, confirmed), "payco")] == ["fix"]


def test_only_the_organisation_s_approver_decides() -> None:
    v = view()
    assert decides_for(v, "payco", "priya")
    assert not decides_for(v, "payco", "sam") and not decides_for(v, "payco", "dave")
    assert not decides_for(v, "x", "priya")
    # dave, PayCo's colleague, reports and drafts (priya still decides what crosses); sam writes nothing for PayCo.
    assert (writes_for(v, "payco", "priya"), writes_for(v, "payco", "dave")) == (WRITES, ("report", "draft"))
    assert writes_for(v, "payco", "sam") == writes_for(v, "shopco", "dave") == writes_for(v, "x", "priya") == ()
    assert writes_for(view(recorded=True), "payco", "dave") == ()


def test_a_redrafted_draft_no_longer_waits() -> None:
    redrafted = message("payco", "priya", "redraft D-PAY-1 #0123456789abcdef: in my own words")
    assert awaiting(view(DOC, POSTED, redrafted), "payco") == []


def test_a_draft_whose_approval_the_approver_answered_not_signed_waits_again() -> None:
    chat = message("payco", "priya", f"approve D-PAY-1 #{'0' * 64}")
    answer = message("payco", "approver", "not signed: the approver service at https://x did not answer")
    answer["row"]["thread"] = chat["row"]["id"]
    assert awaiting(view(DOC, POSTED, chat), "payco") == []  # sent: waits for the approver
    assert [a.ref for a in awaiting(view(DOC, POSTED, chat, answer), "payco")] == ["D-PAY-1"]
