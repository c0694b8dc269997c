"""Claims the grader checks against commits in hand (no git): the classes found on the blind19 set of
2026-12-07 (pip's towncrier fragment renamed by a later commit of the range)."""

from __future__ import annotations

import sys
from typing import Any

from signoff.notes.knowledge import Knowledge

from .test_knowledge_classes import _commit, _hash, _unsupported


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


def _planter() -> Any:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "bench" / "notes_eval.py"
    spec = importlib.util.spec_from_file_location("notes_eval", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("notes_eval", module)  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return sys.modules["notes_eval"]


def test_the_planter_takes_the_merge_that_brought_the_item_commit_for_one_carrying_its_number() -> None:
    # mongoose 9.9.1 (blind18b, bench): the item citing #16413 is the commit saying "re: #16413", merged by "Merge
    # pull request #16414 from Automattic/vkarpov15/gh-16413"; the planter took #16414 for a wrong number
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Merge pull request #16414 from Automattic/vkarpov15/gh-16413", "",
                parents=(3, 2)),
        _commit(2, "fix(populate): handle nested arrays of subdocuments when populating", "re: #16413",
                parents=(3,)),
        _commit(3, "chore: release 9.9.0", parents=(4,))])
    truth = object.__new__(_planter().Truth)
    truth.k = k
    line = "* fix(populate): handle nested arrays of subdocuments when populating #16413"
    assert truth.carried(line, "16413") and truth.carried(line, "16414")
    assert not truth.carried(line, "16415")


def test_a_commit_a_pull_request_merged_is_numbered_by_that_pull_request() -> None:
    # markupsafe 3.0.0 (blind19, bench, once the planter read merges): "Support Python 3.13 and its experimental
    # free-threaded build. :pr:`461`" is "Declare free-threaded support", a commit of the branch "Build Python 3.13
    # wheels (#461)" merged; the planted `:pr:`462``, which no commit carries, was "not checkable"
    k = Knowledge("v1..v2", _hash(1), [], [
        _commit(1, "Build Python 3.13 wheels (#461)", parents=(4, 2)),
        _commit(2, "Declare free-threaded support", parents=(3,), paths=("pyproject.toml",)),
        _commit(3, "Build free-threaded wheels", parents=(4,), paths=(".github/workflows/publish.yaml",)),
        _commit(4, "Simplify speedups implementation (#437)", parents=(5,))])
    item = "-   Declare free-threaded support for Python 3.13. :pr:`{n}`\n"
    assert _unsupported(k, item.format(n=461), "CHANGES.rst") == set()
    assert _unsupported(k, item.format(n=462), "CHANGES.rst") == {":pr:`462`"}
    # an issue the change fixed is no pull request: not contradicted by the merge's number
    assert _unsupported(k, "-   Declare free-threaded support for Python 3.13. :issue:`455`\n", "CHANGES.rst") == set()
