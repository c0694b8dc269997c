"""The incident's facade: what every face calls, with typed commands.

The CLI (`signoff incident ...`, `signoff demo incident`, the doctor and evidence checks) and the
web pages (the console, "try to break it") reach the incident through here, never through its inner
modules (tests/system/incident/test_facade.py holds them to it). Decisions are pure and live in
`decisions.py` (and `Guard.decide`); the cases they change are typed in `model.py`. The HTTP apps
and processes the incident runs for itself (the approver's and the evidence servers' apps, the room
server process, the scripted services of a run) are part of the package and run the same decisions
through `Approver`, `SaltBudget`, `IssuedSalts` and `Chain`.

Modules that start servers, graders or whole runs are imported when a command runs, so that loading
the CLI costs no more than it did.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from signoff.incident.fingerprint import salt_id
from signoff.incident.guard import GuardVerdict, Post
from signoff.incident.notary import Comparison
from signoff.incident.parties import ORG_KEY, Organisation, Parties
from signoff.incident.scenario import Rerun, Scenario
from signoff.incident.workspace import SHARED_ROOM, LedgerReport, Workspace, verify_ledger
from signoff.kernel.checks import Check
from signoff.kernel.errors import ConflictError, NotFoundError, UnavailableError, UsageError
from signoff.kernel.settings import Settings
from signoff.trust import KeyStore

if TYPE_CHECKING:
    from signoff.incident.approver_process import ApproverProcess
    from signoff.incident.breakit import Attack as Attack
    from signoff.incident.console import Console as Console
    from signoff.incident.console import Step as Step
    from signoff.incident.evidence_process import EvidenceProcess
    from signoff.incident.people import Awaiting as Awaiting


# -- part 1: the organisations, the workspace, the guard, the ledgers ---------------------------------


def load_parties(path: Path) -> Parties:
    """An incident configuration (TOML): the organisations, their guards' inputs, their captures."""
    return Parties.load(path)


@dataclass(frozen=True)
class CheckGuard:
    """An organisation's outbound guard on `text` posted to `room` (logged: rules and counts only)."""

    org: str
    text: str
    room: str = SHARED_ROOM


def workspace(root: Path, keys: KeyStore) -> Workspace:
    """The incident workspace at `root` (by default `<home>/incident`)."""
    return Workspace(root, keys)


def setup(ws: Workspace, settings: Settings, parties: Parties, local: tuple[str, ...] | None = None) -> dict[str, str]:
    """Build the guards of the `local` organisations (default: every one) from their configuration
    and pin them with the organisations, the playbooks and `settings`."""
    return ws.setup(parties, settings, local)


def verify(ws: Workspace) -> LedgerReport:
    """Both organisations' chains, and every disclosure that crossed against its signed approval."""
    if not ws.root.is_dir():
        raise NotFoundError(f"no incident state at {ws.root}", "run `signoff incident run` first, or pass --root")
    return verify_ledger(ws)


def check_guard(ws: Workspace, cmd: CheckGuard) -> GuardVerdict:
    if not ws.is_set_up():
        raise UsageError(f"no incident set up at {ws.root}", "run `signoff incident setup` first")
    if cmd.org not in ws.local_orgs:
        raise UsageError(f"no guard of {cmd.org!r} here", f"use --org with one of: {', '.join(ws.local_orgs)}")
    return ws.guard(cmd.org).check(Post(cmd.room, cmd.text))


@dataclass(frozen=True)
class RunAlone:
    """Run one organisation's approver (or evidence server) as a process of its own: it answers the
    caller holding `token` (the room server's or bridge's; the agent's for evidence), and reads the
    current incident from the notary's salts (`incident-notary/<notary_id>` in the ledger at
    `notary_db`)."""

    org: str
    token: str
    notary_db: str
    notary_id: str


def approver_process(ws: Workspace, cmd: RunAlone) -> ApproverProcess:
    """The organisation's approver with its key, as an HTTP app (the caller serves it and closes it)."""
    from signoff.incident.approver_process import start

    return start(ws, cmd.org, cmd.token, cmd.notary_db, cmd.notary_id)


