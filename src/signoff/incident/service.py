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

from signoff.incident.fixture import ORG_NAMES, ORGS
from signoff.incident.guard import GuardVerdict, Post
from signoff.incident.workspace import SHARED_ROOM, LedgerReport, Workspace, verify_ledger
from signoff.kernel.checks import Check
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.kernel.settings import Settings
from signoff.trust import KeyStore

if TYPE_CHECKING:
    from signoff.incident.breakit import Attack as Attack
    from signoff.incident.console import Console as Console
    from signoff.incident.console import Step as Step
    from signoff.incident.simulate import SimulationResult


# -- part 1: the fixture, the workspace, the guard, the ledgers ------------------------------------


@dataclass(frozen=True)
class Simulate:
    """Run the PayCo/ShopCo fixture once and capture what each side signed and verified."""

    out: Path
    fixed_payco: bool = False
    fixed_shopco: bool = False
    fixture: Path | None = None


@dataclass(frozen=True)
class CheckGuard:
    """An organisation's outbound guard on `text` posted to `room` (logged: rules and counts only)."""

    org: str
    text: str
    room: str = SHARED_ROOM
    fixture: Path | None = None


def workspace(root: Path, keys: KeyStore) -> Workspace:
    """The incident workspace at `root` (by default `<home>/incident`)."""
    return Workspace(root, keys)


def simulate(cmd: Simulate) -> SimulationResult:
    from signoff.incident.simulate import simulate as run_simulation

    return run_simulation(cmd.out, cmd.fixed_payco, cmd.fixed_shopco, cmd.fixture)


def setup(ws: Workspace, settings: Settings, fixture: Path | None = None) -> dict[str, str]:
    """Build both guards' configurations and pin them with the playbooks and `settings`."""
    return ws.setup(fixture, settings)


def verify(ws: Workspace) -> LedgerReport:
    """Both organisations' chains, and every disclosure that crossed against its signed approval."""
    if not ws.root.is_dir():
        raise NotFoundError(f"no incident state at {ws.root}", "run `signoff incident run` first, or pass --root")
    return verify_ledger(ws)


def check_guard(ws: Workspace, cmd: CheckGuard, settings: Settings) -> GuardVerdict:
    if cmd.org not in ORGS:
        raise UsageError(f"unknown organisation {cmd.org!r}", f"use --org with one of: {', '.join(ORGS)}")
    if not ws.is_set_up():
        ws.setup(cmd.fixture, settings)
    return ws.guard(cmd.org).check(Post(cmd.room, cmd.text))


def doctor_checks(settings: Settings) -> list[Check]:
    """`signoff doctor`'s incident checks: the fixture, and the workspace's pins when it is set up."""
    from signoff.incident.doctor import doctor_checks as checks

    return checks(settings)


# -- part 2: runs in rooms ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Demo:
    """A fresh run of the whole incident, graded. `cards=False` decides the fixes by addressed
    commands; with `rooms_url` the run is provisioned on that server as `operator`."""

    base: Path
    fixture: Path | None = None
    cards: bool = True
    rooms_url: str | None = None
    operator: str | None = None


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
    summary = run_demo(cmd.base, keys, settings, cmd.fixture, without=() if cmd.cards else ("request_approval",),
                       server=server)
    summary["grade"] = grade_run(Path(summary["run"]), keys, cmd.fixture)
    summary["ok"] = summary["grade"]["ok"]
    summary["kind"] = "simulated (scripted humans); rooms, policies, guards, approver, notary and fixture measured"
    return summary


def grade(run_dir: Path, keys: KeyStore, fixture: Path | None = None) -> dict[str, Any]:
    from signoff.incident.grade import grade as grade_run

    return grade_run(run_dir, keys, fixture)


def replay(path: Path, as_org: str | None = None) -> list[dict[str, Any]]:
    from signoff.incident.recording import replay as rows

    return rows(path, as_org)


def render(rows: list[dict[str, Any]]) -> list[str]:
    from signoff.incident.recording import render as lines

    return lines(rows)


def redteam(base: Path, keys: KeyStore, settings: Settings, fixture: Path | None = None) -> dict[str, Any]:
    from signoff.incident.redteam import run_redteam

    return run_redteam(base, keys, settings, fixture)


def preflight(home: Path, keys: KeyStore, settings: Settings, fixture: Path | None = None) -> list[Check]:
    from signoff.incident.preflight import preflight as checklist

    return checklist(home, keys, settings, fixture)


# -- the console (web) ---------------------------------------------------------------------------------


def list_runs(base: Path) -> list[dict[str, Any]]:
    from signoff.incident.console import list_runs as runs

    return runs(base)


def find_run(base: Path, name: str) -> Path:
    from signoff.incident.console import find_run as find

    return find(base, name)


def check_view(as_org: str | None) -> str | None:
    """The organisation a view is cut to (None: both); UsageError for anything else."""
    from signoff.incident.console import check_org

    return check_org(as_org)


def console_view(run_dir: Path, keys: KeyStore, as_org: str | None = None, at: int | None = None) -> Console:
    from signoff.incident.console import build

    return build(run_dir, keys, as_org, at)


def postmortem(run_dir: Path) -> dict[str, Any]:
    from signoff.incident.postmortem import postmortem as report

    return report(run_dir)


# -- try to break it -----------------------------------------------------------------------------------

def try_max_chars() -> int:
    """The longest text "try to break it" tries (one post to the shared room)."""
    from signoff.incident.breakit import MAX_CHARS

    return MAX_CHARS


def attacks() -> list[Attack]:
    from signoff.incident.breakit import attacks as every

    return every()


def try_text(home: Path, keys: KeyStore, text: str) -> dict[str, Any]:
    """`text` through both companies' pinned guards and the airlock, logged nowhere."""
    from signoff.incident.breakit import try_text as tried
    from signoff.incident.breakit import try_workspace

    with try_workspace(home, keys) as ws:
        return tried(ws, text)


__all__ = [
    "ORGS",
    "ORG_NAMES",
    "SHARED_ROOM",
    "CheckGuard",
    "Demo",
    "GuardVerdict",
    "LedgerReport",
    "Post",
    "Simulate",
    "Workspace",
    "attacks",
    "check_guard",
    "check_view",
    "console_view",
    "demo",
    "find_run",
    "grade",
    "list_runs",
    "postmortem",
    "preflight",
    "redteam",
    "render",
    "replay",
    "resolve_run",
    "runs_base",
    "setup",
    "simulate",
    "try_max_chars",
    "try_text",
    "verify",
    "workspace",
]
