"""A person's variables for the test run (`--env NAME=VALUE`, repair/run_env.py): the class of variables
that change what Python, pytest, the linker or a shell loads is refused with an error and a fix; the
ones allowed reach every execution, under the run's own, and are recorded where the verdict is bound
(the execution identity, the settings, the contract a person approves)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import IntegrityError, UsageError
from signoff.kernel.shown import shown_digest
from signoff.repair import decisions, forked, run_env
from signoff.repair.evidence import check_predicate, fingerprint, identity
from signoff.repair.guard import Plan
from signoff.repair.model import CaseState, Contract
from signoff.repair.runners import Runner
from signoff.repair.verifier import VerifyRequest, _validate


@pytest.mark.parametrize("name", [
    # the interpreter's start-up (every PYTHON* variable, -I or not: the processes tests start read them)
    "PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONBREAKPOINT", "PYTHONSAFEPATH", "PYTHONUSERBASE",
    "PYTHONWARNINGS", "PYTHON_GIL", "pythonpath",
    # the dynamic linker and the C library
    "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "GLIBC_TUNABLES", "GCONV_PATH",
    "OPENSSL_CONF", "OPENSSL_MODULES",
    # pytest and py
    "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PY_IGNORE_IMPORTMISMATCH",
    # start-up hooks that installed packages' .pth files run
    "COV_CORE_SOURCE", "COVERAGE_PROCESS_START", "SETUPTOOLS_USE_DISTUTILS",
    # shells (the project workdir and node runs start one) and node
    "BASH_ENV", "ENV", "BASH_FUNC_ls", "NODE_OPTIONS", "NODE_PATH",
    # signoff's own and what the run sets itself
    "SIGNOFF_GUARD_KEY", "SIGNOFF_CHECKOUT", "HOME", "TMPDIR", "HYPOTHESIS_STORAGE_DIRECTORY",
])
def test_a_variable_that_changes_what_is_loaded_is_refused_with_a_fix(name: str) -> None:
    with pytest.raises(UsageError) as refused:
        run_env.parse([f"{name}=/tmp/x"])
    assert f"--env {name} is refused" in refused.value.message
    assert refused.value.fix == run_env.FIX
    # Through the Python API too, before anything is frozen, exported or installed.
    with pytest.raises(UsageError):
        _validate(VerifyRequest(Path("."), "a", "b", Path("h"), "t.py::t", env={name: "1"}))


def test_the_variables_a_project_reads_are_kept_sorted() -> None:
    assert run_env.parse(["SQLITE=1", "TZ=UTC", "DJANGO_SETTINGS_MODULE=tests.settings", "EMPTY="]) == {
        "DJANGO_SETTINGS_MODULE": "tests.settings", "EMPTY": "", "SQLITE": "1", "TZ": "UTC"}
    assert run_env.shown({"TZ": "UTC", "SQLITE": "1"}) == "SQLITE=1, TZ=UTC"


@pytest.mark.parametrize(("given", "said"), [
    (["SQLITE"], "has no '='"), (["SQLITE=1", "SQLITE=2"], "given twice"), (["1X=1"], "not a variable name"),
    (["A-B=1"], "not a variable name"), (["=1"], "not a variable name"), ([f"X{i}=1" for i in range(65)], "more than"),
])
def test_a_malformed_assignment_is_an_error_with_a_fix(given: list[str], said: str) -> None:
    with pytest.raises(UsageError) as bad:
        run_env.parse(given)
    assert said in bad.value.message and bad.value.fix


def test_every_execution_gets_them_under_the_runs_own_values() -> None:
    runner = Runner.parse("pytest")
    env = runner.env("/env/bin/python", ["src"], variables={"SQLITE": "1", "PATH": "/evil"})
    assert env["SQLITE"] == "1"
    assert env["PATH"].startswith("/env/bin:")  # the run's own always wins (run_env refuses it anyway)
    plan = Plan(key="k" * 64, canary_file="test_canary.py", failing="f", passing="p", nonce="n")
    cand = Plan(key="c" * 64, canary_file="test_canary2.py", failing="f", passing="p", nonce="n")
    job = forked.command(runner, ["t.py::a"], ["t.py::a"], ("t.py",), "/env/bin/python", [], plan, cand, 60.0,
                         variables={"SQLITE": "1"})
    assert job.env["SQLITE"] == "1"  # the candidate's execution; the base's inherits it (same value)
    assert "SQLITE" not in job.argv[5]  # nothing differs for the base, so its spec says nothing of it


def test_the_variables_join_the_identity_and_change_the_fingerprint_only_when_set() -> None:
    plain = identity("b" * 40, "c" * 40, "d" * 64, "r", "i", "e", {"base": ["x"]})
    assert "variables" not in plain  # a verification without --env keeps the fingerprint it always had
    with_env = identity("b" * 40, "c" * 40, "d" * 64, "r", "i", "e", {"base": ["x"]}, {"SQLITE": "1"})
    assert with_env["variables"] == {"SQLITE": "1"} and fingerprint(with_env) != fingerprint(plain)
    other = identity("b" * 40, "c" * 40, "d" * 64, "r", "i", "e", {"base": ["x"]}, {"SQLITE": ""})
    assert fingerprint(other) != fingerprint(with_env)


def test_evidence_whose_settings_say_other_variables_than_its_identity_fails() -> None:
    ident = identity("b" * 40, "c" * 40, "d" * 64, canonical_digest({"kind": "pytest"}), canonical_digest({}), "e",
                     {}, {"SQLITE": "1"})
    predicate = {"kind": "measured", "verdict": "INCONCLUSIVE", "identity": ident, "fingerprint": fingerprint(ident),
                 "runner": {"kind": "pytest"}, "isolation": {}, "settings": {"env": {"SQLITE": ""}}}
    subjects = [{"name": "git:base", "digest": {"gitCommit": "b" * 40}},
                {"name": "git:candidate", "digest": {"gitCommit": "c" * 40}},
                {"name": "harness:frozen", "digest": {"sha256": "d" * 64}}]
    with pytest.raises(IntegrityError, match="environment variables"):
        check_predicate({"predicate": predicate, "subject": subjects}, Path("."))


CONTRACT = Contract(name="models", behaviour="iterates in chunks", repo="/repo", base="main", harness="/harness",
                    expect="test_x.py::test_chunked")


def test_the_contract_shows_its_variables_and_an_approval_binds_them() -> None:
    st = CaseState("models-01", "CONTRACT_PROPOSED", "room-1", "user:alice", CONTRACT, "b" * 40, "a" * 64)
    with_env = replace(st, contract=replace(CONTRACT, env={"SQLITE": "1"}))
    assert "env" not in decisions.presented_contract(st, "a" * 64)  # contracts without keep their digest
    assert decisions.presented_contract(with_env, "a" * 64)["env"] == {"SQLITE": "1"}
    # What a person approved without the variable is not what runs with it.
    assert shown_digest(decisions.presented_contract(st, "a" * 64)) != \
        shown_digest(decisions.presented_contract(with_env, "a" * 64))


def test_a_contract_file_with_a_refused_variable_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "contract.toml"
    path.write_text('name = "models"\nbehaviour = "b"\nrepo = "."\nbase = "main"\nharness = "h"\n'
                    'expect = "t.py::t"\nenv = { PYTEST_ADDOPTS = "-p evil" }\n')
    with pytest.raises(UsageError, match="env: --env PYTEST_ADDOPTS is refused"):
        Contract.load(path)
    path.write_text(path.read_text().replace('PYTEST_ADDOPTS = "-p evil"', 'SQLITE = "1"'))
    assert Contract.load(path).env == {"SQLITE": "1"}