def evidence_process(ws: Workspace, cmd: RunAlone) -> EvidenceProcess:
    """The organisation's evidence server over its configured captures, as an HTTP app (the caller
    serves it and closes it); `cmd.token` is the token its agent holds."""
    from signoff.incident.evidence_process import start

    return start(ws, cmd.org, cmd.token, cmd.notary_db, cmd.notary_id)


@dataclass(frozen=True)
class NotaryAt:
    """A notary's salts: the case `incident-notary/<notary_id>` in the ledger at `db` (a URL every
    organisation's evidence server and approver reads)."""

    db: str
    notary_id: str


def open_incident(at: NotaryAt, incident: str | None = None) -> dict[str, str]:
    """Open an incident on the notary (a fresh salt; the incident becomes current): its name and
    salt, which the organisations' agents fingerprint under."""
    from signoff.incident.salts import IssuedSalts
    from signoff.ledger import SqlLedger

    ledger = SqlLedger.from_url(at.db)
    try:
        salts = IssuedSalts(ledger, at.notary_id)
        name = incident or f"INC-{len(salts.notary().issued) + 1:04d}"
        issued = salts.issue(name)
    finally:
        ledger.close()
    return {"incident": issued.incident, "salt": issued.salt.hex(), "salt_id": salt_id(issued.salt)}


def fingerprint_over(url: str, token: str, event_id: str, incident: str, salt_hex: str) -> dict[str, Any]:
    """Ask an organisation's evidence server for the salted fingerprint of one event."""
    from signoff.incident.evidence_server import EvidenceClient
    from signoff.incident.notary import IssuedSalt

    try:
        salt = bytes.fromhex(salt_hex)
    except ValueError:
        raise UsageError("the salt is not hex", "copy the salt `signoff incident open` printed") from None
    client = EvidenceClient(url, token)
    try:
        return client.fingerprint(event_id, IssuedSalt(incident, salt, ""))
    finally:
        client.close()


