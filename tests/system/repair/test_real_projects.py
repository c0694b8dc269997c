"""The verifier on projects laid out as real ones are: the package under test also installed in the
environment, test files that cannot be imported, requirements pip cannot install. All in the real
sandbox, with real pip, on real git repositories built here (wheels are built locally, so nothing
here needs a package that exists only for this test on an index)."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff import git
from signoff.demo.fixture import init_repo
from signoff.kernel.settings import Settings
from signoff.repair.verifier import VerifyRequest, VerifyResult, verify
from signoff.trust import KeyStore, verify_file
from tests.support.requires import require_sandbox

PROJECT = "signoff-fixture-pricing"
BUGGY = "def total(cents, percent):\n    return cents - cents * percent // 100 * 2  # the coupon applied twice\n"
FIXED = "def total(cents, percent):\n    return cents - cents * percent // 100\n"
HARNESS = {"test_total.py": "from pricing import total\n\n\ndef test_coupon_once():\n"
                            "    assert total(10000, 10) == 9000\n\n\ndef test_zero():\n"
                            "    assert total(500, 0) == 500\n"}


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    require_sandbox()
    yield Settings.load(home=tmp_path_factory.mktemp("real-home") / ".signoff", env={})


def _repo(path: Path, files: dict[str, str]) -> tuple[Path, str, str]:
    """A project whose base has the defect and whose candidate fixes it."""
    base = init_repo(path, files)
    fix = git.commit_files(path, base, {"pricing/__init__.py": FIXED}, "fix: apply the coupon once")
    return path, base, fix


def _project(path: Path, **extra: str) -> tuple[Path, str, str]:
    return _repo(path, {"pyproject.toml": f'[project]\nname = "{PROJECT}"\nversion = "1.0"\n',
                        "pricing/__init__.py": BUGGY, **extra})


def _harness(path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    return path


def wheel(folder: Path, dist: str, version: str, files: dict[str, str]) -> Path:
    """A pure-Python wheel built by hand (what `pip wheel` would write for these files)."""
    folder.mkdir(parents=True, exist_ok=True)
    name = dist.replace("-", "_")
    info = f"{name}-{version}.dist-info"
    entries = dict(files) | {
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: signoff-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for rel, text in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{rel},sha256={digest},{len(text.encode())}")
    entries[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    out = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w") as zf:
        for rel, text in entries.items():
            zf.writestr(rel, text)
    return out


def _request(repo: Path, base: str, candidate: str, harness: Path, **kw: object) -> VerifyRequest:
    fields: dict[str, object] = dict(repo=repo, base=base, candidate=candidate, harness=harness,
                                     expect="test_total.py::test_coupon_once", regression=["test_total.py::test_zero"],
                                     timeout=120.0)
    fields.update(kw)
    return VerifyRequest(**fields)  # type: ignore[arg-type]


def _codes(result: VerifyResult) -> list[str]:
    return [r["code"] for r in result.reasons]


def _signed_predicate(result: VerifyResult, settings: Settings) -> dict:  # type: ignore[type-arg]
    assert result.evidence is not None
    report = verify_file(result.evidence, KeyStore(settings.keys_dir).trusted())
    assert report.ok, report.problem
    payload = json.loads(result.evidence.read_text())["payload"]
    return json.loads(base64.b64decode(payload))["predicate"]  # type: ignore[no-any-return]


# -- 1. the candidate's own code is what the tests import -----------------------------------------

def test_a_pinned_release_of_the_project_itself_is_never_installed(settings: Settings, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # `pip freeze` wrote the project's newer release (which has the fix) into the test requirements.
    # Installed, it would be what the tests import: the base "passes" and nothing is reproduced.
    wheels = tmp_path / "wheels"
    wheel(wheels, PROJECT, "1.1", {"pricing/__init__.py": FIXED})
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    repo, base, fix = _project(tmp_path / "repo", **{"requirements-test.txt": f"{PROJECT}==1.1\n"})
    harness = _harness(tmp_path / "harness", HARNESS)
    r = verify(_request(repo, base, fix, harness, requirements="requirements-test.txt"), settings)
    assert r.verdict == "VERIFIED", r.reasons
    assert any(f"not installed: {PROJECT}==1.1" in n for n in r.notes), r.notes
    env = _signed_predicate(r, settings)["environment"]
    assert env["plan"]["dropped"] == [f"{PROJECT}==1.1"]
    assert PROJECT not in {i["name"] for i in env["installed"]}


def test_another_distribution_of_the_same_package_never_wins_and_is_reported(
        settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A fork under another name installs the same import package `pricing`, buggy: the candidate's
    # genuine fix must still be VERIFIED (not REJECTED by the installed copy), and a person is told.
    wheels = tmp_path / "wheels"
    wheel(wheels, "signoff-fixture-pricing-fork", "0.9", {"pricing/__init__.py": BUGGY.replace("* 2", "* 3")})
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    repo, base, fix = _project(tmp_path / "repo", **{"requirements-test.txt": "signoff-fixture-pricing-fork==0.9\n"})
    harness = _harness(tmp_path / "harness", HARNESS)
    r = verify(_request(repo, base, fix, harness, requirements="requirements-test.txt"), settings)
    assert r.verdict == "VERIFIED", r.reasons
    # The base failed with the checkout's own defect (9000 expected, 8000 from applying it twice).
    assert "8000" in r.stages["base"].summary.message
    assert any("collision" in n and "signoff_fixture_pricing_fork" in n and "`pricing`" in n for n in r.notes), r.notes
    assert any("collision" in n for n in _signed_predicate(r, settings)["notes"])


def test_an_installed_copy_a_plugin_imported_first_is_named_not_used_silently(
        settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A pytest plugin in the environment imports its own (fixed) copy of `pricing` at start-up, before
    # the checkout can join the path: the tests would judge that copy. Never a silent pass.
    wheels = tmp_path / "wheels"
    info = "signoff_fixture_pricing_plugin-1.0.dist-info"
    wheel(wheels, "signoff-fixture-pricing-plugin", "1.0", {
        "pricing/__init__.py": FIXED, "pricing_plugin.py": "import pricing  # noqa\n",
        f"{info}/entry_points.txt": "[pytest11]\npricing = pricing_plugin\n"})
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    repo, base, fix = _project(tmp_path / "repo", **{"requirements-test.txt": "signoff-fixture-pricing-plugin\n"})
    harness = _harness(tmp_path / "harness", HARNESS)
    r = verify(_request(repo, base, fix, harness, requirements="requirements-test.txt"), settings)
    assert r.verdict == "INCONCLUSIVE" and _codes(r)[0] == "import_shadowed", r.reasons
    assert "pricing (/opt/signoff-venv/" in r.reasons[0]["detail"]
    assert "harness_integrity" not in _codes(r)
    # A test file that cannot even import from that copy (it lacks what the checkout has): the copy is
    # named as the cause, not a module to install.
    more = git.commit_files(repo, base, {"pricing/rates.py": "RATE = 10\n"}, "rates")
    more_fix = git.commit_files(repo, more, {"pricing/__init__.py": FIXED}, "fix")
    lacking = _harness(tmp_path / "lacking", {"test_total.py": "from pricing.rates import RATE\n"
                                                                + HARNESS["test_total.py"]})
    r = verify(_request(repo, more, more_fix, lacking, requirements="requirements-test.txt"), settings)
    assert _codes(r)[0] == "import_shadowed" and "pricing.rates" in r.reasons[0]["detail"], r.reasons
    # A plugin that only uses the package (pytest-mypy-plugins imports attrs, whose own tests need it):
    # it keeps its copy, the tests import the checkout's.
    info = "signoff_fixture_tools_plugin-1.0.dist-info"
    wheel(wheels, "signoff-fixture-tools-plugin", "1.0", {
        "pricing/__init__.py": FIXED, "tools_plugin.py": "import pricing  # noqa\n",
        f"{info}/entry_points.txt": "[pytest11]\ntools = tools_plugin\n"})
    uses = git.commit_files(repo, base, {"requirements-test.txt": "signoff-fixture-tools-plugin\n"}, "tools")
    fix = git.commit_files(repo, uses, {"pricing/__init__.py": FIXED}, "fix")
    r = verify(_request(repo, uses, fix, harness, requirements="requirements-test.txt"), settings)
    assert r.verdict == "VERIFIED", r.reasons



def test_a_package_pytest_itself_imports_is_the_candidates_in_the_tests(settings: Settings, tmp_path: Path) -> None:
    # The project is one pytest imports to start (pluggy's own repository): no plugin can be left out.
    # pytest keeps the environment's copy, the tests import the checkout's (the released copy has no
    # `total`: judged on it, nothing would even import).
    repo = tmp_path / "repo"
    base = init_repo(repo, {"pyproject.toml": f'[project]\nname = "{PROJECT}"\nversion = "1.0"\n',
                            "iniconfig/__init__.py": BUGGY})
    fix = git.commit_files(repo, base, {"iniconfig/__init__.py": FIXED}, "fix")
    harness = _harness(tmp_path / "harness",
                       {"test_total.py": HARNESS["test_total.py"].replace("pricing", "iniconfig")})
    r = verify(_request(repo, base, fix, harness), settings)
    assert r.verdict == "VERIFIED", r.reasons
    assert "8000" in r.stages["base"].summary.message

# -- 2. a test file that cannot be imported is named, not called tampering ----------------------

def test_a_missing_dependency_is_named_not_called_tampering(settings: Settings, tmp_path: Path) -> None:
    repo, base, fix = _project(tmp_path / "repo")
    harness = _harness(tmp_path / "harness", {
        "test_total.py": "import signoff_not_installed_anywhere\n" + HARNESS["test_total.py"]})
    r = verify(_request(repo, base, fix, harness), settings)
    assert r.verdict == "INCONCLUSIVE"
    assert "harness_integrity" not in _codes(r)
    assert set(_codes(r)) == {"collection_error"}, r.reasons
    detail = r.reasons[0]["detail"]
    assert "test_total.py: ModuleNotFoundError: No module named 'signoff_not_installed_anywhere'" in detail
    assert "--requirements" in r.reasons[0]["fix"]
    assert _signed_predicate(r, settings)["reasons"][0]["code"] == "collection_error"


def test_a_conftest_that_cannot_be_imported_is_named(settings: Settings, tmp_path: Path) -> None:
    repo, base, fix = _project(tmp_path / "repo")
    harness = _harness(tmp_path / "harness", {**HARNESS, "conftest.py": "import signoff_no_such_plugin_module\n"})
    r = verify(_request(repo, base, fix, harness), settings)
    assert (r.verdict, set(_codes(r))) == ("INCONCLUSIVE", {"collection_error"}), r.reasons
    assert "No module named 'signoff_no_such_plugin_module'" in r.reasons[0]["detail"]


def test_a_candidate_that_breaks_collection_to_hide_the_canary_is_still_tampering(settings: Settings,
                                                                                   tmp_path: Path) -> None:
    # The code under test makes pytest fail to collect every module, the canaries' included, so the
    # run looks like a broken import: the framework was patched, which is tampering.
    repo, base, _fix = _project(tmp_path / "repo")
    attack = FIXED + ("\nimport _pytest.python\n\n\ndef _broken(self):\n"
                      "    raise ImportError('no module named x')\n\n\n_pytest.python.Module._getobj = _broken\n")
    cand = git.commit_files(repo, base, {"pricing/__init__.py": attack}, "fix")
    harness = _harness(tmp_path / "harness", {**HARNESS, "test_other.py": "import pricing\n\n\ndef test_a():\n"
                                                                          "    assert pricing.total(0, 0) == 0\n"})
    r = verify(_request(repo, base, cand, harness, regression=["test_other.py::test_a"]), settings)
    assert r.verdict == "INCONCLUSIVE" and _codes(r)[0] == "harness_integrity", r.reasons


# -- 3. pip's own error is kept ----------------------------------------------------------------

def _offline_wheelhouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "wheelhouse"))
    wheel(tmp_path / "wheelhouse", "pytest", "8.99", {"pytest.py": "raise ImportError('never installed')\n"})


def test_pip_error_names_the_requirement_and_the_users_file(settings: Settings, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # No index at all (nothing is fetched): a wheelhouse that has a pytest but no tornado 6.0.4, as an
    # index without a wheel of that version for this Python would be. Resolution stops before any install.
    _offline_wheelhouse(tmp_path, monkeypatch)
    repo, base, fix = _project(tmp_path / "repo", **{"requirements-test.txt": "tornado==6.0.4\n"})
    # The harness imports it, so it is not left out for want of a wheel: pip's own error is the reason.
    harness = _harness(tmp_path / "harness", {"test_total.py": "import tornado\n" + HARNESS["test_total.py"]})
    r = verify(_request(repo, base, fix, harness, requirements="requirements-test.txt"), settings)
    assert (r.verdict, _codes(r)) == ("INCONCLUSIVE", ["environment_unprepared"])
    detail = r.reasons[0]["detail"]
    assert "No matching distribution found for tornado==6.0.4" in detail, detail
    assert "requirements-test.txt (base revision)" in detail and "signoff-verify-" not in detail
    assert r.reasons[0]["fix"].startswith("tornado==6.0.4 may be published only as source")
    assert "--allow-source-builds" in r.reasons[0]["fix"]
    env = _signed_predicate(r, settings)["environment"]
    assert "tornado==6.0.4" in env["log"] and env["error"] == detail


def test_cli_prints_error_and_fix(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    from signoff.cli.main import main

    require_sandbox()
    _offline_wheelhouse(tmp_path, monkeypatch)
    repo, base, fix = _project(tmp_path / "repo", **{"requirements-test.txt": "tornado==6.0.4\n"})
    harness = _harness(tmp_path / "harness", {"test_total.py": "import tornado\n" + HARNESS["test_total.py"]})
    code = main(["repair", "verify", "--repo", str(repo), "--base", base, "--candidate", fix, "--harness",
                 str(harness), "--expect", "test_total.py::test_coupon_once", "--requirements",
                 "requirements-test.txt"])
    out = capsys.readouterr().out
    assert code == 3
    assert "error: pip could not install requirements-test.txt (base revision): " in out
    assert "No matching distribution found for tornado==6.0.4" in out
    assert "\n  fix: " in out


# -- 5. the harness carries its neighbours ---------------------------------------------------------

CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef percent():\n    return 10\n"
SRC_TEST = ("import pytest\nfrom pricing import total\n\nfrom .helpers import WANT\n\n\n@pytest.mark.money\n"
            "def test_coupon_once(percent):\n    assert total(10000, percent) == WANT\n")


def test_a_harness_file_keeps_its_conftest_and_the_projects_configuration(settings: Settings,
                                                                         tmp_path: Path) -> None:
    # src layout found through the project's own `pythonpath`, a fixture from tests/conftest.py, a
    # helper imported relatively, a marker that --strict-markers accepts only because the project's
    # configuration registers it.
    repo = tmp_path / "repo"
    base = init_repo(repo, {
        "pyproject.toml": f'[project]\nname = "{PROJECT}"\nversion = "1.0"\n\n[tool.pytest.ini_options]\n'
                          'pythonpath = ["src"]\naddopts = "--strict-markers"\nmarkers = ["money: prices"]\n',
        "src/pricing/__init__.py": BUGGY, "tests/__init__.py": "", "tests/conftest.py": CONFTEST,
        "tests/test_total.py": SRC_TEST, "tests/helpers.py": "WANT = 9000\n", "tests/test_other.py": "x = 1\n"})
    # The candidate fixes the code and also edits the conftest: the harness's neighbours come from
    # the base revision, so the edit changes nothing.
    fix = git.commit_files(repo, base, {"src/pricing/__init__.py": FIXED,
                                        "tests/conftest.py": CONFTEST.replace("10", "0")}, "fix")
    r = verify(_request(repo, base, fix, repo / "tests" / "test_total.py", regression=[]), settings)
    assert r.verdict == "VERIFIED", r.reasons
    assert r.stages["base"].tests == ["tests/test_total.py::test_coupon_once"]
    env = _signed_predicate(r, settings)["environment"]
    assert env["pytest_config"]["source"] == "pyproject.toml [tool.pytest.ini_options] (base revision)"
    assert env["pytest_config"]["pythonpath"] == ["src"]
    from signoff.repair.harness import load
    from signoff.repair.verifier import harness_store

    frozen = load(harness_store(settings), r.harness_digest)
    # Its neighbours: the conftest and package files up to the root, and the helper it imports.
    assert set(frozen.files) == {"tests/test_total.py", "tests/conftest.py", "tests/__init__.py", "tests/helpers.py"}


def test_a_harness_folder_keeps_its_helpers_and_data(settings: Settings, tmp_path: Path) -> None:
    repo, base, fix = _project(tmp_path / "repo")
    files = {"unit/helpers.py": "import json\nfrom pathlib import Path\n\n\ndef case(name):\n"
                                "    return json.loads((Path(__file__).parent / 'data' / name).read_text())\n",
             "unit/data/once.json": '{"cents": 10000, "percent": 10, "want": 9000}\n',
             "unit/test_data.py": "from helpers import case\nfrom pricing import total\n\n\ndef test_once():\n"
                                  "    c = case('once.json')\n"
                                  "    assert total(c['cents'], c['percent']) == c['want']\n"}
    harness = _harness(tmp_path / "harness", files)
    r = verify(_request(repo, base, fix, harness, expect="unit/test_data.py::test_once", regression=[]), settings)
    assert r.verdict == "VERIFIED", r.reasons
    (harness / "unit" / "data" / "once.json").write_text('{"cents": 10000, "percent": 10, "want": 8000}\n')
    changed = verify(_request(repo, base, fix, harness, expect="unit/test_data.py::test_once", regression=[],
                              approved_digest=r.harness_digest, write_evidence=False), settings)
    assert (changed.verdict, _codes(changed)) == ("INCONCLUSIVE", ["harness_changed"])



IN_PACKAGE_TEST = ("from pathlib import Path\n\nfrom ..core import total\n\nDATA = Path(__file__).parent / 'data'\n\n\n"
                   "def test_coupon_once():\n    assert total(10000, 10) == int((DATA / 'once.txt').read_text())\n\n\n"
                   "def test_zero():\n    assert total(500, 0) == int((DATA / 'zero.txt').read_text())\n")


def test_tests_inside_the_package_judge_the_candidates_package_with_their_data(settings: Settings,
                                                                              tmp_path: Path) -> None:
    # dateutil/test/, h11/tests/: the test reaches the package's code relatively and reads data files
    # beside it, one of them new with the fix (placed by the person, not committed). The package's own
    # modules are never frozen; its __init__.py only names the test module, as in the project.
    repo = tmp_path / "repo"
    base = init_repo(repo, {"pyproject.toml": f'[project]\nname = "{PROJECT}"\nversion = "1.0"\n',
                            "pricing/__init__.py": "from .core import total\n", "pricing/core.py": BUGGY,
                            "pricing/tests/__init__.py": "", "pricing/tests/data/zero.txt": "500\n",
                            "pricing/tests/data/sample.py": "total(1, 2\n"})  # code read as text (black's)
    fix = git.commit_files(repo, base, {"pricing/core.py": FIXED}, "fix")
    _harness(repo / "pricing" / "tests", {"test_total.py": IN_PACKAGE_TEST, "data/once.txt": "9000\n"})
    r = verify(_request(repo, base, fix, repo / "pricing" / "tests" / "test_total.py"), settings)
    assert r.verdict == "VERIFIED", r.reasons
    from signoff.repair.harness import load
    from signoff.repair.verifier import harness_store

    assert set(load(harness_store(settings), r.harness_digest).files) == {
        "pricing/__init__.py", "pricing/tests/__init__.py", "pricing/tests/test_total.py",
        "pricing/tests/data/zero.txt", "pricing/tests/data/once.txt", "pricing/tests/data/sample.py"}

# -- 4. a chosen pytest and Python; what was installed is in the evidence ------------------------

def test_pinned_pytest_and_python_are_what_ran_and_the_evidence_lists_the_install(settings: Settings,
                                                                                  tmp_path: Path) -> None:
    repo, base, fix = _project(tmp_path / "repo")
    harness = _harness(tmp_path / "harness", HARNESS)
    r = verify(_request(repo, base, fix, harness, pytest="pytest==7.4.4", python="3.11"), settings)
    assert r.verdict == "VERIFIED", r.reasons
    env = _signed_predicate(r, settings)["environment"]
    installed = {i["name"].lower(): i for i in env["installed"]}
    assert installed["pytest"]["version"] == "7.4.4"
    assert len(installed["pytest"]["hashes"]["sha256"]) == 64
    assert env["python_version"] == "3.11" and env["plan"]["sources"] == ["--pytest pytest==7.4.4"]


def test_freezing_a_test_file_needs_its_revision_and_keeps_its_neighbours(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from signoff.cli.main import main

    repo = tmp_path / "repo"
    base = init_repo(repo, {"src/pricing/__init__.py": BUGGY, "tests/__init__.py": "", "tests/conftest.py": CONFTEST,
                            "tests/test_total.py": SRC_TEST, "tests/helpers.py": "WANT = 9000\n"})
    test_file = str(repo / "tests" / "test_total.py")
    assert main(["repair", "freeze", test_file]) == 2
    err = capsys.readouterr().err
    assert "one test file" in err and "fix:" in err and "Traceback" not in err
    assert main(["repair", "freeze", test_file, "--repo", str(repo), "--base", base, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(out["files"]) == ["tests/__init__.py", "tests/conftest.py", "tests/helpers.py", "tests/test_total.py"]


# -- 5. the project's lock file: versions held, hashes checked, in the cache key and the evidence ---

def test_a_lock_file_holds_versions_and_its_hashes_are_checked(settings: Settings, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    wheels = tmp_path / "wheels"
    dep = "signoff-fixture-rates"
    built = {v: wheel(wheels, dep, v, {"rates/__init__.py": f"VERSION = {v!r}\n"}) for v in ("1.0", "2.0")}
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    digest = hashlib.sha256(built["1.0"].read_bytes()).hexdigest()

    def pipfile_lock(sha: str) -> str:
        return json.dumps({"_meta": {}, "default": {dep: {"version": "==1.0", "hashes": [f"sha256:{sha}"]}},
                           "develop": {}})

    pyproject = f'[project]\nname = "{PROJECT}"\nversion = "1.0"\ndependencies = ["{dep}"]\n'
    repo, base, fix = _repo(tmp_path / "repo", {"pyproject.toml": pyproject, "pricing/__init__.py": BUGGY,
                                                "Pipfile.lock": pipfile_lock(digest)})
    harness = _harness(tmp_path / "harness", {**HARNESS, "test_rates.py": "import rates\n\n\ndef test_locked():\n"
                                                                          "    assert rates.VERSION == '1.0'\n"})
    r = verify(_request(repo, base, fix, harness, project_deps=True, lock="Pipfile.lock",
                        regression=["test_total.py::test_zero", "test_rates.py::test_locked"]), settings)
    # Without the lock pip would take 2.0, the newest: the regression test shows the lock held.
    assert r.verdict == "VERIFIED", r.reasons
    env = _signed_predicate(r, settings)["environment"]
    assert env["plan"]["lock"]["path"] == "Pipfile.lock (base revision)" and env["plan"]["lock"]["hashed"] == 1
    assert env["plan"]["constraints"] == [f"{dep}==1.0"]
    assert {i["name"]: i["version"] for i in env["installed"]}[dep] == "1.0"

    # The same project with a lock whose hash is not the archive's: the environment is refused,
    # named, and nothing runs. A different lock is a different environment (the cache key).
    forged = git.commit_files(repo, base, {"Pipfile.lock": pipfile_lock("0" * 64)}, "lock: another archive")
    bad = verify(_request(repo, forged, forged, harness, project_deps=True, lock="Pipfile.lock",
                          write_evidence=False), settings)
    assert (bad.verdict, _codes(bad)) == ("INCONCLUSIVE", ["environment_unprepared"]), bad.reasons
    assert f"{dep} 1.0: the archive's sha256:" in bad.reasons[0]["detail"] and bad.reasons[0]["fix"]
    assert bad.predicate["environment"]["digest"] != env["digest"]
    assert bad.stages["base"].runs == []


# -- 6. tests that read and write files relative to the project's root ----------------------------

CWD_TEST = ("import json, os\nimport pricing\n\n\ndef test_coupon_once():\n"
            "    # the code is still the read-only checkout's (/src; the base's is at /base when the two share an\n"
            "    # interpreter)\n"
            "    assert pricing.__file__.startswith(os.environ['SIGNOFF_CHECKOUT'] + '/')\n"
            "    case = json.load(open('tests/cases/once.json'))\n"
            "    open('tests/cases/seen.txt', 'w').write('ran')  # cookiecutter's tests write beside their data\n"
            "    assert pricing.total(case['cents'], case['percent']) == case['want']\n")


def test_a_test_run_from_the_project_root_gets_a_writable_copy_of_it(settings: Settings, tmp_path: Path) -> None:
    """Maintainers run pytest from the project's root and its tests open `tests/cases/x.json` from
    there (cookiecutter, scrapy's conftest): by default every run starts again from a writable copy of
    the checkout with the harness over it, as with `workdir="project"`; `workdir="empty"` names that
    option as the fix instead."""
    repo, base, fix = _project(tmp_path / "repo", **{"tests/cases/once.json": '{"cents": 10000, "percent": 10, '
                                                                               '"want": 9000}\n'})
    (repo / "tests").mkdir(exist_ok=True)
    (repo / "tests" / "test_cwd.py").write_text(CWD_TEST)
    harness = repo / "tests" / "test_cwd.py"
    plain = verify(_request(repo, base, fix, harness, expect="test_cwd.py::test_coupon_once", regression=[],
                            workdir="empty", write_evidence=False), settings)
    assert plain.verdict == "INCONCLUSIVE" and plain.reasons[0]["code"] == "base_not_reproduced", plain.reasons
    assert "--workdir project" in plain.reasons[0]["fix"], plain.reasons
    # By default the whole run starts again from a copy of the project, once the tests show they need it.
    auto = verify(_request(repo, base, fix, harness, expect="test_cwd.py::test_coupon_once", regression=[],
                           write_evidence=False), settings)
    assert auto.verdict == "VERIFIED", auto.reasons
    assert auto.predicate["settings"]["workdir"] == "project"
    assert any("relative to the project's root (" in n and "tests/cases/once.json" in n
               for n in auto.predicate["notes"]), auto.predicate["notes"]
    r = verify(_request(repo, base, fix, harness, expect="test_cwd.py::test_coupon_once", regression=[],
                        workdir="project"), settings)
    assert r.verdict == "VERIFIED", r.reasons
    assert r.predicate["settings"]["workdir"] == "project"
    assert r.predicate["identity"]["commands"]["base"][:2] == ["/bin/sh", "-c"]


# -- 7. a defect shown as a crash of the code under test ------------------------------------------

def test_a_crash_of_the_code_under_test_on_base_shows_the_defect(settings: Settings, tmp_path: Path) -> None:
    """BugsInPy's thefuck 1 and luigi 3: on base the code under test raises (IndexError, TypeError)
    where it should return a value; plain pytest counts that as the failure, and so does the verifier,
    from the guard's record of where it was raised. An exception the test itself raises does not."""
    crashing = "def total(cents, percent):\n    return [cents][percent]  # the coupon as an index\n"
    repo, base, fix = _repo(tmp_path / "repo", {"pyproject.toml": f'[project]\nname = "{PROJECT}"\nversion = "1"\n',
                                                "pricing/__init__.py": crashing})
    harness = _harness(tmp_path / "harness", {
        **HARNESS, "test_new.py": "import pricing\n\n\ndef test_api():\n    assert pricing.ROUNDING == 'half-up'\n"})
    r = verify(_request(repo, base, fix, harness, write_evidence=False), settings)
    assert r.verdict == "VERIFIED", r.reasons
    assert r.stages["base"].summary.raised and "IndexError" in r.stages["base"].summary.message
    # cattrs' structure hooks: code the checkout compiles from a string is the checkout's, its crash too.
    generated = ("_SOURCE = 'def total(cents, percent):\\n    return [cents][percent]\\n'\n_scope = {}\n"
                 "exec(compile(_SOURCE, '<pricing generated total>', 'exec'), _scope)\n\n\n"
                 "def total(cents, percent):\n    return _scope['total'](cents, percent)\n")
    compiled = git.commit_files(repo, base, {"pricing/__init__.py": generated}, "generated")
    compiled_fix = git.commit_files(repo, compiled, {"pricing/__init__.py": FIXED}, "fix")
    r = verify(_request(repo, compiled, compiled_fix, harness, write_evidence=False), settings)
    assert r.verdict == "VERIFIED", r.reasons
    # PySnooper's tests check through their own helper, which raises its own OutputFailure: the
    # harness's kind of failed check shows the defect too (the code under test no longer crashes here).
    checks = {"helpers.py": "class OutputFailure(Exception):\n    pass\n\n\ndef check(got, want):\n"
                            "    if got != want:\n        raise OutputFailure(f'{got} != {want}')\n",
              "test_own.py": "from helpers import check\nfrom pricing import receipt, total\n\n\n"
                             "def test_checked():\n    check(total(10000, 10), 9000)\n\n\n"
                             "def test_field():\n    assert receipt(5)['net'] == 5\n\n\n"
                             "def test_own_key():\n    assert {'a': receipt(5)}['b'] == 5\n\n\n"
                             "def test_refused():\n    import pytest\n\n    with pytest.raises(ValueError):\n"
                             "        total(-1, 0)\n"}
    receipt = "\n\ndef receipt(c):\n    return {'total': c%s}\n"
    wrong = git.commit_files(repo, base, {"pricing/__init__.py": BUGGY + receipt % ""}, "wrong, not crashing")
    right = git.commit_files(repo, wrong, {"pricing/__init__.py": FIXED + receipt % ", 'net': c"}, "fix")
    own = _harness(tmp_path / "own", {**HARNESS, **checks})
    r = verify(_request(repo, wrong, right, own, expect="test_own.py::test_checked", write_evidence=False), settings)
    assert r.verdict == "VERIFIED", r.reasons
    (seen,) = r.stages["base"].runs[0].guard["observed"].values()
    assert seen["exception"] == "OutputFailure" and seen["harness_check"] is True, seen
    # luigi 9: the test reads a key the fix adds to what the code returns (KeyError on base): shown, as
    # plain pytest counts it; a key the candidate's code does not add is the test's own mistake.
    r = verify(_request(repo, wrong, right, own, expect="test_own.py::test_field", write_evidence=False), settings)
    assert r.verdict == "VERIFIED", r.reasons
    r = verify(_request(repo, wrong, right, own, expect="test_own.py::test_own_key", write_evidence=False), settings)
    assert r.stages["base"].summary.raised is False and _codes(r)[0] == "base_not_reproduced", r.reasons
    # tomli: on base `pytest.raises(TOMLDecodeError)` DID NOT RAISE, pytest's own failed check of the harness.
    refusing = FIXED.replace("    return", "    if cents < 0:\n        raise ValueError(cents)\n    return")
    refused = git.commit_files(repo, wrong, {"pricing/__init__.py": refusing + receipt % ", 'net': c"}, "refuse")
    r = verify(_request(repo, wrong, refused, own, expect="test_own.py::test_refused", write_evidence=False), settings)
    assert r.verdict == "VERIFIED", r.reasons



def _has_python(version: str) -> bool:
    from signoff.kernel.errors import SignoffError
    from signoff.sandbox.pyenv import find_python

    try:
        return bool(find_python(version))
    except SignoffError:
        return False


def test_a_test_that_runs_into_what_the_base_lacks_shows_the_defect(settings: Settings, tmp_path: Path) -> None:
    """BugsInPy's cookiecutter 4 and fastapi 1: the fix's test uses a name or a keyword the fix adds
    (`exceptions.FailedHookException`, `jsonable_encoder(..., exclude_defaults=True)`), so on base
    the test raises AttributeError, TypeError or ImportError at the checkout's API. Plain pytest counts
    that as the failure; so does the verifier, from the guard's record naming what the base lacks.
    The test raising for anything else (a dependency not installed, its own mistake) shows nothing."""
    repo, base, _fix = _repo(tmp_path / "repo", {"pyproject.toml": f'[project]\nname = "{PROJECT}"\nversion = "1"\n',
                                                 "pricing/__init__.py": BUGGY + "\n\nclass Cart:\n    pass\n"})
    fix = git.commit_files(repo, base, {"pricing/__init__.py": FIXED.replace("percent)", "percent, rounding='down')")
                                        + "ROUNDING = 'half-up'\n\n\nclass Cart:\n    def rounded(self, x):\n"
                                        "        return x\n", "pricing/modes.py": "UP = 1\n"}, "api")
    harness = _harness(tmp_path / "harness", {"test_new.py": (
        "import pricing\n\n\ndef test_attribute():\n    assert pricing.ROUNDING == 'half-up'\n\n\n"
        "def test_keyword():\n    assert pricing.total(100, 10, rounding='down') == 90\n\n\n"
        "def test_imported_name():\n    from pricing.modes import UP\n    assert UP == 1\n\n\n"
        "def test_dependency():\n    import not_installed_anywhere\n    assert not_installed_anywhere\n\n\n"
        "def test_own_mistake():\n    assert {}.rounding == 1\n\n\n"
        "def test_method():\n    cart = pricing.Cart()\n    assert cart.rounded(5) == 5\n"),
        "test_module.py": "from pricing.modes import UP\n\n\ndef test_up():\n    assert UP == 1\n",
        "test_dependency.py": "import not_installed_anywhere\n\n\ndef test_it():\n    assert not_installed_anywhere\n"})
    for test in ("test_attribute", "test_keyword", "test_imported_name"):
        r = verify(_request(repo, base, fix, harness, expect=f"test_new.py::{test}", regression=[],
                            write_evidence=False), settings)
        assert r.verdict == "VERIFIED", (test, r.reasons)
        assert r.stages["base"].summary.raised and not r.stages["base"].summary.assertion
        (seen,) = [v for k, v in r.stages["base"].runs[0].guard["observed"].items() if k.endswith(test)]
        assert seen["lacks"].startswith("pricing"), seen
    for test in ("test_dependency", "test_own_mistake"):
        r = verify(_request(repo, base, fix, harness, expect=f"test_new.py::{test}", regression=[],
                            write_evidence=False), settings)
        assert (r.verdict, _codes(r)) == ("INCONCLUSIVE", ["base_not_reproduced"]), (test, r.reasons)
    # The same at the test file's import: on base it failed there; a candidate still lacking it fails.
    r = verify(_request(repo, base, fix, harness, expect="test_module.py::test_up", regression=[]), settings)
    assert r.verdict == "VERIFIED", r.reasons
    assert r.stages["base"].summary.raised, r.stages["base"].summary
    assert r.stages["base"].runs[0].guard["observed"]["test_module.py::test_up"]["lacks"] == "pricing.modes"
    assert verify_file(r.evidence, KeyStore(settings.keys_dir).trusted()).ok  # re-derived from the record
    weak = git.commit_files(repo, base, {"README": "relaxed\n"}, "docs")
    r = verify(_request(repo, base, weak, harness, expect="test_module.py::test_up", regression=[],
                        write_evidence=False), settings)
    assert (r.verdict, _codes(r)) == ("REJECTED", ["candidate_failed"]), r.reasons
    # The oldest pytest the guard supports names it too (its hooks, not pytest 7's names), and Python
    # 3.8, whose AttributeError names only the type of the checkout's object (`'Cart' object has no ...`).
    old = verify(_request(repo, base, fix, harness, expect="test_module.py::test_up", regression=[],
                          pytest="pytest==6.2.5", write_evidence=False), settings)
    assert old.verdict == "VERIFIED", old.reasons
    if _has_python("3.8"):
        # ... under pytest 4.6, the oldest the guard supports (httpie's tests of 2019 need pytest 4; an
        # older one is named before anything runs: tests/unit/repair/test_verdict.py).
        r = verify(_request(repo, base, fix, harness, expect="test_new.py::test_method", regression=[],
                            python="3.8", pytest="pytest==4.6.11", write_evidence=False), settings)
        assert r.verdict == "VERIFIED", r.reasons
    # A dependency the test file imports is the environment's problem, not the defect.
    r = verify(_request(repo, base, fix, harness, expect="test_dependency.py::test_it", regression=[],
                        write_evidence=False), settings)
    assert _codes(r)[0] == "collection_error" and "not_installed_anywhere" in r.reasons[0]["detail"], r.reasons
