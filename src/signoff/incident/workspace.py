"""Where one incident's state lives, how it is set up, and `verify-ledger`.

Layout under the root (by default `<home>/incident/`):

    parties.json                            the incident's organisations (`Parties`: names, approvers, agents,
                                            code, captures; never the protected values)
    captures/<org>-fingerprints.db          the evidence server's ledger: its per-salt fingerprint budget
    <org>/guard.json                        the guard's configuration (shapes and name hashes only)
    <org>/records.db                        the organisation's ledger: the approver's signed, hash-chained
                                            records (case incident-chain/<org>/approvals) and the guard's
                                            signed decisions, rules and counts (incident-chain/<org>/guard-log)
    rooms.db, rooms-secrets.json            the rooms (a real room server's ledger: both private rooms and
                                            the shared one) and its identities' credentials (mode 0600)
    pins.json                               each guard configuration's pinned digest, and parties.json's

Keys live in the key store (`<home>/keys`): `incident-approver-<org>` and `incident-guard-<org>`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.incident.cases import decide_on, ledger_at
from signoff.incident.chain import Chain, RecordChainReport, trusted_record
from signoff.incident.decisions import name_incident
from signoff.incident.disclosure import Disclosure, parse_disclosure_post, published_text
from signoff.incident.guard import Guard, GuardConfig, build_config
from signoff.incident.model import CHAIN, NAMES_CASE, IncidentNamed, IncidentNames, chain_key, names_fold
from signoff.incident.parties import Parties
from signoff.incident.pins import control_pins
from signoff.incident.remote_approver import remote_orgs
from signoff.incident.workspace_rooms import SHARED_ROOM, WorkspaceRooms, private_room
from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.digests import sha256_file
from signoff.kernel.errors import IntegrityError, SignoffError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger, verify_chain
from signoff.trust import KeyStore, PublicKey, SigningKey

INCIDENT_NAMES = NAMES_CASE


@dataclass
class Workspace:
    root: Path
    keys: KeyStore
    # One open ledger per organisation's records database, shared by everything using this workspace.
    _ledgers: dict[str, SqlLedger] = field(default_factory=dict, init=False, repr=False, compare=False)
    _rooms: WorkspaceRooms | None = field(default=None, init=False, repr=False, compare=False)
    _parties: Parties | None = field(default=None, init=False, repr=False, compare=False)
    # Organisations whose approver is a process of its own: how to read its record of an id.
    _remote: dict[str, Callable[[str, str], dict[str, Any] | None]] = field(default_factory=dict, init=False,
                                                                           repr=False, compare=False)

    @property
    def parties_path(self) -> Path:
        return self.root / "parties.json"

    @property
    def parties(self) -> Parties:
        """The incident's organisations, as `setup` wrote them."""
        if self._parties is None:
            self._parties = Parties.read(self.parties_path)
        return self._parties

    def use_parties(self, parties: Parties) -> None:
        """Read this workspace as set up for `parties` (one written before `parties.json` existed)."""
        self._parties = parties

    @property
    def orgs(self) -> tuple[str, ...]:
        return self.parties.keys

    def check_org(self, org: str) -> str:
        return self.parties.check(org)

    def org_dir(self, org: str) -> Path:
        return self.root / self.check_org(org)

    def guard_config_path(self, org: str) -> Path:
        return self.org_dir(org) / "guard.json"

    def records_db_path(self, org: str) -> Path:
        return self.org_dir(org) / "records.db"

    def org_ledger(self, org: str) -> SqlLedger:
        """The ledger of `org`'s approvals and guard decisions (closed by `close()`)."""
        org = self.check_org(org)
        if org not in self._ledgers:
            self.org_dir(org).mkdir(parents=True, exist_ok=True)
            self._ledgers[org] = ledger_at(self.records_db_path(org))
        return self._ledgers[org]

    def approvals(self, org: str, key: SigningKey | None = None) -> Chain:
        """The approver's chain of `org` (signing with `key` when given)."""
        return Chain(self.org_ledger(org), CHAIN.case_id(chain_key(self.check_org(org), "approvals")), key)

    def use_approver_process(self, org: str, record: Callable[[str, str], dict[str, Any] | None]) -> None:
        """Count `org`'s disclosures as approved only from its approver process's records (`record`
        reads one by id and incident), checked against the pinned approver key, not from this
        workspace's chain."""
        self._remote[self.check_org(org)] = record

    def signed_record(self, org: str, d_id: str, incident: str) -> dict[str, Any] | None:
        """`org`'s approval record of `d_id` in `incident`: from its approver process when it has one
        (only when signed by the key its pinned guard trusts), else from the chain here."""
        record = self._remote.get(org)
        if record is None:
            return self.approvals(org).state().find(d_id, incident)
        found = record(d_id, incident)
        key = PublicKey.from_hex(GuardConfig.read(self.guard_config_path(org)).approver_key, "approver")
        return found if found is not None and trusted_record(found, key, org, d_id) else None

    def guard_log(self, org: str, key: SigningKey | None = None) -> Chain:
        return Chain(self.org_ledger(org), CHAIN.case_id(chain_key(self.check_org(org), "guard-log")), key)

    def close(self) -> None:
        for ledger in self._ledgers.values():
            ledger.close()
        self._ledgers.clear()
        if self._rooms is not None:
            self._rooms.close()
            self._rooms = None

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def captures(self) -> Path:
        return self.root / "captures"

    def evidence_ledger(self, org: str) -> SqlLedger:
        """The ledger `org`'s evidence servers keep their fingerprint budget in (the caller closes
        it). It sits with the captures, which only the evidence servers read."""
        self.captures.mkdir(parents=True, exist_ok=True)
        return ledger_at(self.captures / f"{self.check_org(org)}-fingerprints.db")

    @property
    def rooms(self) -> WorkspaceRooms:
        """The workspace's rooms (created with the part-1 cast on first use; closed by `close()`)."""
        if self._rooms is None:
            self._rooms = WorkspaceRooms(self.root, self.parties)
        return self._rooms

    @property
    def pins_path(self) -> Path:
        return self.root / "pins.json"

    def next_incident(self) -> str:
        """A fresh incident name for this workspace (the notary itself keeps no state across runs): one
        `incident.named` event per name in the case `incident-names` of the workspace's ledger (the
        rooms' `rooms.db`), decided at the version read, so racing runs never share a name."""
        _, decision = decide_on(self.rooms.ledger, names_fold, NAMES_CASE, IncidentNames, name_incident,
                                "the workspace's rooms.db was written behind its back; restore it")
        named = decision.events[0]
        assert isinstance(named, IncidentNamed)
        return named.incident

    @property
    def local_orgs(self) -> tuple[str, ...]:
        """The organisations whose guards this workspace holds (on an organisation's own machine:
        its own; in a demo, every one): those with a pinned guard."""
        pins = self.pins()
        return tuple(o for o in self.orgs if o in pins)

    def is_set_up(self) -> bool:
        return (self.pins_path.exists() and self.parties_path.exists()
                and all(self.guard_config_path(o).exists() for o in self.local_orgs))

    def setup(self, parties: Parties, settings: Settings | None = None,
              local: tuple[str, ...] | None = None) -> dict[str, str]:
        """Build the guards of the `local` organisations (by default every one) from their
        configuration (code, secret patterns and protected values, hashed) and pin their digests and
        the organisations', with the playbooks' and (given `settings`) the agents' and incident
        settings' (`incident.pins`). On an organisation's own machine `local` is that organisation:
        the others' code and values are not there, and their guards are theirs to run."""
        if self._rooms is not None:
            raise UsageError("this workspace's rooms are open", "set the workspace up before using it")
        here = [parties.get(o) for o in local] if local is not None else list(parties)
        for org in here:
            if not org.code:
                raise UsageError(f"{org.key} is set up here, but its configuration names no code for its guard",
                                 f"add code = [\"...\"] to [org.{org.key}] (globs of its source files)")
        parties.write(self.parties_path)
        self._parties = Parties.read(self.parties_path)
        pins = {"parties": sha256_file(self.parties_path)}
        apart = remote_orgs(settings)
        if unknown := [o for o in apart if o not in parties.keys]:
            raise UsageError(f"[incident.approvers.{unknown[0]}] names no organisation of this incident",
                             f"use one of: {', '.join(parties.keys)}")
        for org in here:
            # An approver that is a process of its own keeps its key there: pin the public key its
            # organisation sent (trusted here), and make no key of that name.
            approver_key = (self._trusted_approver_key(org.key) if org.key in apart
                            else self.keys.ensure(f"incident-approver-{org.key}").public)
            self.keys.ensure(f"incident-guard-{org.key}")
            cfg = build_config(org.key, org.language, list(org.code), list(org.protected),
                               private_room=org.private_room, shared_room=SHARED_ROOM,
                               approver=org.approver, approver_key=approver_key,
                               secret_patterns=org.secret_patterns)
            cfg.write(self.guard_config_path(org.key))
            pins[org.key] = sha256_file(self.guard_config_path(org.key))
        pins.update(control_pins(settings))
        self.pins_path.parent.mkdir(parents=True, exist_ok=True)
        self.pins_path.write_bytes(canonical_bytes(pins) + b"\n")
        return pins

    def _trusted_approver_key(self, org: str) -> PublicKey:
        name = f"incident-approver-{org}"
        path = self.keys.trusted_dir / f"{name}.pub"
        try:
            return PublicKey.from_hex(path.read_text(), name)
        except FileNotFoundError:
            raise UsageError(f"{org}'s approver is a process of its own ([incident.approvers.{org}]), and no public "
                             f"key of it is trusted here", f"on {org}'s machine `signoff evidence key export {name} > "
                             f"{org}.pub`; here `signoff evidence key trust {name} {org}.pub`") from None

    def adopt(self, other: Workspace) -> None:
        """Be set up as `other` is, with its pinned guards as they are (not rebuilt: a guard's
        protected values are kept only as salted hashes, so the pinned configuration is the only copy
        there is). Every organisation's guard must be in `other`: a run here hosts every agent."""
        if self._rooms is not None:
            raise UsageError("this workspace's rooms are open", "set the workspace up before using it")
        missing = [o for o in other.orgs if o not in other.local_orgs]
        if missing:
            raise UsageError(f"the guards of {', '.join(missing)} are not set up on this machine, and a run in rooms "
                             "here hosts every organisation's agent",
                             "run `signoff incident setup --config incident.toml` with every organisation's code here")
        self.root.mkdir(parents=True, exist_ok=True)
        shutil.copy2(other.parties_path, self.parties_path)
        self._parties = None
        for org in other.orgs:
            self.guard_config_path(org).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(other.guard_config_path(org), self.guard_config_path(org))
        shutil.copy2(other.pins_path, self.pins_path)

    def pins(self) -> dict[str, str]:
        try:
            data = json.loads(self.pins_path.read_text())
        except FileNotFoundError as exc:
            raise UsageError(f"no incident set up at {self.root}", "run `signoff incident setup`") from exc
        except ValueError as exc:
            raise IntegrityError(f"{self.pins_path} is damaged", "restore it, or run `signoff incident setup` "
                                 "again on purpose (this re-pins the guards)") from exc
        if not isinstance(data, dict):
            raise UsageError(f"{self.pins_path} is not a pin file", "run `signoff incident setup` again")
        return {str(k): str(v) for k, v in data.items()}

    def guard_file_digest(self, org: str) -> str:
        return sha256_file(self.guard_config_path(org))

    def guard(self, org: str, logged: bool = True, current_incident: Callable[[], str | None] | None = None) -> Guard:
        """The organisation's guard, refusing to run if its configuration file no longer matches the pin."""
        config = GuardConfig.read(self.guard_config_path(org))
        pin = self.pins().get(org, "")
        # The pin is of the file; the guard re-checks its parsed configuration against the same
        # file's digest, so an edit to either the file or the pins makes it refuse.
        expected = config.digest() if self.guard_file_digest(org) == pin else "pin-mismatch"
        log = self.guard_log(org, self.keys.ensure(f"incident-guard-{org}")) if logged else None
        return Guard(config, expected, log, self.approvals(org), current_incident=current_incident,
                     remote=self._remote.get(org))


