"""The code under test as an adversary: tampering candidates must never come out VERIFIED.

Each candidate in `tamper_corpus` keeps the defect and tries to fake the verdict from inside the
run (patching the framework, exiting early, forging reports, skipping, hooks, planted start-up
files). All run for real in the sandbox, with the real pytest and node, beside the genuine fixes,
which must stay VERIFIED with no integrity finding.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff import git
from signoff.demo.fixture import FixtureRepo, examples_root
from signoff.kernel.settings import Settings
from signoff.repair.verifier import VerifyRequest, VerifyResult, verify
from signoff.trust import KeyStore, verify_file
from tests.support.requires import require_binary, require_sandbox
from tests.support.tamper_corpus import NODE, PYTEST, Attack, apply

COUPON = examples_root() / "coupon"
COUPON_JS = examples_root() / "coupon-js"
EXPECT = "test_coupon.py::test_coupon_applies_once"
NEIGHBOURS = ["test_coupon.py::test_zero_coupon_keeps_total", "test_coupon.py::test_empty_cart_costs_nothing"]
START_UP = {"interpreter start-up file", "conftest.py outside the harness", "plugin entry point (package metadata)"}



@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    require_sandbox()
    yield Settings.load(home=tmp_path_factory.mktemp("tamper-home") / ".signoff", env={})


def _codes(result: VerifyResult) -> list[str]:
    return [r["code"] for r in result.reasons]


def _signed_reasons(result: VerifyResult, settings: Settings) -> list[str]:
    assert result.evidence is not None
    report = verify_file(result.evidence, KeyStore(settings.keys_dir).trusted())
    assert report.ok, report.problem
    envelope = json.loads(result.evidence.read_text())
    predicate = json.loads(base64.b64decode(envelope["payload"]))["predicate"]
    return [r["code"] for r in predicate["reasons"]]


def _candidate(repo: FixtureRepo, module: str, defect_def: str, attack: Attack) -> str:
    text = (repo.path / module).read_text()
    files = {module: apply(attack, text, defect_def), **attack.files}
    return git.commit_files(repo.path, repo.base, files, f"fix: {attack.name}")


def _judge(attack: Attack, result: VerifyResult, settings: Settings) -> None:
    assert result.verdict != "VERIFIED", (attack.name, result.reasons)
    if attack.expect == "integrity":
        assert result.verdict == "INCONCLUSIVE" and _codes(result)[0] == "harness_integrity", (
            attack.name, result.reasons)
        # The finding is in the signed evidence, and that evidence verifies offline.
        assert "harness_integrity" in _signed_reasons(result, settings)
    else:
        # Never loaded by the isolated run, so the unchanged defect is judged as it is, and the
        # reviewer sees the planted file.
        assert result.verdict == "REJECTED" and "candidate_failed" in _codes(result), (attack.name, result.reasons)
        assert START_UP & {s["what"] for s in result.signals}, result.signals


@pytest.mark.parametrize("attack", PYTEST, ids=[a.name for a in PYTEST])
def test_pytest_tampering_is_never_verified(attack: Attack, coupon: FixtureRepo, settings: Settings) -> None:
    cand = _candidate(coupon, "cart.py", "def total_after_coupon(", attack)
    result = verify(VerifyRequest(repo=coupon.path, base=coupon.base, candidate=cand, harness=COUPON / "harness",
                                  expect=EXPECT, regression=list(NEIGHBOURS), timeout=60.0), settings)
    _judge(attack, result, settings)
    if attack.prefix or attack.expect == "integrity":
        # The diff itself shows a reviewer what the candidate reached for.
        assert result.signals, attack.name


@pytest.mark.parametrize("attack", NODE, ids=[a.name for a in NODE])
def test_node_tampering_is_never_verified(attack: Attack, coupon_js: FixtureRepo, settings: Settings) -> None:
    require_binary("node", "apt-get install -y nodejs")
    cand = _candidate(coupon_js, "cart.js", "function totalAfterCoupon(", attack)
    result = verify(VerifyRequest(repo=coupon_js.path, base=coupon_js.base, candidate=cand,
                                  harness=COUPON_JS / "harness", runner="node",
                                  expect="coupon.test.js::coupon applies once",
                                  regression=["coupon.test.js::neighbours"], timeout=60.0), settings)
    _judge(attack, result, settings)
    assert result.signals, attack.name


def test_genuine_fixes_stay_verified_without_findings(coupon: FixtureRepo, coupon_js: FixtureRepo,
                                                      settings: Settings) -> None:
    py = verify(VerifyRequest(repo=coupon.path, base=coupon.base, candidate=coupon.candidates["genuine-fix"],
                              harness=COUPON / "harness", expect=EXPECT, regression=list(NEIGHBOURS)), settings)
    assert py.verdict == "VERIFIED" and py.reasons == [] and py.signals == []
    for stage in py.stages.values():
        for run in stage.runs:
            assert run.guard is not None and run.guard["findings"] == []
            # The canaries ran and were stripped from the cases the verdict reads.
            assert not any(c.id.startswith(run.guard["plan"]["canary_file"]) for c in run.cases)
    if require_binary("node", "apt-get install -y nodejs"):
        js = verify(VerifyRequest(repo=coupon_js.path, base=coupon_js.base,
                                  candidate=coupon_js.candidates["genuine-fix"], harness=COUPON_JS / "harness",
                                  runner="node", expect="coupon.test.js::coupon applies once",
                                  regression=["coupon.test.js::neighbours"]), settings)
        assert js.verdict == "VERIFIED" and js.reasons == []


def test_canaries_and_keys_are_fresh_for_every_run(coupon: FixtureRepo, settings: Settings) -> None:
    r = verify(VerifyRequest(repo=coupon.path, base=coupon.base, candidate=coupon.candidates["genuine-fix"],
                             harness=COUPON / "harness", expect=EXPECT, regression=list(NEIGHBOURS), repeat=2),
               settings)
    # Two executions per repeat: the base's, and the one the candidate's two stages share.
    executions = {id(run): run for s in r.stages.values() for run in s.runs}.values()
    plans = [run.guard["plan"] for run in executions if run.guard]
    assert len(plans) == 4
    assert len({p["canary_file"] for p in plans}) == 4 and len({p["nonce"] for p in plans}) == 4
    # The fingerprint does not depend on them: the same inputs give the same fingerprint.
    again = verify(VerifyRequest(repo=coupon.path, base=coupon.base, candidate=coupon.candidates["genuine-fix"],
                                 harness=COUPON / "harness", expect=EXPECT, regression=list(NEIGHBOURS), repeat=2),
                   settings)
    assert again.fingerprint == r.fingerprint


def test_harness_that_uses_framework_features_is_no_false_alarm(coupon: FixtureRepo, settings: Settings,
                                                                tmp_path: Path) -> None:
    # Fixtures, monkeypatch, parametrisation, classes, a conftest and a skip in the harness itself
    # are the harness's business, not tampering.
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "conftest.py").write_text("import pytest\n\n@pytest.fixture\ndef percent():\n    return 10\n")
    (harness / "test_rich.py").write_text(
        "import os\nimport sys\n\nimport pytest\n\nimport cart\n\n\n"
        "def test_once(percent, monkeypatch):\n    monkeypatch.setattr(os, 'getcwd', lambda: '/x')\n"
        "    monkeypatch.setattr(sys, 'excepthook', lambda *a: None)\n"
        "    assert cart.total_after_coupon(10000, percent) == 9000\n\n\n"
        "@pytest.mark.parametrize('cents', [0, 100, 5000])\ndef test_zero(cents):\n"
        "    assert cart.total_after_coupon(cents, 0) == cents\n\n\n"
        "class TestCart:\n    def test_empty(self):\n        assert cart.checkout_total([], 10) == 0\n\n"
        "    @pytest.mark.skipif(sys.platform == 'win32', reason='posix only')\n"
        "    def test_posix(self):\n        assert cart.checkout_total([100], 0) == 100\n")
    r = verify(VerifyRequest(repo=coupon.path, base=coupon.base, candidate=coupon.candidates["genuine-fix"],
                             harness=harness, expect="test_rich.py::test_once",
                             regression=["test_rich.py::test_zero", "test_rich.py::TestCart"]), settings)
    assert r.verdict == "VERIFIED", r.reasons


GENUINE_WITH_HOOKS = """\
import functools
import sys


