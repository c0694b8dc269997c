"""A notes run: a folder holding every artifact of one set of release notes.

    snapshot.json   commits and file changes from git          (signoff notes snapshot)
    facts.json      F1..Fn                                      (signoff notes facts)
    draft.json      the writer's sentences                      (signoff notes draft)
    review.json     verifier errors + editor judgments per round, and the current draft
    draft.r1.json   the draft after the one revision round, when a sentence was rejected
    decisions.jsonl export of the human decisions, which are events of the run's ledger case
                    (signoff notes decide; exported by signoff notes render)
    final.md        the published notes                         (signoff notes render)

Every step reads its inputs from the files, so each can be re-run or inspected on its own; the
human decisions are the exception: they are events of the run's ledger case (see decisions.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from signoff.kernel.clock import SystemClock, utc_iso
from signoff.kernel.digests import sha256_file
from signoff.kernel.errors import NotFoundError, RefusedError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.notes.changes import tag_package
from signoff.notes.documents import REVIEW, check_schema, read_json, write_json
from signoff.notes.draft import check_sentences, draft_doc, load_draft
from signoff.notes.editor import merge
from signoff.notes.facts import FactsFile, snapshot_and_facts
from signoff.notes.grade import grade_text, repository_here
from signoff.notes.paths import commit_paths
from signoff.notes.practice import changelog_before, read_practice
from signoff.notes.verify import Verifier

SNAPSHOT_FILE, FACTS_FILE, DRAFT_FILE, REVIEW_FILE = "snapshot.json", "facts.json", "draft.json", "review.json"
DECISIONS_FILE, FINAL_FILE, REVISED_FILE = "decisions.jsonl", "final.md", "draft.r1.json"
REPOSITORY_FILE = "repository.txt"  # where the run's snapshot was taken from (`run_repository`)
MAX_COMMITS_FOR_WRITER = 200


def run_dir(name: str | Path, settings: Settings | None = None) -> Path:
    """A run given as a folder path, or as a name under <home>/notes/."""
    path = Path(name)
    if path.is_dir():
        return path
    if settings is not None and (settings.home / "notes" / str(name)).is_dir():
        return settings.home / "notes" / str(name)
    raise NotFoundError(f"notes run not found: {name}", "pass the --out folder of `signoff notes run`")


def case_of(folder: Path) -> str:
    """The ledger case of a run's decisions: named by the digest of its review, so decisions bind
    the reviewed sentences they were made on (a copy of the folder is the same run)."""
    review_file = folder / REVIEW_FILE
    if not review_file.is_file():
        raise NotFoundError(f"{folder} has no {REVIEW_FILE}", "run `signoff notes review RUN` first")
    return f"notes.run.{sha256_file(review_file)}"


def has_decisions(settings: Settings, folder: Path) -> bool:
    """Whether people decided on this run: in the ledger, or in a decisions file beside it (an
    export, or the log of a run decided before decisions moved into the ledger)."""
    exported = folder / DECISIONS_FILE
    if exported.is_file() and exported.stat().st_size > 0:
        return True
    if not (folder / REVIEW_FILE).is_file():
        return False
    ledger = SqlLedger.open(settings)
    try:
        return ledger.version(case_of(folder)) > 0
    finally:
        ledger.close()


def writer_task(facts: FactsFile) -> dict[str, Any]:
    """What the writer sees: every count and derived fact and the newest commits (not every file)."""
    chosen = [f for f in facts.facts() if f["kind"] in ("count", "derived")]
    commits = [f for f in facts.facts() if f["kind"] == "commit"][:MAX_COMMITS_FOR_WRITER]
    return {"range": facts.range, "facts": commits + chosen}


def configured_groups(settings: Settings) -> dict[str, list[str]]:
    """`[notes.groups]`: changelog headings, each with the patterns that put a change under it
    (paths or folders, globs, `label:NAME`), in the order written."""
    groups = settings.section("notes").get("groups", {})
    if not isinstance(groups, dict) or not all(
            isinstance(k, str) and k.strip() and isinstance(v, list) and v and all(isinstance(x, str) and x for x in v)
            for k, v in groups.items()):
        raise UsageError("[notes.groups] must map each heading to a list of patterns",
                         '[notes.groups]\n"Command line" = ["src/cli/", "label:cli"]')
    return {k.strip(): list(v) for k, v in groups.items()}


def make_draft(facts_path: Path, settings: Settings, role: str = "writer",
               script: str = "default") -> dict[str, Any]:
    from signoff.notes.agents import write

    facts = FactsFile(facts_path, wanted=_first_commit_ids())
    task = writer_task(facts)
    groups = configured_groups(settings)
    package = tag_package(task["range"])
    if groups:
        task["groups"] = groups
    if package:
        task["package"] = package  # a tag like `tokio-1.53.0`: sibling packages' commits are not its changes
    # the paths tell a change's group, a sibling package's change and a changelog entry (`changes`)
    task["paths"] = commit_paths(facts_path.parent / SNAPSHOT_FILE,
                                 {f["hash"] for f in task["facts"] if f["kind"] == "commit"})
    repo = run_repository(facts_path.parent)
    if repo is not None:
        # what the project's own changelog before the range lists (refactors, dependency upgrades)
        task["practice"] = read_practice(changelog_before(repo, task["range"])).as_task()
    sentences, record = write(task, settings, role, script)
    numbered = [{"id": f"S{i}", "text": s["text"], "facts": list(s["cites"]),
                 **({"group": s["group"]} if s.get("group") else {})} for i, s in enumerate(sentences, 1)]
    check_sentences(numbered, f"{role} output", "draft")
    return draft_doc(numbered, writer=_record_summary(record))


def _first_commit_ids() -> set[str]:
    # Commit facts come first and newest first; keep the writer's share without loading them all.
    return {f"F{i}" for i in range(1, MAX_COMMITS_FOR_WRITER + 1)}


def _record_summary(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record.get(k) for k in ("role", "provider", "model", "kind", "prompt_digest", "output_digest")}


def refuse_if_decided(settings: Settings, folder: Path) -> None:
    if has_decisions(settings, folder):
        raise RefusedError(f"{folder} already has human decisions; reviewing again would change the "
                           "sentences they were made on", "start a new run to review a new draft")


def cited_by(sentences: list[dict[str, Any]]) -> set[str]:
    return {f for s in sentences for f in s["facts"]}


def verifier_for(folder: Path, sentences: list[dict[str, Any]], known: Verifier | None = None) -> Verifier:
    """A verifier covering every fact the sentences cite (`known` is reused when it already does)."""
    cited = cited_by(sentences)
    if known is not None and cited <= known.cited:
        return known
    return Verifier(folder / SNAPSHOT_FILE, folder / FACTS_FILE, cited | (known.cited if known else set()))


def judge_round(verifier: Verifier, sentences: list[dict[str, Any]], round_no: int, settings: Settings,
                editor_role: str = "notes-editor") -> dict[str, Any]:
    """One review round: the verifier's errors, then the editor's judgments, per sentence."""
    from signoff.notes.agents import judge

    verdict = verifier.verdict(sentences)
    judgments, record = judge(sentences, verifier.facts.by_id, settings, editor_role)
    return {"round": round_no, "editor": _record_summary(record), "sentences": merge(verdict, judgments)}


def rejected_in(round_doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in round_doc["sentences"] if r["status"] == "rejected"]


def revision_task(folder: Path, sentences: list[dict[str, Any]], rejected: list[dict[str, Any]]) -> dict[str, Any]:
    """What the writer sees to revise the rejected sentences (and only those)."""
    task = writer_task(FactsFile(folder / FACTS_FILE, wanted=cited_by(sentences) | _first_commit_ids()))
    task["revise"] = [{"id": r["id"], "text": r["text"], "cites": r["facts"],
                       "problems": [f"{p['code']}: {p['token']}" for p in r["errors"] + r["judgments"]]}
                      for r in rejected]
    return task


def apply_revision(folder: Path, sentences: list[dict[str, Any]], rejected: list[dict[str, Any]],
                   revised: list[dict[str, Any]], record: dict[str, Any]) -> list[dict[str, Any]]:
    """Replace the rejected sentences by the writer's revisions, keep the others byte for byte, and
    write draft.r1.json."""
    if len(revised) != len(rejected):
        raise UsageError(f"the writer returned {len(revised)} sentences for {len(rejected)} to revise",
                         "a revision must return one sentence per rejected sentence, in order")
    groups = {s["id"]: s["group"] for s in sentences if s.get("group")}
    by_id = {r["id"]: {"id": r["id"], "text": new["text"], "facts": list(new["cites"]),
                       **({"group": groups[r["id"]]} if r["id"] in groups else {})}
             for r, new in zip(rejected, revised, strict=True)}
    current = [by_id.get(s["id"], s) for s in sentences]
    check_sentences(current, "the writer's revision", "draft")
    write_json(folder / REVISED_FILE, draft_doc(current, writer=_record_summary(record),
                                                revised=sorted(by_id, key=lambda x: int(x[1:]))))
    return current


def finish_review(folder: Path, rounds: list[dict[str, Any]]) -> dict[str, Any]:
    doc = {"schema": REVIEW, "created": utc_iso(SystemClock().now()),
           "draft": REVISED_FILE if len(rounds) > 1 else DRAFT_FILE, "rounds": rounds,
           "sentences": rounds[-1]["sentences"]}
    write_json(folder / REVIEW_FILE, doc)
    return doc


def review(folder: Path, settings: Settings, role: str = "writer", script: str = "default",
           editor_role: str = "notes-editor") -> dict[str, Any]:
    """Verify, judge, and send rejected sentences back to the writer once (only those sentences)."""
    from signoff.notes.agents import write

    refuse_if_decided(settings, folder)
    sentences = load_draft(folder / DRAFT_FILE)
    verifier = verifier_for(folder, sentences)
    rounds = [judge_round(verifier, sentences, 0, settings, editor_role)]
    rejected = rejected_in(rounds[0])
    if rejected:
        revised, record = write(revision_task(folder, sentences, rejected), settings, role, script)
        current = apply_revision(folder, sentences, rejected, revised, record)
        # The revised sentences may cite facts the first pass did not load.
        rounds.append(judge_round(verifier_for(folder, current, verifier), current, 1, settings, editor_role))
    return finish_review(folder, rounds)


def load_review(folder: Path) -> dict[str, Any]:
    path = folder / REVIEW_FILE
    doc = check_schema(read_json(path, "review"), REVIEW, path, "review")
    check_sentences(doc.get("sentences"), path, "review")
    if doc.get("draft") not in (DRAFT_FILE, REVISED_FILE):
        raise UsageError(f"review {path}: draft must name draft.json or draft.r1.json", "run the review again")
    return doc


def current_sentences(folder: Path) -> list[dict[str, Any]]:
    """The sentences the humans decide on: the reviewed draft (after the revision round, if any)."""
    doc = load_review(folder)
    return load_draft(folder / doc["draft"])


def run_repository(folder: Path) -> Path | None:
    """The repository a run's snapshot was taken from, where it still holds the snapshot's tip:
    the console grades a run's notes as `notes grade --repo` does, reading the diff of a pull
    request an item credits where its messages leave the item uncertain. None for a run taken
    before runs recorded it, or whose repository moved or lost the commits."""
    try:
        repo = Path((folder / REPOSITORY_FILE).read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return None
    return repository_here(folder / SNAPSHOT_FILE, repo) if repo.is_absolute() and repo.is_dir() else None


def grade_run_text(folder: Path, markdown: str, name: str) -> dict[str, Any]:
    """`grade_text` of a text against a run's snapshot, with the run's repository where it has one."""
    return grade_text(markdown, name, folder / SNAPSHOT_FILE, run_repository(folder))


def start_run(repo: Path, rev_range: str | None, folder: Path, settings: Settings, merges: bool = True,
              role: str = "writer", script: str = "default") -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    if has_decisions(settings, folder):
        raise UsageError(f"{folder} already holds a run with human decisions",
                         "pick a new --out folder; decisions are never overwritten")
    snap, facts = snapshot_and_facts(repo, rev_range, folder / SNAPSHOT_FILE, folder / FACTS_FILE, merges=merges)
    (folder / REPOSITORY_FILE).write_text(f"{repo.resolve()}\n", encoding="utf-8")
    write_json(folder / DRAFT_FILE, make_draft(folder / FACTS_FILE, settings, role, script))
    doc = review(folder, settings, role, script)
    return {"folder": str(folder), "commits": snap.commits, "facts": facts.count, "range": snap.range,
            "rounds": len(doc["rounds"]), "sentences": doc["sentences"]}