@dataclass
class LedgerReport:
    chains: list[RecordChainReport] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    disclosures_crossed: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems and all(c.ok for c in self.chains)

    def all_problems(self) -> list[str]:
        return [p for c in self.chains for p in c.problems] + self.problems

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "chains": [c.as_json() for c in self.chains],
                "disclosures_crossed": self.disclosures_crossed, "problems": self.all_problems()}


def verify_ledger(ws: Workspace) -> LedgerReport:
    """Both organisations' chains intact, and every disclosure that crossed has a matching signed record."""
    report = LedgerReport()
    trusted = ws.keys.trusted()
    approvals: dict[str, dict[str, dict[str, Any]]] = {}
    passed: dict[str, dict[str, dict[str, Any]]] = {}
    parties = ws.parties
    for org in parties.keys:
        if ws.records_db_path(org).exists():
            # The ledger's own hash chain: rows changed, added or removed behind its back.
            audit = verify_chain(ws.org_ledger(org))
            if not audit.ok:
                report.problems.append(f"{org} records ledger: {audit.problem}")
        a = ws.approvals(org).verify(trusted, f"{org}/approvals")
        g = ws.guard_log(org).verify(trusted, f"{org}/guard-log")
        for chain, role in ((a, "approver"), (g, "guard")):
            want = ws.keys.ensure(f"incident-{role}-{org}").keyid
            for rec in chain.records:
                if rec.get("keyid") != want:
                    chain.problems.append(f"{chain.name} record {rec.get('seq')}: not signed by {org}'s {role} key")
        report.chains += [a, g]
        approvals[org] = {r["body"]["d_id"]: r["body"] for r in a.records if isinstance(r.get("body"), dict)}
        passed[org] = {r["body"]["d_id"]: r["body"] for r in g.records
                       if isinstance(r.get("body"), dict) and r["body"].get("allowed") and r["body"].get("d_id")
                       and r["body"].get("room") == SHARED_ROOM}
    try:
        shared = ws.rooms.messages(SHARED_ROOM)
        drafts = {org: {m.msg_id: m for m in ws.rooms.messages(private_room(org))} for org in parties.keys}
    except SignoffError as exc:
        report.problems.append(exc.message)
        shared, drafts = [], {}
    for m in shared:
        parsed = parse_disclosure_post(m.text)
        if parsed is None:
            continue
        head, evidence = parsed
        d_id, org = head["d_id"], head["org"]
        report.disclosures_crossed += 1
        if org not in parties.keys or m.sender != parties.get(org).agent:
            report.problems.append(f"{d_id} in the shared room was posted by {m.sender}, not by {org}'s agent")
            continue
        record = approvals.get(org, {}).get(d_id)
        if record is None:
            report.problems.append(f"{d_id} crossed to the shared room ({m.msg_id}) with no signed approval")
            continue
        # What crossed must be exactly the published form of the draft that was approved.
        draft_msg = drafts.get(org, {}).get(str(record.get("draft_msg_id")))
        d = Disclosure(d_id, head["incident"], org, evidence, draft_msg.text) if draft_msg else None
        signed = d is not None and (record.get("evidence_sha256"), record.get("text_sha256")) == (
            d.evidence_sha256, d.text_sha256)
        if d is None or not signed or m.text != published_text(d, str(record.get("approver"))):
            report.problems.append(f"{d_id} in the shared room differs from what {record.get('approver')} approved")
        if d_id not in passed.get(org, {}):
            report.problems.append(f"{d_id} crossed but {org}'s guard log has no pass for it")
    for org in parties.keys:
        for d_id, entry in passed[org].items():
            record = approvals[org].get(d_id)
            if record is None:
                report.problems.append(f"{org}'s guard passed {d_id} but no signed approval for it exists")
            elif record.get("evidence_sha256") != entry.get("evidence_sha256"):
                report.problems.append(f"{org}'s guard passed {d_id} with evidence that was not approved")
    return report


__all__ = ["SHARED_ROOM", "LedgerReport", "Workspace", "private_room", "verify_ledger"]