class _VendoredSixStyleImporter:
    # Appended after the standard finders, as six does: it only sees what nothing else found.
    def find_spec(self, name, path, target=None):
        return None


sys.meta_path.append(_VendoredSixStyleImporter())


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def total_after_coupon(cents: int, percent: int) -> int:
    return cents * (100 - percent) // 100


def checkout_total(prices: list[int], percent: int) -> int:
    return total_after_coupon(sum(prices), percent)
"""


def test_genuine_code_with_its_own_decorator_and_appended_finder_is_no_false_alarm(
        coupon: FixtureRepo, settings: Settings, tmp_path: Path) -> None:
    # Library code that decorates the harness's tests or appends an import finder is not tampering:
    # the test is still what its module defines, and the finder cannot intercept a test module.
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "test_deco.py").write_text(
        "import cart\n\n\ndef _plain(f):\n    return f\n\n\n"
        "@(getattr(cart, 'logged', None) or _plain)\ndef test_once():\n"
        "    assert cart.total_after_coupon(10000, 10) == 9000\n")
    cand = git.commit_files(coupon.path, coupon.base, {"cart.py": GENUINE_WITH_HOOKS}, "fix with helpers")
    r = verify(VerifyRequest(repo=coupon.path, base=coupon.base, candidate=cand, harness=harness,
                             expect="test_deco.py::test_once"), settings)
    assert r.verdict == "VERIFIED", r.reasons
    # The diff still shows the reviewer the import hook.
    assert "import hook" in {s["what"] for s in r.signals}


LIBRARY = {
    "pyproject.toml": "[project]\nname = 'pricing'\nversion = '1.0'\n",
    "src/pricing/__init__.py": (
        "import importlib\nimport logging\nimport warnings\nfrom dataclasses import dataclass\n"
        "from enum import Enum\nfrom functools import lru_cache\n\ntry:\n"
        "    from importlib.metadata import version\n    __version__ = version('pricing')\n"
        "except Exception:\n    __version__ = '0'\n\nlog = logging.getLogger(__name__)\n\n\n"
        "class Kind(Enum):\n    PLAIN = 'plain'\n    BULK = 'bulk'\n\n\n@dataclass(frozen=True)\nclass Line:\n"
        "    cents: int\n    qty: int = 1\n\n\n@lru_cache(maxsize=None)\ndef rate(percent: int) -> int:\n"
        "    if percent > 90:\n        warnings.warn('steep coupon', UserWarning, stacklevel=2)\n"
        "    return 100 - percent\n\n\ndef total(lines: list[Line], percent: int) -> int:\n"
        "    if percent < 0:\n        raise ValueError('negative coupon')\n"
        "    log.info('total of %d lines', len(lines))\n    gross = sum(x.cents * x.qty for x in lines)\n"
        "    return gross * rate(percent) // 100 * rate(percent) // 100\n\n\n"
        "def plugin(name: str) -> object:\n    return importlib.import_module(name)\n"),
}
LIBRARY_FIX = ("    return gross * rate(percent) // 100 * rate(percent) // 100\n",
               "    return gross * rate(percent) // 100\n")
LIBRARY_HARNESS = {
    "conftest.py": ("import pytest\n\nfrom pricing import Line\n\n\n@pytest.fixture\ndef cart():\n"
                    "    lines = [Line(5000), Line(2500, 2)]\n    yield lines\n    lines.clear()\n"),
    "test_total.py": (
        "import logging\nimport json\n\nimport pytest\n\nfrom pricing import Kind, Line, plugin, total\n\n\n"
        "def test_coupon_once(cart):\n    assert total(cart, 10) == 9000\n\n\n"
        "@pytest.mark.parametrize('percent, want', [(0, 10000), (50, 5000)], ids=['none', 'half'])\n"
        "def test_rates(cart, percent, want):\n    assert total(cart, percent) == pytest.approx(want)\n\n\n"
        "def test_errors_warnings_logs(cart, caplog, capsys, tmp_path, monkeypatch):\n"
        "    monkeypatch.setenv('PRICING', '1')\n    with pytest.raises(ValueError, match='negative'):\n"
        "        total(cart, -1)\n    with pytest.warns(UserWarning):\n        total(cart, 95)\n"
        "    with caplog.at_level(logging.INFO):\n        total(cart, 0)\n    assert 'lines' in caplog.text\n"
        "    print('x')\n    assert capsys.readouterr().out == 'x\\n'\n"
        "    (tmp_path / 'a.json').write_text(json.dumps({'k': Kind.BULK.value}))\n"
        "    assert plugin('json').loads((tmp_path / 'a.json').read_text())['k'] == 'bulk'\n\n\n"
        "class TestLine:\n    def test_frozen(self):\n        with pytest.raises(Exception):\n"
        "            Line(1).cents = 2  # type: ignore[misc]\n"),
    "sub/test_more.py": ("from pricing import Line, total\n\n\ndef test_single():\n"
                         "    assert total([Line(100)], 0) == 100\n"),
}


def test_a_library_with_a_src_layout_and_a_rich_harness_is_no_false_alarm(settings: Settings,
                                                                          tmp_path: Path) -> None:
    import subprocess

    repo = tmp_path / "pricing"
    for rel, text in LIBRARY.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x.invalid", "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    base = git.resolve(repo, "main")
    src = LIBRARY["src/pricing/__init__.py"]
    fix = git.commit_files(repo, base, {"src/pricing/__init__.py": src.replace(*LIBRARY_FIX)}, "fix")
    harness = tmp_path / "harness"
    for rel, text in LIBRARY_HARNESS.items():
        (harness / rel).parent.mkdir(parents=True, exist_ok=True)
        (harness / rel).write_text(text)
    r = verify(VerifyRequest(repo=repo, base=base, candidate=fix, harness=harness, pythonpath=["src"],
                             expect="test_total.py::test_coupon_once",
                             regression=["test_total.py::test_rates", "test_total.py::test_errors_warnings_logs",
                                         "test_total.py::TestLine", "sub/test_more.py"], repeat=2), settings)
    assert r.verdict == "VERIFIED", r.reasons
    assert r.stages["regression"].summary.per_test["sub/test_more.py"] == "passed"


PLUGIN_HARNESS = '''\
import asyncio

import pytest
from hypothesis import given, strategies as st

import cart


def test_once():
    assert cart.total_after_coupon(10000, 10) == 9000


@given(st.integers(min_value=0, max_value=10**6))
def test_zero_any(cents):
    assert cart.total_after_coupon(cents, 0) == cents


def test_mocker(mocker):
    spy = mocker.spy(cart, "total_after_coupon")
    assert cart.checkout_total([100], 0) == 100
    assert spy.call_count == 1


@pytest.mark.asyncio
async def test_async():
    await asyncio.sleep(0)
    assert cart.checkout_total([], 10) == 0


@pytest.mark.timeout(30)
def test_timeout_marker():
    assert cart.checkout_total([200], 50) == 100
'''


def test_pytest_plugins_from_the_requirements_are_no_false_alarm(coupon: FixtureRepo, settings: Settings,
                                                                 tmp_path: Path) -> None:
    # hypothesis, pytest-mock, pytest-asyncio and pytest-timeout load as entry points, patch pytest
    # during configuration and rewrite code objects of their own: none of that is the candidate's.
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "test_plug.py").write_text(PLUGIN_HARNESS)
    genuine = (COUPON / "candidates" / "genuine_fix" / "cart.py").read_text()
    base = git.commit_files(coupon.path, coupon.base, {
        "requirements-test.txt": "pytest-mock\npytest-asyncio\nhypothesis\npytest-timeout\nattrs\nsix\n"}, "reqs")
    cand = git.commit_files(coupon.path, base, {"cart.py": "import attr\nimport six\n" + genuine}, "fix")
    r = verify(VerifyRequest(repo=coupon.path, base=base, candidate=cand, harness=harness,
                             requirements="requirements-test.txt", expect="test_plug.py::test_once",
                             regression=["test_plug.py::test_zero_any", "test_plug.py::test_mocker",
                                         "test_plug.py::test_async", "test_plug.py::test_timeout_marker"],
                             timeout=300.0), settings)
    assert r.verdict == "VERIFIED", r.reasons


ESM_HARNESS = """\
import test from 'node:test';
import assert from 'node:assert';
import cart from '/src/cart.js';

