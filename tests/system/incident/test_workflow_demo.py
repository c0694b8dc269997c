"""The incident in rooms: the grader fails runs that are incomplete or where something crossed that
should not have; replay. (That the demo passes the grader three times in a row from fresh state is
in test_workflow_demo_repeat.py: a file of its own, so a worker can run it beside this one.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from signoff.demo.payco_shopco.fixture import code_files, customer_names
from signoff.incident.actors import READ_ONLY_OPS, RoomAgent
from signoff.incident.grade import grade, observe
from signoff.incident.recording import record_run, render, replay
from signoff.incident.stack import SHARED, RunInfo, read_secrets
from signoff.incident.workflow import Incident, new_run, run_demo, run_script
from signoff.kernel.errors import RefusedError, UnavailableError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import Ledger, SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import InProcessSyncTransport, SyncRoomsClient
from signoff.trust import KeyStore
from tests.support.fixtures.incident import PAYCO_SHOPCO


def fresh(tmp: Path, name: str) -> tuple[Settings, KeyStore]:
    home = tmp / name
    return Settings.load(home=home, env={}, cwd=tmp), KeyStore(home / "keys")


def failed(result: dict[str, Any]) -> list[str]:
    return [c["name"] + ": " + c["detail"] for c in result["checks"] if not c["ok"]]


@pytest.fixture(scope="module")
def finished(node: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, KeyStore, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("finished")
    settings, keys = fresh(tmp, "home")
    summary = run_demo(tmp / "runs", keys, settings, PAYCO_SHOPCO, over_http=False)
    return Path(summary["run"]), keys, summary


def _copy(run: Path, tmp: Path) -> Path:
    dest = tmp / run.name
    shutil.copytree(run, dest)
    return dest


def _as(run: Path, who: str) -> tuple[RoomService, Ledger, Any]:
    info = RunInfo.load(run)
    ledger = SqlLedger.from_url(info.db_url)
    rooms = RoomService(ledger)
    return rooms, ledger, rooms.authenticate(read_secrets(run)[who])


def test_grader_fails_a_disclosure_that_bypassed_the_guard(finished: tuple[Path, KeyStore, dict[str, Any]],
                                                           tmp_path: Path) -> None:
    run, keys, _ = finished
    copy = _copy(run, tmp_path)
    rooms, ledger, agent = _as(copy, "agent:payco-agent")
    try:
        # A compromised agent process posting with its own key, straight to the server (no guard).
        info = RunInfo.load(copy)
        rooms.post_message(agent, info.rooms[SHARED], "[disclosure D-PAY-9 · payco · INC-0001 · approved by priya]\n"
                           "trust us\n\nevidence sha256 0000000000000000:\n{\"x\":1}")
    finally:
        ledger.close()
    result = grade(copy, keys)
    names = {c["name"]: c for c in result["checks"]}
    assert not result["ok"]
    assert not names["every disclosure in the shared room was approved and signed"]["ok"]
    assert "D-PAY-9 crossed without a signed approval" in names[
        "every disclosure in the shared room was approved and signed"]["detail"]
    assert not names["ledgers intact and every disclosure signed"]["ok"]


def test_grader_finds_a_customer_name_and_a_code_line_in_any_room(finished: tuple[Path, KeyStore, dict[str, Any]],
                                                                   tmp_path: Path) -> None:
    run, keys, _ = finished
    copy = _copy(run, tmp_path)
    rooms, ledger, priya = _as(copy, "user:priya")
    info = RunInfo.load(copy)
    name = next(n for n in customer_names() if any(ord(c) > 127 for c in n))
    line = next(ln.strip() for p in code_files("shopco") for ln in p.read_text().splitlines() if "JSON.stringify" in ln)
    try:
        rooms.post_message(priya, info.rooms["payco"], f"fyi the customer was {name.upper()}")
        rooms.post_message(priya, info.rooms[SHARED], f"is it this?   {line}")
    finally:
        ledger.close()
    result = grade(copy, keys)
    bad = {c["name"] for c in result["checks"] if not c["ok"]}
    assert bad == {"no customer name or protected value in any post",
                   "no line of either company's code in any post (measured)"}


@pytest.mark.slow
def test_grader_fails_an_unfinished_incident(node: str, tmp_path: Path) -> None:
    settings, keys = fresh(tmp_path, "home")
    run = new_run(tmp_path / "runs", keys, PAYCO_SHOPCO)
    with Incident(run, keys, settings, PAYCO_SHOPCO, over_http=False) as inc:
        run_script(inc, until=9)  # root cause confirmed, fixes not yet approved
    result = grade(run, keys)
    bad = {c["name"] for c in result["checks"] if not c["ok"]}
    assert bad == {"both fixes approved", "simulation re-run with both fixes shows 0 rejected",
                   "incident record closed by the mediator"}, failed(result)


def test_replay_is_deterministic_and_as_payco_shows_only_what_payco_saw(
        finished: tuple[Path, KeyStore, dict[str, Any]]) -> None:
    run, keys, summary = finished
    path = Path(summary["recording"])
    assert render(replay(path)) == render(replay(path))
    everything = replay(path)
    rooms = {r["room"] for r in everything}
    assert {"payco-internal", "shopco-internal", "payco-shopco-shared", "payco ledger", "shopco ledger"} <= rooms
    payco = replay(path, "payco")
    assert {r["room"] for r in payco} == {"payco-internal", "payco-shopco-shared", "payco ledger"}
    shopco_private = [r["text"] for r in everything if r["room"] == "shopco-internal" and r["kind"] == "message"]
    payco_text = "\n".join(render(payco)) + json.dumps(payco)
    assert shopco_private and not any(t in payco_text for t in shopco_private if "Approve with" in t)
    kinds = {r["kind"] for r in everything}
    assert kinds == {"message", "document", "approval_card", "approval_record", "guard_decision"}
    # The file is the record: a second recording of the same run is byte-identical.
    again = record_run(run, keys, path.with_name("again.jsonl"))
    assert again.read_bytes() == path.read_bytes()


def test_replay_refuses_what_is_not_a_recording(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"version": "something else"}\n')
    with pytest.raises(UsageError, match=r"is not a signoff\.incident\.recording/v1 recording"):
        replay(bad)
    bad.write_text("not json\n")
    with pytest.raises(UsageError, match="a line is not JSON"):
        replay(bad)



def test_the_grader_reads_over_http_what_the_server_holds(finished: tuple[Path, KeyStore, dict[str, Any]],
                                                          tmp_path: Path) -> None:
    run, _keys, _ = finished
    over_http, in_process = observe(run), observe(run, over_http=False)
    assert over_http.messages == in_process.messages and over_http.documents == in_process.documents
    assert over_http.cards == in_process.cards and over_http.record() is not None
    info = RunInfo.load(run)
    ledger = SqlLedger.from_url(info.db_url)
    try:
        client = SyncRoomsClient(InProcessSyncTransport(RoomService(ledger), read_secrets(run)["agent:observer"]))
        observer = RoomAgent(client, info, "observer", [SHARED], ledger, allowed_ops=READ_ONLY_OPS)
        with pytest.raises(RefusedError, match="observer may only use"):
            observer.op(SHARED, "post_message", body="hello")
    finally:
        ledger.close()


def test_the_grader_and_the_console_share_the_observers_connections(
        finished: tuple[Path, KeyStore, dict[str, Any]]) -> None:
    """The console reads a live run in process while the grader (or the recorder) reads it over
    HTTP, both as the observer. Each connects to every room; with connections of their own, the one
    that connected last takes each room from the other, whose next read of the room then fails.
    Shared, there is one connection per room, and it keeps its room whoever connected last."""
    run, _keys, _ = finished
    first = observe(run)
    observe(run, over_http=False)
    assert observe(run).messages == first.messages
    info = RunInfo.load(run)
    ledger = SqlLedger.from_url(info.db_url)
    try:
        held = sorted(c.rooms for c in RoomService(ledger).connections.connections(info.agents["observer"]))
    finally:
        ledger.close()
    assert held == sorted([room] for room in info.rooms.values())


def test_a_run_made_before_organisations_were_configured_still_opens(
        finished: tuple[Path, KeyStore, dict[str, Any]], tmp_path: Path) -> None:
    """A run folder without `ws/parties.json` (made by an older signoff) played the scripted cast:
    its console and replay still open, and grading it says it has no code to measure against rather
    than claiming that none crossed."""
    from signoff.incident.service import console_view, postmortem

    run, keys, _ = finished
    copy = _copy(run, tmp_path)
    (copy / "ws" / "parties.json").unlink()
    view = console_view(copy, keys, "payco")
    assert view.names == {"payco": "PayCo", "shopco": "ShopCo"} and view.lanes == ("payco", SHARED, "shopco")
    assert any(s.lane == "payco" for s in view.steps)
    with pytest.raises(UnavailableError, match="names no organisation's code"):
        postmortem(copy)
