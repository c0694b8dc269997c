"""The verifier end to end in the real sandbox, on real git repositories (Python and JavaScript)."""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff import git
from signoff.demo.fixture import FixtureRepo, examples_root
from signoff.kernel.settings import Settings
from signoff.repair.evidence import PREDICATE_TYPE, build_statement
from signoff.repair.signals import ATTRIBUTES
from signoff.repair.verifier import VerifyRequest, verify
from signoff.repair.workspace import Workspace
from signoff.trust import KeyStore, verify_file, write_evidence
from tests.support.requires import require_binary, require_sandbox

EXPECT = "test_coupon.py::test_coupon_applies_once"
NEIGHBOURS = ["test_coupon.py::test_zero_coupon_keeps_total", "test_coupon.py::test_empty_cart_costs_nothing"]
HARNESS = examples_root() / "coupon" / "harness"



@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    require_sandbox()
    # One home for the module: the prepared Python environment is cached by digest and reused.
    home = tmp_path_factory.mktemp("repair-home")
    yield Settings.load(home=home / ".signoff", env={})


def request(repo: FixtureRepo, candidate: str, **kw: object) -> VerifyRequest:
    fields: dict[str, object] = dict(repo=repo.path, base="main", candidate=candidate, harness=HARNESS,
                                     expect=EXPECT, regression=list(NEIGHBOURS), allow=["cart.py"], timeout=60.0)
    fields.update(kw)
    return VerifyRequest(**fields)  # type: ignore[arg-type]


def codes(result: object) -> list[str]:
    return [r["code"] for r in result.reasons]  # type: ignore[attr-defined]