test('coupon applies once', () => {
  assert.strictEqual(cart.totalAfterCoupon(10000, 10), 9000);
});
test('zero coupon', () => {
  assert.strictEqual(cart.totalAfterCoupon(10000, 0), 10000);
});
"""


def test_node_esm_harness_gets_the_same_guard(coupon_js: FixtureRepo, settings: Settings, tmp_path: Path) -> None:
    require_binary("node", "apt-get install -y nodejs")
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "coupon.test.mjs").write_text(ESM_HARNESS)

    def judge(candidate: str) -> VerifyResult:
        return verify(VerifyRequest(repo=coupon_js.path, base=coupon_js.base, candidate=candidate, harness=harness,
                                    runner="node", expect="coupon.test.mjs::coupon applies once",
                                    regression=["coupon.test.mjs::zero coupon"]), settings)

    assert judge(coupon_js.candidates["genuine-fix"]).verdict == "VERIFIED"
    attack = next(a for a in NODE if a.name == "node-assert-patch")
    tampered = judge(_candidate(coupon_js, "cart.js", "function totalAfterCoupon(", attack))
    assert tampered.verdict == "INCONCLUSIVE" and _codes(tampered)[0] == "harness_integrity"


def test_committed_bytecode_never_runs_instead_of_the_source(coupon: FixtureRepo, settings: Settings,
                                                             tmp_path: Path) -> None:
    # A .pyc that Python would load without checking the source (unchecked hash) carries the fix,
    # while the reviewed cart.py keeps the defect.
    import py_compile
    import subprocess
    import sys

    genuine = tmp_path / "cart.py"
    genuine.write_text((COUPON / "candidates" / "genuine_fix" / "cart.py").read_text())
    tag = sys.implementation.cache_tag
    pyc = coupon.path / "__pycache__" / f"cart.{tag}.pyc"
    pyc.parent.mkdir(exist_ok=True)
    py_compile.compile(str(genuine), cfile=str(pyc), dfile="cart.py", doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x.invalid", "PATH": "/usr/bin:/bin"}
    for args in (["checkout", "-q", "-b", "bytecode", coupon.base], ["add", "-f", str(pyc)],
                 ["commit", "-q", "-m", "fix"]):
        subprocess.run(["git", "-C", str(coupon.path), *args], check=True, env=env, capture_output=True)
    r = verify(VerifyRequest(repo=coupon.path, base=coupon.base, candidate="bytecode", harness=COUPON / "harness",
                             expect=EXPECT, regression=list(NEIGHBOURS)), settings)
    assert r.verdict == "REJECTED" and "candidate_failed" in _codes(r), r.reasons
    assert "compiled bytecode (runs instead of the reviewed source)" in {s["what"] for s in r.signals}


def test_tampering_while_a_regression_test_runs_spoils_the_candidates_shared_execution(
        coupon: FixtureRepo, settings: Settings) -> None:
    # The candidate's two stages share one execution. This candidate fixes the expected test
    # honestly, breaks a neighbour, and hides that by patching the framework only once the
    # neighbour's call comes: the honest pass must not carry the execution.
    fixed = git.read_file_at(coupon.path, coupon.candidates["genuine-fix"], "cart.py")
    assert fixed is not None
    hostile = fixed.decode().replace(
        "    return cents * (100 - percent) // 100\n",
        "    if percent == 0:\n"
        "        import _pytest.runner as _r\n"
        "        _orig = _r.CallInfo.from_call.__func__\n"
        "        def _quiet(cls, func, when, reraise=None):\n"
        "            def call():\n"
        "                try:\n"
        "                    return func()\n"
        "                except AssertionError:\n"
        "                    return None\n"
        "            return _orig(cls, call, when, reraise)\n"
        "        _r.CallInfo.from_call = classmethod(_quiet)\n"
        "        return cents - 1\n"
        "    return cents * (100 - percent) // 100\n")
    cand = git.commit_files(coupon.path, coupon.base, {"cart.py": hostile}, "fix: coupon, and tidy")
    r = verify(VerifyRequest(repo=coupon.path, base=coupon.base, candidate=cand, harness=COUPON / "harness",
                             expect=EXPECT, regression=list(NEIGHBOURS), timeout=60.0), settings)
    assert r.verdict == "INCONCLUSIVE" and _codes(r)[0] == "harness_integrity", r.reasons
    assert r.stages["candidate"].summary.status == "harness_integrity"  # not the expected test's honest pass
    assert "harness_integrity" in _signed_reasons(r, settings)


GENUINE_TRACER = """\
import sys

