"""The per-salt fingerprint budget from the attacker's side: an agent that wants a sixth event's
fingerprint under one salt restarts (or crashes) the evidence server, runs a second one for the
same organisation, or fires requests at once. Every way, five distinct events is all it gets."""

from __future__ import annotations

import multiprocessing
import os
import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from signoff.demo.payco_shopco.fixture import load_capture
from signoff.demo.payco_shopco.simulate import SimulationResult
from signoff.incident.budget import CASE_PREFIX, FINGERPRINTED, BudgetExhausted, SaltBudget
from signoff.incident.evidence_server import EvidenceClient, EvidenceStore, LoopbackServer, make_app
from signoff.incident.notary import IssuedSalt, Notary
from signoff.kernel.errors import IntegrityError, RefusedError
from signoff.kernel.tls import tls_context
from signoff.ledger import SqlLedger
from tests.support.paths import ROOT


@dataclass
class EvidenceProcess:
    """The evidence server of payco as a real process on a loopback port."""

    proc: subprocess.Popen[str]
    url: str

    def kill(self) -> None:
        # SIGKILL: a crash, not a shutdown; nothing gets a chance to flush or save anything.
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)


@pytest.fixture()
def start_server(buggy_run: SimulationResult) -> Iterator[Any]:
    started: list[EvidenceProcess] = []

    def start(db_url: str, issued: IssuedSalt, token: str) -> EvidenceProcess:
        env = {**os.environ, "EVIDENCE_TOKEN": token, "EVIDENCE_SALT": issued.salt.hex(),
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.Popen([sys.executable, "-m", "tests.system.incident.evidence_process", db_url, "payco",
                                 str(buggy_run.payco_capture), issued.incident],
                                stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("port "), f"evidence process did not start: {line!r}"
        server = EvidenceProcess(proc, f"http://127.0.0.1:{int(line.split()[1])}")
        started.append(server)
        return server

    yield start
    for server in started:
        if server.proc.poll() is None:
            server.kill()


def test_restarted_server_process_refuses_a_sixth_fingerprint(
        db_url: str, start_server: Any, buggy_run: SimulationResult) -> None:
    issued, token = Notary().open_incident(), secrets.token_urlsafe(16)
    ids = buggy_run.accepted[:7]
    first = start_server(db_url, issued, token)
    client = EvidenceClient(first.url, token)
    try:
        for event_id in ids[:5]:
            client.fingerprint(event_id, issued)
    finally:
        client.close()
    first.kill()

    # The attacker's fresh process: same organisation, same database, same salt.
    second = start_server(db_url, issued, token)
    client = EvidenceClient(second.url, token)
    try:
        for event_id in ids[5:7]:
            with pytest.raises(RefusedError, match=r"\(429\).*at most 5"):
                client.fingerprint(event_id, issued)
        # What was already fingerprinted may be asked again: it reveals nothing new.
        assert client.fingerprint(ids[0], issued)["event_id"] == ids[0]
    finally:
        client.close()
    ledger = SqlLedger.from_url(db_url)
    try:
        assert SaltBudget(ledger, "payco").spent(issued.salt_id) == ids[:5]
    finally:
        ledger.close()


@pytest.mark.slow
def test_two_server_processes_on_one_database_cannot_exceed_five(
        db_url: str, start_server: Any, buggy_run: SimulationResult) -> None:
    issued, token = Notary().open_incident(), secrets.token_urlsafe(16)
    servers = [start_server(db_url, issued, token), start_server(db_url, issued, token)]
    ids = buggy_run.accepted[:12]
    barrier = threading.Barrier(len(ids))
    statuses: dict[str, int] = {}

    def ask(n: int, event_id: str) -> None:
        body = {"incident": issued.incident, "salt": issued.salt.hex(), "event_id": event_id}
        with httpx.Client(base_url=servers[n % 2].url, headers={"Authorization": f"Bearer {token}"},
                          timeout=60, verify=tls_context()) as http:
            barrier.wait()
            statuses[event_id] = http.post("/v1/fingerprint", json=body).status_code

    threads = [threading.Thread(target=ask, args=(n, e)) for n, e in enumerate(ids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses.values()) == [200] * 5 + [429] * 7, statuses
    ledger = SqlLedger.from_url(db_url)
    try:
        spent = SaltBudget(ledger, "payco").spent(issued.salt_id)
        assert sorted(spent) == sorted(e for e, s in statuses.items() if s == 200)
        assert len(ledger.read(f"{CASE_PREFIX}payco/{issued.salt_id}")) == 5
    finally:
        ledger.close()


def test_fresh_app_on_the_same_database_keeps_the_budget(sqlite_url: str, buggy_run: SimulationResult) -> None:
    notary, token = Notary(), secrets.token_urlsafe(16)
    issued = notary.open_incident()
    caps = load_capture(buggy_run.payco_capture)
    ids = buggy_run.accepted[:6]
    for round_ids in (ids[:3], ids[3:5]):  # two server lifetimes, each with its own ledger connection
        ledger = SqlLedger.from_url(sqlite_url)
        with LoopbackServer(make_app(EvidenceStore.of("payco", caps, ledger), token, lambda: notary.current)) as srv:
            client = EvidenceClient(srv.url, token)
            for event_id in round_ids:
                client.fingerprint(event_id, issued)
            client.close()
        ledger.close()
    ledger = SqlLedger.from_url(sqlite_url)
    with LoopbackServer(make_app(EvidenceStore.of("payco", caps, ledger), token, lambda: notary.current)) as srv:
        client = EvidenceClient(srv.url, token)
        try:
            with pytest.raises(RefusedError, match="at most 5"):
                client.fingerprint(ids[5], issued)
            fresh = notary.open_incident()  # a new incident's salt has its own budget
            assert client.fingerprint(ids[5], fresh)["salt_id"] == fresh.salt_id
        finally:
            client.close()
    ledger.close()


def _spend_many(db_url: str, salt_id: str, event_ids: list[str], barrier: Any, out: Any) -> None:
    ledger = SqlLedger.from_url(db_url)
    try:
        barrier.wait()
        for event_id in event_ids:
            try:
                out.put((event_id, SaltBudget(ledger, "payco").spend(salt_id, event_id)))
            except BudgetExhausted:
                out.put((event_id, None))
    finally:
        ledger.close()


def test_budget_holds_across_processes_racing_on_the_ledger(db_url: str) -> None:
    salt = secrets.token_bytes(32)
    sid = IssuedSalt("INC-0001", salt, "").salt_id
    SqlLedger.from_url(db_url).close()  # migrate once, before the race
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(4), ctx.Queue()
    # Four processes, three distinct events each, plus one event every process asks for.
    plans = [[f"evt_{p}{i}" for i in range(3)] + ["evt_shared"] for p in range(4)]
    procs = [ctx.Process(target=_spend_many, args=(db_url, sid, plan, barrier, out)) for plan in plans]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in range(sum(len(p) for p in plans))]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    newly = [e for e, took in results if took]
    assert len(newly) == 5 and len(set(newly)) == 5, results
    ledger = SqlLedger.from_url(db_url)
    try:
        history = ledger.read(f"{CASE_PREFIX}payco/{sid}")
        assert [ev.type for ev in history] == [FINGERPRINTED] * 5
        assert sorted(ev.payload["event_id"] for ev in history) == sorted(newly)
    finally:
        ledger.close()


def test_one_event_asked_for_concurrently_takes_one_slot(sqlite_url: str) -> None:
    ledger = SqlLedger.from_url(sqlite_url)
    budget = SaltBudget(ledger, "payco")
    barrier = threading.Barrier(8)
    took: list[bool] = []

    def ask() -> None:
        barrier.wait()
        took.append(budget.spend("s" * 16, "evt_0001"))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(took) == [False] * 7 + [True]
    assert budget.spent("s" * 16) == ["evt_0001"]
    for n in range(2, 6):
        assert budget.spend("s" * 16, f"evt_000{n}")
    with pytest.raises(BudgetExhausted):
        budget.spend("s" * 16, "evt_0006")
    assert SaltBudget(ledger, "shopco").spend("s" * 16, "evt_0006")  # another organisation's budget
    ledger.close()


def test_notary_state_round_trips_and_refuses_tampering() -> None:
    notary = Notary()
    a, b = notary.open_incident(), notary.open_incident()
    restored = Notary.from_state(notary.state())
    assert restored.issued == (a, b) and restored.current == b
    with pytest.raises(Exception, match="already has a salt"):
        restored.open_incident(a.incident)  # restored salts are never reissued
    state = notary.state()
    state["issued"][1]["salt"] = secrets.token_bytes(32).hex()  # salt swapped, salt id kept
    with pytest.raises(IntegrityError, match="does not match its salt id"):
        Notary.from_state(state)
    with pytest.raises(IntegrityError, match="twice"):
        Notary.restore([a, a])
    with pytest.raises(IntegrityError):
        Notary.from_state({"issued": [{"incident": "INC-0009", "salt": "00"}]})
    with pytest.raises(TypeError):
        Notary(_issued=[a])  # type: ignore[call-arg]  # the private back door is gone
