"""`signoff demo repair`: the coupon fixture end to end, offline, with the scripted fixer.

1. The verifier alone: the authored false fix (the shop's test edited to expect 8100) is REJECTED,
   the genuine fix is VERIFIED, each with signed evidence.
2. The room flow: a report, the contract as a room document, refused approvals (another user, a
   quote, another room), the real approval, reproduction on base, two fixer attempts through
   signoff.agents, verification, review and acceptance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from signoff.cli.context import console, settings
from signoff.demo.commands import register
from signoff.kernel.ids import new_id
from signoff.kernel.progress import Progress, within


@register("repair", "Coupon fixture: false fix REJECTED, genuine fix VERIFIED, room flow to ACCEPTED.")
def demo_repair(as_json: bool, progress: Progress) -> dict[str, Any]:
    from signoff.demo.fixture import build, examples_root
    from signoff.demo.repair_room import coupon_contract, open_repair_room
    from signoff.ledger import SqlLedger
    from signoff.repair import VerifyRequest, verify
    from signoff.trust import KeyStore, verify_file

    def say(text: str) -> None:
        if not as_json:
            console.print(text, highlight=False)

    s = settings()
    fixture = examples_root() / "coupon"
    work = s.home / "demo-repair" / new_id()[:8]
    repo = build(fixture, work / "coupon-repo")
    harness = fixture / "harness"
    contract = coupon_contract(repo.path, harness)
    say(f"coupon repository {repo.path} (base {repo.base[:12]})")

    standalone: dict[str, Any] = {}
    for name in ("false-fix", "genuine-fix"):
        result = verify(VerifyRequest(repo=repo.path, base="main", candidate=name, harness=harness,
                                      expect=contract.expect, regression=list(contract.regression),
                                      timeout=contract.timeout), s, within(progress, f"verify {name}"))
        standalone[name] = {"verdict": result.verdict, "reasons": [r["code"] for r in result.reasons],
                            "fingerprint": result.fingerprint, "evidence": str(result.evidence),
                            "tamper": result.tamper}
        cand = result.stages["candidate"].summary
        say(f"  verify {name:<12} {result.verdict:<12} candidate {cand.outcome}"
            + (f"; tamper signal: {', '.join(result.tamper)}" if result.tamper else ""))
        say(f"    evidence {result.evidence}")

    progress("room flow: report, approvals, fixer attempts, verification")
    ledger = SqlLedger.open(s)
    try:
        room = open_repair_room(ledger, s, contract)
        v = room.verifier.name
        room.say(room.operator, f"@{v} A 10% coupon is applied twice. On a 10000-cent cart I expect 9000 cents.")
        room.run()
        case_id = next(c.case_id for c in room.workflow.cases() if c.room_id == room.room_id)
        say(f"room flow: case {case_id}, contract presented as a room document")
        approve = room.asked("approve", case_id)  # names the digest of the contract presented
        room.say(room.bystander, approve)
        room.say(room.operator, f"> {approve}")
        room.say(room.operator, approve, room.other_room_id)
        room.run()
        refused = [m["body"] for m in room.rooms.read_messages(room.operator, room.room_id, limit=1000)
                   + room.rooms.read_messages(room.operator, room.other_room_id, limit=1000)
                   if "refused" in m["body"]]
        say(f"  {len(refused)} approvals refused (another user, a quote, another room)")
        room.say(room.operator, approve)
        room.run()
        st = room.workflow.case(case_id)
        for attempt in sorted(set(st.failures) | set(st.verdicts)):
            if attempt in st.failures:
                say(f"  attempt {attempt}: proposal refused by the agents layer ({st.failures[attempt]})")
            else:
                say(f"  attempt {attempt}: candidate {st.verdicts[attempt]['candidate'][:12]} "
                    f"{st.verdicts[attempt]['verdict']}")
        if st.state == "AWAITING_REVIEW":
            room.say(room.operator, room.asked("accept", case_id))  # the candidate and the review's digest
            room.run()
            st = room.workflow.case(case_id)
        say(f"  states: {' -> '.join(st.history)}")
        flow_evidence = [v_["evidence"] for v_ in st.verdicts.values()]
        for path in flow_evidence:
            say(f"    evidence {path}")
        progress("leaving the visitor two cases: a contract to approve, a fix to accept")
        from signoff.demo.visitor import leave_repair_work

        waiting = leave_repair_work(ledger, s, contract)
        say(f"  for `signoff serve --demo`: {', '.join(f'{c} {state}' for c, state in waiting.items())}")
    finally:
        ledger.close()

    trusted = KeyStore(s.keys_dir).trusted()
    paths = [d["evidence"] for d in standalone.values()] + flow_evidence
    checked = all(verify_file(Path(p), trusted).ok for p in paths)
    say(f"  evidence verified offline: {'all ok' if checked else 'FAILED'}")
    ok = (standalone["false-fix"]["verdict"] == "REJECTED" and standalone["genuine-fix"]["verdict"] == "VERIFIED"
          and st.state == "ACCEPTED" and len(refused) == 3 and checked
          and sorted(waiting.values()) == ["AWAITING_REVIEW", "CONTRACT_PROPOSED"])
    return {"ok": ok, "verify": standalone,
            "room": {"case_id": case_id, "state": st.state, "history": st.history,
                     "verdicts": {str(k): val["verdict"] for k, val in st.verdicts.items()},
                     "failed_attempts": {str(k): val for k, val in st.failures.items()},
                     "evidence": flow_evidence},
            "left_for_the_visitor": waiting,
            "evidence": paths}
