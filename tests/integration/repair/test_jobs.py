"""The repair jobs' effects on the real room service and ledger (no sandbox needed)."""

from __future__ import annotations

from pathlib import Path

from signoff.demo.repair_room import coupon_contract, open_repair_room
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.rooms.client import ref_tag


def test_a_redelivered_say_in_a_long_room_posts_once(tmp_path: Path) -> None:
    settings = Settings.load(home=tmp_path / ".signoff", db_url=f"sqlite:///{tmp_path / 'ledger.db'}", env={})
    r = open_repair_room(SqlLedger.open(settings), settings, coupon_contract(tmp_path / "repo", tmp_path / "harness"))
    # A long room: more than one page of messages before the verifier posts ...
    for n in range(1_000):
        r.say(r.bystander, f"chatter {n}")
    job = {"room_id": r.room_id, "text": "coupon-01 approved", "marker": "repair:msg:$first"}
    r.workflow.run_job("repair.say", "say:repair:msg:$first", job)
    # ... and the job is delivered again (its lease lapsed before the ack): it finds its post.
    r.workflow.run_job("repair.say", "say:repair:msg:$first", job)
    tagged = [m for m in _all_messages(r.rooms, r.operator, r.room_id) if ref_tag(job["marker"]) in m["body"]]
    assert len(tagged) == 1 and tagged[0]["sender"] == r.verifier.sender


def _all_messages(rooms, actor, room_id):  # type: ignore[no-untyped-def]
    out, after = [], 0
    while page := rooms.read_messages(actor, room_id, after=after, limit=1000):
        out.extend(page)
        after = page[-1]["sequence"]
    return out
