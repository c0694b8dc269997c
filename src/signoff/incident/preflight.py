"""`signoff incident preflight`: before an incident, the full checklist, each item pass or fail with
its fix.

The pinned controls are those of the home's incident workspace (`signoff incident setup`): both
guards, the playbooks and the settings (`incident.pins`, which `signoff doctor` shows too). The rest
is measured on a scratch run started like a real one (room server process, both evidence servers,
notary, approver, commander, both company agents), removed afterwards:

- every service answers;
- each evidence server refuses the other company's token;
- the approver is connected and a member of both private rooms;
- each organisation's approver that is a process of its own answers with its pinned key;
- every role of the shared room is held by its agent;
- the sandbox denies the agent's shell its canaries (rewriting the guard, reading the other side);
- each guard blocks a draft planted in the shared room.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from signoff.incident.actors import RoomAgent
from signoff.incident.evidence_server import EvidenceClient
from signoff.incident.pins import pin_checks
from signoff.incident.redteam import sandboxed
from signoff.incident.scenario import Scenario
from signoff.incident.stack import APPROVER, MEDIATOR
from signoff.incident.workflow import Incident, new_live_run, new_run
from signoff.incident.workspace import Workspace
from signoff.kernel.checks import Check
from signoff.kernel.errors import SignoffError
from signoff.kernel.settings import Settings
from signoff.kernel.tls import tls_context
from signoff.trust import KeyStore

CANARIES = {
    "rewrite its own guard": ["python3", "-c", "open('/home/agent/guard.json','w').write('{}')"],
    "read the other company's capture": ["cat", "{other}"],
}


def _attempt(name: str, call: Callable[[], Any], fix: str, ok_detail: str) -> Check:
    try:
        call()
    except (SignoffError, httpx.HTTPError, OSError) as exc:
        return Check(name, False, getattr(exc, "message", None) or str(exc) or type(exc).__name__, fix)
    return Check(name, True, ok_detail)


def _services(inc: Incident) -> list[Check]:
    assert inc.rooms_server is not None
    url = inc.rooms_server.url
    checks = [_attempt("room server up",
                       lambda: httpx.get(f"{url}/health", timeout=5, verify=tls_context()).raise_for_status(),
                       "start the room server (`signoff serve`), or look at its log", f"answers at {url}")]
    names = inc.cast.room_names
    for org in inc.cast.keys:
        def own(org: str = org) -> None:
            client = EvidenceClient(inc.servers[org].url, inc.evidence_tokens[org])
            try:
                client.summary()
            finally:
                client.close()

        checks.append(_attempt(f"{org} evidence server up", own, f"start {org}'s evidence server",
                               f"answers {org}'s own token at {inc.servers[org].url}"))
    for name, actor in sorted(inc.actors.items()):
        key = actor.room_keys[0]

        def answers(actor: RoomAgent = actor, key: str = key) -> None:
            actor.op(key, "get_room_detail", room_id=inc.info.rooms[key])

        checks.append(_attempt(f"{name} up", answers, f"restart {name}; it must reach the room server",
                               f"connected to {names[key]}"))
    return checks


def _approver(inc: Incident) -> Check:
    approver = inc.actors[APPROVER]
    missing = []
    names = inc.cast.room_names
    for org in inc.cast.keys:
        detail = approver.op(org, "get_room_detail", room_id=inc.info.rooms[org])
        if not any(p.get("name") == inc.info.server_name(APPROVER) and p.get("type") == "agent"
                   for p in detail["participants"]):
            missing.append(names[org])
    return Check("approver connected and in its rooms", not missing,
                 f"not a member of {', '.join(missing)}" if missing else
                 f"connected, a member of {' and '.join(names[o] for o in inc.cast.keys)}",
                 "add the approver to every private room (`signoff rooms` as the rooms' owner)")


def _approver_processes(inc: Incident) -> list[Check]:
    """Each organisation's approver that is a process of its own answers, with the pinned key."""
    checks = []
    for org, process in sorted(inc.processes.items()):
        name = f"{org} approver process answers with its pinned key"
        try:
            checks.append(Check(name, True, process.check_key()))
        except SignoffError as exc:
            checks.append(Check(name, False, exc.message, exc.fix))
    return checks


def _roles(inc: Incident) -> Check:
    listed = inc.actors[MEDIATOR].op("shared", "list_roles")
    held = {r["name"]: sorted(h["name"] for h in r["held_by"]) for r in listed}
    roles = inc.cast.roles
    wrong = [f"{role} held by {', '.join(held.get(role, [])) or 'nobody'} (want {agent})"
             for role, (agent, _, _) in roles.items() if held.get(role) != [inc.info.server_name(agent)]]
    return Check("every role held", not wrong, "; ".join(wrong) or f"{len(roles)} roles, each held by its agent",
                 "start the missing agent; it takes its role when it connects")


def _canaries(inc: Incident) -> list[Check]:
    checks = []
    for what, command in CANARIES.items():
        try:
            denied, how = sandboxed(command, inc.ws)
        except SignoffError as exc:
            denied, how = False, f"the sandbox did not start: {exc.message}"
        checks.append(Check(f"sandbox denies the agent's shell: {what}", denied, how,
                            "install bubblewrap (apt-get install -y bubblewrap); `signoff sandbox check` says more"))
    return checks


def _measured(inc: Incident) -> list[Check]:
    inc.pump()
    checks = _services(inc)
    seen = inc.preflight()
    for org in inc.cast.keys:
        other = inc.ws.parties.others(org)[0].key
        ok = bool(seen[f"{org}_evidence_refuses_other_token"])
        checks.append(Check(f"{org} evidence server refuses {other}'s token", ok,
                            "refused" if ok else f"{other}'s token was accepted",
                            f"each evidence server must take only its own company's token: restore {org}'s"))
    checks += [_approver(inc), *_approver_processes(inc), _roles(inc), *_canaries(inc)]
    for org in inc.cast.keys:
        ok = bool(seen[f"{org}_guard_blocks_draft"])
        checks.append(Check(f"{org} guard blocks a planted draft", ok,
                            "blocked: draft_outside_private_room" if ok else "the planted draft passed",
                            f"restore {org}'s pinned guard configuration (`signoff incident setup`)"))
    return checks


def preflight(home: Path, keys: KeyStore, settings: Settings, scenario: Scenario | None) -> list[Check]:
    """The checklist. With `scenario` the scratch run plays its organisations and traffic (the demo);
    without, it is a run of the incident set up in the home, with its pinned guards and captures."""
    checks: list[Check] = []
    with Workspace(Path(home) / "incident", keys) as ws:
        if ws.is_set_up():
            checks += pin_checks(ws, settings)
        else:
            checks.append(Check("controls pinned", False, f"no incident set up at {ws.root}",
                                "run `signoff incident setup`"))
            if scenario is None:
                return checks
    scratch = Path(tempfile.mkdtemp(prefix="incident-preflight-"))
    try:
        try:
            run = new_run(scratch, keys, scenario) if scenario is not None else new_live_run(scratch, keys, home)
        except SignoffError as exc:
            return [*checks, Check("scratch incident provisioned", False, exc.message, exc.fix)]
        try:
            with Incident(run, keys, settings, scenario) as inc:
                checks += _measured(inc)
        except SignoffError as exc:
            checks.append(Check("services up", False, exc.message, exc.fix))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return checks


__all__ = ["CANARIES", "preflight"]
