"""The gate around real functions, in sync and async code, against a real `signoff serve`: a person
answers over the rooms API; every decision is signed and in the ledger."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from signoff.gate import GateRefused, GateTimeout, call_content, gate
from signoff.gate.record import EVENT_TYPE, PREDICATE_TYPE, case_for
from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger import SqlLedger
from signoff.rooms.domain.bound import bound_content
from signoff.trust import KeyStore, verify_file
from tests.support.cards import answer_as_shown
from tests.support.cli import run_cli
from tests.support.serve import Served


def for_call(action: str, arguments: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
    """Matches the card that binds exactly this call."""
    expected = call_content(action, arguments)

    def match(card: dict[str, Any]) -> bool:
        bound = bound_content(card)
        return bound is not None and bound.content == expected

    return match


def action_of(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def check_recorded(served: Served, record: dict[str, Any], outcome: str) -> None:
    settings = served.settings()
    report = verify_file(Path(record["evidence"]), KeyStore(settings.keys_dir).trusted())
    assert report.ok, report.problem
    assert report.predicate_type == PREDICATE_TYPE and report.signers == ("gate",)
    assert report.statement is not None and report.statement["predicate"]["outcome"] == outcome
    ledger = SqlLedger.open(settings)
    try:
        events = [e for e in ledger.read(case_for(record["action"])) if e.type == EVENT_TYPE]
    finally:
        ledger.close()
    assert any(e.seq == record["event_seq"] and e.payload["outcome"] == outcome for e in events)


def test_sync_function_runs_only_after_yes_to_exactly_its_arguments(served: Served) -> None:
    calls: list[tuple[str, str, bool]] = []

    @gate(approvers=["alice"], room="ops", agent=served.agent, settings=served.settings(), timeout=60)
    def deploy(service: str, version: str, canary: bool = True) -> str:
        calls.append((service, version, canary))
        return f"deployed {service} {version}"

    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(deploy, "web", version="1.2.3")
        card = served.pending_card(served.alice_token, for_call(action_of(deploy), {
            "service": "web", "version": "1.2.3", "canary": True}))
        assert not calls  # nothing ran while the person was deciding
        answer_as_shown(served.person(served.alice_token), card["request_id"], "yes")
        assert running.result(timeout=60) == "deployed web 1.2.3"
    assert calls == [("web", "1.2.3", True)]
    # The decision is signed and in the ledger: the newest gate event for this action ran the call.
    ledger = SqlLedger.open(served.settings())
    try:
        last = ledger.read(case_for(action_of(deploy)))[-1]
    finally:
        ledger.close()
    assert last.payload["outcome"] == "approved" and last.payload["decision"]["request_id"] == card["request_id"]
    check_recorded(served, {**last.payload, "event_seq": last.seq}, "approved")
    # Offline, with the CLI: the trust policy entitles the gate key to this statement type.
    checked = run_cli(["evidence", "verify", last.payload["evidence"]], served.env())
    assert checked.exit_code == 0, checked.stdout + checked.stderr


def test_async_function_wrong_person_then_no_raises_with_the_reason(served: Served) -> None:
    ran: list[int] = []

    @gate(approvers=["alice"], room="ops", agent=served.agent, settings=served.settings(), timeout=60)
    async def refund(order: int, cents: int) -> None:
        ran.append(order)

    async def main() -> GateRefused:
        task = asyncio.create_task(refund(1042, cents=250_000))
        card = await asyncio.to_thread(served.pending_card, served.alice_token,
                                       for_call(action_of(refund), {"order": 1042, "cents": 250_000}))
        bob = await asyncio.to_thread(answer_as_shown, served.person(served.bob_token), card["request_id"], "yes")
        assert bob["allowed"] is False  # bob is not an approver: his "yes" is discarded
        await asyncio.to_thread(answer_as_shown, served.person(served.alice_token), card["request_id"], "no")
        with pytest.raises(GateRefused) as refused:
            await task
        return refused.value

    refused = asyncio.run(main())
    assert not ran
    assert "was not approved" in refused.message and "Alice chose 'no'" in refused.message
    check_recorded(served, refused.record, "refused")


def test_a_yes_for_one_call_does_not_approve_the_next_identical_call(served: Served) -> None:
    ran: list[int] = []

    @gate(approvers=["alice"], room="ops", agent=served.agent, settings=served.settings(), timeout=60)
    def pay(cents: int) -> None:
        ran.append(cents)

    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(pay, 500)
        card = served.pending_card(served.alice_token, for_call(action_of(pay), {"cents": 500}))
        answer_as_shown(served.person(served.alice_token), card["request_id"], "yes")
        first.result(timeout=60)
    assert ran == [500]
    # The same call again asks again, with a new card; nobody answers it.
    pay_again = gate(approvers=["alice"], room="ops", agent=served.agent, settings=served.settings(), timeout=1)(
        pay.__wrapped__)  # type: ignore[attr-defined]
    with pytest.raises(GateTimeout) as raised:
        pay_again(500)
    assert raised.value.decision.request_id != card["request_id"]
    assert ran == [500]


def test_arguments_mutated_while_pending_are_refused(served: Served) -> None:
    ran: list[list[str]] = []

    @gate(approvers=["alice"], room="ops", agent=served.agent, settings=served.settings(), timeout=60)
    def delete(paths: list[str]) -> None:
        ran.append(list(paths))

    paths = ["/tmp/cache"]
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(delete, paths)
        card = served.pending_card(served.alice_token, for_call(action_of(delete), {"paths": ["/tmp/cache"]}))
        paths.append("/etc")  # the caller changes what the person is looking at
        answer_as_shown(served.person(served.alice_token), card["request_id"], "yes")
        with pytest.raises(RefusedError, match="changed after they were approved"):
            running.result(timeout=60)
    assert not ran
    ledger = SqlLedger.open(served.settings())
    try:
        outcomes = [e.payload["outcome"] for e in ledger.read(case_for(action_of(delete)))
                    if e.payload["decision"]["request_id"] == card["request_id"]]
    finally:
        ledger.close()
    assert outcomes == ["approved", "arguments_changed"]


@pytest.mark.parametrize(("policy", "error"), [("raise", GateTimeout), ("refuse", GateRefused)])
def test_timeout_policy(served: Served, policy: Any, error: type[Exception]) -> None:
    ran: list[str] = []

    @gate(approvers=["alice"], room="ops", agent=served.agent, settings=served.settings(), timeout=1,
          on_timeout=policy)
    def restart(host: str) -> None:
        ran.append(host)

    with pytest.raises(error) as raised:
        restart(f"db-{policy}")
    assert not ran
    record = raised.value.record  # type: ignore[attr-defined]
    check_recorded(served, record, "timed_out" if policy == "raise" else "refused")
    # A late "yes" finds an expired card and approves nothing.
    late = answer_as_shown(served.person(served.alice_token), record["decision"]["request_id"], "yes")
    assert late["outcome"] == "expired"


def test_context_manager_sync_and_async(served: Served) -> None:
    guard = gate(approvers=["alice"], room="ops", agent=served.agent, settings=served.settings(), timeout=60)
    done: list[str] = []

    def approve_when_asked(arguments: dict[str, Any]) -> None:
        card = served.pending_card(served.alice_token, for_call("rotate-keys", arguments))
        answer_as_shown(served.person(served.alice_token), card["request_id"], "yes")

    with ThreadPoolExecutor(1) as pool:
        answered = pool.submit(approve_when_asked, {"scope": "prod"})
        with guard.approval("rotate-keys", {"scope": "prod"}) as record:
            done.append("sync")
        answered.result(timeout=60)
    assert record["outcome"] == "approved"

    async def main() -> None:
        answered = asyncio.create_task(asyncio.to_thread(approve_when_asked, {"scope": "staging"}))
        async with guard.approval("rotate-keys", {"scope": "staging"}):
            done.append("async")
        await answered

    asyncio.run(main())
    assert done == ["sync", "async"]


def test_bad_gates_are_refused_before_anything_is_asked(served: Served) -> None:
    with pytest.raises(UsageError, match="approvers"):
        gate(approvers=[], room="ops")
    with pytest.raises(UsageError, match="on_timeout"):
        gate(approvers=["alice"], room="ops", on_timeout="ignore")  # type: ignore[arg-type]

    @gate(approvers=["alice"], room="ops", agent=served.agent, settings=served.settings())
    def takes_bytes(blob: bytes) -> None:
        raise AssertionError("must not run")

    with pytest.raises(UsageError, match="not plain JSON"):
        takes_bytes(b"\x00")


def test_a_sync_gated_function_called_inside_a_running_event_loop(served: Served) -> None:
    """Sync code called from async code (a framework's sync tool inside its loop) still waits for
    the answer, on its own thread, and runs after the "yes"."""
    ran: list[str] = []

    @gate(approvers=["alice"], room="ops", agent=served.agent, settings=served.settings(), timeout=60)
    def tag(release: str) -> str:
        ran.append(release)
        return release

    def approve() -> None:
        card = served.pending_card(served.alice_token, for_call(action_of(tag), {"release": "v9"}))
        answer_as_shown(served.person(served.alice_token), card["request_id"], "yes")

    async def main() -> str:
        with ThreadPoolExecutor(1) as pool:
            answered = pool.submit(approve)
            value = tag("v9")  # blocks this loop's thread until approved, by design of a sync call
            answered.result(timeout=60)
        return value

    assert asyncio.run(main()) == "v9" and ran == ["v9"]
