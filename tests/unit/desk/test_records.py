"""The desk's bookkeeping records as classes (signoff.desk.records): credentials, the local forge's
change requests, webhooks, notices and cards, the concierge's questions and the crew. Their type
strings and case ids are the ones the desk has always written; each folded state is folded by its
fold, which handles every type of its case type, and old payloads read as they were written."""

from __future__ import annotations

from typing import Any

import pytest

from signoff.desk.records import (
    CARD,
    CREDENTIALS,
    CREW,
    FORGE,
    INBOX,
    QUESTION,
    WEBHOOK,
    ChangeRequest,
    CredentialBook,
    CrewRecords,
    Inbox,
    Question,
    credential_fold,
    crew_fold,
    forge_fold,
    inbox_fold,
    question_fold,
)
from signoff.ledger import Event
from signoff.ledger.aggregate import UnreadableEventError, case_type_of, read_event

# Stored type strings per case type: hashed into every ledger, never renamed.
STORED = {
    CREDENTIALS: {"credential.issued", "credential.revoked"},
    FORGE: {"cr.opened", "cr.pushed", "cr.reviewed", "cr.merged"},
    WEBHOOK: {"webhook.processed"},
    INBOX: {"notice.delivered"},
    CARD: {"card.applied", "card.needs_reason"},
    QUESTION: {"question.asked", "question.answered"},
    CREW: {"crew.set_up", "crew.reporter_linked", "crew.command_refused", "crew.command_ignored",
           "crew.answer_ignored"},
}


def _events(case_id: str, *typed: tuple[str, dict[str, Any]]) -> list[Event]:
    return [Event(n, case_id, n, t, p, f"t{n}", "", "") for n, (t, p) in enumerate(typed, 1)]


def test_every_stored_type_has_its_class_and_each_fold_handles_its_case_type() -> None:
    assert {ct: set(ct.events) for ct in STORED} == STORED
    assert [f.missing() for f in (credential_fold, forge_fold, inbox_fold, question_fold, crew_fold)] == [[]] * 5


@pytest.mark.parametrize(("case_id", "owner"), [
    ("desk/credentials", CREDENTIALS), ("desk/forge/shoplite/1", FORGE), ("desk/webhook/bb9f4c11", WEBHOOK),
    ("desk/webhook-content/pull_request/2198e282", WEBHOOK), ("desk/inbox/RPT-0001", INBOX),
    ("desk/card/30321d17", CARD), ("desk/card/30321d17/needs-reason", CARD), ("desk/question/30321d17", QUESTION),
    ("desk/crew", CREW), ("desk/crew/refusals", CREW), ("desk/crew/reporters", CREW), ("desk/crew/ignored", CREW),
])
def test_the_case_ids_the_desk_has_always_written_belong_to_their_case_type(case_id: str, owner: object) -> None:
    assert case_type_of(case_id) is owner


def test_credentials_fold_to_the_issued_and_the_revoked_with_old_payloads_as_written() -> None:
    old = {"name": "ops", "role": "recorder", "token_sha256": "a" * 64}  # no human/shared fields
    book = credential_fold.over(CredentialBook(), _events(
        "desk/credentials", ("credential.issued", old),
        ("credential.issued", {"name": "alice", "role": "owner", "human": True, "shared": False,
                               "token_sha256": "b" * 64}),
        ("credential.revoked", {"token_sha256": "a" * 64})))
    assert book.issued[0].payload() == old
    assert [c.name for c in book.issued] == ["ops", "alice"] and book.revoked == {"a" * 64}


def test_a_change_request_folds_as_the_forge_shows_it() -> None:
    user = {"login": "alice", "type": "User"}
    change = forge_fold.over(ChangeRequest(), _events(
        "desk/forge/shoplite/1", ("cr.opened", {"cr": {"number": 1, "head": "a" * 40, "draft": True}}),
        ("cr.pushed", {"head": "b" * 40, "by": "bot"}),
        ("cr.reviewed", {"review": {"id": 1, "state": "approved", "user": user}}),
        ("cr.merged", {"merge_commit": "c" * 40, "merged_by": user})))  # an old merge, without its head
    assert change.cr == {"number": 1, "head": "b" * 40, "draft": True, "merged": True, "merge_commit": "c" * 40,
                         "merged_by": user, "reviews": [{"id": 1, "state": "approved", "user": user}]}


def test_the_first_question_and_the_first_answer_count() -> None:
    asked = {"card": "c1", "room_id": "r", "message_id": "m1", "sender": "agent:x", "body": "yes?",
             "responder": "user:y", "responder_name": "priya", "expires_at": 10.0}
    answered = {"card": "c1", "message_id": "m2", "sender": "user:y", "answer": "no", "reason": "still broken"}
    question = question_fold.over(Question(), _events(
        "desk/question/c1", ("question.asked", asked), ("question.asked", asked | {"message_id": "m9"}),
        ("question.answered", answered), ("question.answered", answered | {"answer": "yes", "reason": None})))
    assert question.asked is not None and question.asked.payload() == asked
    assert question.answer is not None and question.answer.payload() == answered


def test_the_crew_folds_its_latest_setup_and_each_reports_latest_link() -> None:
    crew = {"owner_user_id": "u", "owner_name": "alice", "group_id": "g", "intake_room": "i",
            "engineering_room": "e", "agents": {"manager": "a1"}, "policies": {}, "senders": {}}
    folded = crew_fold.over(CrewRecords(), _events(
        "desk/crew", ("crew.set_up", crew), ("crew.set_up", crew | {"server": "https://rooms.example"})))
    assert folded.crew is not None and folded.crew.payload() == crew | {"server": "https://rooms.example"}
    links = crew_fold.over(CrewRecords(), _events(
        "desk/crew/reporters", ("crew.reporter_linked", {"report_id": "RPT-0001", "user": "p", "sender": "user:1"}),
        ("crew.reporter_linked", {"report_id": "RPT-0001", "user": "q", "sender": "user:2"}))).links
    assert {rid: ev.user for rid, ev in links.items()} == {"RPT-0001": "q"}


def test_inbox_notices_read_with_and_without_a_card() -> None:
    notice = {"job_id": "j", "kind": "reproduced", "bug_id": "BUG-0001", "round": 1, "text": "t"}
    inbox = inbox_fold.over(Inbox(), _events("desk/inbox/RPT-0001", ("notice.delivered", notice),
                                             ("notice.delivered", notice | {"card": "c1"})))
    assert [n.payload() for n in inbox.notices] == [notice, notice | {"card": "c1"}]


@pytest.mark.parametrize(("type_", "payload"), [
    ("webhook.processed", {"event": "pull_request", "delivery": "d", "extra": 1}),  # a field no class declares
    ("card.applied", {"report_id": "R", "card": "c", "kind": "released", "round": "1", "outcome": "applied"}),
    ("credential.issued", {"name": "ops", "role": "recorder"}),  # its digest missing
])
def test_a_stored_record_its_class_does_not_declare_is_refused(type_: str, payload: dict[str, Any]) -> None:
    with pytest.raises(UnreadableEventError):
        read_event(Event(1, "desk/x", 1, type_, payload, "t1", "", ""))

