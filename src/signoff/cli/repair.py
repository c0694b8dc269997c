"""`signoff repair`: verify a candidate against a frozen harness, and drive repair cases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from signoff.cli.context import console, err_console, print_json, settings
from signoff.cli.output import heading
from signoff.cli.progress import reporting
from signoff.kernel.errors import UsageError

app = typer.Typer(no_args_is_help=True)

_ROLE_HELP = ("The {0} agent's name on the embedded server; with \\[rooms] url, its role under \\[rooms.roles] "
              "(default: the role {0}).")
_COLOURS = {"VERIFIED": "green", "REJECTED": "red", "INCONCLUSIVE": "yellow"}


def print_result(result: Any) -> None:
    colour = _COLOURS[result.verdict]
    console.print(f"[bold {colour}]{result.verdict}[/]  base {result.base[:12]} -> candidate {result.candidate[:12]}"
                  f"  harness {result.harness_digest[:12]}", highlight=False)
    for name, stage in result.stages.items():
        s = stage.summary
        if s.outcome == "none":
            continue
        line = f"  {name:<10} {s.outcome:<10} {', '.join(stage.tests)}"
        console.print(line, highlight=False)
        if s.message:
            console.print(f"             {s.message.splitlines()[0][:160]}", highlight=False)
    for r in result.reasons:
        console.print(f"  reason: {r['code']}: {r['text']}" + (f" ({r['detail']})" if r["detail"] else ""),
                      highlight=False)
    actionable = next((r for r in result.reasons if r.get("fix")), None)
    if actionable is not None:
        # What stopped the run, as one line a person can act on (the full log is in the evidence).
        console.print(f"  error: {actionable['detail']}", highlight=False)
        console.print(f"  fix: {actionable['fix']}", highlight=False)
    for note in getattr(result, "notes", []):
        console.print(f"  note: {note}", highlight=False)
    if result.tamper:
        console.print(f"  tamper signal: the candidate edits the repository's own tests: {', '.join(result.tamper)} "
                      "(reported only; the verdict uses the frozen harness)", highlight=False)
    if result.signals:
        from signoff.repair import signal_summary

        console.print(f"  tamper signal: the diff reaches for {signal_summary(result.signals)} (review it)",
                      highlight=False)
    variables = (result.predicate.get("settings") or {}).get("env")
    if variables:
        from signoff.repair import run_env

        console.print(f"  env {run_env.shown(variables)}  (every run's; in the fingerprint)", highlight=False)
    console.print(f"  fingerprint {result.fingerprint}", highlight=False)
    bundled = result.predicate.get("bundle")
    if bundled:
        console.print(f"  bundle {bundled['file']}  sha256 {bundled['sha256']}  (base and candidate; signed in the "
                      "evidence)", highlight=False)
    if result.evidence:
        console.print(f"  evidence {result.evidence}", highlight=False)


@app.command("verify")
def verify_cmd(
    repo: Annotated[Path, typer.Option("--repo", help="The git repository.")],
    harness: Annotated[Path, typer.Option("--harness", help="Folder of approved tests, or one test file (kept with "
                                                            "its conftest.py files from the base revision); frozen "
                                                            "before running.")],
    expect: Annotated[str, typer.Option("--expect", help="Test id (relative to the harness) that must fail on base "
                                                           "by an assertion and pass on the candidate.")],
    base: Annotated[str | None, typer.Option("--base", help="The revision that shows the defect.")] = None,
    candidate: Annotated[str | None, typer.Option("--candidate",
                                                  help="The revision that claims to fix it.")] = None,
    regression: Annotated[list[str] | None, typer.Option("--regression", help="Test id that must still pass.")] = None,
    allow: Annotated[list[str] | None, typer.Option("--allow", help="Glob of paths the candidate may change.")] = None,
    pythonpath: Annotated[list[str] | None, typer.Option("--pythonpath", help="Folder inside the checkout to "
                                                                              "import from (e.g. src).")] = None,
    requirements: Annotated[list[str] | None, typer.Option("--requirements", help="Requirements file (repeatable): a "
                                                           "path in the base revision, or a file here.")] = None,
    project_deps: Annotated[bool, typer.Option("--project-deps", help="Install the dependencies the base revision "
                                               "declares (pyproject.toml, setup.cfg, setup.py).")] = False,
    extras: Annotated[list[str] | None, typer.Option("--extras", help="An extra of the project to install with its "
                                                     "dependencies, e.g. test (repeatable; implies --project-deps).")
                      ] = None,
    pytest_pin: Annotated[str | None, typer.Option("--pytest", help="Pin pytest, e.g. 'pytest==7.4.4'.")] = None,
    lock: Annotated[str | None, typer.Option("--lock", help="The project's lock file (requirements with hashes, "
                                             "Pipfile.lock, poetry.lock, pdm.lock, uv.lock, pylock.toml) in the base "
                                             "revision: every package it names is held to its locked version and "
                                             "hashes.")] = None,
    python: Annotated[str | None, typer.Option("--python", help="Python version to test with, e.g. 3.11 (any "
                                               "interpreter on this machine).")] = None,
    allow_source_builds: Annotated[bool, typer.Option("--allow-source-builds", help="Install source distributions "
                                                      "too (their build code runs on this machine); default: wheels "
                                                      "only.")] = False,
    env: Annotated[list[str] | None, typer.Option("--env", help="NAME=VALUE (repeatable): a variable every test "
                                                  "run gets, e.g. SQLITE=1; recorded in the fingerprint and the "
                                                  "evidence. Variables that change what Python, pytest, the linker "
                                                  "or a shell loads are refused.")] = None,
    build_extensions: Annotated[bool, typer.Option("--build-extensions", help="Build the extension modules the base "
                                                   "declares (setup.py ext_modules) for each revision, in the "
                                                   "sandbox, before its tests run; default: the committed sources "
                                                   "only.")] = False,
    workdir: Annotated[str, typer.Option("--workdir", help="auto (default: empty, and every run again as project "
                                         "when the tests read or write files relative to the project's root), "
                                         "empty, or project: each run starts in a writable copy of the checkout "
                                         "with the harness laid over it, as maintainers run tests from the "
                                         "project's root.")] = "auto",
    runner: Annotated[str, typer.Option("--runner", help='pytest, node, or "CMD {tests} {junit}".')] = "pytest",
    repeat: Annotated[int, typer.Option("--repeat", help="Run each execution N times; disagreement is flaky.")] = 1,
    executions: Annotated[str, typer.Option("--executions", help="auto (default: shared, unless more than a core "
                                            "and a half are idle), shared: one interpreter runs the base, then "
                                            "the candidate (one pytest start fewer), or apart: two sandboxes at "
                                            "once.")] = "auto",
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds one execution may take.")] = 120.0,
    approved_digest: Annotated[str | None, typer.Option("--approved-digest", help="Harness digest a person "
                                                        "approved; any other digest is INCONCLUSIVE.")] = None,
    evidence: Annotated[Path | None, typer.Option("--evidence", help="Write the evidence to this file.")] = None,
    redact_paths: Annotated[bool, typer.Option("--redact-paths", help="Leave host paths out of the evidence.")] = False,
    bundle: Annotated[Path | None, typer.Option("--bundle", help="Also write a git bundle of the base and candidate "
                                                "revisions (with their history) to this file, to publish beside the "
                                                "evidence, which signs its SHA-256.")] = None,
    github: Annotated[str | None, typer.Option("--github", help="owner/repo#N: verify the pull request's head "
                                               "against its base and post the verdict as a check run.")] = None,
    check_name: Annotated[str, typer.Option("--check-name", help="The check run's name (with --github).")] = (
        "signoff/repair"),
    evidence_url: Annotated[str | None, typer.Option("--evidence-url", help="Where the evidence file will be "
                                                     "published; linked from the check run.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Judge CANDIDATE against the frozen harness: exit 0 VERIFIED, 1 REJECTED, 3 INCONCLUSIVE, 2 bad usage."""
    from signoff.repair import VerifyRequest, verify

    client = None
    if github is not None:
        from signoff.github import git_url, github_client, parse_pull
        from signoff.repair import pull_revisions

        full_name, number = parse_pull(github)
        client = github_client(settings())
        base, candidate = pull_revisions(client, repo, full_name, number, git_url(settings()))
    if base is None or candidate is None:
        raise UsageError("name the revisions to compare", "pass --base and --candidate, or --github owner/repo#N")
    if bundle is not None and (bundle.is_dir() or ":" in bundle.name):
        raise UsageError(f"--bundle {bundle} must name a file (without ':' in its name)",
                         "pass e.g. --bundle evidence/repair.bundle, beside the --evidence file")
    from signoff.repair import run_env

    variables = run_env.parse(list(env or []))
    with reporting("repair verify") as progress:
        result = verify(VerifyRequest(
            repo=repo, base=base, candidate=candidate, harness=harness, expect=expect,
            regression=list(regression or []), allow=list(allow or []), pythonpath=list(pythonpath or []),
            requirements=list(requirements or []), runner=runner, project_deps=project_deps,
            extras=[e.strip() for x in (extras or []) for e in x.split(",") if e.strip()], pytest=pytest_pin,
            lock=lock, workdir=workdir, python=python, allow_source_builds=allow_source_builds, repeat=repeat,
            executions=executions, timeout=timeout, approved_digest=approved_digest, redact_paths=redact_paths,
            evidence_path=evidence, bundle=bundle, env=variables, build_extensions=build_extensions,
        ), settings(), progress)
    posted = None
    if client is not None and github is not None:
        from signoff.repair import post_verdict

        posted = post_verdict(client, parse_pull(github)[0], result, check_name, evidence_url)
    if as_json:
        print_json(result.as_json() | {"bundle": result.predicate.get("bundle")}
                   | ({"check_run": {"id": posted["id"], "conclusion": posted["conclusion"]}} if posted else {}))
    else:
        print_result(result)
        if posted:
            console.print(f"  check run {check_name} posted on {result.candidate[:12]}: {posted['conclusion']}",
                          highlight=False)
    raise typer.Exit(result.exit_code)


