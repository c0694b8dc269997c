"""What goes into a test environment, read from the base revision's own declarations (no sandbox:
git and files only), and pip's real error picked out of its output."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from signoff import git
from signoff.demo.fixture import init_repo
from signoff.kernel.errors import UsageError
from signoff.repair import testenv
from signoff.repair.guard import Plan
from signoff.repair.junit import Case
from signoff.repair.pytest_config import stage_test_file
from signoff.repair.verifier import VerifyRequest, _collection_errors, _setup_errors_alike, _wheel_fix
from signoff.sandbox.pyenv import PipError, find_python, pip_cause, requirement_named

PYPROJECT = '''\
[project]
name = "Pricing.Lib"
version = "1.0"
dependencies = ["attrs>=22", "six"]

[project.optional-dependencies]
test = ["hypothesis", "pytest-mock"]
all = ["pricing-lib[test]", "rich"]
'''


def _repo(path: Path, files: dict[str, str]) -> tuple[Path, str]:
    return path, init_repo(path, files)


def _staged(repo: Path, base: str, test: str, dest: Path) -> list[str]:
    """What the harness carries for the test file `test`: staged into `dest`, as relative paths."""
    dest.mkdir()
    stage_test_file(repo / test, repo, base, dest)
    return sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())


def _count_git(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The git commands run from now on, by their first two words."""
    asked: list[tuple[str, ...]] = []
    run = git.run

    def counted(where: Path, *args: str, **kw: object) -> object:
        asked.append(args[:2])
        return run(where, *args, **kw)  # type: ignore[arg-type]
    monkeypatch.setattr(git, "run", counted)
    return asked


def test_declared_dependencies_and_extras_from_pyproject(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path / "r", {"pyproject.toml": PYPROJECT})
    plan = testenv.plan(repo, base, [], True, ["all"], "pytest==7.4.4")
    # `all` names the project itself with [test]: expanded, never installed.
    assert plan.lines == ["attrs>=22", "six", "rich", "hypothesis", "pytest-mock", "pytest==7.4.4"]
    assert plan.project == "Pricing.Lib"
    assert plan.sources == ["pyproject.toml [all] (base revision)", "--pytest pytest==7.4.4"]
    with pytest.raises(UsageError, match="extra 'docs' is not declared"):
        testenv.plan(repo, base, [], True, ["docs"], None)
    with pytest.raises(UsageError, match="not a pytest requirement"):
        testenv.plan(repo, base, [], False, [], "pytest-mock==3")


def test_dependency_groups_beside_a_setup_py(tmp_path: Path) -> None:
    """sentry-python (blind16): its metadata is setup.py's (pyproject.toml has no [project] table), its test
    group a PEP 735 `[dependency-groups] test` in pyproject.toml, which any tool reads whatever builds the project:
    `--extras test` said the extra was not declared in setup.py."""
    setup_py = 'from setuptools import setup\nsetup(name="sdk", install_requires=["urllib3"], ' \
               'extras_require={"flask": ["flask"]})\n'
    pyproject = '[dependency-groups]\ntest = ["pytest>=6", "pytest-cov"]\n[tool.black]\nline-length = 88\n'
    repo, base = _repo(tmp_path / "r", {"setup.py": setup_py, "pyproject.toml": pyproject})
    plan = testenv.plan(repo, base, [], True, ["test"], None)
    assert plan.lines == ["urllib3", "pytest>=6", "pytest-cov"]
    assert plan.sources == ["setup.py [test] (base revision)"]
    assert testenv.plan(repo, base, [], True, ["flask"], None).lines == ["urllib3", "flask"]


def test_the_repositorys_own_projects_a_requirements_file_installs_come_from_the_checkout(tmp_path: Path) -> None:
    """opentelemetry-python (blind16): a monorepo whose opentelemetry-sdk/test-requirements.txt installs its
    neighbours from their folders (`-e opentelemetry-api`, `-e opentelemetry-sdk`: pip read a folder name as an
    invalid requirement here, and installing them would test a frozen copy, never the candidate). They are the
    project's own code: their import folders come from each revision, their declared dependencies are installed,
    and a requirement on one of them by name (pinned to an unreleased version) is never fetched."""
    api = '[project]\nname = "pkg-api"\nversion = "1.0.dev0"\ndependencies = ["typing-extensions>=4"]\n'
    sdk = '[project]\nname = "pkg-sdk"\nversion = "1.0.dev0"\ndependencies = ["pkg-api==1.0.dev0", "wrapt"]\n'
    flat = 'from setuptools import setup\nsetup(name="pkg-util", install_requires=["pkg-sdk", "six"])\n'
    repo, base = _repo(tmp_path / "r", {
        "pkg-api/pyproject.toml": api, "pkg-api/src/pkg/api/__init__.py": "",
        "pkg-sdk/pyproject.toml": sdk, "pkg-sdk/src/pkg/sdk/__init__.py": "",
        "tools/util/setup.py": flat, "tools/util/pkg_util.py": "",
        "pkg-sdk/test-requirements.txt": "pytest==7.4.4\n-e pkg-api\n-e ./pkg-sdk\n./tools/util\nrequests\n"})
    plan = testenv.plan(repo, base, ["pkg-sdk/test-requirements.txt"], False, [], None)
    assert plan.lines == ["pytest==7.4.4", "typing-extensions>=4", "wrapt", "six", "requests"]
    assert plan.import_folders == ["pkg-api/src", "pkg-sdk/src", "tools/util"]
    assert plan.dropped == ["-e pkg-api", "-e ./pkg-sdk", "./tools/util"]


def test_the_pytest_a_lock_file_pins_limits_an_unversioned_pytest(tmp_path: Path) -> None:
    """flask (blind15b): its `tests` group says `pytest` and its uv.lock 8.3.5; the newest pytest (9) lacks what
    its conftest reads. The lock's pytest is a constraint then; a versioned pytest or --pytest is left alone."""
    lock = ('version = 1\n[[package]]\nname = "pytest"\nversion = "8.3.5"\n'
            'source = { registry = "https://pypi.org/simple" }\n')
    declared = '[project]\nname = "f"\ndependencies = []\n[dependency-groups]\ntests = ["pytest", "six"]\n'
    repo, base = _repo(tmp_path / "r", {"pyproject.toml": declared, "uv.lock": lock})
    plan = testenv.plan(repo, base, [], True, ["tests"], None)
    assert "pytest==8.3.5" in plan.constraints and plan.lines == ["pytest", "six"]
    assert "pytest==8.3.5 (uv.lock of the base revision: the pytest the project runs)" in plan.sources
    assert "pytest==8.3.5" not in testenv.plan(repo, base, [], True, ["tests"], "pytest==9.0.0").constraints
    repo, base = _repo(tmp_path / "v", {"pyproject.toml": declared.replace('"pytest"', '"pytest>=9"'),
                                        "uv.lock": lock})
    assert "pytest==8.3.5" not in testenv.plan(repo, base, [], True, ["tests"], None).constraints


def test_requirement_files_never_install_the_project_itself(tmp_path: Path) -> None:
    repo, base = _repo(tmp_path / "r", {
        "pyproject.toml": PYPROJECT,
        "requirements/base.txt": "requests==2.31.0  # pinned\n",
        "requirements/constraints.txt": "urllib3<2\npricing_lib==0.9\n",
        "requirements/test.txt": "-r base.txt\n-c constraints.txt\n# pip freeze wrote the project too:\n"
                                 "pricing-lib==1.0\n-e .[test]\n",
    })
    plan = testenv.plan(repo, base, ["requirements/test.txt"], False, [], None)
    assert plan.dropped == ["pricing-lib==1.0", "-e .[test]"]
    # `-e .[test]` became the project's declared dependencies with the extra test.
    assert plan.lines == ["attrs>=22", "six", "hypothesis", "pytest-mock", "requests==2.31.0"]
    assert plan.constraints == ["urllib3<2"]
    # Read at the base revision, never from the candidate's (or the work tree's) copy.
    (repo / "requirements" / "test.txt").write_text("evil\n")
    assert testenv.plan(repo, base, ["requirements/test.txt"], False, [], None).lines == plan.lines


def test_setup_cfg_and_literal_setup_py(tmp_path: Path) -> None:
    cfg = "[metadata]\nname = tool\n[options]\ninstall_requires =\n    click>=8\n[options.extras_require]\n"
    repo, base = _repo(tmp_path / "cfg", {"setup.cfg": cfg + "test =\n    pytest-cov\n"})
    assert testenv.plan(repo, base, [], True, ["test"], None).lines == ["click>=8", "pytest-cov"]
    repo2, base2 = _repo(tmp_path / "py", {"setup.py": "from setuptools import setup\n"
                                                       "deps = ['colorama']\n"
                                                       "setup(name='tqdm', install_requires=deps,"
                                                       " extras_require={'dev': ['nose']})\n"})
    assert testenv.plan(repo2, base2, [], True, ["dev"], None).lines == ["colorama", "nose"]
    assert testenv.project_name(repo2, base2) == "tqdm"
    # Requirements setup.py reads from files (python-json-patch: `list(open('requirements.txt'))` in a dict
    # bound inside `if has_setuptools:`; a helper function's `with open(...)`), read from the base revision.
    setup_py = ("from setuptools import setup\nREQS = list(open('requirements.txt'))\n"
                "def tests_require():\n    with open('requirements-test.txt') as f:\n        return f.read().split()\n"
                "if True:\n    OPTIONS = {'install_requires': REQS}\nelse:\n    OPTIONS = {}\n"
                "ARGS = dict(name='jsonpatch', tests_require=tests_require())\nsetup(**ARGS, **OPTIONS)\n")
    repo3, base3 = _repo(tmp_path / "files", {"setup.py": setup_py, "requirements.txt": "jsonpointer>=1.9\n",
                                              "requirements-test.txt": "-r requirements.txt\ncoverage  # run\n"})
    assert testenv.plan(repo3, base3, [], True, ["tests_require"], None).lines == ["jsonpointer>=1.9", "coverage"]


def test_collisions_between_the_checkout_and_the_environment(tmp_path: Path) -> None:
    tree, site = tmp_path / "tree", tmp_path / "site"
    (tree / "src" / "pricing").mkdir(parents=True)
    (tree / "src" / "pricing" / "__init__.py").write_text("")
    (tree / "setup.py").write_text("")
    info = site / "pricing_fork-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "RECORD").write_text("pricing/__init__.py,sha256=x,1\npricing_fork-1.0.dist-info/RECORD,,\n")
    assert testenv.collisions(tree, ["src"], site) == [
        {"module": "pricing", "checkout": "src/pricing", "installed": "pricing_fork-1.0"}]
    assert testenv.collisions(tree, [], site) == []


