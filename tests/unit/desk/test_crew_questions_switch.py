"""The reporter-question rule on what a live switch-core 0.19 delivered (recorded in
tests/data/desk/switch-0.19-reporter-question.json): the reporter stand-in's answers in the
question's thread, first unaddressed (before the intake policy admitted agents), then addressed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from signoff.desk.crew.commands import strip_mentions
from signoff.desk.crew.questions import admit, heard
from signoff.kernel.errors import RefusedError
from signoff.rooms.domain.decisions import Message
from tests.support import paths

DATA = paths.DATA / "desk" / "switch-0.19-reporter-question.json"


def recorded() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    data = json.loads(DATA.read_text())
    asked = {**data["question"], "card": "ebefd01c-97d3-542c-9b58-ba9a3cf335b5"}
    return asked, data["events"]


def _said(env: dict[str, Any], **changes: Any) -> Message:
    raw = heard(env)
    fields = {"msg_id": raw.msg_id, "room": raw.room, "sender": raw.sender, "text": strip_mentions(raw.text),
              "addressed": raw.addressed, "thread_id": raw.thread_id, **changes}
    return Message(**fields)


def test_only_the_addressed_yes_of_the_bound_stand_in_counts() -> None:
    asked, events = recorded()
    refusal, early, answer = events
    # Switch threads the reply under the question's id and writes the stand-in's Matrix id.
    assert answer["payload"]["thread_id"] == asked["message_id"]
    assert answer["payload"]["sender"] == asked["responder"]
    assert admit(asked, _said(answer)).group(0) == "yes"
    for env, why in ((early, "counts only when addressed"), (refusal, "counts only when addressed")):
        with pytest.raises(RefusedError, match=why):
            admit(asked, _said(env))


@pytest.mark.parametrize(("changes", "why"), [
    ({"sender": "@switch-agent-5b44d76c:localhost"}, "does not count"),  # another member (the owner's stand-in)
    ({"thread_id": None}, "does not reply"),
    ({"room": "847d61e4-00aa-4bc7-925b-ab37e27de30c"}, "count only in"),  # the engineering room
    ({"text": "yes please"}, "not in the form"),
    ({"text": "no:"}, "not in the form"),  # a "no" needs its reason
])
def test_a_changed_answer_does_not_count(changes: dict[str, Any], why: str) -> None:
    asked, events = recorded()
    with pytest.raises(RefusedError, match=why):
        admit(asked, _said(events[-1], **changes))
