"""`signoff repair`: verify a candidate against a frozen harness, and drive repair cases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from signoff.cli.context import console, print_json, settings

app = typer.Typer(no_args_is_help=True)

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
    if result.tamper:
        console.print(f"  tamper signal: the candidate edits the repository's own tests: {', '.join(result.tamper)} "
                      "(reported only; the verdict uses the frozen harness)", highlight=False)
    console.print(f"  fingerprint {result.fingerprint}", highlight=False)
    if result.evidence:
        console.print(f"  evidence {result.evidence}", highlight=False)


@app.command("verify")
def verify_cmd(
    repo: Annotated[Path, typer.Option("--repo", help="The git repository.")],
    base: Annotated[str, typer.Option("--base", help="The revision that shows the defect.")],
    candidate: Annotated[str, typer.Option("--candidate", help="The revision that claims to fix it.")],
    harness: Annotated[Path, typer.Option("--harness", help="Folder of approved tests (frozen before running).")],
    expect: Annotated[str, typer.Option("--expect", help="Test id (relative to the harness) that must fail on base "
                                                           "by an assertion and pass on the candidate.")],
    regression: Annotated[list[str] | None, typer.Option("--regression", help="Test id that must still pass.")] = None,
    allow: Annotated[list[str] | None, typer.Option("--allow", help="Glob of paths the candidate may change.")] = None,
    pythonpath: Annotated[list[str] | None, typer.Option("--pythonpath", help="Folder inside the checkout to "
                                                                              "import from (e.g. src).")] = None,
    requirements: Annotated[str | None, typer.Option("--requirements", help="Requirements file: a path in the "
                                                     "base revision, or a file here.")] = None,
    runner: Annotated[str, typer.Option("--runner", help='pytest, node, or "CMD {tests} {junit}".')] = "pytest",
    repeat: Annotated[int, typer.Option("--repeat", help="Run each execution N times; disagreement is flaky.")] = 1,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds one execution may take.")] = 120.0,
    approved_digest: Annotated[str | None, typer.Option("--approved-digest", help="Harness digest a person "
                                                        "approved; any other digest is INCONCLUSIVE.")] = None,
    evidence: Annotated[Path | None, typer.Option("--evidence", help="Write the evidence to this file.")] = None,
    redact_paths: Annotated[bool, typer.Option("--redact-paths", help="Leave host paths out of the evidence.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Judge CANDIDATE against the frozen harness: exit 0 VERIFIED, 1 REJECTED, 3 INCONCLUSIVE, 2 bad usage."""
    from signoff.repair.verifier import VerifyRequest, verify

    result = verify(VerifyRequest(
        repo=repo, base=base, candidate=candidate, harness=harness, expect=expect,
        regression=list(regression or []), allow=list(allow or []), pythonpath=list(pythonpath or []),
        requirements=requirements, runner=runner, repeat=repeat, timeout=timeout,
        approved_digest=approved_digest, redact_paths=redact_paths, evidence_path=evidence,
    ), settings())
    if as_json:
        print_json(result.as_json())
    else:
        print_result(result)
    raise typer.Exit(result.exit_code)


@app.command("freeze")
def freeze_cmd(
    harness: Annotated[Path, typer.Argument(help="Folder of approved tests.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Digest and copy a harness into the content-addressed store; print its digest."""
    from signoff.repair.harness import freeze
    from signoff.repair.verifier import harness_store

    frozen = freeze(harness, harness_store(settings()))
    if as_json:
        print_json({"digest": frozen.digest, "path": str(frozen.path), "files": list(frozen.files)})
    else:
        console.print(f"{frozen.digest}  {len(frozen.files)} files  {frozen.path}", highlight=False)