def test_pip_cause_keeps_the_error_not_the_first_warning() -> None:
    missing = ("WARNING: Retrying (Retry(total=4)) after connection broken\n"
               "ERROR: Could not find a version that satisfies the requirement tornado==6.0.4 (from versions: 6.1)\n"
               "ERROR: No matching distribution found for tornado==6.0.4\n")
    assert pip_cause(missing) == "No matching distribution found for tornado==6.0.4"
    yanked = ("ERROR: Ignored the following yanked versions: 7.4.4\n"
              "ERROR: Could not find a version that satisfies the requirement thinc<7.2.0,>=7.1.1\n"
              "ERROR: No matching distribution found for thinc<7.2.0,>=7.1.1\n")
    assert pip_cause(yanked) == "No matching distribution found for thinc<7.2.0,>=7.1.1"  # spaCy 7's
    conflict = ("ERROR: Cannot install a==1 and b==2 because these package versions have conflicting dependencies.\n"
                "\nThe conflict is caused by:\n    a 1 depends on c<2\n    b 2 depends on c>=3\n\n"
                "To fix this you could try to:\n1. loosen the range\n\n"
                "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution\n")
    cause = pip_cause(conflict)
    assert "ResolutionImpossible" in cause and "a depends on c<2, b depends on c>=3" in cause
    # Each release pip tried, depending on one package with no wheel (anyio's test group): said once.
    tried = conflict.replace("    a 1 depends on c<2\n    b 2 depends on c>=3\n",
                             "".join(f"    blockbuster 1.5.{n} depends on forbiddenfruit>=0.1.4\n" for n in (29, 28)))
    cause = pip_cause(tried)
    assert cause.endswith("conflict: blockbuster depends on forbiddenfruit>=0.1.4")
    assert requirement_named("Cannot install -r /tmp/w/requirements.txt (line 2) because", "/tmp/w/requirements.txt",
                             ["idna", "blockbuster >= 1.5.23"]) == "Cannot install 'blockbuster >= 1.5.23' because"
    fix = _wheel_fix(PipError(f"pip could not install x: {cause}", "check", tried), builds_allowed=False)
    assert fix.startswith("forbiddenfruit>=0.1.4 may be published only as source") and "--allow-source-builds" in fix


def test_a_locked_pin_without_a_wheel_that_pip_calls_a_conflict_is_named_and_left_out() -> None:
    """python-multipart (blind17b): its uv.lock pins atomicwrites 1.4.1, published as source only, and its dev group
    asks for the same; pip called the requirement and its constraint a conflict, and its last words, the cause,
    were lost. Now named first, and the line is left out as any wheel-less direct test dependency is."""
    output = ("ERROR: Cannot install atomicwrites==1.4.1 because these package versions have conflicting dependencies."
              "\n\nThe conflict is caused by:\n    The user requested atomicwrites==1.4.1\n"
              "    The user requested (constraint) atomicwrites==1.4.1\n\n"
              "Additionally, some packages in these conflicts have no matching distributions available for your "
              "environment:\n    atomicwrites\n\nTo fix this you could try to:\n1. loosen the range\n\n"
              "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution\n")
    cause = pip_cause(output)
    assert cause.startswith("No matching distribution found for atomicwrites, as pip's conflict says: Cannot install")
    plan = testenv.Plan(lines=["atomicwrites==1.4.1", "PyYAML==6.0.1", "pytest==8.1.1"])
    assert testenv.wheel_less_line(f"pip could not install pyproject.toml [dev]: {cause}", plan) == plan.lines[0]
    assert "No matching" not in pip_cause(output.replace("atomicwrites\n\nTo fix", "\nTo fix"))


def test_tox_tomls_run_base_is_read_and_a_crash_of_pip_names_its_exception(tmp_path: Path) -> None:
    """pipdeptree (blind17by) is configured by tox 4's tox.toml: passed as --requirements it went to pip as a
    requirements file, and the reason was pip's `Exception:`, nothing a person can act on."""
    toml = ('requires = ["tox>=4.31"]\n[env_run_base]\npackage = "wheel"\nextras = ["graphviz", "rich", "test"]\n'
            'deps = ["covdefaults", "{env:EXTRA_DEP}", { replace = "ref", of = ["env", "x", "deps"] }]\n'
            '[env.fix]\nskip_install = true\ndeps = ["pre-commit-uv>=4.1.3"]\n')
    assert testenv.tox_toml_deps(toml) == [".[graphviz,rich,test]", "covdefaults"]
    assert testenv.tox_toml_deps('[env_run_base]\nskip_install = true\nextras = ["test"]\n') == []
    assert testenv.tox_toml_deps('[env_run_base]\ndependency_groups = ["test"]\n') == [".[test]"]
    repo, base = _repo(tmp_path / "r", {"tox.toml": toml.replace('"graphviz", "rich", ', ""),
                                        "pyproject.toml": PYPROJECT})
    assert testenv.plan(repo, base, ["tox.toml"], False, [], None).lines == [
        "attrs>=22", "six", "hypothesis", "pytest-mock", "covdefaults"]
    crash = ("ERROR: Exception:\nTraceback (most recent call last):\n  File \"x.py\", line 1, in f\n"
             "pip._vendor.packaging.requirements.InvalidRequirement: Expected matching RIGHT_BRACKET for LEFT_BRACKET\n"
             "    placeholder[ \"tox>=4.31\" ]\n               ~~^\n")
    assert pip_cause(crash) == ("pip._vendor.packaging.requirements.InvalidRequirement: Expected matching "
                                "RIGHT_BRACKET for LEFT_BRACKET")


def test_a_pin_for_another_python_is_named_with_the_python_it_needs() -> None:
    """aiohttp (blind16): requirements/test.txt, compiled by pip-compile under Python 3.10, pins
    backports-asyncio-runner 1.2.0, which requires Python <3.11; pip says so only in a note before its error, and
    the reason said "No matching distribution found" with a fix to check the names. The release's Python is named,
    and the fix is --python, whether source builds are allowed or not."""
    log = ("ERROR: Ignored the following versions that require a different python version: 1.1.0 Requires-Python "
           ">=3.8,<3.11; 1.2.0 Requires-Python >=3.8,<3.11\n"
           "ERROR: Could not find a version that satisfies the requirement backports-asyncio-runner==1.2.0 "
           "(from versions: 1.0.0)\n"
           "ERROR: No matching distribution found for backports-asyncio-runner==1.2.0\n")
    cause = pip_cause(log)
    assert cause == ("No matching distribution found for backports-asyncio-runner==1.2.0 (release 1.2.0 requires "
                     "Python >=3.8,<3.11)")
    for allowed in (False, True):
        fix = _wheel_fix(PipError(f"pip could not install x: {cause}", "check", log), builds_allowed=allowed)
        assert fix.startswith("backports-asyncio-runner==1.2.0 is pinned to a release for another Python "
                              "(>=3.8,<3.11)") and "--python" in fix
    # A release pip ignored that is not the one asked for changes nothing.
    other = log.replace("1.2.0 Requires-Python >=3.8,<3.11", "1.3.0 Requires-Python >=3.12")
    assert pip_cause(other) == "No matching distribution found for backports-asyncio-runner==1.2.0"


def test_python_by_version() -> None:
    import sys

    mine = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert find_python(mine)
    with pytest.raises(UsageError) as info:
        find_python("3.99")
    assert "no Python 3.99 on this machine; found: " in info.value.message and mine in info.value.message
    with pytest.raises(UsageError, match="not a Python version"):
        find_python("latest")


def test_a_collection_error_is_named_only_when_nothing_else_is_wrong() -> None:
    plan = Plan("k", "test_signoff_canary_0123456789abcdef.py", "c::f", "c::p", "n")
    broken = Case("test_x.py", "error", False, "ModuleNotFoundError", "ModuleNotFoundError: No module named 'a'")
    observed = {"test_x.py": {"outcome": "error"}}
    missing = ["the canary that must fail by an assertion did not (missing)", "the canary that must pass did not "
               "(missing)"]
    assert _collection_errors(["test_x.py::t"], [broken], observed, missing, plan) == (
        "test_x.py: ModuleNotFoundError: No module named 'a'")
    # The framework patched, a forged record, or the guard disagreeing: tampering, whatever else shows.
    assert _collection_errors(["test_x.py::t"], [broken], observed, [*missing, "guard: pytest.main replaced"],
                              plan) == ""
    # The report says the file broke, the authenticated record does not: not believed.
    assert _collection_errors(["test_x.py::t"], [broken], {}, missing, plan) == ""
    # Only the canary failed to collect: that is aimed at the canary.
    canary = Case(plan.canary_file, "error", False, "ImportError", "ImportError: x")
    assert _collection_errors(["test_x.py::t"], [canary], {plan.canary_file: {"outcome": "error"}}, missing,
                              plan) == ""


def test_every_test_erring_alike_the_canaries_too_is_named_not_tampering() -> None:
    """flask (blind15b): its conftest's autouse fixture reads `_pytest.monkeypatch.notset`, gone in pytest 9, so
    every test errors on setup, the canaries too. That error is the cause to name (with the pytest fix), not
    tampering; any other finding, a requested test that ran, or another error leaves it to the guard."""
    from signoff.repair.verdict import collection_fix

    error = "failed on setup with \"AttributeError: module '_pytest.monkeypatch' has no attribute 'notset'\""
    findings = [f"the canary that must fail by an assertion did not (error: {error})",
                f"the canary that must pass did not (error: {error})"]
    erred = Case("tests/test_basic.py::test_session", "error", False, "AttributeError", error)
    named = _setup_errors_alike(["tests/test_basic.py::test_session"], [erred], findings)
    assert named.endswith(error) and "canaries too" in named
    assert "older pytest" in collection_fix(named)
    assert _setup_errors_alike(["tests/test_basic.py::test_session"], [erred],
                               [*findings, "guard: pytest.main replaced"]) == ""
    ran = Case("tests/test_basic.py::test_session", "passed", False, None, "")
    assert _setup_errors_alike(["tests/test_basic.py::test_session"], [ran], findings) == ""
    other = Case("tests/test_basic.py::test_session", "error", False, "KeyError", "failed on setup with KeyError")
    assert _setup_errors_alike(["tests/test_basic.py::test_session"], [other], findings) == ""
    assert _setup_errors_alike(["tests/test_basic.py::test_session"], [], findings) == ""


def test_a_test_class_pytest_cannot_collect_is_named() -> None:
    """tornado 5's AsyncTestCase under pytest 8.2+: the class holding the test fails to collect and
    pytest stops before the canaries ("found no collectors"). That is the cause to name, not tampering."""
    plan = Plan("k", "test_signoff_canary_0123456789abcdef.py", "c::f", "c::p", "n")
    message = "AttributeError: 'StaticFileTest' object has no attribute 'runTest'"
    broken = Case("web_test.py::StaticFileTest", "error", False, "AttributeError", message)
    observed = {"web_test.py::StaticFileTest": {"outcome": "error"}}
    missing = ["the canary that must fail by an assertion did not (missing)", "the canary that must pass did not "
               "(missing)"]
    assert _collection_errors(["web_test.py::StaticFileTest::test_range"], [broken], observed, missing, plan) == (
        f"web_test.py::StaticFileTest: {message}")
    # Another class's error is not what stopped the requested test; nor is a test's own error.
    assert _collection_errors(["web_test.py::OtherTest::test_range"], [broken], observed, missing, plan) == ""
    own = Case("web_test.py::StaticFileTest::test_range", "error", False, "AttributeError", message)
    assert _collection_errors(["web_test.py::StaticFileTest::test_range"], [own],
                              {own.id: {"outcome": "error"}}, missing, plan) == ""


