"""The desk's measurements on ShopLite under attack: tampering fixes and planted reproductions.

The desk measures through repair's verifier, so a fix that fakes its verdict from inside the run is
never VERIFIED, and a test that "fails" only because something planted in the checkout makes the
framework fail it (or because the code under test raises the AssertionError) is no reproduction.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff import git
from signoff.demo.fixture import examples_root
from signoff.desk import measure
from signoff.kernel.settings import Settings
from tests.support import tamper_corpus as corpus
from tests.support.requires import require_sandbox

TEST_PATH = "tests/test_coupon_floor.py"
TEST = ("from shoplite.checkout import total\n\n\ndef test_coupon_never_makes_the_total_negative():\n"
        "    assert total(200, 1, 'SAVE300') == 0\n")
PASSING = "from shoplite.checkout import total\n\n\ndef test_plain():\n    assert total(200, 1) == 200\n"
MODULE = "shoplite/checkout.py"
DEFECT = "def total("



@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    require_sandbox()
    yield Settings.load(home=tmp_path_factory.mktemp("desk-tamper") / ".signoff", env={})


def _shoplite(dest: Path, plant: dict[str, str] | None = None) -> tuple[Path, str]:
    shutil.copytree(examples_root() / "shoplite" / "repo", dest)
    for rel, text in (plant or {}).items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "shoplite"]):
        subprocess.run(["git", "-C", str(dest), *args], check=True, env=env, capture_output=True)
    head = subprocess.run(["git", "-C", str(dest), "rev-parse", "HEAD"], check=True, env=env, capture_output=True,
                          text=True).stdout.strip()
    return dest, head


def _fix(repo: Path, base: str, files: dict[str, str]) -> str:
    return git.commit_files(repo, base, {**files, TEST_PATH: TEST}, "fix")


def _measure(settings: Settings, repo: Path, base: str, commit: str) -> measure.Measurement:
    return measure.verify_fix(settings, repo, base, commit, "tests", TEST_PATH, TEST, ["shoplite/**"], checks=False,
                              timeout=60.0)


# (trace-swap swaps a module that has the coupon's `total_after_coupon`, which ShopLite has none of: here
# it only installs a trace function, which the code under test may do; repair's tests run it on the coupon.)
ATTACKS = [a for a in corpus.PYTEST if a.name in (
    "runtest-noop", "swallow-assertion", "exit-zero", "atexit-rewrite", "module-skip", "rewrite-items")]


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_tampering_fix_is_never_verified_by_the_desk(attack: corpus.Attack, settings: Settings,
                                                     tmp_path: Path) -> None:
    repo, base = _shoplite(tmp_path / "shoplite")
    text = (repo / MODULE).read_text()
    # The reported case: the unchanged buggy checkout.py plus a few planted lines.
    commit = _fix(repo, base, {MODULE: corpus.apply(attack, text, DEFECT)})
    m = _measure(settings, repo, base, commit)
    assert not m.ok, attack.name
    assert m.detail["verdict"] == "INCONCLUSIVE" and m.detail["reasons"][0]["code"] == "harness_integrity"
    # The person reviewing sees where the diff reaches; the signed evidence holds the finding.
    assert "Tamper signal on the diff" in m.reason
    assert m.evidence is not None
    envelope = json.loads(Path(m.evidence).read_text())
    predicate = json.loads(base64.b64decode(envelope["payload"]))["predicate"]
    assert predicate["reasons"][0]["code"] == "harness_integrity" and predicate["policy"]["signals"]


def test_genuine_fix_is_verified_by_the_desk(settings: Settings, tmp_path: Path) -> None:
    repo, base = _shoplite(tmp_path / "shoplite")
    text = (repo / MODULE).read_text()
    fixed = text.replace("    return round(amount, 2)", "    return max(round(amount, 2), 0.0)")
    assert fixed != text
    m = _measure(settings, repo, base, _fix(repo, base, {MODULE: fixed}))
    assert m.ok, m.reason
    assert m.detail["signals"] == [] and "Tamper signal" not in m.reason


def test_the_real_reproduction_still_counts(settings: Settings, tmp_path: Path) -> None:
    repo, base = _shoplite(tmp_path / "shoplite")
    m = measure.reproduce(settings, repo, base, "tests", TEST_PATH, TEST, timeout=60.0)
    assert m.ok, m.reason


PLANTED_FRAMEWORK = {"shoplite/__init__.py": (
    "import _pytest.python\n\n\ndef _fail(self):\n    raise AssertionError('planted')\n\n\n"
    "_pytest.python.Function.runtest = _fail\n")}
PLANTED_IN_CODE = {"shoplite/__init__.py": (
    "import shoplite.checkout as _c\n_real = _c.total\n\n\ndef _total(price, *a, **k):\n"
    "    if price == 7:\n        raise AssertionError('planted in the code, not the test')\n"
    "    return _real(price, *a, **k)\n\n\n_c.total = _total\n")}


def test_a_failure_planted_in_the_framework_is_no_reproduction(settings: Settings, tmp_path: Path) -> None:
    # The base checkout makes every test "fail by an assertion": the passing canary shows it.
    repo, base = _shoplite(tmp_path / "shoplite", PLANTED_FRAMEWORK)
    m = measure.reproduce(settings, repo, base, "tests", TEST_PATH, PASSING, timeout=60.0)
    assert not m.ok
    assert "tampering" in m.reason


def test_an_assertion_raised_by_the_checkout_is_no_reproduction(settings: Settings, tmp_path: Path) -> None:
    repo, base = _shoplite(tmp_path / "shoplite", PLANTED_IN_CODE)
    m = measure.reproduce(settings, repo, base, "tests", "tests/test_planted.py",
                          "from shoplite import checkout\n\n\ndef test_plain():\n"
                          "    assert checkout.total(7, 1) == 7\n", timeout=60.0)
    assert not m.ok
    assert "raised from checkout, not by the test" in m.reason