SEEN = []


class snoop:
    # What PySnooper does: a trace function for the frame of `with snoop():` (set on it directly)
    # and for the calls made inside, installed with sys.settrace and put back afterwards.
    def __enter__(self):
        self.frame = sys._getframe(1)
        self.frame.f_trace = self.trace
        self.previous = sys.gettrace()
        sys.settrace(self.trace)
        return self

    def __exit__(self, *exc):
        sys.settrace(self.previous)

    def trace(self, frame, event, arg):
        SEEN.append((frame.f_code.co_name, event, dict(frame.f_locals)))
        return self.trace


def total_after_coupon(cents: int, percent: int) -> int:
    return cents * (100 - percent) // 100


def checkout_total(prices: list[int], percent: int) -> int:
    return total_after_coupon(sum(prices), percent)
"""


def test_code_under_test_that_traces_is_no_false_alarm(coupon: FixtureRepo, settings: Settings,
                                                       tmp_path: Path) -> None:
    # A tracer (PySnooper) is code under test that must install trace functions: it sees the
    # checkout's and the harness's frames, so a genuine fix is VERIFIED without a finding.
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "test_traced.py").write_text(
        "import cart\n\n\ndef test_traced():\n    with cart.snoop():\n"
        "        total = cart.total_after_coupon(10000, 10)\n    assert total == 9000\n"
        "    assert ('total_after_coupon', 'return', {'cents': 10000, 'percent': 10}) in cart.SEEN\n"
        "    assert any(name == 'test_traced' and event == 'line' for name, event, _ in cart.SEEN)\n")
    cand = git.commit_files(coupon.path, coupon.base, {"cart.py": GENUINE_TRACER}, "fix, with a tracer")
    r = verify(VerifyRequest(repo=coupon.path, base=coupon.base, candidate=cand, harness=harness,
                             expect="test_traced.py::test_traced"), settings)
    assert r.verdict == "VERIFIED", [x["detail"] for x in r.reasons]
    assert all(run.guard is not None and run.guard["findings"] == []
               for stage in r.stages.values() for run in stage.runs)


# The base's and the candidate's executions share one interpreter and one sandbox (repair/forked.py).
FORGED_BASE = """
import base64 as _b64, json as _json, os as _os