def test_the_fix_for_a_collection_error_follows_its_cause() -> None:
    from signoff.repair.verdict import collection_fix, reason

    assert "`six` is not in the test environment" in collection_fix("t.py: ModuleNotFoundError: No module named "
                                                                    "'six.moves'")
    assert "--python" in collection_fix("pytest could not start: ModuleNotFoundError: No module named 'imp'")
    assert "--pytest 'pytest<8'" in collection_fix("ValueError: @pytest.fixture is being applied more than once")
    assert "pytest 4.6 or newer" in collection_fix("ValueError: fixture is being applied more than once")
    assert "--python X.Y" in collection_fix("AttributeError: module 'collections' has no attribute 'Callable'")
    assert reason("collection_error", "base: AttributeError: 'T' object has no attribute 'runTest'")["fix"] == (
        collection_fix("runTest"))
    # anyio's addopts load its own plugin by its entry point's name (`-p anyio`): named as that, not as a
    # module to install; an environment plugin importing the project (pytest-sanic) keeps its own advice.
    from signoff.repair.verdict import no_report_fix

    own = no_report_fix("exit 4, no JUnit report; ERROR: Error importing plugin \"anyio\": No module named 'anyio'")
    assert own.startswith("`-p anyio` in the project's addopts loads its own pytest plugin") and "--runner" in own
    assert "leave that plugin out" in no_report_fix("ModuleNotFoundError: No module named 'sanic'")
    refused = no_report_fix("exit 3, no JUnit report; pluggy._manager.PluginValidationError: Plugin 'flake8' for "
                            "hook 'pytest_collect_file'")
    assert "refuses the plugin `flake8`" in refused and "--pytest 'pytest<X'" in refused


def test_tox_deps_and_hashed_requirements(tmp_path: Path) -> None:
    """Older projects keep their test dependencies in tox.ini; pip-compile writes hashes over
    continued lines. Both are read as data at the base revision."""
    tox = ("[extra]\ndeps =\n    nose\n    coverage\n[testenv]\ndeps =\n    {[extra]deps}\n    py27: mock\n"
           "    numpy\n    {posargs}\ncommands = nosetests\n")
    hashed = ("attrs==23.1.0 \\\n    --hash=sha256:" + "a" * 64 + " \\\n    --hash=sha256:" + "b" * 64 + "\n"
              "six==1.16.0  # via attrs\n")
    repo, base = _repo(tmp_path / "r", {"tox.ini": tox, "requirements/dev.txt": hashed,
                                        "setup.py": "from setuptools import setup\nsetup(name='tool')\n"})
    assert testenv.tox_deps(tox) == ["nose", "coverage", "numpy"]
    assert testenv.plan(repo, base, ["tox.ini"], False, [], None).lines == ["nose", "coverage", "numpy"]
    # `extras = testing` installs the project with that extra (Python-Markdown's tox.ini); skip_install none.
    extras = "[testenv]\nextras = testing\ndeps = pytidylib\n"
    pyproject = PYPROJECT.replace("test =", "testing =")
    repo2, base2 = _repo(tmp_path / "x", {"tox.ini": extras, "pyproject.toml": pyproject})
    assert testenv.plan(repo2, base2, ["tox.ini"], False, [], None).lines == [
        "attrs>=22", "six", "hypothesis", "pytest-mock", "pytidylib"]
    assert testenv.tox_deps(extras + "skip_install = true\n") == ["pytidylib"]
    plan = testenv.plan(repo, base, ["requirements/dev.txt"], False, [], None)
    # pip gets bare lines (its hash mode would refuse the unhashed pytest added beside them); the
    # hashes are kept and checked against what pip installed.
    assert plan.lines == ["attrs==23.1.0", "six==1.16.0"]
    assert [(p.name, len(p.hashes)) for p in plan.pins] == [("attrs", 2)]


def test_tox_factors_follow_the_python_the_tests_run_on(tmp_path: Path) -> None:
    """`--python 3.8` reads tox.ini's lines for 3.8 (and an included file's), not signoff's own Python's."""
    tox = "[testenv]\ndeps =\n    pytest\n    py38: -rreq38.txt\n    py312: typing-extensions\n"
    repo, base = _repo(tmp_path / "r", {"tox.ini": tox, "req38.txt": "mock<5\n",
                                        "setup.py": "from setuptools import setup\nsetup(name='tool')\n"})
    assert testenv.plan(repo, base, ["tox.ini"], False, [], None, python=(3, 8)).lines == ["pytest", "mock<5"]
    assert testenv.plan(repo, base, ["tox.ini"], False, [], None, python=(3, 12)).lines == [
        "pytest", "typing-extensions"]


def test_a_lock_file_constrains_and_is_recorded(tmp_path: Path) -> None:
    lock = '{"default": {"attrs": {"version": "==23.1.0", "hashes": ["sha256:' + "a" * 64 + '"]}}, "develop": {}}'
    repo, base = _repo(tmp_path / "r", {"pyproject.toml": PYPROJECT, "Pipfile.lock": lock})
    plan = testenv.plan(repo, base, [], True, [], None, "Pipfile.lock")
    # The lock holds versions; it does not choose what is installed.
    assert plan.lines == ["attrs>=22", "six"] and plan.constraints == ["attrs==23.1.0"]
    assert plan.lock is not None and plan.lock["format"] == "pipfile" and plan.lock["hashed"] == 1
    assert plan.lock["path"] == "Pipfile.lock (base revision)" and len(plan.lock["sha256"]) == 64
    assert plan.sources[-1] == "lock Pipfile.lock (base revision)"
    with pytest.raises(UsageError, match=r"lock file 'uv\.lock' is neither in the base revision"):
        testenv.plan(repo, base, [], True, [], None, "uv.lock")


def test_request_defaults_keep_the_old_behaviour() -> None:
    req = VerifyRequest(repo=Path("."), base="a", candidate="b", harness=None, expect="t.py")
    assert (req.project_deps, req.extras, req.pytest, req.python, req.allow_source_builds) == (
        False, [], None, None, False)


def test_a_test_file_keeps_the_helpers_it_imports_from_its_folder(tmp_path: Path) -> None:
    """luigi's and httpie's tests import their helpers absolutely (`from helpers import with_config`),
    as pytest puts the test folder (no __init__.py) first on the path: those come with the harness,
    from the base revision. The project's own code never does."""
    test = "import os\nimport luigi\nfrom helpers import with_config\nfrom worker_test import patch\n"
    repo, base = _repo(tmp_path / "r", {"luigi/__init__.py": "", "test/parameter_test.py": test,
                                        "test/helpers.py": "import luigi\nfrom data import cases\n",
                                        "test/data/__init__.py": "", "test/data/cases.py": "X = 1\n",
                                        "test/worker_test.py": "import helpers\n", "test/other_test.py": "",
                                        "root_test.py": "import luigi\n"})
    staged = _staged(repo, base, "test/parameter_test.py", tmp_path / "staged")
    assert staged == ["test/data/__init__.py", "test/data/cases.py", "test/helpers.py", "test/parameter_test.py",
                      "test/worker_test.py"]
    # From the repository's root, an absolute import is the project's own code: never staged.
    assert _staged(repo, base, "root_test.py", tmp_path / "root") == ["root_test.py"]


def test_setup_py_built_from_names_and_a_kwargs_dict(tmp_path: Path) -> None:
    """sanic's setup.py of 2020: requirement strings glued from names, lists added up, everything
    handed over as `setup(**setup_kwargs)` with keys assigned later; its `tests_require` is the
    extra `tests_require`. Read as a syntax tree; the environment-dependent edit is not applied."""
    setup_py = '''\
import os
from setuptools import setup
setup_kwargs = {"name": "sanic", "version": version}
env_dependency = '; sys_platform != "win32"'
uvloop = "uvloop>=0.5.3" + env_dependency
requirements = ["httptools>=0.0.10", uvloop]
tests_require = ["pytest==5.2.1", uvloop]
dev_require = tests_require + ["tox"]
if os.environ.get("SANIC_NO_UVLOOP"):
    requirements.remove(uvloop)
setup_kwargs["install_requires"] = requirements
setup_kwargs["tests_require"] = tests_require
setup_kwargs["extras_require"] = {"dev": dev_require, "broken": unknown_name}
setup(**setup_kwargs)
'''
    repo, base = _repo(tmp_path / "r", {"setup.py": setup_py})
    uv = 'uvloop>=0.5.3; sys_platform != "win32"'
    assert testenv.plan(repo, base, [], True, ["dev"], None).lines == ["httptools>=0.0.10", uv, "pytest==5.2.1", "tox"]
    assert testenv.plan(repo, base, [], False, ["tests_require"], None).lines == ["httptools>=0.0.10", uv,
                                                                                 "pytest==5.2.1"]
    assert testenv.project_name(repo, base) == "sanic"
    # --pytest is the person's choice and replaces the extra's own pin (older than the guard supports).
    chosen = testenv.plan(repo, base, [], False, ["tests_require"], "pytest>=6.2,<7")
    assert chosen.lines == ["httptools>=0.0.10", uv, "pytest>=6.2,<7"] and chosen.replaced == ["pytest==5.2.1"]


def test_a_run_that_stopped_names_its_exception() -> None:
    from signoff.repair.verifier import _tail_cause

    trace = ('Traceback (most recent call last):\n  File "/runner/signoff_guard.py", line 463, in x\n'
             "    _PLACES['harness'] = str(early_config.rootpath)\n"
             "AttributeError: 'Config' object has no attribute 'rootpath'\n")
    assert _tail_cause(trace) == "AttributeError: 'Config' object has no attribute 'rootpath'"
    assert _tail_cause("killed\n") == "killed"


