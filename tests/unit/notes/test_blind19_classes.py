"""Claims the grader checks against commits in hand (no git): the classes found on the blind19 set of
2026-12-07 (pip's towncrier fragment renamed by a later commit of the range)."""

from __future__ import annotations

from typing import Any

from signoff.notes.knowledge import Knowledge

from .test_knowledge_classes import _commit, _unsupported


def _renamed(n: int, subject: str, old: str, new: str) -> dict[str, Any]:
    commit = _commit(n, subject, paths=())
    commit["files"] = [{"path": new, "old_path": old, "added": 0, "deleted": 0, "binary": False}]
    return commit


def test_a_fragment_a_later_commit_renames_names_its_entry_by_its_new_name() -> None:
    # pip 26.1 (blind19, bench): "Allow unpinned requirements to use hashes from constraints. ... (`#9243 <.../issues/
    # 9243>`_)" was "git says #12018": "Allow unpinned requirements to use hashes from constraints (#13887)" wrote
    # `news/12018.bugfix.rst`, which "Rename 12018.bugfix.rst to 9243.bugfix.rst (#13926)" renamed a week later
    item = ("- Allow unpinned requirements to use hashes from constraints. (`#{n} "
            "<https://github.com/pypa/pip/issues/{n}>`_)\n")
    k = Knowledge("v1..v2", None, [], [
        _renamed(1, "Rename 12018.bugfix.rst to 9243.bugfix.rst (#13926)", "news/12018.bugfix.rst",
                 "news/9243.bugfix.rst"),
        _commit(2, "Allow unpinned requirements to use hashes from constraints (#13887)",
                paths=("news/12018.bugfix.rst", "src/pip/_internal/resolution/resolvelib/factory.py")),
        _commit(3, "Allow URL constraints to apply to requirements with extras (#13900)",
                paths=("news/12018.feature.rst", "src/pip/_internal/req/constructors.py"))])
    assert _unsupported(k, item.format(n=9243), "NEWS.rst") == set()
    assert _unsupported(k, item.format(n=9244), "NEWS.rst") == {"#9244", "/issues/9244"}
    # the other entry that fragment number still names is its own commit's
    other = ("- Allow URL constraints to apply to requirements with extras. (`#12018 "
             "<https://github.com/pypa/pip/issues/12018>`_)\n")
    assert _unsupported(k, other, "NEWS.rst") == set()