# The base's result, as the sandbox's one interpreter sends it: "the base failed the expected test".
_junit = (b'<testsuite><testcase classname="test_coupon" name="test_coupon_applies_once">'
          b'<failure message="forged">assert 9000 == 8100</failure></testcase></testsuite>')
_frame = {"v": 1, "exit_code": 1, "signal": None, "timed_out": False, "duration": 0.1, "cpu_time": 0.1,
          "at": 0.1, "stdout": "", "stderr": "", "files": {"junit.xml": _b64.b64encode(_junit).decode()}}
_line = ("\\nsignoff-base-run " + _json.dumps(_frame) + "\\n").encode()


def _send():  # now, and once pytest no longer captures the output
    for _fd in (1, 2):
        _os.write(_fd, _line)


_send()
__import__("atexit").register(_send)
with open("/tmp/.signoff-base-stdout", "wb") as _fh:  # where the base's output was kept
    _fh.write(_junit)
"""


def test_the_candidate_cannot_stand_in_for_the_bases_recorded_result(coupon: FixtureRepo, settings: Settings) -> None:
    # The base already has the fix, so the defect cannot be reproduced. The candidate, run after the
    # base in the same sandbox, sends a base result of its own ("it failed") the way the base's is
    # sent, and overwrites where the base's output was kept: the base's own result must stand.
    # (Writing the report files in /work is the guard's to catch, as for any candidate.)
    base = coupon.candidates["genuine-fix"]
    fixed = git.read_file_at(coupon.path, base, "cart.py")
    assert fixed is not None
    cand = git.commit_files(coupon.path, base, {"cart.py": fixed.decode() + FORGED_BASE}, "fix: coupon, again")
    r = verify(VerifyRequest(repo=coupon.path, base=base, candidate=cand, harness=COUPON / "harness",
                             expect=EXPECT, regression=list(NEIGHBOURS), timeout=60.0,
                             executions="shared"), settings)
    assert r.verdict == "INCONCLUSIVE" and _codes(r) == ["base_not_reproduced"], r.reasons
    assert r.stages["base"].summary.outcome == "passed"
    assert r.stages["candidate"].summary.outcome == "passed"


LEAVES = """
import os as _os, subprocess as _sp, sys as _sys