def test_dependency_groups_are_extras_too(tmp_path: Path) -> None:
    """uv and pdm projects keep their test dependencies in PEP 735 `[dependency-groups]`, pdm's older
    ones in `[tool.pdm.dev-dependencies]` (unearth's `test`), without its lines naming local folders."""
    pyproject = PYPROJECT + ('\n[dependency-groups]\nlint = ["ruff"]\ndev = ["pytest-mock", {include-group = "lint"}]\n'
                             'test = ["never-used"]\n[tool.pdm.dev-dependencies]\n'
                             'check = ["pytest-httpserver>=1.0.4", "-e file:///${PROJECT_ROOT}/plugin"]\n')
    repo, base = _repo(tmp_path / "r", {"pyproject.toml": pyproject})
    assert testenv.plan(repo, base, [], False, ["dev"], None).lines == ["attrs>=22", "six", "pytest-mock", "ruff"]
    assert testenv.plan(repo, base, [], False, ["check"], None).lines == ["attrs>=22", "six",
                                                                        "pytest-httpserver>=1.0.4"]
    # An extra of the same name is the project's own declaration and wins.
    assert testenv.plan(repo, base, [], False, ["test"], None).lines == ["attrs>=22", "six", "hypothesis",
                                                                       "pytest-mock"]


def test_uvs_older_dev_dependencies_are_the_dev_group_and_a_missing_module_names_it(tmp_path: Path) -> None:
    """python-multipart (blind17b) kept its test dependencies in `[tool.uv] dev-dependencies`, which `uv run`
    installs as the `dev` group: `--extras dev` was "not declared", and `No module named 'yaml'` was told to add
    a requirements file or `--extras test`, which it does not have."""
    from signoff.repair.verdict import reason

    pyproject = ('[project]\nname = "mp"\nversion = "1"\ndependencies = []\n[dependency-groups]\ndev = ["ruff"]\n'
                 '[tool.uv]\ndev-dependencies = ["PyYAML==6.0.1", "pytest==8.1.1", "ruff"]\n')
    repo, base = _repo(tmp_path / "r", {"pyproject.toml": pyproject})
    assert testenv.plan(repo, base, [], True, ["dev"], None).lines == ["ruff", "PyYAML==6.0.1", "pytest==8.1.1"]
    detail = "base: test_multipart.py: ModuleNotFoundError: No module named 'yaml'"
    found = testenv.declared_in_group(detail, repo, base, [])
    assert found == "the project declares PyYAML in its `dev` group or extra (pyproject.toml), not installed"
    assert reason("collection_error", f"{detail} ({found})")["fix"] == (
        "install the project's `dev` group or extra, which declares PyYAML: pass --project-deps --extras dev")
    # Asked for already (then pip's error or the module's own name is the matter), or declared nowhere: nothing.
    assert testenv.declared_in_group(detail, repo, base, ["dev"]) == ""
    assert testenv.declared_in_group("No module named 'lxml'", repo, base, []) == ""


def test_a_poetry_project_declares_its_dependencies_in_its_own_table(tmp_path: Path) -> None:
    """Poetry before 2.0 has no [project] table: its dependencies (caret and tilde ranges), groups
    and extras are read from [tool.poetry], as data."""
    from signoff.repair.testenv import poetry_spec

    pyproject = ('[tool.poetry]\nname = "pricing"\nversion = "1"\n[tool.poetry.dependencies]\npython = "^3.8"\n'
                 'requests = "^2.31"\nattrs = "~22.1"\nzeta = "^0.2.3"\nsix = "*"\nforked = {git = "https://x"}\n'
                 'rich = {version = ">=13", extras = ["jupyter"], optional = true}\n'
                 '[tool.poetry.group.test.dependencies]\npytest-mock = "^3"\n'
                 '[tool.poetry.dev-dependencies]\nhypothesis = "6.100.0"\n[tool.poetry.extras]\nfancy = ["rich"]\n')
    repo, base = _repo(tmp_path / "r", {"pyproject.toml": pyproject})
    declared = ["requests>=2.31,<3", "attrs>=22.1,<22.2", "zeta>=0.2.3,<0.3", "six"]
    assert testenv.plan(repo, base, [], True, [], None).lines == declared
    assert testenv.plan(repo, base, [], False, ["test", "dev", "fancy"], None).lines == [
        *declared, "pytest-mock>=3,<4", "hypothesis==6.100.0", "rich[jupyter]>=13"]
    assert testenv.project_name(repo, base) == "pricing"
    # Beside a setup.py and with no Poetry build backend (black in 2018), pip builds from setup.py:
    # that is what is read, not the [tool.poetry] table.
    setup = "from setuptools import setup\nsetup(name='pricing', install_requires=['attrs>=17.4.0'])\n"
    repo2, base2 = _repo(tmp_path / "r2", {"pyproject.toml": pyproject, "setup.py": setup})
    assert testenv.plan(repo2, base2, [], True, [], None).lines == ["attrs>=17.4.0"]
    backend = '[build-system]\nbuild-backend = "poetry.core.masonry.api"\n'
    repo3, base3 = _repo(tmp_path / "r3", {"pyproject.toml": backend + pyproject, "setup.py": setup})
    assert testenv.plan(repo3, base3, [], True, [], None).lines == declared
    assert poetry_spec("x", {"version": "^1.2", "markers": "sys_platform == 'linux'"}) == (
        "x>=1.2,<2 ; sys_platform == 'linux'")


def test_a_flit_project_before_pep_621_declares_its_dependencies_in_its_metadata_table(tmp_path: Path) -> None:
    """flit before PEP 621 (fastapi until 2020) keeps them in [tool.flit.metadata]: `requires`,
    `requires-extra` and the older `dev-requires`."""
    pyproject = ('[tool.flit.metadata]\nmodule = "fastapi"\nrequires = ["starlette ==0.13.2", "pydantic >=0.32.2"]\n'
                 'dev-requires = ["flake8"]\n[tool.flit.metadata.requires-extra]\n'
                 'test = ["pytest >=4.0.0", "fastapi"]\n')
    repo, base = _repo(tmp_path / "r", {"pyproject.toml": pyproject})
    assert testenv.plan(repo, base, [], True, [], None).lines == ["starlette ==0.13.2", "pydantic >=0.32.2"]
    # The project itself in an extra is never installed into its own environment.
    assert testenv.plan(repo, base, [], False, ["test", "dev"], None).lines == [
        "starlette ==0.13.2", "pydantic >=0.32.2", "pytest >=4.0.0", "flake8"]
    assert testenv.project_name(repo, base) == "fastapi"


def test_the_src_layout_is_where_the_tests_import_the_project_from(tmp_path: Path) -> None:
    """click, werkzeug, structlog and packaging keep their package in `src/`: an installed project
    would be imported from there, so the run's import folders get it (read from the base)."""
    src, _ = _repo(tmp_path / "src", {"src/click/__init__.py": "", "tests/test_x.py": "", "pyproject.toml": ""})
    assert testenv.package_folders(src, "HEAD") == ["src"]
    spaced, _ = _repo(tmp_path / "ns", {"src/acme/tools/__init__.py": "", "tests/test_x.py": ""})  # PEP 420
    assert testenv.package_folders(spaced, "HEAD") == ["src"]
    flat, _ = _repo(tmp_path / "flat", {"luigi/__init__.py": "", "src/luigi/__init__.py": "", "test/t.py": ""})
    assert testenv.package_folders(flat, "HEAD") == []
    cfg = "[metadata]\nname = p\n[options]\npackage_dir =\n    =lib\npackages = find:\n"
    declared, _ = _repo(tmp_path / "cfg", {"setup.cfg": cfg, "lib/p.py": "", "src/notes.txt": ""})
    assert testenv.package_folders(declared, "HEAD") == ["lib"]
    found = '[tool.setuptools.packages.find]\nwhere = ["code"]\n'
    where, _ = _repo(tmp_path / "find", {"pyproject.toml": found, "code/q/__init__.py": ""})
    assert testenv.package_folders(where, "HEAD") == ["code"]
    setup_py = "from setuptools import setup\nsetup(name='r', package_dir={'': 'lib'}, packages=['r'])\n"
    old, _ = _repo(tmp_path / "setup", {"setup.py": setup_py, "lib/r/__init__.py": ""})
    assert testenv.package_folders(old, "HEAD") == ["lib"]


