"""The list of real cases (bench/repair_real_cases.toml) stays runnable: the real cases need the
projects' histories from GitHub, which CI does not have, so CI checks the list itself. Every case
names a repository, full commit ids, a harness and test ids in it, a breakage, and only options
`signoff repair verify` takes; the set spans several projects."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

from signoff.repair.verifier import VerifyRequest

ROOT = Path(__file__).resolve().parents[3]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("repair_real_cases", ROOT / "bench" / "repair_real_cases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_every_case_is_complete_and_the_set_is_not_one_project() -> None:
    bench = _bench()
    cases = bench.load_cases()
    fields = {f.name for f in dataclasses.fields(VerifyRequest)}
    assert len({c.name for c in cases}) == len(cases)
    assert len({c.repo for c in cases}) >= 6
    for c in cases:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", c.repo), c.name
        assert re.fullmatch(r"[0-9a-f]{40}", c.buggy) and re.fullmatch(r"[0-9a-f]{40}", c.fixed), c.name
        assert c.source and c.expect and c.regression, c.name
        assert set(c.options) <= fields, (c.name, set(c.options) - fields)
        path, old, new = c.breakage
        assert path and old and new and old != new, c.name
        if c.harness.endswith(".py"):
            # The repo's own test is the harness file, or where its body lives when that is elsewhere (a
            # test base class in the package, webargs; a data file the test reads, pycodestyle).
            assert c.test_file.endswith(".py") and not c.test_file.startswith(("/", "../")), c.name
        else:
            assert c.test_file.startswith(c.harness.rstrip("/") + "/"), c.name
            assert all("::" in t and t.split("::", 1)[0].endswith(".py") for t in [c.expect, *c.regression]), c.name
    assert set(bench.EXPECTED) == {"fix", "weakened", "fix+regression", "fixed-base"}


def test_case_and_project_each_select_alone_and_together_add_up() -> None:
    bench = _bench()
    cases = bench.load_cases()
    one, other = cases[0], next(c for c in cases if c.project != cases[0].project)
    assert bench.selected(one, None, None)
    assert bench.selected(one, [one.name], None) and not bench.selected(other, [one.name], None)
    assert bench.selected(other, None, [other.project]) and not bench.selected(one, None, [other.project])
    # --case for one project's case, --project for another's: both run (before, neither did)
    assert bench.selected(one, [one.name], [other.project]) and bench.selected(other, [one.name], [other.project])


def test_every_cases_variables_are_ones_the_verifier_takes() -> None:
    from signoff.repair import run_env

    for case in _bench().load_cases():
        assert run_env.check(case.options.get("env", {})) == case.options.get("env", {}), case.name