def test_genuine_fix_verified_false_fix_rejected(coupon: FixtureRepo, settings: Settings,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # Workspaces in a folder of this test's own (reachable by the sandbox's uid, as /tmp is), the one
    # SIGNOFF_REPAIR_WORKSPACE names: each is removed beside the evidence's writing, and gone when verify returns.
    own_tmp = Path(tempfile.mkdtemp(prefix="signoff-test-workspaces-"))
    own_tmp.chmod(0o755)
    monkeypatch.setenv("SIGNOFF_REPAIR_WORKSPACE", str(own_tmp))
    made: list[Path] = []
    make = Workspace._make

    def recorded(self: Workspace) -> Path:
        made.append(make(self))
        return made[-1]
    monkeypatch.setattr(Workspace, "_make", recorded)
    good = verify(request(coupon, "genuine-fix"), settings)
    assert [p.parent for p in made] == [own_tmp] and not list(own_tmp.iterdir())
    assert not [t for t in threading.enumerate() if t.name == "signoff-workspace-removal"]
    assert good.verdict == "VERIFIED" and good.exit_code == 0 and good.reasons == []
    stages = good.as_json()["stages"]
    assert stages["base"]["outcome"] == "failed" and stages["base"]["assertion"]
    assert "must leave 9000" in stages["base"]["message"]
    assert stages["candidate"]["outcome"] == "passed" and stages["regression"]["outcome"] == "passed"
    assert stages["base"]["executions"][0]["isolation"]["network"] == "none"
    assert good.tamper == []

    # The false fix edits the shop's own test to expect 8100; without an allowlist it gets executed,
    # the frozen harness still fails it, and the test edit is reported as tampering.
    bad = verify(request(coupon, "false-fix", allow=[]), settings)
    assert bad.verdict == "REJECTED" and bad.exit_code == 1
    assert codes(bad) == ["candidate_failed"]
    assert bad.tamper == ["tests/test_cart.py"]
    assert bad.as_json()["stages"]["regression"]["outcome"] == "passed"

    trusted = KeyStore(settings.keys_dir).trusted()
    for result in (good, bad):
        assert result.evidence is not None
        report = verify_file(result.evidence, trusted)
        assert report.ok, report.problem
        assert report.predicate_type == PREDICATE_TYPE and report.kind == "measured"
    # Same inputs, same identity: the fingerprint does not depend on temporary paths.
    again = verify(request(coupon, "genuine-fix", write_evidence=False), settings)
    assert again.fingerprint == good.fingerprint
    assert not list(own_tmp.iterdir())
    own_tmp.rmdir()


def test_candidate_rewriting_repo_tests_is_judged_by_the_harness_only(coupon: FixtureRepo,
                                                                      settings: Settings) -> None:
    genuine = (examples_root() / "coupon" / "candidates" / "genuine_fix" / "cart.py").read_text()
    both = git.commit_files(coupon.path, coupon.base, {"cart.py": genuine,
                                                           "tests/test_cart.py": "def test_x():\n    pass\n"}, "x")
    result = verify(request(coupon, both, allow=[]), settings)
    assert result.verdict == "VERIFIED"
    assert result.tamper == ["tests/test_cart.py"]


def test_policy_violations_reject_without_running(coupon: FixtureRepo, settings: Settings) -> None:
    outside = verify(request(coupon, "false-fix"), settings)  # allow = cart.py only
    assert (outside.verdict, codes(outside)) == ("REJECTED", ["path_not_allowed"])
    assert outside.stages["candidate"].runs == []
    sibling = verify(request(coupon, "genuine-fix", base="false-fix", allow=[]), settings)
    assert (sibling.verdict, codes(sibling)) == ("REJECTED", ["not_descendant"])


def test_base_that_does_not_reproduce(coupon: FixtureRepo, settings: Settings) -> None:
    r = verify(request(coupon, "genuine-fix", expect=NEIGHBOURS[0]), settings)
    assert (r.verdict, codes(r)) == ("INCONCLUSIVE", ["base_not_reproduced"])
    assert r.exit_code == 3


def test_missing_test(coupon: FixtureRepo, settings: Settings) -> None:
    r = verify(request(coupon, "genuine-fix", regression=["test_coupon.py::test_does_not_exist"]), settings)
    assert (r.verdict, codes(r)) == ("INCONCLUSIVE", ["missing_test"])


def test_harness_changed_since_approval(coupon: FixtureRepo, settings: Settings) -> None:
    r = verify(request(coupon, "genuine-fix", approved_digest="0" * 64), settings)
    assert (r.verdict, codes(r)) == ("INCONCLUSIVE", ["harness_changed"])
    assert all(not s.runs for s in r.stages.values())


def test_timeout(coupon: FixtureRepo, settings: Settings, tmp_path: Path) -> None:
    harness = tmp_path / "slow"
    harness.mkdir()
    (harness / "test_slow.py").write_text("import time\n\ndef test_slow():\n    time.sleep(60)\n")
    r = verify(request(coupon, "genuine-fix", harness=harness, expect="test_slow.py::test_slow", regression=[],
                       timeout=3.0), settings)
    assert r.verdict == "INCONCLUSIVE"
    assert "timeout" in codes(r)


def test_environment_that_cannot_be_prepared(coupon: FixtureRepo, settings: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "requirements.txt"
    bad.write_text("this is === not a requirement\n")
    r = verify(request(coupon, "genuine-fix", requirements=str(bad)), settings)
    assert (r.verdict, codes(r)) == ("INCONCLUSIVE", ["environment_unprepared"])


def test_sandbox_unavailable(coupon: FixtureRepo, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from signoff.sandbox import bwrap, engine

    monkeypatch.setattr(bwrap, "locate", lambda: None)
    monkeypatch.setattr(engine, "engine_answers", lambda name: False)
    r = verify(request(coupon, "genuine-fix"), settings)
    assert (r.verdict, codes(r)) == ("INCONCLUSIVE", ["sandbox_unavailable"])


def test_repeats_that_agree(coupon: FixtureRepo, settings: Settings) -> None:
    r = verify(request(coupon, "genuine-fix", repeat=2), settings)
    assert r.verdict == "VERIFIED"
    assert [len(s.runs) for s in r.stages.values()] == [2, 2, 2]


def test_javascript_fixture_with_node(coupon_js: FixtureRepo, settings: Settings) -> None:
    require_binary("node", "apt-get install -y nodejs")
    harness = examples_root() / "coupon-js" / "harness"
    common = dict(harness=harness, expect="coupon.test.js::coupon applies once",
                  regression=["coupon.test.js::neighbours"], runner="node", allow=[])
    good = verify(request(coupon_js, "genuine-fix", **common), settings)
    assert good.verdict == "VERIFIED", good.reasons
    assert good.stages["base"].summary.assertion
    bad = verify(request(coupon_js, "false-fix", **common), settings)
    assert (bad.verdict, codes(bad)) == ("REJECTED", ["candidate_failed"])
    assert bad.tamper == ["test/cart.test.js"]


def _resign(path: Path, settings: Settings, edit: object) -> Path:
    """Alter the statement and sign it again with the trusted key: only the predicate check can notice."""
    envelope = json.loads(path.read_text())
    import base64

    st = json.loads(base64.b64decode(envelope["payload"]))
    edit(st["predicate"])  # type: ignore[operator]
    out = path.with_name("altered.intoto.json")
    return write_evidence(st, KeyStore(settings.keys_dir).ensure("verifier"), path.parent, path=out)


def test_evidence_fails_closed_on_altered_stage_or_digest(coupon: FixtureRepo, settings: Settings) -> None:
    r = verify(request(coupon, "false-fix", allow=[]), settings)
    assert r.evidence is not None
    trusted = KeyStore(settings.keys_dir).trusted()

    def flip_verdict(p: dict) -> None:  # type: ignore[type-arg]
        p["verdict"] = "VERIFIED"
        p["reasons"] = []

    def pass_candidate(p: dict) -> None:  # type: ignore[type-arg]
        for run in p["stages"]["candidate"]["runs"]:
            for c in run["cases"]:
                c.update(outcome="passed", assertion=False)

    def record(p: dict) -> None:  # type: ignore[type-arg]
        p["stages"]["base"]["runs"][0]["record"]["exit_code"] = 0

    def harness(p: dict) -> None:  # type: ignore[type-arg]
        p["identity"]["harness_digest"] = "1" * 64

    def runner(p: dict) -> None:  # type: ignore[type-arg]
        p["runner"]["kind"] = "template"

    for edit, words in ((flip_verdict, "statement says VERIFIED"), (pass_candidate, "summary does not follow"),
                        (record, "record does not match"), (harness, "subject"), (runner, "runner digest")):
        report = verify_file(_resign(r.evidence, settings, edit), trusted)
        assert not report.ok
        assert words in (report.problem or ""), (edit, report.problem)


def test_evidence_written_before_crashes_could_show_the_defect_still_verifies(coupon: FixtureRepo,
                                                                             settings: Settings) -> None:
    """Evidence from before a crash of the code under test could show the defect has no `raised` in
    its summaries: it is re-derived by the rule it was written under, and still verifies."""
    r = verify(request(coupon, "genuine-fix"), settings)
    assert r.verdict == "VERIFIED" and r.evidence is not None

    def older(p: dict) -> None:  # type: ignore[type-arg]
        for stage in p["stages"].values():
            stage["summary"].pop("raised")
            stage["summary"].pop("partly_skipped")  # and before harness-skipped regression cases counted
            stage["summary"].pop("skipped_as_on_base")  # and before skips the base shared counted

    report = verify_file(_resign(r.evidence, settings, older), KeyStore(settings.keys_dir).trusted())
    assert report.ok, report.problem


def test_redacted_evidence_says_what_it_could_not_check(coupon: FixtureRepo, settings: Settings) -> None:
    r = verify(request(coupon, "genuine-fix", redact_paths=True), settings)
    assert r.evidence is not None
    text = r.evidence.read_text()
    assert str(coupon.path) not in text
    report = verify_file(r.evidence, KeyStore(settings.keys_dir).trusted())
    assert report.ok
    assert any("redacted" in n for n in report.notes)
    # The unredacted statement of the same run re-derives the harness from the store.
    full = write_evidence(build_statement(r.predicate | {"inputs": {"repository": str(coupon.path), "harness":
                                                                    str(settings.home / "repair" / "harness" /
                                                                        r.harness_digest)}}),
                          KeyStore(settings.keys_dir).ensure("verifier"), settings.evidence_dir)
    notes = verify_file(full, KeyStore(settings.keys_dir).trusted()).notes
    assert "frozen harness re-digested: matches" in notes


def test_code_in_the_commit_message_never_reaches_the_run(coupon: FixtureRepo, settings: Settings) -> None:
    """Issue 34, finding 1, as the attacker built it: the committed cart.py keeps the bug and ends in a
    `$Format:%B$` comment, the tree marks it export-subst, and the commit message holds the fix.
    `git archive` wrote the message into the file, so the bug "passed" and the diff showed a comment."""
    buggy = git.read_file_at(coupon.path, coupon.base, "cart.py")
    assert buggy is not None
    message = ("tidy a comment\n\n"
               "def total_after_coupon(cents: int, percent: int) -> int:\n    return cents * (100 - percent) // 100\n")
    attack = git.commit_files(coupon.path, coupon.base, {"cart.py": buggy.decode() + "# $Format:%B$\n",
                                                          ".gitattributes": "cart.py export-subst\n"}, message)
    r = verify(request(coupon, attack, allow=[]), settings)
    assert (r.verdict, codes(r)) == ("REJECTED", ["candidate_failed"])
    assert [s["path"] for s in r.signals if s["what"] == ATTRIBUTES] == [".gitattributes"]


def test_export_attributes_of_a_real_project_are_ignored_not_refused(coupon: FixtureRepo, settings: Settings) -> None:
    # tqdm marks folders export-ignore, versioneer uses export-subst (issue 37): the fix is verified on
    # its committed bytes, and the attributes file is pointed out to the person who reviews it.
    fix = (examples_root() / "coupon" / "candidates" / "genuine_fix" / "cart.py").read_text()
    candidate = git.commit_files(coupon.path, coupon.base, {
        "cart.py": fix, ".gitattributes": "cart.py export-ignore\n*.py export-subst ident eol=crlf\n"}, "fix")
    r = verify(request(coupon, candidate, allow=[]), settings)
    assert (r.verdict, r.reasons) == ("VERIFIED", [])
    assert [s["path"] for s in r.signals if s["what"] == ATTRIBUTES] == [".gitattributes"]


def test_harness_configuration_governs_not_the_repository(coupon: FixtureRepo, settings: Settings,
                                                          tmp_path: Path) -> None:
    # The repository ships a conftest that would fail every test, and a pytest.ini that skips them.
    hostile = git.commit_files(coupon.path, coupon.base, {
        "conftest.py": "import pytest\n\n@pytest.fixture(autouse=True)\ndef sabotage():\n    raise RuntimeError('x')\n",
        "pytest.ini": "[pytest]\naddopts = -p no:junitxml\n",
        "cart.py": (examples_root() / "coupon" / "candidates" / "genuine_fix" / "cart.py").read_text()}, "hostile")
    harness = tmp_path / "h"
    harness.mkdir()
    (harness / "pytest.ini").write_text("[pytest]\nmarkers =\n    contract: the approved checks\n")
    (harness / "conftest.py").write_text("import pytest\n\n@pytest.fixture\ndef expected():\n    return 9000\n")
    (harness / "test_c.py").write_text(
        "import pytest\nimport cart\n\n@pytest.mark.contract\n@pytest.mark.parametrize('cents', [10000])\n"
        "def test_once(cents, expected):\n    assert cart.total_after_coupon(cents, 10) == expected\n")
    r = verify(request(coupon, hostile, harness=harness, expect="test_c.py::test_once", regression=[], allow=[]),
               settings)
    assert r.verdict == "VERIFIED", r.reasons
    assert [c.id for c in r.stages["candidate"].runs[0].cases] == ["test_c.py::test_once[10000]"]
    assert sorted(r.tamper) == ["conftest.py", "pytest.ini"]


def test_command_template_runner(coupon: FixtureRepo, settings: Settings) -> None:
    template = ("{python} -m pytest -q -p no:cacheprovider --rootdir={harness} -c /runner/none.ini "
                "-o junit_family=xunit1 --junitxml={junit} {tests}")
    # /runner/none.ini does not exist for a template runner: pytest refuses, no report -> INCONCLUSIVE.
    broken = verify(request(coupon, "genuine-fix", runner=template, write_evidence=False), settings)
    assert broken.verdict == "INCONCLUSIVE" and "no_report" in codes(broken)
    ok_template = template.replace("-c /runner/none.ini ", "")
    r = verify(request(coupon, "genuine-fix", runner=ok_template), settings)
    assert r.verdict == "VERIFIED", r.reasons
    assert r.predicate["runner"]["kind"] == "template"


def test_requirements_come_from_the_base_revision(coupon: FixtureRepo, tmp_path: Path) -> None:
    from signoff.repair import testenv

    base_req = git.commit_files(coupon.path, coupon.base, {"requirements-test.txt": "pytest\n"}, "reqs")
    git.commit_files(coupon.path, base_req, {"requirements-test.txt": "evil-package\n"}, "evil")
    plan = testenv.plan(coupon.path, base_req, ["requirements-test.txt"], False, [], None)
    assert plan.lines == ["pytest"] and plan.sources == ["requirements-test.txt (base revision)"]


def test_altered_frozen_copy_is_inconclusive(coupon: FixtureRepo, settings: Settings, tmp_path: Path) -> None:
    import os
    import shutil

    from signoff.repair.harness import freeze
    from signoff.repair.verifier import harness_store

    src = tmp_path / "h"
    shutil.copytree(HARNESS, src)
    (src / "marker.txt").write_text("unique to this test\n")
    frozen = freeze(src, harness_store(settings))
    os.chmod(frozen.path, 0o755)
    target = frozen.path / "test_coupon.py"
    target.chmod(0o644)
    target.write_text(target.read_text().replace("== 9000", "== 8100"))
    r = verify(request(coupon, "false-fix", harness=None, frozen_digest=frozen.digest,
                       approved_digest=frozen.digest, allow=[]), settings)
    assert (r.verdict, codes(r)) == ("INCONCLUSIVE", ["harness_changed"])
    assert all(not s.runs for s in r.stages.values())


def test_memory_limit(coupon: FixtureRepo, settings: Settings, tmp_path: Path) -> None:
    harness = tmp_path / "hungry"
    harness.mkdir()
    (harness / "test_hungry.py").write_text(
        "def test_hungry():\n    block = bytearray(900 * 1024 * 1024)\n    assert block\n")
    r = verify(request(coupon, "genuine-fix", harness=harness, expect="test_hungry.py::test_hungry", regression=[]),
               settings)
    assert r.verdict == "INCONCLUSIVE"
    assert codes(r) == ["resource_limit", "resource_limit"]  # base and candidate were both OOM-killed
    assert r.stages["base"].summary.status == "resource_limit"


def test_regression_ids_the_candidate_fails_run_on_base_too(coupon: FixtureRepo, settings: Settings,
                                                            tmp_path: Path) -> None:
    """A regression test that fails on both revisions (a dependency newer than the project) makes the
    verdict INCONCLUSIVE, one the base passes still rejects; the base's run is in the signed evidence."""
    harness = tmp_path / "h"
    harness.mkdir()
    (harness / "test_coupon.py").write_text((HARNESS / "test_coupon.py").read_text())
    (harness / "test_env.py").write_text(
        "import cart\n\ndef test_newer_dependency():\n    assert '<span>' == '<span class=\"w\">'\n\n"
        "def test_old_total():\n    assert cart.total_after_coupon(10000, 10) == 8100\n")
    shared = verify(request(coupon, "genuine-fix", harness=harness,
                            regression=[NEIGHBOURS[0], "test_env.py::test_newer_dependency"]), settings)
    assert (shared.verdict, codes(shared)) == ("INCONCLUSIVE", ["regression_fails_on_base"])
    on_base = shared.stages["regression_on_base"]
    assert on_base.revision == shared.base and on_base.tests == ["test_env.py::test_newer_dependency"]
    assert on_base.runs[0].guard is not None  # the same guard and canaries as every execution
    brought = verify(request(coupon, "genuine-fix", harness=harness,
                             regression=["test_env.py::test_old_total", "test_env.py::test_newer_dependency"]),
                     settings)
    assert (brought.verdict, codes(brought)) == ("REJECTED", ["regression_failed"])
    assert brought.stages["regression_on_base"].summary.per_test == {
        "test_env.py::test_old_total": "passed", "test_env.py::test_newer_dependency": "failed"}
    trusted = KeyStore(settings.keys_dir).trusted()
    for result in (shared, brought):
        assert result.evidence is not None
        report = verify_file(result.evidence, trusted)
        assert report.ok, report.problem
    # Without the base's run, the executions give REJECTED, not the INCONCLUSIVE the statement says.
    assert shared.evidence is not None
    dropped = verify_file(_resign(shared.evidence, settings, lambda p: p["stages"].pop("regression_on_base")),
                          trusted)
    assert not dropped.ok and "statement says INCONCLUSIVE" in (dropped.problem or "")