def test_a_version_module_generated_at_install_is_written_for_the_run(tmp_path: Path) -> None:
    """humanize imports `._version`, which hatch-vcs writes at install and nobody commits: the run
    writes what the base's pyproject.toml declares, never over a revision's own file nor through a
    link a revision commits, nor anywhere a declared path could climb out to."""
    pyproject = ('[tool.hatch]\nbuild.hooks.vcs.version-file = "src/pkg/_version.py"\n'
                 '[tool.setuptools_scm]\nwrite_to = "../outside.py"\nversion_file = "lib/_v.py"\n')
    setup_py = 'from setuptools import setup\nsetup(name="p", use_scm_version={"write_to": "pkg/_scm.py"})\n'
    repo, base = _repo(tmp_path / "r", {"pyproject.toml": pyproject, "src/pkg/__init__.py": "", "setup.py": setup_py})
    assert list(testenv.version_files(repo, base)) == ["lib/_v.py", "src/pkg/_version.py", "pkg/_scm.py"]
    assert testenv.release_of(repo, base) == "0.0.0"
    # pdm-backend writes `write_to` inside its package folder (`src` by default), from its template.
    pdm = '[tool.pdm.version]\nsource = "scm"\nwrite_to = "pkg/__version__.py"\nwrite_template = "V = \'{}\'"\n'
    pdm_repo, pdm_base = _repo(tmp_path / "pdm", {"pyproject.toml": pdm, "src/pkg/__init__.py": ""})
    assert testenv.version_files(pdm_repo, pdm_base) == {"src/pkg/__version__.py": "V = '{}'"}
    # A module setup.py writes itself when it runs (numpy's old `write_version_py`): its `%(name)s` text, filled.
    writes = ("def write_version_py(filename='pkg/version.py'):\n    cnt = '''\nversion = '%(version)s'\n"
              "git_revision = '%(git_revision)s'\nrelease = %(isrelease)s\nd = {}\n'''\n"
              "    with open(filename, 'w') as a:\n        a.write(cnt % {'version': V})\n"
              "open('pkg/_plain.py', 'w').write(f'__version__ = {V!r}')\nopen('README.txt', 'w')\n")
    np_repo, np_base = _repo(tmp_path / "np", {"setup.py": writes, "pkg/__init__.py": ""})
    written = testenv.version_files(np_repo, np_base)
    assert list(written) == ["pkg/_plain.py", "pkg/version.py"] and written["pkg/_plain.py"] is None
    scope_np: dict[str, object] = {}
    exec((written["pkg/version.py"] or "").format("1.2.3"), scope_np)
    got = (scope_np["version"], scope_np["git_revision"], scope_np["release"], scope_np["d"])
    assert got == ("1.2.3", "", True, {})
    tree = tmp_path / "tree"
    (tree / "src" / "pkg").mkdir(parents=True)
    (tree / "lib").symlink_to(tmp_path / "elsewhere")  # a revision's link: never written through
    (tmp_path / "elsewhere").mkdir()
    wanted = {"src/pkg/_version.py": None, "lib/_v.py": None, "src/pkg/__version__.py": "V = '{}'"}
    assert testenv.write_version_files(tree, wanted, "4.12.3") == ["src/pkg/_version.py", "src/pkg/__version__.py"]
    scope: dict[str, object] = {}
    exec((tree / "src" / "pkg" / "_version.py").read_text(), scope)
    assert scope["__version__"] == "4.12.3" and scope["version_tuple"] == (4, 12, 3)
    assert (tree / "src" / "pkg" / "__version__.py").read_text() == "V = '4.12.3'"
    assert not (tmp_path / "elsewhere" / "_v.py").exists()
    (tree / "src" / "pkg" / "_version.py").write_text("__version__ = 'committed'\n")  # the revision's own stays
    assert testenv.write_version_files(tree, {"src/pkg/_version.py": None}, "1.0") == []
    assert (tree / "src" / "pkg" / "_version.py").read_text() == "__version__ = 'committed'\n"
    # The package metadata installing leaves (pre-commit reads its version from it at import): name and
    # version only, never over a revision's own folder, never a name or version that could climb out.
    assert testenv.declared_version(repo, base) == "0.0.0"  # no plain version declared: the tags'
    cfg_repo, cfg_base = _repo(tmp_path / "cfg", {"setup.cfg": "[metadata]\nname = pre_commit\nversion = 4.3.0\n"})
    assert testenv.declared_version(cfg_repo, cfg_base) == "4.3.0"
    assert testenv.write_metadata(tree, "pre-commit", "4.3.0") == "pre_commit-4.3.0.dist-info"
    found = importlib.metadata.distributions(path=[str(tree)])
    assert [(d.metadata["Name"], d.version, list(d.entry_points)) for d in found] == [("pre-commit", "4.3.0", [])]
    assert testenv.write_metadata(tree, "pre-commit", "4.3.0") is None
    assert testenv.write_metadata(tree, "../x", "1") is None and testenv.write_metadata(tree, "x", "1/../..") is None
    # And the commands it declares (coverage.py's tests run `coverage` in a subprocess): a literal entry of
    # setup.py's console_scripts (the ones computed with `%` are left out), pyproject's [project.scripts].
    setup_py = ("from setuptools import setup\nargs = dict(name='coverage', entry_points={'console_scripts': [\n"
                "    'coverage = coverage.cmdline:main', 'coverage%d = x:y' % 3]})\nsetup(**args)\n")
    cov_repo, cov_base = _repo(tmp_path / "cov", {"setup.py": setup_py, "coverage/__init__.py": "",
                                                   "coverage/cmdline.py": "def main():\n    print('ran')\n"})
    assert testenv.console_scripts(cov_repo, cov_base) == {"coverage": "coverage.cmdline:main"}
    scripts_repo, scripts_base = _repo(tmp_path / "scripts", {"pyproject.toml": '[project]\nname = "n"\n'
                                                              '[project.scripts]\nnox = "nox.__main__:main"\n'})
    assert testenv.console_scripts(scripts_repo, scripts_base) == {"nox": "nox.__main__:main"}
    # Its own pytest plugins, as installing it registers them (pytest-mock's `mocker`, anyio's `-p anyio`):
    # pyproject's entry-points tables (anyio writes the group inline), setup.cfg's, setup.py's literal ones.
    plugins_repo, plugins_base = _repo(tmp_path / "plugins", {
        "pyproject.toml": ('[project]\nname = "anyio"\n[project.entry-points]\n'
                           'pytest11 = {anyio = "anyio.pytest_plugin"}\n'),
        "setup.cfg": "[options.entry_points]\npytest11 =\n    pytest_mock = pytest_mock\n    bad = x:y\n",
        "setup.py": "from setuptools import setup\nsetup(name='p', entry_points={'pytest11': ['p = p.plugin']})\n"})
    assert testenv.pytest_plugins(plugins_repo, plugins_base) == {
        "anyio": "anyio.pytest_plugin", "pytest_mock": "pytest_mock", "p": "p.plugin"}
    assert testenv.pytest_plugins(cov_repo, cov_base) == {}
    cov_tree = tmp_path / "cov-tree"
    git.export(cov_repo, cov_base, cov_tree)
    assert testenv.write_scripts(cov_tree, {"coverage": "coverage.cmdline:main"}) == ["coverage"]
    ran = subprocess.run(["coverage"], capture_output=True, text=True, cwd=tmp_path, check=False, env={
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin:{cov_tree / testenv.SCRIPTS_FOLDER}",
        "PYTHONPATH": str(cov_tree)})
    assert (ran.returncode, ran.stdout) == (0, "ran\n")


def test_a_committed_data_file_the_person_changed_is_frozen_as_left_and_a_commits_change_never(
        tmp_path: Path) -> None:
    """markdown-it-py's fix adds its cases to the committed `fixtures/linkify.md` its test file reads: the
    person checks that file out beside the test (`git checkout FIX -- FILE`), and the harness takes it as
    left. A change a commit of the checked-out branch made (an agent's branch) is never taken."""
    repo, base = _repo(tmp_path / "r", {"tests/test_x.py": "", "tests/fixtures/cases.md": "base\n",
                                        "tests/fixtures/other.md": "base\n"})
    agent = git.commit_files(repo, base, {"tests/fixtures/other.md": "agent\n"}, "tidy the fixtures")
    git.run(repo, "checkout", "-q", agent)
    (repo / "tests" / "fixtures" / "cases.md").write_text("the fix's cases\n")
    _staged(repo, base, "tests/test_x.py", tmp_path / "staged")
    assert (tmp_path / "staged" / "tests" / "fixtures" / "cases.md").read_text() == "the fix's cases\n"
    assert (tmp_path / "staged" / "tests" / "fixtures" / "other.md").read_text() == "base\n"


def test_a_committed_helper_module_the_person_changed_is_frozen_as_left_and_a_commits_change_never(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """dataclasses-json #297's fix adds the test's class to `tests/entities.py`, which the new test imports: the
    person checks that module out beside the test, and the harness takes it as left, as a data file; a helper
    a commit of the checked-out branch changed is the base's. The edits are listed once (one `git diff`)."""
    test = "from tests.entities import New, Old\n\ndef test_x():\n    assert New and Old\n"
    repo, base = _repo(tmp_path / "r", {"tests/__init__.py": "", "tests/test_x.py": "def test_x():\n    pass\n",
                                        "tests/entities.py": "Old = 1\n", "tests/helpers.py": "H = 1\n",
                                        "tests/conftest.py": "from tests.helpers import H\n"})
    agent = git.commit_files(repo, base, {"tests/helpers.py": "H = 2  # the agent's\n"}, "tidy the helpers")
    git.run(repo, "checkout", "-q", agent)
    (repo / "tests" / "test_x.py").write_text(test)
    (repo / "tests" / "entities.py").write_text("Old = 1\nNew = 2\n")
    asked = _count_git(monkeypatch)
    _staged(repo, base, "tests/test_x.py", tmp_path / "staged")
    assert (tmp_path / "staged" / "tests" / "entities.py").read_text() == "Old = 1\nNew = 2\n"
    assert (tmp_path / "staged" / "tests" / "helpers.py").read_text() == "H = 1\n"
    assert asked.count(("diff", "-z")) == 1


def test_a_test_package_imported_from_the_root_keeps_its_helpers(tmp_path: Path) -> None:
    """marshmallow's tests/ is a package: `from tests.base import x` reaches a helper inside the test
    file's own folder, which comes with the harness; `from pkg import y` (the project) still does not."""
    test = "from pkg import schema\nfrom tests.base import central\nfrom tests import util\n"
    repo, base = _repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/schema.py": "", "tests/__init__.py": "",
                                        "tests/base.py": "X = 1\n", "tests/util.py": "", "tests/test_x.py": test,
                                        "tests/test_other.py": "", "tests/tox.ini": "[pytest]\n",
                                        # tomlkit's sample documents: data, not configuration, below the test
                                        "tests/examples/pyproject.toml": "[tool.poetry]\n",
                                        # unearth's conftest imports its app from the test package;
                                        # coverage.py's loads a plugin module by name
                                        "tests/conftest.py": "from tests.fixtures.app import create_app\n"
                                                             "pytest_plugins = ['tests.select_plugin']\n",
                                        "tests/select_plugin.py": "", "tests/fixtures/__init__.py": "",
                                        "tests/fixtures/app.py": "import pkg\n", "tests/fixtures/unused.py": ""})
    staged = _staged(repo, base, "tests/test_x.py", tmp_path / "staged")
    assert staged == ["tests/__init__.py", "tests/base.py", "tests/conftest.py", "tests/examples/pyproject.toml",
                      "tests/fixtures/__init__.py", "tests/fixtures/app.py", "tests/select_plugin.py",
                      "tests/test_x.py", "tests/util.py"]
    # A helper still missing from a harness is named as such, not as a module the checkout lacks.
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "__init__.py").write_text("")
    (tree / "tests" / "base.py").write_text("")
    line = testenv.unbuilt_module("ModuleNotFoundError: No module named 'tests.base'", tree, [])
    assert "in the checkout but not in the harness" in line


def test_a_folder_a_test_file_names_beside_itself_comes_whole_with_the_persons_edits(tmp_path: Path) -> None:
    """pylint (blind15b): test_functional.py lints every file of `Path(__file__).parent.resolve() / "functional"`;
    the fix changes `functional/n/nan.txt`, which the person checked out. The folder comes with the harness (its
    Python files are data there), the edit as left; a folder above the test file, or the project's code, does not."""
    test = ("from pathlib import Path\nFUNCTIONAL_DIR = Path(__file__).parent.resolve() / 'functional'\n"
            "UP = Path(__file__).parent / '..' / 'tests'\nCODE = Path(__file__).parent / '..' / 'pkg'\n")
    repo, base = _repo(tmp_path / "r", {"tests/test_functional.py": test, "tests/functional/__init__.py": "",
                                        "tests/functional/n/nan.py": "x == float('nan')\n",
                                        "tests/functional/n/nan.txt": "base\n", "tests/functional/conftest.py": "",
                                        "tests/other/test_y.py": "", "pkg/__init__.py": "", "pkg/core.py": ""})
    (repo / "tests" / "functional" / "n" / "nan.txt").write_text("the fix's\n")
    staged = _staged(repo, base, "tests/test_functional.py", tmp_path / "staged")
    assert staged == ["tests/functional/__init__.py", "tests/functional/n/nan.py", "tests/functional/n/nan.txt",
                      "tests/test_functional.py"]
    assert (tmp_path / "staged" / "tests/functional/n/nan.txt").read_text() == "the fix's\n"