def compare(at: NotaryAt, a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    """The notary's comparison of two fingerprints (refused unless both are under its current salt)."""
    from signoff.incident.salts import IssuedSalts
    from signoff.ledger import SqlLedger

    ledger = SqlLedger.from_url(at.db)
    try:
        return IssuedSalts(ledger, at.notary_id).notary().compare(a, b)
    finally:
        ledger.close()


def doctor_checks(settings: Settings) -> list[Check]:
    """`signoff doctor`'s incident checks: the workspace's pins when it is set up."""
    from signoff.incident.doctor import doctor_checks as checks

    return checks(settings)


# -- part 2: runs in rooms ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Demo:
    """A fresh run of the whole incident, graded. `cards=False` decides the fixes by addressed
    commands; with `rooms_url` the run is provisioned on that server as `operator`."""

    base: Path
    scenario: Scenario
    cards: bool = True
    rooms_url: str | None = None
    operator: str | None = None
    people: bool = False  # wait for real people's decisions (from the console or chat) instead of scripted ones


def runs_base(home: Path) -> Path:
    """Where runs live (`<home>/incident-runs`): the console lists them, the CLI finds them there."""
    from signoff.incident.console import runs_base as base

    return base(home)


def resolve_run(base: Path, run: str) -> Path:
    """A run folder, given as a path or as a run name under `base`."""
    for candidate in (Path(run), base / run):
        if (candidate / "run.json").is_file():
            return candidate
    raise NotFoundError(f"no incident run {run!r}", "pass the run folder `signoff incident demo` printed "
                        f"(runs live in {base})")


def demo(cmd: Demo, keys: KeyStore, settings: Settings) -> dict[str, Any]:
    from signoff.incident.external import ServerProvisioner
    from signoff.incident.grade import grade as grade_run
    from signoff.incident.workflow import run_demo

    server = None
    if cmd.rooms_url is not None:
        if not cmd.operator:
            raise UsageError(f"[rooms] url is set ({cmd.rooms_url}): the incident provisions its rooms there as an "
                             "operator", "pass --operator TOKEN (an admin's user token) or set SIGNOFF_ROOMS_OPERATOR")
        url, operator = cmd.rooms_url, cmd.operator
        server = lambda secrets: ServerProvisioner(url, operator, secrets)  # noqa: E731
    summary = run_demo(cmd.base, keys, settings, cmd.scenario, without=() if cmd.cards else ("request_approval",),
                       server=server, people=cmd.people)
    summary["grade"] = grade_run(Path(summary["run"]), keys)
    summary["ok"] = summary["grade"]["ok"]
    summary["kind"] = ("people decided; the reports and requests were scripted" if cmd.people else
                       "simulated (scripted humans); rooms, policies, guards, approver, notary and fixture measured")
    return summary


def set_up_here(home: Path, keys: KeyStore) -> Parties | None:
    """The incident set up on this machine (`signoff incident setup`), or None."""
    with Workspace(Path(home) / "incident", keys) as ws:
        return ws.parties if ws.is_set_up() else None


def start_live(home: Path, keys: KeyStore, settings: Settings, scenario: Scenario) -> tuple[list[Check], str | None]:
    """"Start an incident": the preflight checklist on the incident set up on this machine, and, when
    every item passes, a run in rooms that waits for the people, played in a thread of this process.
    The demo's organisations play the demo (`scenario`: its traffic, its scripted report and
    requests, people deciding); any other incident is the people's from its first report, with the
    home's pinned guards and captures. Returns the checklist and the run's name (None: not started)."""
    import threading

    from signoff.incident.workflow import new_live_run, new_run, play, play_live

    here = set_up_here(home, keys)
    if here is None:
        raise ConflictError("no incident is set up on this machine",
                            "run `signoff incident setup --config incident.toml` first")
    demo = _plays_the_demo(here)
    checks = preflight(home, keys, settings, scenario if demo else None)
    if not all(c.ok for c in checks):
        return checks, None
    # The services run in this process (over_http=False): they end with it, leaving no room server behind.
    started = threading.Event()
    if demo:
        started.set()  # the demo's scripted report waits for its services itself
        run_dir = new_run(runs_base(home), keys, scenario, ("request_approval",))
        thread = threading.Thread(target=play, args=(run_dir, keys, settings, scenario),
                                  kwargs={"people": True, "over_http": False}, name=f"incident {run_dir.name}",
                                  daemon=True)
    else:
        run_dir = new_live_run(runs_base(home), keys, home)
        thread = threading.Thread(target=play_live, args=(run_dir, keys, settings), kwargs={"ready": started.set},
                                  name=f"incident {run_dir.name}", daemon=True)
    thread.start()
    # The run's page is linked only once its services are connected: a person's first report, sent
    # as soon as the page shows, must reach the commander.
    while not started.wait(0.2):
        if not thread.is_alive():
            raise UnavailableError(f"the incident run {run_dir.name} stopped before its services were connected",
                                   "see the server's log, and start the incident again")
    return checks, run_dir.name


def grade(run_dir: Path, keys: KeyStore) -> dict[str, Any]:
    from signoff.incident.grade import grade as grade_run

    return grade_run(run_dir, keys)


def replay(path: Path, as_org: str | None = None) -> list[dict[str, Any]]:
    from signoff.incident.recording import replay as rows

    return rows(path, as_org)


def render(rows: list[dict[str, Any]]) -> list[str]:
    from signoff.incident.recording import render as lines

    return lines(rows)


def redteam(base: Path, keys: KeyStore, settings: Settings, scenario: Scenario) -> dict[str, Any]:
    from signoff.incident.redteam import run_redteam

    return run_redteam(base, keys, settings, scenario)


def preflight(home: Path, keys: KeyStore, settings: Settings, scenario: Scenario | None) -> list[Check]:
    """The checklist: the home's pinned controls, then a scratch run started like a real one: of
    `scenario`, or (None, or when the home is set up for other organisations than the scenario's
    cast) of the incident set up in the home."""
    from signoff.incident.preflight import preflight as checklist

    here = set_up_here(home, keys)
    if scenario is not None and here is not None and not _plays_the_demo(here):
        scenario = None  # the incident set up here is someone's own: check that one, not the demo
    return checklist(home, keys, settings, scenario)


def _plays_the_demo(parties: Parties) -> bool:
    """Whether `parties` are the scripted demo's cast (its people, agents and script)."""
    from signoff.incident.stack import check_cast

    try:
        check_cast(parties)
    except UsageError:
        return False
    return True


# -- the console (web) ---------------------------------------------------------------------------------


def list_runs(base: Path) -> list[dict[str, Any]]:
    from signoff.incident.console import list_runs as runs

    return runs(base)


def find_run(base: Path, name: str) -> Path:
    from signoff.incident.console import find_run as find

    return find(base, name)


def check_view(as_org: str | None) -> str | None:
    """The organisation a view is cut to (None: every one); UsageError for what cannot be a key
    (`console_view` checks it is one of the run's)."""
    if as_org in (None, ""):
        return None
    if not ORG_KEY.match(as_org):
        raise UsageError(f"{as_org!r} is not an organisation", "view as one of the run's organisations, or as all")
    return as_org


def run_orgs(run_dir: Path) -> dict[str, str]:
    """A run's organisations: key -> name as people read it."""
    from signoff.incident.console import run_parties

    return run_parties(run_dir).names


def console_view(run_dir: Path, keys: KeyStore, as_org: str | None = None, at: int | None = None) -> Console:
    from signoff.incident.console import build

    return build(run_dir, keys, as_org, at)


def live_token(run_dir: Path) -> tuple[bool, int, str] | None:
    """What must change before a live view of the run can (None: read it each time)."""
    from signoff.incident.console import change_token

    return change_token(run_dir)


def postmortem(run_dir: Path) -> dict[str, Any]:
    from signoff.incident.postmortem import postmortem as report

    return report(run_dir)


def postmortem_markdown(run_dir: Path) -> str:
    """A finished run's postmortem as Markdown (the same for every organisation)."""
    from signoff.incident.postmortem import as_markdown
    from signoff.incident.postmortem import postmortem as report

    return as_markdown(report(run_dir), run_orgs(run_dir))


def export_postmortem(run_dir: Path, keys: KeyStore, org: str, folder: Path) -> Path:
    """A finished run's postmortem as signed evidence (`signoff evidence verify` checks it), signed
    by `org`'s approver key: the report as JSON, with its Markdown and the Markdown's digest."""
    from signoff.incident.evidence import export_postmortem as export
    from signoff.incident.postmortem import as_json, as_markdown
    from signoff.incident.postmortem import postmortem as report

    names = run_orgs(run_dir)
    if org not in names:
        raise UsageError(f"unknown organisation {org!r}", f"sign as one of: {', '.join(names)}")
    found = report(run_dir)
    return export(as_json(found), as_markdown(found, names), org, keys.load(f"incident-approver-{org}"), folder)


@dataclass(frozen=True)
class Decide:
    """`person` (signed in, bound to `org`) decides `ref` (D-PAY-1, INC-0001-fix-payco, INC-0001) with
    `option` (approve, or refuse for a disclosure) on the content whose digest the page showed."""

    org: str
    person: str
    ref: str
    digest: str
    option: str


@dataclass(frozen=True)
class Write:
    """`person` (signed in, bound to `org`: its approver, or one of its people for a `report` or a
    `draft`) writes in their own words (`kind`):
    `report` (to the incident commander), `fix` (the fix their organisation will make), `redraft`
    (draft `ref`, whose digest the page showed, again as `text`) or `draft` (a disclosure as `text`,
    with no draft before it)."""

    org: str
    person: str
    kind: str
    text: str
    ref: str = ""
    digest: str = ""


def write(run_dir: Path, keys: KeyStore, cmd: Write) -> dict[str, Any]:
    """A person's own words from a page, checked against the run as it is now and posted as them."""
    from signoff.incident.people import write as written
    from signoff.incident.stack import workspace as run_workspace

    with run_workspace(run_dir, keys) as ws:
        guard = ws.guard(cmd.org, logged=False) if cmd.org in ws.parties.keys else None
        return written(run_dir, console_view(run_dir, keys, cmd.org), cmd, guard.check_text if guard else None)


def awaiting(view: Console, org: str, person: str) -> list[Awaiting]:
    """What waits in a running incident for `person`'s decision as `org`'s approver (nothing when
    they are not), with the digest of what the page shows (drafts of disclosures as they will
    cross, fix requests, a proposed root cause)."""
    from signoff.incident.people import awaiting as waiting
    from signoff.incident.people import decides_for

    return waiting(view, org) if decides_for(view, org, person) else []


def writes_for(view: Console, org: str, person: str) -> tuple[str, ...]:
    """What `person` may write for `org` from the page: its approver every kind, one of its people
    a report and a disclosure in their own words (`draft`), anyone else nothing."""
    from signoff.incident.people import writes_for as writes

    return writes(view, org, person)


def decide(run_dir: Path, keys: KeyStore, cmd: Decide) -> dict[str, Any]:
    """A person's decision from a page, on the content whose digest the page showed: checked
    against the run as it is now (a stale digest: ConflictError, nothing posted), then posted in the
    room as that person's exact command, which the approver (or the commander) checks again."""
    from signoff.incident.people import decide as decided

    return decided(run_dir, console_view(run_dir, keys, cmd.org), cmd)


# -- try to break it -----------------------------------------------------------------------------------

def try_max_chars() -> int:
    """The longest text "try to break it" tries (one post to the shared room)."""
    from signoff.incident.breakit import MAX_CHARS

    return MAX_CHARS


def attacks(parties: Parties | None = None) -> list[Attack]:
    from signoff.incident.breakit import attacks as every

    return every(parties)


def tried_attacks(home: Path, keys: KeyStore, parties: Parties) -> list[dict[str, Any]]:
    """Every red team attack with what the text controls of `parties` (a demo's) say of its text."""
    from signoff.incident.breakit import tried_attacks as tried
    from signoff.incident.breakit import try_workspace

    with try_workspace(home, keys, parties) as ws:
        return tried(ws, parties)


def try_text(home: Path, keys: KeyStore, text: str, parties: Parties) -> dict[str, Any]:
    """`text` through the pinned guards of `parties` (a demo's: never a real incident's, whose
    guards would answer anyone's guesses at its protected values) and the airlock, logged nowhere."""
    from signoff.incident.breakit import try_text as tried
    from signoff.incident.breakit import try_workspace

    with try_workspace(home, keys, parties) as ws:
        return tried(ws, text)


__all__ = [
    "ORG_KEY",
    "SHARED_ROOM",
    "CheckGuard",
    "Comparison",
    "Decide",
    "Demo",
    "GuardVerdict",
    "LedgerReport",
    "NotaryAt",
    "Organisation",
    "Parties",
    "Post",
    "Rerun",
    "RunAlone",
    "Scenario",
    "Workspace",
    "Write",
    "approver_process",
    "attacks",
    "awaiting",
    "check_guard",
    "check_view",
    "compare",
    "console_view",
    "decide",
    "demo",
    "evidence_process",
    "export_postmortem",
    "find_run",
    "fingerprint_over",
    "grade",
    "list_runs",
    "load_parties",
    "open_incident",
    "postmortem",
    "postmortem_markdown",
    "preflight",
    "redteam",
    "render",
    "replay",
    "resolve_run",
    "run_orgs",
    "runs_base",
    "set_up_here",
    "setup",
    "start_live",
    "tried_attacks",
    "try_max_chars",
    "try_text",
    "verify",
    "workspace",
    "write",
]
