"""`signoff demo notes`: a small real git history, a one-shot baseline with an invented metric that
fails the grade, and verified notes (draft, editor rejection, one revision, human approval, ship)
that pass it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from signoff import git
from signoff.cli.context import console, settings
from signoff.demo.commands import register
from signoff.kernel.ids import new_id
from signoff.kernel.progress import Progress

_PEOPLE = {"vy": ("Vivek", "vivek@studio.example"), "rd": ("Ritweek", "ritweek@studio.example"),
           "sa": ("Saurabh", "saurabh@studio.example")}

BASELINE = """# Release notes

The verifier landed in 4 commits from 3 contributors, including Saurabh's change to add the claim
verifier CLI. That change improved correctness by 35% across 6 commits and runs in under 2 seconds.
"""


def _git(repo: Path, *args: str, who: str = "vy", when: int = 0) -> None:
    name, email = _PEOPLE[who]
    git.run(repo, *args, env=git.Identity(name, email, f"2026-11-0{1 + when}T10:00:00+00:00").env())


def build_history(repo: Path) -> None:
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# studio\n\nRelease notes that cite git.\n", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Start the studio project", when=0)
    _git(repo, "tag", "v0.1")
    tools = repo / "tools"
    tools.mkdir()
    (tools / "snapshot.py").write_text("".join(f"# step {i}\n" for i in range(24)), encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Add the snapshot tool", who="rd", when=1)
    (tools / "verify.py").write_text("".join(f"# check {i}\n" for i in range(60)), encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Add the claim verifier CLI", who="sa", when=2)
    (repo / "README.md").write_text("# studio\n\nRelease notes whose claims cite git facts.\n", encoding="utf-8")
    (tools / "snapshot.py").write_text("".join(f"# step {i}\n" for i in range(18)), encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Trim the snapshot tool and reword the readme", who="vy", when=3)


@register("notes", "Release notes from a real git history: an invented metric fails, verified notes pass.")
def demo_notes(as_json: bool, progress: Progress) -> dict[str, Any]:
    from signoff.notes import NotesService, bound, grade, load_review, start_run

    def say(text: str) -> None:
        if not as_json:
            console.print(text, highlight=False)

    s = settings()
    folder = s.home / "notes" / f"demo-{new_id()[:8]}"
    repo = folder / "repo"
    progress("building a git history")
    build_history(repo)
    say(f"git history: 4 commits by 3 people in {repo}")

    run = folder / "run"
    run.mkdir(parents=True)
    progress("writing, checking and reviewing the notes")
    result = start_run(repo, None, run, s, script="demo")
    baseline = run / "baseline.md"
    baseline.write_text(BASELINE, encoding="utf-8")
    base = grade(baseline, run / "snapshot.json")
    say(f"baseline (one-shot): {base['claims']['supported']}/{base['claims']['total']} claims, "
        f"{base['sentences']['supported']}/{base['sentences']['checkable']} sentences supported")
    for u in base["unsupported"]:
        say(f"  unsupported {u['kind']} {u['token']!r}")

    review = load_review(run)
    first = review["rounds"][0]["sentences"]
    rejected = [r for r in first if r["status"] == "rejected"]
    for r in rejected:
        codes = ", ".join(f"{e['code']} {e['token']!r}" for e in r["errors"] + r["judgments"])
        say(f"editor rejected {r['id']}: {codes}; the writer revised it once")
    progress("approving, publishing and signing")
    from signoff.ledger import SqlLedger

    # The demo's one approver, who decides on exactly what the run holds as it reads it.
    notes = NotesService(SqlLedger.open(s), deciders=["demo-approver"])
    for command in ("approve all", "ship"):
        notes.decide(run, bound(command, notes.state(run)), "demo-approver", "demo")
    _, evidence = notes.publish(run, s)
    final = run / "final.md"
    ours = grade(final, run / "snapshot.json")
    say(f"verified notes: {ours['claims']['supported']}/{ours['claims']['total']} claims, "
        f"{ours['sentences']['supported']}/{ours['sentences']['checkable']} sentences supported -> {final}")
    say(f"signed evidence: {evidence} (re-verified offline by `signoff evidence verify`)")
    # The same history written and reviewed again, with nothing decided: for the visitor of
    # `signoff serve --demo` (a decider there) to approve, reject or edit, and ship.
    progress("leaving the visitor a run to decide on")
    waiting = folder / "for-the-visitor"
    waiting.mkdir()
    start_run(repo, None, waiting, s, script="demo")
    say(f"for `signoff serve --demo`: {waiting} waits for a decider")
    ok = (not base["ok"]) and ours["ok"] and bool(rejected) and result["rounds"] == 2
    return {"ok": ok, "run": str(run), "left_for_the_visitor": str(waiting), "commits": result["commits"],
            "baseline": base, "ours": ours,
            "rejected_in_review": [r["id"] for r in rejected], "final": str(final), "evidence": str(evidence)}