def test_a_package_conftest_brings_no_copy_of_the_project_s_own_modules(tmp_path: Path) -> None:
    """sympy (blind15b): sympy/conftest.py, above sympy/core/tests/, imports `sympy.core.cache` and more of sympy:
    the project's code, which the run takes from the checkout; no frozen copy of it comes with the harness."""
    repo, base = _repo(tmp_path / "r", {"sympy/__init__.py": "",
                                        "sympy/conftest.py": "from sympy.core.cache import c\n",
                                        "sympy/core/__init__.py": "", "sympy/core/cache.py": "c = 1\n",
                                        "sympy/core/tests/__init__.py": "",
                                        "sympy/core/tests/test_x.py": "from sympy.core.cache import c\n"})
    assert _staged(repo, base, "sympy/core/tests/test_x.py", tmp_path / "staged") == [
        "sympy/__init__.py", "sympy/conftest.py", "sympy/core/__init__.py", "sympy/core/tests/__init__.py",
        "sympy/core/tests/test_x.py"]


def test_the_helpers_a_test_package_init_imports_come_with_it(tmp_path: Path) -> None:
    """xarray (blind15b): xarray/tests/__init__.py imports `xarray.tests.arrays`, which every test file importing
    `xarray.tests` needs; the project's own `xarray/__init__.py` imports stay the checkout's."""
    init = "from xarray.tests.arrays import DuckArray\nfrom xarray.core import api\n"
    repo, base = _repo(tmp_path / "r", {"xarray/__init__.py": "from xarray.core import api\n",
                                        "xarray/core/__init__.py": "", "xarray/core/api.py": "",
                                        "xarray/tests/__init__.py": init, "xarray/tests/arrays.py": "",
                                        "xarray/tests/test_x.py": "from xarray.tests import DuckArray\n"})
    assert _staged(repo, base, "xarray/tests/test_x.py", tmp_path / "staged") == [
        "xarray/__init__.py", "xarray/tests/__init__.py", "xarray/tests/arrays.py", "xarray/tests/test_x.py"]


def test_a_module_an_import_passes_through_comes_with_the_test(tmp_path: Path) -> None:
    """zipp (blind18bx): `from .compat.py39.os_helper import FakePath` imports tests/compat/py39.py, which puts
    `os_helper` into sys.modules itself: no file is named after the last part, and the module on the way is the
    helper, relatively or absolutely imported; a folder on the way brings its __init__.py, never its other files."""
    py39 = "import sys\nsys.modules[__name__ + '.os_helper'] = sys\n"
    repo, base = _repo(tmp_path / "r", {"tests/__init__.py": "", "tests/compat/__init__.py": "",
                                        "tests/compat/py39.py": py39, "tests/compat/py310.py": "",
                                        "tests/test_path.py": "from .compat.py39.os_helper import FakePath\n",
                                        "tests/test_abs.py": "from tests.compat.py39.os_helper import temp_dir\n"})
    for test in ("tests/test_path.py", "tests/test_abs.py"):
        assert _staged(repo, base, test, tmp_path / test.replace("/", "-")) == [
            "tests/__init__.py", "tests/compat/__init__.py", "tests/compat/py39.py", test]


def test_tests_inside_a_src_layout_package_never_take_the_package_as_a_helper(tmp_path: Path) -> None:
    """trio (blind16): src/trio/_tests/test_channel.py does `import trio`; pytest puts `src` first on the path,
    where `trio` sits beside the test package, so the whole package (the code under test) was staged as the test's
    helper and the run imported the base's `_channel.py` from the harness on every revision. Only what lies in the
    test folder is a helper, whether reached relatively or absolutely; and the test package's plugin the root
    configuration names by its import name (`-p trio._tests.pytest_plugin`, not `src.trio...`) is one."""
    test = "import pkg\nfrom pkg import core\nfrom pkg._tests.helpers import h\nfrom ..core import y\n"
    plugin = '[tool.pytest.ini_options]\naddopts = ["-p pkg._tests.pytest_plugin"]\n'
    repo, base = _repo(tmp_path / "r", {"src/pkg/__init__.py": "from .core import y\n", "src/pkg/core.py": "y = 1\n",
                                        "src/pkg/_tests/__init__.py": "", "src/pkg/_tests/helpers.py": "import pkg\n",
                                        "src/pkg/_tests/test_x.py": test, "src/pkg/_tests/test_other.py": "",
                                        "src/pkg/_tests/pytest_plugin.py": "from ..core import y\n",
                                        "pyproject.toml": plugin})
    assert _staged(repo, base, "src/pkg/_tests/test_x.py", tmp_path / "staged") == [
        "src/pkg/__init__.py", "src/pkg/_tests/__init__.py", "src/pkg/_tests/helpers.py",
        "src/pkg/_tests/pytest_plugin.py", "src/pkg/_tests/test_x.py"]


@pytest.mark.parametrize("inner_package", [False, True], ids=["inner-folder-no-init", "inner-package"])
def test_a_nested_test_module_keeps_the_helpers_of_its_outer_test_package(tmp_path: Path, inner_package: bool) -> None:
    """uvicorn's tests/protocols/test_http.py (tests/protocols/ has no __init__.py) imports `tests.response`, a
    helper of the outer test package; the project's own package still stays out."""
    test = "from tests.response import Response\nfrom pkg import app\n"
    inner = {"tests/protocols/__init__.py": ""} if inner_package else {}
    repo, base = _repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/app.py": "", "tests/__init__.py": "",
                                        "tests/response.py": "", **inner,
                                        "tests/protocols/test_http.py": test, "tests/test_other.py": ""})
    staged = _staged(repo, base, "tests/protocols/test_http.py", tmp_path / "staged")
    assert staged == sorted(["tests/__init__.py", *inner, "tests/protocols/test_http.py", "tests/response.py"])


def test_an_include_written_without_a_space_and_poetry_groups_beside_a_project_table(tmp_path: Path) -> None:
    """pip reads `-rFILE` as `-r FILE` (gunicorn's and PyGithub's tox.ini: `deps = -rrequirements_test.txt`);
    Poetry 2 keeps its groups in [tool.poetry.group.*] beside a [project] table (cleo's `dev`)."""
    pyproject = PYPROJECT + '[tool.poetry.group.dev.dependencies]\npytest-mock = ">=3.8.2"\n'
    repo, base = _repo(tmp_path / "r", {"tox.ini": "[testenv]\ndeps =\n  -rrequirements_test.txt\n  -cpins.txt\n",
                                        "requirements_test.txt": "gevent\npytest>=7.2.0\n", "pins.txt": "gevent<99\n",
                                        "pyproject.toml": pyproject})
    plan = testenv.plan(repo, base, ["tox.ini"], False, ["dev"], None)
    assert plan.lines == ["attrs>=22", "six", "pytest-mock>=3.8.2", "gevent", "pytest>=7.2.0"]
    assert testenv.read_requirements(repo, base, "tox.ini")[1] == ["gevent<99"]


def test_the_package_metadata_carries_the_bases_entry_points_but_pytest_plugins(tmp_path: Path) -> None:
    """mkdocs finds its own themes and plugins by entry point (`mkdocs.themes`), as installing it registers
    them: the metadata written for the run has every group the base declares but `pytest11` (those the guard
    loads itself, after its start), from pyproject.toml, setup.cfg and setup.py's literal dict."""
    repo, base = _repo(tmp_path / "r", {
        "pyproject.toml": ('[project]\nname = "mkdocs"\n[project.scripts]\nmkdocs = "mkdocs.__main__:cli"\n'
                           '[project.entry-points."mkdocs.themes"]\nmkdocs = "mkdocs.themes.mkdocs"\n'
                           '[project.entry-points.pytest11]\nown = "mkdocs.plugin"\n'),
        "setup.cfg": "[options.entry_points]\nmkdocs.plugins =\n    search = mkdocs.contrib.search:SearchPlugin\n",
        "setup.py": "from setuptools import setup\nsetup(entry_points={'paste.server_runner': ['main = g.p:serve'],"
                    " 'pytest11': ['p = p.plugin']})\n"})
    entries = testenv.entry_points(repo, base)
    assert entries == {"console_scripts": ["mkdocs = mkdocs.__main__:cli"], "mkdocs.plugins": [
        "search = mkdocs.contrib.search:SearchPlugin"], "mkdocs.themes": ["mkdocs = mkdocs.themes.mkdocs"],
        "paste.server_runner": ["main = g.p:serve"]}
    tree = tmp_path / "tree"
    tree.mkdir()
    assert testenv.write_metadata(tree, "mkdocs", "1.6.0", {**entries, "pytest11": ["own = mkdocs.plugin"]})
    (dist,) = importlib.metadata.distributions(path=[str(tree)])
    assert sorted((ep.group, ep.name, ep.value) for ep in dist.entry_points) == [
        ("console_scripts", "mkdocs", "mkdocs.__main__:cli"), ("mkdocs.plugins", "search",
                                                                "mkdocs.contrib.search:SearchPlugin"),
        ("mkdocs.themes", "mkdocs", "mkdocs.themes.mkdocs"), ("paste.server_runner", "main", "g.p:serve")]


def test_code_that_imports_pkg_resources_gets_a_setuptools_that_ships_it(tmp_path: Path) -> None:
    """jaraco.functools in 2016 declared its namespace package through pkg_resources, which installing the
    project with setuptools brought (setuptools 71 imports its vendored `jaraco.text` by that name, which the
    checkout's `jaraco` hides; 82 removed pkg_resources). setup.py's own import (build time) counts not."""
    setup = "import pkg_resources\nfrom setuptools import setup\nsetup(name='jaraco.functools', install_requires=[])\n"
    namespace = "__import__(\"pkg_resources\").declare_namespace(__name__)\n"
    repo, base = _repo(tmp_path / "r", {"setup.py": setup, "jaraco/functools.py": "x = 1\n",
                                        "jaraco/__init__.py": namespace})
    plan = testenv.plan(repo, base, [], True, [], None)
    assert plan.lines == ["setuptools<71"] and plan.constraints == ["setuptools<71"]
    assert plan.sources[-1] == "setuptools<71 (jaraco/__init__.py imports pkg_resources)"
    declared, dbase = _repo(tmp_path / "d", {"setup.py": setup.replace("[]", "['setuptools>=40']"),
                                             "pkg/v.py": "from pkg_resources import get_distribution\n"})
    declared_plan = testenv.plan(declared, dbase, [], True, [], None)
    assert declared_plan.lines == ["setuptools>=40"] and declared_plan.constraints == ["setuptools<71"]
    # A setuptools declared at 71 or later (tox's test group says `setuptools<82,>=81`): below 71 as well, pip would
    # find nothing; the last releases that ship pkg_resources then.
    late, lbase = _repo(tmp_path / "l", {"setup.py": setup.replace("[]", "['setuptools<82,>=81']"),
                                         "pkg/v.py": "from pkg_resources import get_distribution\n"})
    late_plan = testenv.plan(late, lbase, [], True, [], None)
    assert late_plan.lines == ["setuptools<82,>=81"] and late_plan.constraints == ["setuptools<82"]
    plain, pbase = _repo(tmp_path / "p", {"setup.py": setup, "jaraco/functools.py": "x = 1\n"})
    assert testenv.pkg_resources_user(plain, pbase) is None
    # Inside a verification's git session the search starts early and the plan collects it: the same answers.
    with git.session() as session:
        for early, its_base in ((repo, base), (plain, pbase)):
            testenv.search_pkg_resources_soon(early, its_base)
        assert testenv.plan(repo, base, [], True, [], None).sources[-1] == plan.sources[-1]
        assert testenv.pkg_resources_user(plain, pbase) is None
        assert not [key for key in session.kept if key[0] == "pkg_resources_user"]
        testenv.search_pkg_resources_soon(repo, base)  # never collected: reaped when the session ends
        searching = session.kept[("pkg_resources_user", str(repo), base)]
    assert isinstance(searching, subprocess.Popen) and searching.returncode is not None


