"""The notes pipeline cut into the steps its room agents take, each working on a run folder and
handing the next step one artifact named by its SHA-256 (a `Handoff`).

    scout   snapshot.json + facts.json from git          -> writer  "draft RUN facts.json sha256:..."
    writer  draft.json                                     -> editor  "review RUN draft.json sha256:..."
    editor  re-takes the snapshot from git, verifies, judges
            nothing rejected: review.json (done)
            else review.r0.json                            -> writer  "revise RUN review.r0.json sha256:..."
    writer  draft.r1.json (only the rejected sentences)    -> editor  "review RUN draft.r1.json sha256:..."
    editor  the second round: review.json (done)

A hand-off says which file to work from; it is never a fact. Each step refuses a file whose digest
is not the one handed over, the editor refuses a snapshot that git does not reproduce byte for byte,
and the verifier recomputes every cited fact from the snapshot, as in `signoff notes review`.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.kernel.digests import sha256_file
from signoff.kernel.errors import ConflictError, UsageError
from signoff.kernel.settings import Settings
from signoff.notes.documents import REVIEW_ROUND, check_schema, read_json, write_json
from signoff.notes.draft import load_draft
from signoff.notes.facts import snapshot_and_facts
from signoff.notes.run import (
    DRAFT_FILE,
    FACTS_FILE,
    REVIEW_FILE,
    REVISED_FILE,
    SNAPSHOT_FILE,
    apply_revision,
    finish_review,
    has_decisions,
    judge_round,
    make_draft,
    refuse_if_decided,
    rejected_in,
    revision_task,
    verifier_for,
)
from signoff.notes.snapshot import take_snapshot

FIRST_ROUND_FILE = "review.r0.json"
RUN_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")
# What each verb hands over, and which files it may name.
VERBS = {"draft": (FACTS_FILE,), "review": (DRAFT_FILE, REVISED_FILE), "revise": (FIRST_ROUND_FILE,)}
_TEXT = re.compile(r"^(draft|review|revise) ([a-z0-9][a-z0-9._-]{0,79}) ([a-z0-9.]+) sha256:([0-9a-f]{64})$")


@dataclass(frozen=True)
class Handoff:
    verb: str
    run: str  # the run's name under <home>/notes/
    file: str
    digest: str  # hex SHA-256 of `file` when it was handed over

    def text(self) -> str:
        return f"{self.verb} {self.run} {self.file} sha256:{self.digest}"

    @classmethod
    def parse(cls, text: str) -> Handoff | None:
        """The hand-off a command names, or None for anything else (never an error: room text is data)."""
        m = _TEXT.match(text.strip())
        if m is None or m.group(3) not in VERBS[m.group(1)] or ".." in m.group(2):
            return None
        return cls(m.group(1), m.group(2), m.group(3), m.group(4))


def runs_home(settings: Settings) -> Path:
    return settings.home / "notes"


def run_folder(settings: Settings, name: str) -> Path:
    if not RUN_NAME.match(name) or ".." in name:
        raise UsageError(f"{name!r} is not a run name", "use lower-case letters, digits, '.', '_' or '-'")
    return runs_home(settings) / name


def handoff_of(verb: str, folder: Path, file: str) -> Handoff:
    return Handoff(verb, folder.name, file, sha256_file(folder / file))


def _checked(folder: Path, handoff: Handoff) -> Path:
    """The file a hand-off names, once its digest is the one handed over."""
    path = folder / handoff.file
    if not path.is_file():
        raise UsageError(f"{path} does not exist", "the sender's run folder must be shared with this agent")
    if sha256_file(path) != handoff.digest:
        raise ConflictError(f"{path} changed after it was handed over", "start a new run from the scout")
    return path


# -- the scout ----------------------------------------------------------------------------------


def scout(repo: Path, rev_range: str | None, folder: Path, settings: Settings, merges: bool = True) -> Handoff:
    """Snapshot and facts from git into the run folder (again, when an earlier attempt died before
    handing over); the hand-off to the writer."""
    if (folder / REVIEW_FILE).exists() or has_decisions(settings, folder):
        raise UsageError(f"{folder} already holds a reviewed run", "ask for the notes again (a new run)")
    folder.mkdir(parents=True, exist_ok=True)
    snapshot_and_facts(repo, rev_range, folder / SNAPSHOT_FILE, folder / FACTS_FILE, merges=merges)
    return handoff_of("draft", folder, FACTS_FILE)


# -- the writer ---------------------------------------------------------------------------------


def write_draft(folder: Path, handoff: Handoff, settings: Settings, role: str = "writer",
                script: str = "default") -> Handoff:
    _checked(folder, handoff)
    write_json(folder / DRAFT_FILE, make_draft(folder / FACTS_FILE, settings, role, script))
    return handoff_of("review", folder, DRAFT_FILE)


def revise(folder: Path, handoff: Handoff, settings: Settings, role: str = "writer",
           script: str = "default") -> Handoff:
    """Rewrite only the sentences the first round rejected."""
    from signoff.notes.agents import write

    first = _first_round(folder, _checked(folder, handoff))
    sentences = load_draft(folder / DRAFT_FILE)
    rejected = rejected_in(first["round"])
    revised, record = write(revision_task(folder, sentences, rejected), settings, role, script)
    apply_revision(folder, sentences, rejected, revised, record)
    return handoff_of("review", folder, REVISED_FILE)


# -- the editor ---------------------------------------------------------------------------------


def check_against_git(folder: Path, repo: Path) -> None:
    """The run's snapshot must be what git gives for the same range, byte for byte: the scout's
    numbers are never taken on trust."""
    from signoff.notes.snapshot import Snapshot

    snap = Snapshot(folder / SNAPSHOT_FILE)
    with tempfile.TemporaryDirectory(prefix="notes-check-") as tmp:
        again = Path(tmp) / SNAPSHOT_FILE
        take_snapshot(repo, snap.range, again, merges=bool(snap.doc.header.get("merges")))
        if sha256_file(again) != sha256_file(folder / SNAPSHOT_FILE):
            raise ConflictError(f"{folder / SNAPSHOT_FILE} is not what git gives for {snap.range} in {repo}",
                                "start a new run: the history moved or the snapshot was altered")


def _first_round(folder: Path, path: Path) -> dict[str, Any]:
    doc = check_schema(read_json(path, "review round"), REVIEW_ROUND, path, "review round")
    if doc.get("draft_digest") != sha256_file(folder / DRAFT_FILE):
        raise ConflictError(f"{folder / DRAFT_FILE} changed after its first review round",
                            "start a new run from the scout")
    return doc


def edit(folder: Path, handoff: Handoff, repo: Path, settings: Settings,
         editor_role: str = "notes-editor") -> Handoff | dict[str, Any]:
    """Review a draft: the hand-off back to the writer when a sentence was rejected in the first
    round, else (and always after the revision) the finished review."""
    path = _checked(folder, handoff)
    refuse_if_decided(settings, folder)
    check_against_git(folder, repo)
    if handoff.file == DRAFT_FILE:
        sentences = load_draft(path)
        first = judge_round(verifier_for(folder, sentences), sentences, 0, settings, editor_role)
        if not rejected_in(first):
            return finish_review(folder, [first])
        write_json(folder / FIRST_ROUND_FILE, {"schema": REVIEW_ROUND, "draft_digest": sha256_file(path),
                                               "round": first})
        return handoff_of("revise", folder, FIRST_ROUND_FILE)
    first = _first_round(folder, folder / FIRST_ROUND_FILE)["round"]
    current = load_draft(path)
    return finish_review(folder, [first, judge_round(verifier_for(folder, current), current, 1, settings,
                                                     editor_role)])