@app.command("verify-fix")
def verify_fix_cmd(
    repo: Annotated[Path, typer.Option("--repo", help="The git repository.")],
    harness: Annotated[str, typer.Option("--harness", help="The frozen harness's digest (`signoff repair freeze`).")],
    approval: Annotated[str, typer.Option("--approval", help="The approval card in which a person approved that "
                                                              "harness (request_harness_approval's request id).")],
    expect: Annotated[str, typer.Option("--expect", help="Test id that must fail on base and pass on the candidate.")],
    base: Annotated[str, typer.Option("--base", help="The revision that shows the defect.")],
    candidate: Annotated[str, typer.Option("--candidate", help="The revision that claims to fix it.")],
    regression: Annotated[list[str] | None, typer.Option("--regression", help="Test id that must still pass.")] = None,
    allow: Annotated[list[str] | None, typer.Option("--allow", help="Glob of paths the candidate may change.")] = None,
    pythonpath: Annotated[list[str] | None, typer.Option("--pythonpath", help="Folder inside the checkout to "
                                                                              "import from (e.g. src).")] = None,
    runner: Annotated[str, typer.Option("--runner", help='pytest, node, or "CMD {tests} {junit}".')] = "pytest",
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds one execution may take.")] = 120.0,
    url: Annotated[str | None, typer.Option("--url", help="The rooms server; default $SIGNOFF_ROOMS_URL.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What the MCP tool verify_fix does, as the rooms agent of $SIGNOFF_AGENT_ID / $SIGNOFF_AGENT_KEY: judge
    CANDIDATE only when a person approved the frozen harness, as shown, in the card APPROVAL."""
    from signoff.gate import RoomsAgent
    from signoff.gate.approvals import Approvals, run_sync
    from signoff.repair import HarnessApproval, VerifyRequest, harness_content, verify_fix

    current = settings()
    agent = RoomsAgent.resolve(url)
    decision = run_sync(Approvals(agent.transport).decision(approval, harness_content(current, harness)))
    approved = HarnessApproval(approval, decision.approved, decision.content_digest, decision.responder,
                               decision.reason)
    result = verify_fix(current, VerifyRequest(
        repo=repo, base=base, candidate=candidate, harness=None, expect=expect, regression=list(regression or []),
        allow=list(allow or []), pythonpath=list(pythonpath or []), runner=runner, timeout=timeout,
        frozen_digest=harness), approved)
    if as_json:
        print_json(result.as_json() | {"approval": approval, "approved_by": decision.responder_name})
    else:
        print_result(result)
        console.print(f"  harness approved by {decision.responder_name} in {approval}", highlight=False)
    raise typer.Exit(result.exit_code)


@app.command("freeze")
def freeze_cmd(
    harness: Annotated[Path, typer.Argument(help="Folder of approved tests, or one test file of --repo.")],
    repo: Annotated[Path | None, typer.Option("--repo", help="With a test file: the repository it belongs to.")] = None,
    base: Annotated[str | None, typer.Option("--base", help="With a test file: the revision its conftest.py "
                                                          "files and helpers are taken from.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Digest and copy a harness into the content-addressed store; print its digest."""
    import tempfile

    from signoff import git
    from signoff.repair import freeze, harness_store, stage_test_file

    if harness.is_file():
        if repo is None or base is None:
            raise UsageError(f"{harness} is one test file: its neighbours come from a revision",
                             "pass --repo PATH --base REV (as to `repair verify`)")
        with tempfile.TemporaryDirectory(prefix="signoff-harness-") as staging:
            folder, _rel = stage_test_file(harness, git.open_repo(repo), git.resolve(git.open_repo(repo), base),
                                           Path(staging))
            frozen = freeze(folder, harness_store(settings()))
    else:
        frozen = freeze(harness, harness_store(settings()))
    if as_json:
        print_json({"digest": frozen.digest, "path": str(frozen.path), "files": list(frozen.files)})
    else:
        console.print(f"{frozen.digest}  {len(frozen.files)} files  {frozen.path}", highlight=False)


def _cases() -> list[Any]:
    from signoff.ledger import SqlLedger
    from signoff.repair import read_cases

    ledger = SqlLedger.open(settings())
    try:
        return read_cases(ledger)
    finally:
        ledger.close()


@app.command("cases")
def cases_cmd(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List repair cases of the room workflow and their states (from the ledger)."""
    found = _cases()
    if as_json:
        print_json([{"case_id": c.case_id, "state": c.state, "room_id": c.room_id, "base": c.base,
                     "harness_digest": c.harness_digest} for c in found])
        return
    for c in found:
        console.print(f"{c.case_id:<16} {c.state:<18} base {c.base[:12]}  harness {c.harness_digest[:12]}",
                      highlight=False)


@app.command("show")
def show_cmd(case_id: Annotated[str, typer.Argument(help="Case id, e.g. coupon-01.")],
             as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Show one case: its state history, attempts, verdicts and evidence files."""
    from signoff.ledger import SqlLedger
    from signoff.repair import read_case

    ledger = SqlLedger.open(settings())
    try:
        c = read_case(ledger, case_id)
    finally:
        ledger.close()
    data = {"case_id": c.case_id, "state": c.state, "history": c.history, "base": c.base,
            "harness_digest": c.harness_digest, "contract": c.contract.as_json(),
            "failed_attempts": {str(k): v for k, v in c.failures.items()},
            "requests": {str(k): {"asked_by": v.get("asked_by"), "from_message": v.get("from_message"),
                                  "reason": v.get("reason"), "message_id": v["receipt"]["message_id"]}
                         for k, v in c.handoffs.items()},
            "candidates": {str(k): v for k, v in c.candidates.items()},
            "verdicts": {str(k): {"verdict": v["verdict"], "fingerprint": v["fingerprint"], "evidence": v["evidence"],
                                  "reasons": [r["code"] for r in v["reasons"]]} for k, v in c.verdicts.items()},
            "verifications": {str(k): {"candidate": v["candidate"], "by": v["by"], "state": v["state"],
                                       "step": v["step"], "verdict": v.get("verdict"), "evidence": v.get("evidence")}
                              for k, v in c.checks.items()}}
    if as_json:
        print_json(data)
        return
    console.print(f"{c.case_id}: {c.state}  ({' -> '.join(c.history)})", highlight=False)
    for k, v in c.handoffs.items():
        console.print(f"  attempt {k}: asked by {v.get('asked_by')} from message {v.get('from_message')} "
                      f"({v.get('reason')})", highlight=False)
    for k, reason_text in c.failures.items():
        console.print(f"  attempt {k}: proposal refused: {reason_text}", highlight=False)
    for k, v in c.verdicts.items():
        console.print(f"  attempt {k}: {v['candidate'][:12]} {v['verdict']}  evidence {v['evidence']}",
                      highlight=False)
    for k, v in c.checks.items():
        status = f"{v['verdict']}  evidence {v['evidence']}" if v["state"] == "done" else v["state"]
        console.print(f"  run {k} (started by {v['by_name'] or v['by']} via {v['via']}): {v['candidate'][:12]} "
                      f"{status}", highlight=False)


@app.command("harness")
def harness_cmd(case_id: Annotated[str, typer.Argument(help="Case id, e.g. coupon-01.")],
                as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Show the harness a case's contract approves: every file's digest and text, read from the
    frozen copy every run uses and checked against the harness digest (what approving approves)."""
    from signoff.ledger import SqlLedger
    from signoff.repair import RepairService

    ledger = SqlLedger.open(settings())
    try:
        service = RepairService(ledger, settings())
        c = service.case(case_id)
        files = service.harness_files(c.harness_digest)
    finally:
        ledger.close()
    if as_json:
        print_json({"case_id": c.case_id, "harness_digest": c.harness_digest,
                    "files": [{"path": f.path, "sha256": f.sha256, "size": f.size, "executable": f.executable,
                               "text": f.text} for f in files]})
        return
    console.print(f"harness {c.harness_digest} of {c.case_id}: {len(files)} file(s)", highlight=False)
    for f in files:
        heading(f"{f.path}  sha256 {f.sha256}  {f.size} bytes{'  executable' if f.executable else ''}")
        console.print(f.text if f.text is not None else "(not text, or too long to print: compare it by its digest)",
                      highlight=False, markup=False)


_OPERATOR_HELP = ("Who asks: the case's operator, a user of the embedded server or a name under \\[rooms.people] "
                  "(checked against the sender id the case's room watch bound).")


def _move(case_id: str, verb: str, operator: str, reason: str) -> Any:
    """Resume, abandon or retry a case as its operator (`RepairService.move`), recorded with who and why."""
    from signoff.kernel.ids import new_id
    from signoff.ledger import SqlLedger
    from signoff.repair import Move, RepairService
    from signoff.rooms.client import RoomsConfig

    config = RoomsConfig.from_settings(settings())
    ledger = SqlLedger.open(settings())
    try:
        person = config.person(operator, ledger)
        return RepairService(ledger, settings()).move(case_id, Move(verb, person.sender, person.name, reason, "cli",
                                                                    f"cli:{new_id()}"))
    finally:
        ledger.close()


@app.command("resume")
def resume_cmd(case_id: Annotated[str, typer.Argument(help="Case id, e.g. coupon-01.")],
               operator: Annotated[str, typer.Option("--operator", help=_OPERATOR_HELP)],
               reason: Annotated[str, typer.Option("--reason", help="Why (recorded).")] = "",
               as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Hand a case stuck in FIX_REQUESTED to the fixer again (a restart lost the hand-off). The
    running verifier (`repair agent verifier` or the next `repair run`) posts it."""
    st = _move(case_id, "resume", operator, reason)
    if as_json:
        print_json({"case_id": st.case_id, "state": st.state, "attempt": st.attempt, "resumed": st.resumed})
        return
    console.print(f"{st.case_id} resumed: attempt {st.attempt} is handed to the fixer again by the verifier",
                  highlight=False)


@app.command("retry")
def retry_cmd(case_id: Annotated[str, typer.Argument(help="Case id, e.g. coupon-01.")],
              operator: Annotated[str, typer.Option("--operator", help=_OPERATOR_HELP)],
              reason: Annotated[str, typer.Option("--reason", help="Why another attempt is wanted (recorded, said "
                                                                   "in the room).")] = "",
              as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Ask for another attempt on a case awaiting review (its attempts have ended). The running
    verifier (`repair agent verifier` or the next `repair run`) hands it to the fixer."""
    st = _move(case_id, "retry", operator, reason)
    if as_json:
        print_json({"case_id": st.case_id, "state": st.state, "attempt": max(st.retries),
                    "request": st.retries[max(st.retries)]})
        return
    console.print(f"{st.case_id}: attempt {max(st.retries)} asked for; the verifier hands it to the fixer",
                  highlight=False)


@app.command("abandon")
def abandon_cmd(case_id: Annotated[str, typer.Argument(help="Case id, e.g. coupon-01.")],
                operator: Annotated[str, typer.Option("--operator", help=_OPERATOR_HELP)],
                reason: Annotated[str, typer.Option("--reason", help="Why it is abandoned (recorded, said in "
                                                                     "the room).")] = "",
                as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """End an open case as ABANDONED (nothing more happens on it; the room can open another case)."""
    st = _move(case_id, "abandon", operator, reason)
    if as_json:
        print_json({"case_id": st.case_id, "state": st.state})
        return
    console.print(f"{st.case_id} abandoned; the room can open another case", highlight=False)


@app.command("watch")
def watch_cmd(
    room: Annotated[str, typer.Option("--room", help="Room id where defects are reported.")],
    contract: Annotated[Path, typer.Option("--contract", help="Contract file (TOML).")],
    operator: Annotated[str, typer.Option("--operator", help="The person whose commands count: a user of the "
                                                              "embedded server, or a name under \\[rooms.people].")],
    verifier: Annotated[str, typer.Option("--verifier", help=_ROLE_HELP.format("verifier"))] = "verifier",
) -> None:
    """Link a room to a contract and an operator: reports there open repair cases."""
    import asyncio

    from signoff.ledger import SqlLedger
    from signoff.repair import Contract, RepairService
    from signoff.rooms.client import RoomsConfig

    c = Contract.load(contract)
    config = RoomsConfig.from_settings(settings())
    ledger = SqlLedger.open(settings())
    err_console.print(config.server_line(), highlight=False, markup=False)
    try:
        person = config.person(operator, ledger)
        # One call that needs no connection (so any server, a Switch core too): NotFoundError
        # unless the verifier is in that room.
        transport = config.stream_transport(verifier, ledger)
        asyncio.run(transport.call("get_room_detail", {"room_id": room}, None))
        RepairService(ledger, settings()).watch(room, c, person.sender, person.name, config.agent_name(verifier))
    finally:
        ledger.close()
    console.print(f"watching room {room} with contract {c.name} for operator {operator}", highlight=False)


@app.command("run")
def run_cmd(
    verifier: Annotated[str, typer.Option("--verifier", help=_ROLE_HELP.format("verifier"))] = "verifier",
    fixer: Annotated[str, typer.Option("--fixer", help=_ROLE_HELP.format("fixer"))] = "fixer",
    follow: Annotated[bool, typer.Option("--follow", help="Keep running, polling every second.")] = False,
    script: Annotated[str | None, typer.Option("--script", help="Scripted fixer to use (default: the "
                                                                "contract's).")] = None,
) -> None:
    """Process the verifier's and fixer's room messages and the repair jobs until nothing is left.
    Safe to stop and restart at any point: nothing already done is done again."""
    import asyncio

    import signoff.demo.coupon_fixer  # noqa: F401  (the offline coupon fixer)
    from signoff.ledger import SqlLedger, checkpointing
    from signoff.repair import RepairService, run_until_idle, watched_rooms
    from signoff.rooms.client import RoomsConfig

    s = settings()
    config = RoomsConfig.from_settings(s)
    ledger = SqlLedger.open(s)
    try:
        rooms = watched_rooms(ledger, s, config.agent_name(verifier))
        err_console.print(config.server_line(), highlight=False, markup=False)

        def progress(done: int) -> None:
            console.print(f"handled {done} messages and jobs", highlight=False)

        with checkpointing(ledger, s):
            asyncio.run(run_until_idle(
                config.stream_transport(verifier, ledger), config.stream_transport(fixer, ledger), ledger, s,
                config.agent_name(verifier), config.agent_name(fixer), rooms, script=script, follow=follow,
                also=config.housekeeping(ledger), progress=progress))
        cases = RepairService(ledger, s).cases()
    finally:
        ledger.close()
    for c in cases:
        console.print(f"{c.case_id:<16} {c.state}", highlight=False)


@app.command("agent")
def agent_cmd(
    role: Annotated[str, typer.Argument(help="verifier or fixer.")],
    room: Annotated[list[str] | None, typer.Option("--room", help="A room to work in (repeat; default: every "
                                                                  "watched room).")] = None,
    verifier: Annotated[str, typer.Option("--verifier", help=_ROLE_HELP.format("verifier"))] = "verifier",
    fixer: Annotated[str, typer.Option("--fixer", help=_ROLE_HELP.format("fixer"))] = "fixer",
    script: Annotated[str | None, typer.Option("--script", help="Scripted fixer to use (default: the "
                                                                "contract's).")] = None,
    decisions: Annotated[str, typer.Option("--decisions", help="auto: people decide on approval cards where the "
                                           "server has them, else by addressed commands; command: always "
                                           "addressed commands.")] = "auto",
) -> None:
    """Run the verifier or the fixer as its own agent process over the agent protocol, until stopped
    (SIGTERM or Ctrl-C). It keeps a durable cursor and inbox: kill it at any point and start it
    again, and nothing is lost or done twice."""
    import asyncio
    import sys

    import signoff.demo.coupon_fixer  # noqa: F401  (the offline coupon fixer)
    from signoff.ledger import SqlLedger, checkpointing
    from signoff.repair import run_fixer, run_verifier, watched_rooms
    from signoff.rooms.client import RoomsConfig

    if role not in ("verifier", "fixer"):
        raise UsageError(f"unknown repair agent {role!r}", "run `signoff repair agent verifier` or `... fixer`")
    if decisions not in ("auto", "command"):
        raise UsageError(f"unknown decision mode {decisions!r}", "use --decisions auto or --decisions command")
    s = settings()
    config = RoomsConfig.from_settings(s)
    ledger = SqlLedger.open(s)
    try:
        rooms = list(room or []) or watched_rooms(ledger, s, config.agent_name(verifier))
        err_console.print(config.server_line(), highlight=False, markup=False)
        me = verifier if role == "verifier" else fixer
        transport = config.stream_transport(me, ledger)
        name = config.agent_name(me)
        # Other processes (the other agent, people) write the embedded server's database.
        also = config.housekeeping(ledger)

        def ready() -> None:
            console.print(f"repair {role} {name} ready in {len(rooms)} room(s)", highlight=False)
            sys.stdout.flush()  # whoever started the process waits for this line

        with checkpointing(ledger, s):  # the head is signed on a schedule while the agent runs
            if role == "verifier":
                asyncio.run(run_verifier(transport, ledger, s, name, config.agent_name(fixer), rooms, ready, also,
                                         decisions))
            else:
                asyncio.run(run_fixer(transport, ledger, s, name, rooms, script, ready=ready, also=also))
    finally:
        ledger.close()