def test_in_a_corpus_the_data_named_after_the_test_module_or_its_classes_is_frozen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PyGithub's tests/ holds 1,100 replay files; tests/PaginatedList.py (its class PaginatedList) reads
    `ReplayData/PaginatedList.<test>.txt`. Over the limit of a test folder's data, only what is named after
    the module or its classes goes with the test file (and nothing when that is a corpus too)."""
    from signoff.repair import pytest_config

    test = "from . import Framework\n\nclass PaginatedList(Framework.TestCase):\n    pass\n"
    repo, base = _repo(tmp_path / "r", {"tests/__init__.py": "", "tests/Framework.py": "",
                                        "tests/PaginatedList.py": test, "tests/ReplayData/PaginatedList.setUp.txt": "a",
                                        "tests/ReplayData/PaginatedList.testIteration.txt": "b",
                                        "tests/ReplayData/PaginatedListX.setUp.txt": "c",
                                        "tests/ReplayData/Other.setUp.txt": "d",
                                        "tests/cassettes/PaginatedList/get.yaml": "e",
                                        "tests/roots/PaginatedList-pages/conf.py": "f",
                                        "tests/roots/PaginatedListing/conf.py": "g"})
    monkeypatch.setattr(pytest_config, "MAX_DATA_FILES", 6)
    assert [n for n in _staged(repo, base, "tests/PaginatedList.py", tmp_path / "h") if "/" in n[6:]] == [
        "tests/ReplayData/PaginatedList.setUp.txt", "tests/ReplayData/PaginatedList.testIteration.txt",
        "tests/cassettes/PaginatedList/get.yaml", "tests/roots/PaginatedList-pages/conf.py"]
    monkeypatch.setattr(pytest_config, "MAX_DATA_FILES", 3)
    assert _staged(repo, base, "tests/PaginatedList.py", tmp_path / "h2") == [
        "tests/Framework.py", "tests/PaginatedList.py", "tests/__init__.py"]


def test_a_helper_module_the_fix_adds_is_frozen_from_where_the_person_put_it(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """cleo's fix adds tests/fixtures/exceptions/raiser_with_suppressed_context.py, which its new test imports:
    checked out beside the test (`git checkout FIX -- FILE`), it goes into the harness as the test file does.
    A new Python file the test does not import stays out. The work tree is listed once for the helpers'
    search and the data files' (one `git ls-files`, one `git ls-tree HEAD`)."""
    test = "from tests.fixtures.exceptions import raiser\n\ndef test_x():\n    raiser.raiser()\n"
    repo, base = _repo(tmp_path / "r", {"tests/__init__.py": "", "tests/ui/__init__.py": "",
                                        "tests/ui/test_trace.py": "def test_old():\n    pass\n",
                                        "tests/fixtures/__init__.py": "", "tests/fixtures/exceptions/__init__.py": ""})
    (repo / "tests" / "ui" / "test_trace.py").write_text(test)
    (repo / "tests" / "fixtures" / "exceptions" / "raiser.py").write_text("def raiser():\n    raise ValueError\n")
    (repo / "tests" / "fixtures" / "exceptions" / "scratch.py").write_text("x = 1\n")
    (repo / "tests" / "fixtures" / "expected.txt").write_text("the fix's data\n")
    asked = _count_git(monkeypatch)
    staged = _staged(repo, base, "tests/ui/test_trace.py", tmp_path / "h")
    assert "tests/fixtures/exceptions/raiser.py" in staged and "tests/fixtures/exceptions/scratch.py" not in staged
    assert "tests/fixtures/expected.txt" in staged
    assert asked.count(("ls-files", "-z")) == 1 and asked.count(("ls-tree", "-r")) == 1


def test_the_projects_own_plugin_a_harness_conftest_names_is_the_checkouts(tmp_path: Path) -> None:
    """Sphinx's tests/conftest.py loads `sphinx.testing.fixtures` by `pytest_plugins`: the project's own code,
    named by the conftest a person approved, loaded by the guard from each checkout as a pytest11 plugin is.
    A plugin module the harness holds, or one of the environment, is not the checkout's."""
    from signoff.repair.pytest_config import checkout_plugins

    conftest = "pytest_plugins = ['sphinx.testing.fixtures', 'tests.helper_plugin', 'pytester']\n"
    repo, base = _repo(tmp_path / "r", {"sphinx/__init__.py": "", "sphinx/testing/__init__.py": "",
                                        "sphinx/testing/fixtures.py": "", "tests/conftest.py": conftest,
                                        "tests/helper_plugin.py": "", "lib/pkg/plug.py": ""})
    harness = tmp_path / "h"
    (harness / "tests").mkdir(parents=True)
    (harness / "tests" / "conftest.py").write_text(conftest + "pytest_plugins += ['pkg.plug']\n")
    (harness / "tests" / "helper_plugin.py").write_text("")
    assert checkout_plugins(harness, repo, base, []) == {"sphinx.testing.fixtures": "sphinx.testing.fixtures"}
    (harness / "tests" / "conftest.py").write_text("pytest_plugins = 'pkg.plug'\n")
    assert checkout_plugins(harness, repo, base, ["lib"]) == {"pkg.plug": "pkg.plug"}


def test_a_package_inside_a_plain_data_folder_is_data(tmp_path: Path) -> None:
    """Sphinx's test roots hold small projects (`roots/test-ext-viewcode/spam/`, a package its conf.py puts
    on the path): data the tests build, frozen with the test file. A package of the test folder itself is
    code, taken only when the test imports it."""
    repo, base = _repo(tmp_path / "r", {"tests/test_x.py": "def test_x():\n    pass\n",
                                        "tests/roots/test-x/conf.py": "", "tests/roots/test-x/spam/__init__.py": "",
                                        "tests/roots/test-x/spam/mod1.py": "", "tests/helpers/__init__.py": "",
                                        "tests/helpers/h.py": ""})
    assert _staged(repo, base, "tests/test_x.py", tmp_path / "h") == [
        "tests/roots/test-x/conf.py", "tests/roots/test-x/spam/__init__.py", "tests/roots/test-x/spam/mod1.py",
        "tests/test_x.py"]


def test_a_test_folder_imported_by_its_own_package_name_is_staged_at_its_place(tmp_path: Path) -> None:
    # mistune's tests do `from tests import BaseTestCase`, tornado's `from tornado.test.util import ...`:
    # at the harness's root those names would be the checkout's (the candidate's) copy of the tests.
    from signoff.repair.pytest_config import map_package_test_id, package_place, stage_test_package

    repo, base = _repo(tmp_path / "r", {"conftest.py": "", "tests/__init__.py": "X = 1\n",
                                        "tests/test_a.py": "from tests import X\n", "tests/data/x.txt": "x",
                                        "lib/test/__init__.py": "", "lib/test/test_b.py": "import lib.test.util\n",
                                        "other/__init__.py": "", "other/test_c.py": "import tests\n"})
    assert package_place(repo / "tests", repo) == "tests"
    assert package_place(repo / "lib" / "test", repo) == "lib/test"
    assert package_place(repo / "other", repo) is None  # imports another package, never its own
    assert package_place(tmp_path, repo) is None  # outside the repository
    dest = tmp_path / "staged"
    dest.mkdir()
    stage_test_package(repo / "tests", "tests", repo, base, dest)
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file()) == [
        "conftest.py", "tests/__init__.py", "tests/data/x.txt", "tests/test_a.py"]
    assert map_package_test_id("test_a.py::test_x", "tests") == "tests/test_a.py::test_x"


def test_a_conftest_that_reaches_the_project_through_its_own_place_and_settings_that_name_a_test_module(
        tmp_path: Path) -> None:
    """alembic's tests/conftest.py execs `../alembic/testing/plugin/bootstrap.py` beside itself, and SQLAlchemy's
    plugin reads `[db]` and `requirement_cls = tests.requirements:DefaultRequirements` from setup.cfg at pytest's
    rootdir (blind12): the harness carries the first two from the base, setup.cfg is laid at its root for
    the run; never the project's package."""
    conftest = ("import os\nbootstrap = os.path.join(os.path.dirname(__file__), '..', 'pkg', 'testing', "
                "'bootstrap.py')\nSRC = os.path.join(os.path.dirname(__file__), '..', 'pkg')\n")
    repo, base = _repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/testing/__init__.py": "",
                                        "pkg/testing/bootstrap.py": "", "tests/__init__.py": "",
                                        "tests/conftest.py": conftest, "tests/requirements.py": "",
                                        "tests/test_x.py": "def test_x(): pass\n", "tests/test_other.py": "",
                                        "setup.cfg": "[sqla_testing]\nrequirement_cls = tests.requirements:Reqs\n"
                                                     "[db]\ndefault = sqlite://\n"})
    from signoff.repair.pytest_config import lay_root_configuration

    staged = _staged(repo, base, "tests/test_x.py", tmp_path / "staged")
    assert staged == ["pkg/testing/bootstrap.py", "tests/__init__.py", "tests/conftest.py",
                      "tests/requirements.py", "tests/test_x.py"]
    # setup.cfg is laid at the harness's root for the run (pytest's rootdir), after its digest was taken.
    assert lay_root_configuration(tmp_path / "staged", repo, base) == ["setup.cfg"]


def test_a_module_of_a_package_the_harness_holds_for_naming_stays_the_checkouts(tmp_path: Path) -> None:
    """Tests inside the package (pkg/tests/): a module of pkg the test names through its place, or the settings
    name (`console_scripts = pkg.cli:main`), would stand for the candidate's code if frozen: never taken."""
    test = "import os\nCLI = os.path.join(os.path.dirname(__file__), '..', 'cli.py')\ndef test_x(): pass\n"
    repo, base = _repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/cli.py": "", "pkg/tests/__init__.py": "",
                                        "pkg/tests/test_x.py": test,
                                        "setup.cfg": "[options.entry_points]\nconsole_scripts =\n  p = pkg.cli:main\n"})
    assert _staged(repo, base, "pkg/tests/test_x.py", tmp_path / "staged") == [
        "pkg/__init__.py", "pkg/tests/__init__.py", "pkg/tests/test_x.py"]


