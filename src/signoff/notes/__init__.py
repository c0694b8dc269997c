"""Release notes in which every number and hash is recomputed from git.

snapshot (git log, streamed) -> facts (F1..Fn) -> writer draft (S1..Sn citing facts) -> verifier
(hashes, numbers, percentages, spelled-out quantities against the cited facts, which are recomputed
first) -> editor (OVERCLAIM) -> one revision round -> human decisions -> ship -> render / grade.
"""

from signoff.notes.decisions import decide, replay, state_of
from signoff.notes.facts import Aggregate, FactsFile, build_facts
from signoff.notes.grade import grade
from signoff.notes.snapshot import Snapshot, take_snapshot
from signoff.notes.verify import Verifier, verify

__all__ = [
    "Aggregate",
    "FactsFile",
    "Snapshot",
    "Verifier",
    "build_facts",
    "decide",
    "grade",
    "replay",
    "state_of",
    "take_snapshot",
    "verify",
]