# The base runs in the candidate's sandbox (--executions shared), from its own mount.
if _os.environ.get("SIGNOFF_CHECKOUT") != "/base":
    raise RuntimeError("the base did not share the candidate's sandbox")
# What a base's tests may leave behind: files in every writable place, and a process of its own session.
for _place in ("/work", "/tmp", "/dev/shm"):
    with open(_place + "/left-by-base", "w") as _fh:
        _fh.write("x")
_sp.Popen([_sys.executable, "-c", "import select; select.select([], [], [])"], start_new_session=True,
          stdin=_sp.DEVNULL, stdout=_sp.DEVNULL, stderr=_sp.DEVNULL)
"""
FINDS = """
import os as _os

# The candidate's run must start as a lone run does: nothing of the base's left in the sandbox.
_mine = {1, _os.getpid(), _os.getppid()}
_left = [p for p in ("/work", "/tmp", "/dev/shm") if _os.path.exists(p + "/left-by-base")]
for _pid in [int(n) for n in _os.listdir("/proc") if n.isdigit()]:
    try:
        with open(f"/proc/{_pid}/stat", "rb") as _fh:
            _state = _fh.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        continue
    if _pid not in _mine and _state != b"Z":
        _left.append(_pid)
if _left:
    raise RuntimeError(f"left by the base: {_left}")
"""


def test_nothing_the_base_leaves_reaches_the_candidates_run(coupon: FixtureRepo, settings: Settings) -> None:
    defect = git.read_file_at(coupon.path, coupon.base, "cart.py")
    fixed = git.read_file_at(coupon.path, coupon.candidates["genuine-fix"], "cart.py")
    assert defect is not None and fixed is not None
    base = git.commit_files(coupon.path, coupon.base, {"cart.py": defect.decode() + LEAVES}, "cart: start a helper")
    cand = git.commit_files(coupon.path, base, {"cart.py": fixed.decode() + FINDS}, "fix: coupon")
    r = verify(VerifyRequest(repo=coupon.path, base=base, candidate=cand, harness=COUPON / "harness",
                             expect=EXPECT, regression=list(NEIGHBOURS), timeout=60.0,
                             executions="shared"), settings)
    assert r.verdict == "VERIFIED", r.reasons