def test_tox_deps_read_toxinidir_and_the_factors_that_name_the_python() -> None:
    """kombu's tox.ini (dev12): `-r{toxinidir}/requirements/test.txt` behind `apicheck,3.10,3.11,...:`; lines for
    other factors (linters, integration, another Python, a factor joined to one not held) stay out."""
    tox = ("[testenv]\ndeps=\n    -r{toxinidir}/requirements/dev.txt\n"
           "    apicheck,pypy3.11,3.10,3.11,3.12: -r{toxinidir}/requirements/test.txt\n"
           "    3.11-linux,3.12-linux: -r{toxinidir}/requirements/extras/kafka.txt\n"
           "    py311: mock\n    py27: unittest2\n    flake8,mypy: -r{toxinidir}/requirements/pkgutils.txt\n"
           "    !py311: nothing\n    https://github.com/celery/vine/zipball/master\n")
    assert testenv.tox_deps(tox, (3, 11)) == ["-rrequirements/dev.txt", "-rrequirements/test.txt", "mock",
                                              "https://github.com/celery/vine/zipball/master"]
    # `!py311` holds in an environment without that factor, as tox reads it.
    assert testenv.tox_deps(tox, (3, 12)) == ["-rrequirements/dev.txt", "-rrequirements/test.txt", "nothing",
                                              "https://github.com/celery/vine/zipball/master"]


def test_tox_deps_keep_a_negated_factor_the_python_does_not_hold() -> None:
    """pylint's tox.ini (blind15b): `!pypy: -r requirements_test.txt` is what every CPython environment installs
    and `pypy: -r requirements_test_min.txt` what PyPy's does; a negated factor held by this Python stays out."""
    tox = ("[testenv]\ndeps =\n    !pypy: -r {toxinidir}/requirements_test.txt\n"
           "    pypy: -r {toxinidir}/requirements_test_min.txt\n    !py311-!lint: six\n    !py311: mock\n")
    assert testenv.tox_deps(tox, (3, 11)) == ["-r requirements_test.txt"]
    assert testenv.tox_deps(tox, (3, 12)) == ["-r requirements_test.txt", "six", "mock"]


def test_a_test_support_package_beside_the_test_folder_comes_with_its_data(tmp_path: Path) -> None:
    """pycodestyle's tests/test_data.py does `from testing.support import ROOT`, a package at the root named
    as a test folder whose data files (`testing/data/*.py`, read from ROOT) are the cases; its fix adds one
    to `testing/data/python313.py`, checked out by the person. That package, its data as left and its
    helpers come with the test file; the project's code and other root packages never do."""
    test = "import pycodestyle\nfrom testing.support import ROOT\nimport tools\n"
    repo, base = _repo(tmp_path / "r", {"pycodestyle.py": "", "tools/__init__.py": "", "tests/__init__.py": "",
                                        "tests/test_data.py": test, "testing/__init__.py": "",
                                        "testing/support.py": "from testing import util\n", "testing/util.py": "",
                                        "testing/unused.py": "", "testing/data/E25.py": "#: Okay\n",
                                        "testing/data/python313.py": "base\n"})
    (repo / "testing" / "data" / "python313.py").write_text("the fix's case\n")
    staged = _staged(repo, base, "tests/test_data.py", tmp_path / "staged")
    assert staged == ["testing/__init__.py", "testing/data/E25.py", "testing/data/python313.py",
                      "testing/support.py", "testing/util.py", "tests/__init__.py", "tests/test_data.py"]
    assert (tmp_path / "staged" / "testing" / "data" / "python313.py").read_text() == "the fix's case\n"


def test_what_a_conftest_reads_beside_itself_and_the_helper_the_configuration_names(tmp_path: Path) -> None:
    """alembic's tests/conftest.py exec()s `../alembic/testing/plugin/bootstrap.py` by a path relative to itself,
    and SQLAlchemy's testing plugin it starts imports `tests.requirements`, which setup.cfg names, and reads
    `[db]` from the setup.cfg at pytest's rootdir (the harness): the first two come with the test file from the
    base (no __init__.py above the read file: it stays no package), the root configuration is laid beside the
    harness for the run."""
    from signoff.repair.pytest_config import lay_root_configuration

    conftest = ("import os\nboot = os.path.join(os.path.dirname(__file__), '..', 'alembic', 'testing', 'plugin',"
                " 'bootstrap.py')\nexec(open(boot).read())\n")
    repo, base = _repo(tmp_path / "r", {"alembic/__init__.py": "", "alembic/testing/__init__.py": "",
                                        "alembic/testing/plugin/bootstrap.py": "X = 1\n",
                                        "setup.cfg": "[sqla_testing]\nrequirement_cls=tests.requirements:Default\n"
                                                     "[db]\ndefault=sqlite://\n",
                                        "tests/__init__.py": "", "tests/conftest.py": conftest,
                                        "tests/requirements.py": "from tests import util\n", "tests/util.py": "",
                                        "tests/test_command.py": "import alembic\n", "tests/test_other.py": ""})
    staged = _staged(repo, base, "tests/test_command.py", tmp_path / "staged")
    assert staged == ["alembic/testing/plugin/bootstrap.py", "tests/__init__.py", "tests/conftest.py",
                      "tests/requirements.py", "tests/test_command.py", "tests/util.py"]
    assert lay_root_configuration(tmp_path / "staged", repo, base) == ["setup.cfg"]
    assert "[db]" in (tmp_path / "staged" / "setup.cfg").read_text()
    assert lay_root_configuration(tmp_path / "staged", repo, base) == []  # never over a file the harness has


def test_a_data_file_the_person_changed_stays_as_left_when_the_test_also_reads_it_by_its_own_path(
        tmp_path: Path) -> None:
    """markdown-it-py's kind: the fix's cases in a committed data file the test reads beside itself by a path
    relative to its file; read by path or not, the harness takes the person's copy, never the base's."""
    test = "from pathlib import Path\nCASES = Path(__file__).parent / 'fixtures' / 'cases.md'\n"
    repo, base = _repo(tmp_path / "r", {"tests/test_x.py": test, "tests/fixtures/cases.md": "base\n"})
    (repo / "tests" / "fixtures" / "cases.md").write_text("the fix's cases\n")
    _staged(repo, base, "tests/test_x.py", tmp_path / "staged")
    assert (tmp_path / "staged" / "tests" / "fixtures" / "cases.md").read_text() == "the fix's cases\n"


def test_a_plugin_module_of_the_project_its_addopts_load_is_the_projects_own(tmp_path: Path) -> None:
    """trio's pyproject.toml loads `-p trio._tests.pytest_plugin` (a module under src/), which pytest would import
    before the checkout joins the path: it is the project's own plugin, for the guard to load; an installed
    plugin (`-p xdist`), a `no:` and a module the checkout lacks are not."""
    from signoff.repair.pytest_config import addopts_plugins

    toml = ('[tool.pytest.ini_options]\naddopts = ["--strict-markers", "-p trio._tests.pytest_plugin", "-p xdist", '
            '"-p no:cacheprovider", "-ptrio._gone"]\n')
    repo, base = _repo(tmp_path / "r", {"pyproject.toml": toml, "src/trio/__init__.py": "",
                                        "src/trio/_tests/__init__.py": "", "src/trio/_tests/pytest_plugin.py": ""})
    harness = tmp_path / "h"
    harness.mkdir()
    assert addopts_plugins(harness, repo, base, ["src"]) == {"trio._tests.pytest_plugin": "trio._tests.pytest_plugin"}
    (harness / "pytest.ini").write_text("[pytest]\n")
    assert addopts_plugins(harness, repo, base, ["src"]) == {}  # the harness's own configuration governs


def test_a_link_committed_in_the_test_folder_is_staged_as_what_it_shows_never_as_its_target_path(
        tmp_path: Path) -> None:
    # pydantic's tests/pydantic_core links to ../pydantic-core/tests: git's blob of a link is the path it names,
    # which was staged as a data file holding "../pydantic-core/tests". A link to a file inside the repository
    # gives that file's bytes, as a checkout shows it; a link to a folder, or out of the tree, is left out.
    repo, _ = _repo(tmp_path / "r", {"tests/test_a.py": "def test_a():\n    pass\n", "tests/cases.txt": "case\n",
                                     "shared.json": "{}\n", "core/tests/x.txt": "x\n"})
    (repo / "tests" / "shared.json").symlink_to("../shared.json")
    (repo / "tests" / "core").symlink_to("../core/tests")
    (repo / "tests" / "outside").symlink_to("../../elsewhere")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "links"],
                   check=True)
    base = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    dest = tmp_path / "h"
    assert _staged(repo, base, "tests/test_a.py", dest) == ["tests/cases.txt", "tests/shared.json", "tests/test_a.py"]
    assert (dest / "tests" / "shared.json").read_text() == "{}\n" and not (dest / "tests" / "shared.json").is_symlink()


def test_pips_last_attempt_after_backtracking_is_not_named_as_the_culprit() -> None:
    """dacite (blind18): its 2021 `dev` extra under Python 3.8, with Python 3.8's own pip 23. coveralls needs docopt,
    published as source only; pip backtracked over pytest, pytest-cov and coveralls and ended naming `coverage>=7.10.6`,
    which pytest-cov 7 asks for and this Python has no release of, though it has older ones. The cause says pip's
    last attempt is no culprit, and the fix names source builds and the packages pip went through."""
    log = ("INFO: pip is looking at multiple versions of pytest to determine which version is compatible with other "
           "requirements. This could take a while.\n"
           "INFO: pip is looking at multiple versions of pytest-cov to determine which version is compatible\n"
           "INFO: pip is looking at multiple versions of <Python from Requires-Python> to determine which version\n"
           "INFO: pip is still looking at multiple versions of coveralls to determine which version is compatible\n"
           "ERROR: Could not find a version that satisfies the requirement coverage>=7.10.6 (from pytest-cov) (from "
           "versions: 5.0b1, 7.6.0, 7.6.1)\n"
           "ERROR: No matching distribution found for coverage>=7.10.6\n")
    cause = pip_cause(log)
    assert cause == ("No matching distribution found for coverage>=7.10.6 (asked by the release of pytest-cov pip "
                     "tried last; this Python has releases up to 7.6.1): pip gave up after backtracking over pytest, "
                     "pytest-cov, coveralls, so one of them, or a package it needs, has no release installable here")
    fix = _wheel_fix(PipError(f"pip could not install setup.py [dev]: {cause}", "check", log), builds_allowed=False)
    assert fix.startswith("pass --allow-source-builds: one of pytest, pytest-cov, coveralls, or a package it needs")
    # No release at all for this Python, or no backtracking: what pip names is the cause, as before.
    none = log.replace("5.0b1, 7.6.0, 7.6.1", "none")
    assert pip_cause(none) == "No matching distribution found for coverage>=7.10.6"
    assert pip_cause("\n".join(ln for ln in log.splitlines() if not ln.startswith("INFO"))) == \
        "No matching distribution found for coverage>=7.10.6"
