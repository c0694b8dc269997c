"""Release notes in which every number and hash is recomputed from git.

snapshot (git log, streamed) -> facts (F1..Fn) -> writer draft (S1..Sn citing facts) -> verifier
(hashes, numbers, percentages, spelled-out quantities against the cited facts, which are recomputed
first) -> editor (OVERCLAIM) -> one revision round -> human decisions -> ship -> render / grade.

This package is the notes workflow's facade: faces (cli/, web/, mcp/, bridges/) import from here
only. Human decisions go through `NotesService` (`signoff.notes.service`); the pipeline's steps
and readers are the functions below. Importing it registers the notes evidence check.
"""

from signoff.notes.checks import exported_state
from signoff.notes.crew import Crew, NotesAgent, check_options
from signoff.notes.decisions import Command, bound, parse, what_is_decided
from signoff.notes.documents import write_json
from signoff.notes.draft import MAX_TEXT, load_draft
from signoff.notes.evidence import EVIDENCE_FILE
from signoff.notes.facts import Aggregate, FactsFile, build_facts
from signoff.notes.grade import grade, grade_text, repository_here, sentences_of, snapshot_support
from signoff.notes.model import Decided, SentenceState, State, replay
from signoff.notes.render import preview
from signoff.notes.room import RoomOutcome, outcomes_json, poll_room, poll_room_client
from signoff.notes.run import (
    FACTS_FILE,
    REVIEW_FILE,
    SNAPSHOT_FILE,
    case_of,
    grade_run_text,
    load_review,
    make_draft,
    review,
    run_dir,
    run_repository,
    start_run,
)
from signoff.notes.service import NotesService, Status, deciders_of
from signoff.notes.snapshot import Snapshot, take_snapshot
from signoff.notes.verify import Verifier, check_claims, verify

__all__ = [
    "EVIDENCE_FILE",
    "FACTS_FILE",
    "MAX_TEXT",
    "REVIEW_FILE",
    "SNAPSHOT_FILE",
    "Aggregate",
    "Command",
    "Crew",
    "Decided",
    "FactsFile",
    "NotesAgent",
    "NotesService",
    "RoomOutcome",
    "SentenceState",
    "Snapshot",
    "State",
    "Status",
    "Verifier",
    "bound",
    "build_facts",
    "case_of",
    "check_claims",
    "check_options",
    "deciders_of",
    "exported_state",
    "grade",
    "grade_run_text",
    "grade_text",
    "load_draft",
    "load_review",
    "make_draft",
    "outcomes_json",
    "parse",
    "poll_room",
    "poll_room_client",
    "preview",
    "replay",
    "repository_here",
    "review",
    "run_dir",
    "run_repository",
    "sentences_of",
    "snapshot_support",
    "start_run",
    "take_snapshot",
    "verify",
    "what_is_decided",
    "write_json",
]
