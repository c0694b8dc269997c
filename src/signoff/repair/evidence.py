"""Repair evidence: the fingerprint, the signed in-toto statement, and its offline check.

The fingerprint is SHA-256 over the canonical JSON of the execution identity: base and candidate
commits, the harness digest, the runner, isolation-profile and environment digests, and the commands
run. It binds a verdict to its inputs; it is not a signature (the DSSE envelope is).

Importing this module registers the predicate check that `signoff evidence verify` runs. The check
recomputes every digest it can from the statement itself (runner, isolation, each execution
record, the fingerprint), re-derives every stage summary and the verdict from the recorded cases,
and fails closed on any mismatch. Where the inputs are still on disk (the frozen harness, the
repository) it re-derives their digests too; where the paths were redacted it says so plainly.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from signoff import git
from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import IntegrityError, SignoffError
from signoff.repair.verdict import VERDICTS, Run, Summary, classify, reason, skipped_as_on_base, summarize
from signoff.trust import register_predicate_check, statement, subject

PREDICATE_TYPE = "https://signoff.dev/repair-verification/v1"
REDACTED = "<redacted>"
STAGE_NAMES = ("base", "candidate", "regression")
# The base's run of the regression ids the candidate failed (made only then; see verifier._regression_on_base).
REGRESSION_ON_BASE = "regression_on_base"
# Every stage a statement may hold, in the order faces show them.
EVIDENCE_STAGES = (*STAGE_NAMES, REGRESSION_ON_BASE)


def identity(base: str, candidate: str, harness_digest: str, runner_digest: str, isolation_digest: str,
             environment_digest: str, commands: dict[str, list[str]],
             variables: dict[str, str] | None = None) -> dict[str, Any]:
    """The execution identity; `variables` (a person's `--env`) join it only when set, so a verification
    without them keeps the fingerprint it always had."""
    ident = {"base": base, "candidate": candidate, "harness_digest": harness_digest,
             "runner_digest": runner_digest, "isolation_digest": isolation_digest,
             "environment_digest": environment_digest, "commands": commands}
    if variables:
        ident["variables"] = dict(sorted(variables.items()))
    return ident


def fingerprint(ident: dict[str, Any]) -> str:
    return canonical_digest(ident)


def build_statement(predicate: dict[str, Any]) -> dict[str, Any]:
    ident = predicate["identity"]
    subjects = [
        subject("git:base", gitCommit=ident["base"]),
        subject("git:candidate", gitCommit=ident["candidate"]),
        subject("harness:frozen", sha256=ident["harness_digest"]),
    ]
    bundled = predicate.get("bundle")
    if bundled is not None:  # a file beside the evidence: `signoff evidence verify` re-hashes it there
        subjects.append(subject(bundled["file"], sha256=bundled["sha256"]))
    return statement(subjects, PREDICATE_TYPE, predicate)


def redact(predicate: dict[str, Any]) -> dict[str, Any]:
    """A copy without host paths. The fingerprint stays, so a reader can still match it."""
    out = dict(predicate)
    out["inputs"] = {k: REDACTED for k in predicate.get("inputs", {})}
    return out


def _need(d: Any, key: str, where: str) -> Any:
    if not isinstance(d, dict) or key not in d:
        raise IntegrityError(f"repair evidence: {where} has no {key!r}", "the statement was altered or truncated")
    return d[key]


def check_predicate(st: dict[str, Any], base_dir: Path) -> list[str]:
    """Fail closed on any inconsistency; return notes for what could not be re-derived here."""
    p = st["predicate"]
    notes: list[str] = []
    ident = _need(p, "identity", "predicate")
    verdict = _need(p, "verdict", "predicate")
    if verdict not in VERDICTS:
        raise IntegrityError(f"repair evidence: verdict {verdict!r} is not a verdict", "the statement was altered")
    if p.get("kind") != "measured":
        raise IntegrityError("repair evidence: a verification is measured evidence", "the statement was altered")

    # Subjects name exactly the identity's commits and harness.
    by_name = {s.get("name"): s["digest"] for s in st["subject"]}
    expected = {"git:base": ("gitCommit", ident.get("base")), "git:candidate": ("gitCommit", ident.get("candidate")),
                "harness:frozen": ("sha256", ident.get("harness_digest"))}
    bundled = p.get("bundle")
    if bundled is not None:
        # The bundle holds exactly the identity's commits, and its digest is a subject.
        if not isinstance(bundled, dict) or bundled.get("refs") != {"refs/heads/base": ident.get("base"),
                                                                    "refs/heads/candidate": ident.get("candidate")}:
            raise IntegrityError("repair evidence: the git bundle's refs are not the identity's commits",
                                 "the statement was altered")
        expected[str(bundled.get("file"))] = ("sha256", bundled.get("sha256"))
    for name, (algo, value) in expected.items():
        if by_name.get(name, {}).get(algo) != value:
            raise IntegrityError(f"repair evidence: subject {name} does not match the execution identity",
                                 "the statement was altered")

    # Digests recomputed from the recorded specifications, then the fingerprint over the identity.
    if canonical_digest(_need(p, "runner", "predicate")) != ident.get("runner_digest"):
        raise IntegrityError("repair evidence: runner digest does not match the recorded runner",
                             "the statement was altered")
    if canonical_digest(_need(p, "isolation", "predicate")) != ident.get("isolation_digest"):
        raise IntegrityError("repair evidence: isolation digest does not match the recorded isolation profile",
                             "the statement was altered")
    if fingerprint(ident) != p.get("fingerprint"):
        raise IntegrityError("repair evidence: fingerprint does not match the execution identity",
                             "the statement was altered")
    # The variables the runs got (`--env`) are the identity's: the settings may not say otherwise.
    if (ident.get("variables") or {}) != ((p.get("settings") or {}).get("env") or {}):
        raise IntegrityError("repair evidence: the settings' environment variables are not the execution "
                             "identity's", "the statement was altered")

    # Every execution record matches its digest; every stage summary and the verdict re-derive.
    stages = _need(p, "stages", "predicate")
    summaries: dict[str, Summary] = {}
    # The base's run of failed regression ids is there only when the candidate failed some (and only in
    # evidence written since it existed): older evidence is judged as it was written.
    for name in (*STAGE_NAMES, *[n for n in (REGRESSION_ON_BASE,) if n in stages]):
        stage = _need(stages, name, "stages")
        runs = [Run.from_json(r) for r in _need(stage, "runs", f"stage {name}")]
        for i, run in enumerate(runs):
            if run.record is not None and canonical_digest(run.record) != run.record_digest:
                raise IntegrityError(f"repair evidence: stage {name} execution {i} record does not match its digest",
                                     "the statement was altered")
        recorded = stage.get("summary")
        # Written before a regression id's harness-skipped cases counted as pytest counts them: judged as then.
        skips_pass = name == REGRESSION_ON_BASE or (
            name == "regression" and not (isinstance(recorded, dict) and "partly_skipped" not in recorded))
        s = summarize(list(_need(stage, "tests", f"stage {name}")), runs, skips_pass)
        if isinstance(recorded, dict) and "partly_skipped" not in recorded:
            s = dataclasses.replace(s, partly_skipped=False)
            recorded = {**recorded, "partly_skipped": False}
        if name == "candidate" and not (isinstance(recorded, dict) and "skipped_as_on_base" not in recorded):
            s = skipped_as_on_base(summaries["base"], s)
        elif isinstance(recorded, dict) and "skipped_as_on_base" not in recorded:
            # Written before a skip the base shared counted for the expected test: judged as then.
            recorded = {**recorded, "skipped_as_on_base": False}
        if isinstance(recorded, dict) and "raised" not in recorded:
            # Written before a crash of the code under test could show the defect: judged as then.
            s = dataclasses.replace(s, raised=False)
            recorded = {**recorded, "raised": False}
        if s.as_json() != recorded:
            raise IntegrityError(f"repair evidence: stage {name} summary does not follow from its executions",
                                 "the statement was altered")
        summaries[name] = s
    policy = _need(p, "policy", "predicate")
    violations = []
    if policy.get("descends") is False:
        violations.append(reason("not_descendant", ""))
    if policy.get("disallowed"):
        violations.append(reason("path_not_allowed", ", ".join(policy["disallowed"])))
    if policy.get("tests_changed"):
        violations.append(reason("test_changed", ", ".join(policy["tests_changed"])))
    preflight = list(p.get("preflight") or [])
    got, reasons = classify(summaries["base"], summaries["candidate"], summaries["regression"], violations, preflight,
                            summaries.get(REGRESSION_ON_BASE))
    if got != verdict:
        raise IntegrityError(f"repair evidence: the executions give {got}, but the statement says {verdict}",
                             "the statement was altered")
    if [r["code"] for r in reasons] != [r.get("code") for r in p.get("reasons", [])]:
        raise IntegrityError("repair evidence: the reasons do not follow from the executions",
                             "the statement was altered")

    notes.extend(_check_inputs(p, ident))
    return notes


def _check_inputs(p: dict[str, Any], ident: dict[str, Any]) -> list[str]:
    from signoff.repair.harness import harness_digest

    notes: list[str] = []
    inputs = p.get("inputs") or {}
    if any(v == REDACTED for v in inputs.values()):
        notes.append("paths were redacted: the fingerprint was recomputed from the recorded identity, but the "
                     "harness digest and the commits could not be re-derived from the inputs themselves")
        return notes
    frozen = inputs.get("harness")
    if frozen and Path(frozen).is_dir():
        try:
            got = harness_digest(Path(frozen))
        except SignoffError as exc:
            raise IntegrityError(f"repair evidence: the frozen harness cannot be read: {exc.message}",
                                 "the harness store was altered") from exc
        if got != ident["harness_digest"]:
            raise IntegrityError(f"repair evidence: the frozen harness at {frozen} now digests to {got[:12]}, "
                                 f"not the recorded {ident['harness_digest'][:12]}", "the harness store was altered")
        notes.append("frozen harness re-digested: matches")
    else:
        notes.append("frozen harness not present here: its digest was not re-derived")
    repo = inputs.get("repository")
    if repo and Path(repo).exists():
        for which in ("base", "candidate"):
            if not git.has_commit(Path(repo), ident[which]):
                notes.append(f"{which} commit {ident[which][:12]} is not in {repo}")
        notes.append("repository present: commits checked")
    else:
        notes.append("repository not present here: commits were not checked")
    return notes


register_predicate_check(PREDICATE_TYPE, check_predicate)
