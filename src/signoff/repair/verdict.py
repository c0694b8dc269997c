"""The verdict rules: pure functions from execution outcomes to VERIFIED / REJECTED / INCONCLUSIVE.

VERIFIED needs every execution complete, the expected test failing on base by an assertion, passing on
the candidate in every case, and every regression test passing. REJECTED needs positive proof against
the candidate: complete executions on a reproduced base showing it fail, or a policy violation
(ancestry, allowlist). Everything else is INCONCLUSIVE, always with a reason. Nothing that is missing,
skipped, errored, partial or disagreeing between repeats can become a pass.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from signoff.repair.junit import Case, observed_for, select

VERIFIED, REJECTED, INCONCLUSIVE = "VERIFIED", "REJECTED", "INCONCLUSIVE"
VERDICTS = (VERIFIED, REJECTED, INCONCLUSIVE)
EXIT_CODES = {VERIFIED: 0, REJECTED: 1, INCONCLUSIVE: 3}

# Why an execution did not complete -> the INCONCLUSIVE reason code it produces.
RUN_STATUSES = ("complete", "timeout", "resource_limit", "no_report", "bad_report", "inconsistent",
                "sandbox_unavailable", "harness_integrity", "collection_error", "import_shadowed")

REASONS = {
    # INCONCLUSIVE
    "harness_changed": "the harness digest changed since it was approved",
    "harness_integrity": "the run shows signs of tampering with the test framework or its report",
    "sandbox_unavailable": "the sandbox is unavailable",
    "environment_unprepared": "the test environment could not be prepared",
    "export_failed": "a revision could not be exported completely and safely",
    "collection_error": "a test file or its conftest could not be imported (pytest collected nothing from it)",
    "import_shadowed": "a plugin imported the environment's copy of the package under test before the checkout "
                       "could be: the tests would not run the candidate's code",
    "timeout": "an execution timed out",
    "resource_limit": "an execution hit a memory or process limit",
    "no_report": "an execution wrote no JUnit report",
    "bad_report": "an execution wrote a report that is not valid JUnit XML",
    "inconsistent": "the runner's exit status contradicts its report",
    "flaky": "repeated executions disagreed",
    "missing_test": "a test is missing from the report",
    "base_not_reproduced": "the expected test did not show the defect on the base revision (no assertion failed, "
                           "the code under test raised nothing, and it lacks nothing the test uses)",
    "test_error": "a test errored (setup, import or collection), which is not a pass",
    "test_skipped": "a test was skipped, which is not a pass",
    "regression_fails_on_base": "every regression test the candidate fails fails on the base revision too: the "
                                "failure is not the candidate's (often a dependency newer than the project)",
    "fails_alike": "the expected test and the regression tests raise the same error on both revisions: what the "
                   "run lacks (data built at install, a service), not the candidate, stops them",
    # REJECTED
    "not_descendant": "the candidate does not descend from the base revision",
    "path_not_allowed": "the candidate changes paths outside the allowlist",
    "candidate_failed": "the candidate fails the expected test",
    "regression_failed": "the candidate fails a regression test",
    "test_changed": "the candidate changes or removes a test the harness runs whose code lives in the project "
                    "(the approved harness inherits it as the base has it)",
}
# What a person can do about a reason, where that does not depend on the case: every INCONCLUSIVE
# reason has one, so the CLI always ends with an `error:` and a `fix:` (the full output is in the evidence).
FIXES = {
    "harness_changed": "read the harness as it is now and approve its digest (signoff repair freeze), or restore "
                       "the approved one",
    "harness_integrity": "a person must look: the evidence lists the guard's findings per run; code that installs "
                         "a tracer or patches pytest by design (a debugger, a coverage tool) needs a command-template "
                         "runner (--runner), which has no guard",
    "sandbox_unavailable": "run `signoff doctor` and follow what it says for the sandbox",
    "environment_unprepared": "see the environment's log in the evidence (environment.log)",
    "export_failed": "fetch the revisions' files completely (a partial clone), and keep symbolic links inside "
                     "the tree",
    "timeout": "raise --timeout, and check the test waits on no network (runs have none)",
    "resource_limit": "check what the test allocates or spawns; the sandbox's limits are in the evidence",
    "no_report": "the runner's output is in the evidence (stages.*.executions): fix what stopped it",
    "bad_report": "the runner's output is in the evidence (stages.*.executions); use --runner pytest or node",
    "inconsistent": "the runner's output is in the evidence (stages.*.executions); a plugin or conftest changed "
                    "the exit status",
    "flaky": "make the test deterministic (time, order, randomness), then verify again; --repeat N shows it",
    "missing_test": "check the test id against the harness (file.py::Class::test, relative to the harness)",
    "test_error": "see the stage's message: a setup or fixture error, never a pass; install what the fixture "
                  "needs, or fix the test",
    "test_skipped": "a skipped test is not a pass: install what its skip condition needs, or pick a test that runs",
    "regression_fails_on_base": "pin the test dependencies to versions of the project's time (--requirements FILE), "
                                "or drop these tests from --regression; the evidence holds both revisions' runs",
    "fails_alike": "read the error: it names what the run lacks, a step the project runs before its tests that "
                   "signoff does not run (babel's locale data is built from CLDR at install by `python setup.py "
                   "import_cldr`, and no checkout commits it; generated data; signoff builds nothing but the "
                   "extension modules setup.py declares, with --build-extensions), or a service the tests reach (a "
                   "database server: none is reachable from the sandbox; settings that choose another by a variable "
                   "take --env NAME=VALUE): provide it, or pick tests that do not need it; a person must look",
    "import_shadowed": "leave the distribution that provides it out of the test requirements (the project itself, "
                       "or a plugin or fork of it)",
    "test_changed": "the harness inherits that test from the base's code: to judge a changed test, define it in "
                    "the harness itself (in its test class) and have that harness approved",
    "collection_error": "make what the tests import installable: --requirements FILE, --extras test or "
                        "--project-deps (the environment holds only pytest and what you name); for a module newer "
                        "Pythons or pytests removed, pick the ones the project supports with --python or --pytest",
}
REJECTING = ("not_descendant", "path_not_allowed", "candidate_failed", "regression_failed", "test_changed")
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
# A missing module the project's own group or extra declares (testenv.declared_in_group).
_DECLARED_IN_GROUP = re.compile(r"the project declares ([\w.-]+) in its `([^`]+)` group or extra")
# A warning the project's filters made an error (testenv.warning_made_error), with the distribution it is about.
_WARNING_MADE_ERROR = re.compile(r"a warning the project's warning filters make an error: (\w+)(?: of (\S+) (\S+), "
                                 r"installed here)?")
# What a pytest too new for the tests says (removed APIs, stricter fixtures, TestCase collection).
# ("fixture" as a word: a test folder named `fixtures` in an import error says nothing about pytest.)
_PYTEST_TOO_NEW = re.compile(r"pytest|\bfixture\b|runTest|funcargs|yield_fixture|PytestRemovedIn|hookimpl|_pytest")
# What a Python too new (or too old) for the code says.
_PYTHON_MISMATCH = re.compile(r"has no attribute '(Callable|Mapping|MutableMapping|Iterable|Sequence|getargspec|"
                              r"encodestring|decodestring)'|SyntaxError|invalid syntax")
_REMOVED_STDLIB = {"imp", "distutils", "asynchat", "asyncore", "smtpd", "cgi", "cgitb", "crypt", "nntplib",
                   "pipes", "telnetlib", "uu", "xdrlib", "audioop", "chunk", "imghdr", "mailcap", "msilib",
                   "nis", "ossaudiodev", "sndhdr", "spwd", "sunau", "lib2to3"}


UNBUILT_FIX = ("signoff runs the committed source as it is and builds nothing but the extension modules setup.py "
               "declares (--build-extensions): a project whose generated modules, or extensions built another way, "
               "must exist first cannot be verified this way (a person must build and test it)")
# The project's own words for a build step its checkout lacks (hydra: "Error importing generated parsers, run
# `python setup.py antlr` to regenerate.", printed before `sys.exit(1)`, so no exception names the module).
_BUILD_STEP = re.compile(r"\b(?:python\d?(?:\.\d+)? )?setup\.py (?!test\b|install\b|develop\b)\w+|\bregenerate\b|"
                         r"\bgenerated (?:parsers?|code|files?|modules?)\b.*\b(?:missing|not found|error|run)\b|"
                         r"\b(?:error importing|could not import|cannot import) generated\b", re.I)


def collection_fix(detail: str) -> str:
    """What to do about a collection error, from what it says: a module to install, a pytest or a
    Python the tests were not written for, the project's root as the working folder (scrapy's conftest
    reads `tests/py3-ignores.txt`); the general advice otherwise."""
    if _PROJECT_FILES.search(detail):
        return WORKDIR_FIX
    if "is the checkout's own compiled extension" in detail or "is the checkout's own module and is not" in detail:
        return UNBUILT_FIX
    if "is in the checkout but not in the harness" in detail:
        return ("freeze the helper with the test: a harness folder keeps every file in it (--harness tests), or "
                "copy the helper into the harness before freezing it")
    grouped = _DECLARED_IN_GROUP.search(detail)
    if grouped:
        return (f"install the project's `{grouped.group(2)}` group or extra, which declares {grouped.group(1)}: "
                f"pass --project-deps --extras {grouped.group(2)}")
    warned = _WARNING_MADE_ERROR.search(detail)
    filters = "the project's warning filters (`filterwarnings = error` or `-W error`) make that"
    if warned and warned.group(2):
        name, version = warned.group(2), warned.group(3)
        return (f"{filters} {warned.group(1)} of {name} an error: {name} {version}, installed here, is newer than the "
                f"code knows; pin the release of the revision's time in a file passed with --requirements (e.g. "
                f"`{name}<{version}`), or pass the project's lock with --lock")
    if warned:
        return (f"{filters} {warned.group(1)} an error: a Python or a dependency newer than the code raises it; pick "
                "the project's Python with --python, or pin the releases of the revision's time with --requirements "
                "FILE or --lock")
    missing = _MISSING_MODULE.search(detail)
    if missing:
        top = missing.group(1).split(".", 1)[0]
        if top in _REMOVED_STDLIB:
            return (f"`{top}` was removed from newer Pythons' standard library: pick one the project supports "
                    "with --python (e.g. --python 3.11), or install a backport")
        return (f"`{top}` is not in the test environment: add its distribution with --requirements FILE "
                "(a file naming it), or install the project's declarations with --project-deps / --extras test")
    if _PYTHON_MISMATCH.search(detail):
        return "the code or its dependencies were written for another Python: pick one with --python X.Y"
    if _PYTEST_TOO_NEW.search(detail):
        return ("the tests were written for an older pytest: pin the one the project used, e.g. "
                "--pytest 'pytest<8' (the evidence records which was installed); the guard runs under pytest 4.6 "
                "or newer, so tests that need an older one (httpie's of 2019: pytest 3) can run only under a "
                "command-template runner (--runner), which has no guard")
    return FIXES["collection_error"]


# A test that opens or writes files relative to the project's root (run from /work, or writing into
# the read-only checkout or harness), or reads its configuration from there: configparser skips a file
# it cannot find, so a section missing is all that shows (SQLAlchemy's test plugin reads `[db]` from
# `setup.cfg` in the working directory: alembic's tests).
_PROJECT_FILES = re.compile(r"No such file or directory: '(/work/|[^/'])|"
                            r"Read-only file system: '(/src/|/harness/|[^/'])|"
                            r"NoSectionError: No section: '")
def project_files_line(run: Run) -> str:
    """The first line of a run (why it stopped, or a test's failure) saying that a test read or wrote
    a file relative to the project's root, "" when none does."""
    for text in (run.detail, *(c.message for c in run.cases if c.outcome in ("failed", "error"))):
        found = _PROJECT_FILES.search(text or "")
        if found:
            start = (text or "").rfind("\n", 0, found.start()) + 1
            end = (text or "").find("\n", found.end())
            return (text or "")[start:end if end >= 0 else None].strip()
    return ""


WORKDIR_FIX = ("the test opens or writes files relative to the project's root, as its maintainers run it: pass "
               "--workdir project (each run starts in a writable copy of the checkout with the harness over it)")


# An installed package lacking a name another installed one imports: releases of different times.
_INCOMPATIBLE = re.compile(r"cannot import name '(\w+)' from '([\w.]+)' \((?!/src/|/harness/)")


# A deprecation of a newer pytest, raised as an error by the project's `filterwarnings = error` (anyio's plugin
# imports `_pytest.python.CallSpec2`, renamed in pytest 9.2).
_PYTEST_DEPRECATION = re.compile(r"\b(pytest\.PytestRemovedIn\d+Warning|pytest\.PytestDeprecationWarning)\b")


# pytest's `-p NAME` that could not be imported (anyio's addopts load its own plugin by its entry point's name).
_OWN_PLUGIN = re.compile(r"Error importing plugin \"([\w.]+)\": No module named '([\w.]+)'")


# pytest refused a plugin whose hooks take arguments it no longer has (a plugin loaded by `-p` or a conftest's
# `pytest_plugins`; one loaded by its entry point is left out by the guard).
_REFUSED_PLUGIN = re.compile(r"PluginValidationError: Plugin '([^']+)' for hook '(\w+)'")


def no_report_fix(detail: str) -> str:
    """What to do when pytest stopped before writing a report, from the exception it stopped on."""
    if _BUILD_STEP.search(detail):
        return UNBUILT_FIX
    refused = _REFUSED_PLUGIN.search(detail)
    if refused:
        return (f"this pytest refuses the plugin `{refused.group(1)}`: its `{refused.group(2)}` takes arguments this "
                "pytest no longer passes (the plugin is older than it); pin the pytest of the project's time with "
                "--pytest 'pytest<X' (X the release named in the evidence's installed list), or leave the plugin "
                "out of what loads it")
    stale = _INCOMPATIBLE.search(detail)
    if stale:
        top = stale.group(2).split(".", 1)[0]
        return (f"the environment mixes releases of different times: the installed `{top}` no longer has "
                f"`{stale.group(1)}`, which another installed package (often a pytest plugin) imports; pin the "
                f"`{top}` of the project's time with --requirements FILE (`{top}<N`), or pass its lock "
                "(--lock) or a pip freeze of the time")
    removed = _PYTEST_DEPRECATION.search(detail)
    if removed:
        return (f"pytest warned at start-up ({removed.group(1)}: a name the project's code or a plugin uses was "
                "renamed or is going away) and the project's `filterwarnings = error` made that an error: this "
                "pytest is newer than the project's; pin the pytest of its time with --pytest 'pytest<X.Y' (X.Y the "
                "release named in the evidence's installed list)")
    own = _OWN_PLUGIN.search(detail)
    if own and own.group(1).split(".", 1)[0] == own.group(2).split(".", 1)[0]:
        return (f"`-p {own.group(1)}` in the project's addopts loads its own pytest plugin (a pytest11 entry point "
                "that installing the project registers) at start-up, before the checkout joins the path: signoff "
                "never runs the checkout's code before its guard, and the candidate's own plugin would run its "
                "tests. Use a harness with a pytest.ini of its own whose tests do not need the plugin, or a "
                "command-template runner (--runner, no guard)")
    missing = _MISSING_MODULE.search(detail)
    if missing:
        top = missing.group(1).split(".", 1)[0]
        return (f"pytest stopped at start-up on `{top}`: if a pytest plugin of the environment imports it and "
                f"`{top}` is the project under test (pytest-sanic imports sanic), leave that plugin out of the test "
                "requirements (plugins load before the checkout joins the path, so that a candidate cannot ship "
                f"one); otherwise install `{top}` with --requirements FILE")
    return FIXES["no_report"]


# pytest's own modules among those the environment's copy shadowed: the project under test is the test runner.
_RUNNER_ITSELF = re.compile(r"(^|, |: )(_pytest|pytest) \(")
RUNNER_ITSELF = "the project under test is pytest itself, the runner of its tests and of the guard: "


def shadowed_fix(detail: str) -> str:
    """What to do when the environment's copy of the package under test was imported first; for pytest itself
    (pytest-dev/pytest, blind15b) no guarded run can import the candidate's, since the guard runs in pytest."""
    if _RUNNER_ITSELF.search(detail):
        return ("a guarded run loads the environment's pytest before the checkout joins the path, and must: the "
                "candidate's pytest would run the guard. Run these tests under a command-template runner, which "
                "puts the checkout first on the path and has no guard (a person reviews the diff): --runner "
                "'{python} -m pytest -p no:cacheprovider --rootdir={harness} {tests} --junitxml={junit}'")
    return FIXES["import_shadowed"]


def integrity_fix(detail: str) -> str:
    """A person must look at signs of tampering; an internal error of pytest says where it came from."""
    plugin = re.search(r"\(by ([\w.-]+)/[^,]*, installed in the test environment", detail)
    if plugin:
        return (f"`{plugin.group(1)}`, a package the test requirements install (or one they depend on: "
                "blockbuster's forbiddenfruit), patches pytest or the interpreter while tests run in a way the "
                "guard cannot tell from tampering (it accepts only a rerun plugin's own method put in pytest's "
                "place while that plugin runs the test itself, as flaky does): leave it, and what requires it, out "
                "of the test requirements (and its options out of the harness's own pytest.ini), or use a "
                "command-template runner (--runner), which has no guard")
    if "by the project's own pytest plugin" in detail:
        return ("the project's own pytest plugin (its pytest11 entry point, loaded from the checkout) implements a "
                "hook that runs, judges or reports a test's outcome, which the candidate's code may not do under "
                "the guard: a person must look at that hook in the candidate; tests that need it can run only under "
                "a command-template runner (--runner), which has no guard")
    if "did not (error" in detail:
        return ("the canaries (plain test functions signoff adds beside the first test) errored before they ran: "
                "a plugin or conftest of the run runs only tests of its own kind (SQLAlchemy's testing plugin, which "
                "a conftest can start, sets up every test from its class); such tests can run only under a "
                "command-template runner (--runner), which has no guard")
    if "pytest stopped with an internal error" in detail:
        return ("the line names the plugin (or pytest) that failed: install the version the project used "
                "(--pytest, --requirements); if it names the code under test, a person must look")
    return FIXES["harness_integrity"]


HANG_FIX = ("the base's code may hang on the defect (a wait the fix ends), which no assertion shows: give the "
            "expected test a time limit of its own in the harness that fails it when it hangs (pytest-timeout's "
            "@pytest.mark.timeout(5), with pytest-timeout in the requirements), or raise --timeout if the base is "
            "only slow")


def base_fix(detail: str) -> str:
    """What to do when the base did not show the defect, from how the test ended there."""
    if _PROJECT_FILES.search(detail):
        return WORKDIR_FIX
    fixture = re.search(r"fixture '([\w.]+)' not found", detail)
    if fixture:
        return (f"install the pytest plugin that provides `{fixture.group(1)}` with --requirements FILE (or --extras), "
                "or give the harness a conftest.py that defines it; the project's own plugins (pytest11 entry "
                "points its base declares) are loaded by signoff")
    if "it passed in every case that ran" in detail:
        return ("the base revision does not show the defect in the cases that ran: check --base and that the test "
                "exercises the defect; if the defect is in what the skipped cases test, make them run (their skip "
                "reason says what they need: an optional dependency, or a compiled extension signoff does not build)")
    if "it passed" in detail:
        return ("the base revision does not show the defect with this test: check --base (the revision "
                "before the fix), that the test exercises the defect, and whether the defect needs another Python "
                "than this run's (--python; coverage.py #2083 shows only under 3.14)")
    if "errored" in detail or "without an assertion" in detail:
        return ("the test broke on base instead of showing the defect (a failed assertion, an exception the "
                "code under test raised, or a name or keyword the base's code lacks counts): write it so the "
                "defect fails an assert, e.g. with pytest.raises(...) for "
                "an exception the defect raises")
    return "run the expected test on the base revision and check it fails by an assertion"


@dataclass
class Run:
    """One execution of one stage, reduced to what the verdict needs."""

    status: str  # one of RUN_STATUSES
    detail: str = ""
    cases: list[Case] = field(default_factory=list)
    exit_code: int | None = None
    record: dict[str, Any] | None = None  # the sandbox's execution record
    record_digest: str | None = None
    guard: dict[str, Any] | None = None  # canaries, integrity findings and what the guard observed

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "detail": self.detail, "exit_code": self.exit_code,
                "cases": [c.as_json() for c in self.cases], "record": self.record,
                "record_digest": self.record_digest, "guard": self.guard}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Run:
        return cls(str(d["status"]), str(d.get("detail", "")), [Case.from_json(c) for c in d.get("cases", [])],
                   d.get("exit_code"), d.get("record"), d.get("record_digest"), d.get("guard"))


@dataclass
class Summary:
    """What a stage showed for its test ids, across its repeats."""

    outcome: str  # passed | failed | error | skipped | missing | flaky | incomplete | not_run | none
    assertion: bool = False  # some selected case failed by an assertion
    message: str = ""  # the (first) failing assertion's message, or the failure/incompletion detail
    status: str = "complete"  # the first incomplete run's status, else "complete"
    per_test: dict[str, str] = field(default_factory=dict)
    raised: bool = False  # some selected case failed by an exception the code under test raised (guard's record)
    partly_skipped: bool = False  # a regression id passed in some cases and was skipped by the harness in the rest
    skipped_as_on_base: bool = False  # the expected test passed where it ran and skipped only what base skipped
    cases: dict[str, str] = field(default_factory=dict, compare=False)  # first run's selected cases: outcome

    def as_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "assertion": self.assertion, "message": self.message,
                "status": self.status, "per_test": self.per_test, "raised": self.raised,
                "partly_skipped": self.partly_skipped, "skipped_as_on_base": self.skipped_as_on_base}

    @property
    def defect_shown(self) -> bool:
        """The expected test failed by an assertion, or by an exception raised in the code under test."""
        return self.assertion or self.raised


_PRECEDENCE = ("failed", "error", "skipped", "missing", "passed")


def _aggregate(outcomes: list[str]) -> str:
    for o in _PRECEDENCE:
        if o in outcomes:
            return o
    return "passed"


def outcome_of(cases: list[Case], skips_pass: bool = False) -> tuple[str, bool, str]:
    """(outcome, failed-by-assertion, message) of the cases one test id selected. With `skips_pass` (a
    regression id), cases that passed and others skipped count as passed, as pytest counts them: anyio's
    `test_send_eof` runs once per event loop, and its conftest skips a loop that is not installed. (A skip the
    code under test raises is a guard finding, never a pass; the expected test passes only if every case does.)"""
    if not cases:
        return "missing", False, ""
    outcomes = [c.outcome for c in cases]
    if skips_pass and "passed" in outcomes and set(outcomes) == {"passed", "skipped"}:
        return "passed", False, ""
    outcome = _aggregate(outcomes)
    # An assertion counts only where the case failed: an xfailed case's is the harness's expectation.
    asserted = [c for c in cases if c.assertion and c.outcome == "failed"]
    failing = asserted or [c for c in cases if c.outcome in ("failed", "error")]
    if not failing and outcome == "skipped":
        return outcome, False, _skipped_message(cases)
    return outcome, bool(asserted), (failing[0].message if failing else "")


def _skipped_message(cases: list[Case]) -> str:
    """Which cases were skipped and why, in one line (gunicorn's corpus test: the cases of its optional C
    parser skip when gunicorn_h1c is not installed): what a person needs to make them run."""
    skipped = [c for c in cases if c.outcome == "skipped"]
    first = skipped[0]
    why = f": {first.message}" if first.message else ""
    share = f"{len(skipped)} of {len(cases)} cases skipped, e.g. " if len(cases) > 1 else ""
    return f"{share}{first.id.rsplit('::', 1)[-1]}{why}"


# Exceptions that say the environment is wrong, not that the code misbehaves: never a defect shown.
_ENVIRONMENT_EXCEPTIONS = ("ImportError", "ModuleNotFoundError", "SyntaxError", "IndentationError")
# Except code the code under test wrote and compiled itself (attrs' generated `__init__`: "invalid syntax
# (<attrs generated init C>, line 2)"): a syntax error there is the checkout's own crash.
_GENERATED_CODE = re.compile(r"\(<(?!frozen ).*>, line \d+\)$")


def raised_in_checkout(run: Run, cases: list[Case]) -> bool:
    """Whether a selected case failed (in its call, not its setup) by an exception the code under
    test raised, as the guard's authenticated record of the run says (`origin` is where the deepest
    frame outside pytest and the standard library was). IndexError in thefuck's rule, TypeError in
    luigi's parameter parsing: the defect, shown as a crash instead of a wrong value. So is a test
    that ran into what the revision's code lacks (`lacks`: a name its module or class does not have,
    a keyword its function does not take, as the fix adds them: cookiecutter's
    `exceptions.FailedHookException`), which plain pytest counts as a failure too, and a test that
    failed by the harness's own kind of check (an exception class the harness defines, raised from
    its code: PySnooper's `OutputFailure`), or an exception of a harness callback the code under test called and let
    through (`let_through`: sentry-python's `before_breadcrumb` raising, which the fix contains), or one the harness
    raised that left its own `with pytest.raises(X)` block, not an X (`escaped_raises`: exceptiongroup's KeyError,
    which the fixed catch() groups). Runs without a
    guard (node, command templates) never say so."""
    observed = (run.guard or {}).get("observed") or {}
    for c in cases:
        seen = observed_for(observed, c.id)
        if c.outcome == "failed" and isinstance(seen, dict) and seen.get("outcome") == "failed" and (
                (seen.get("origin") == "checkout" and (seen.get("exception") not in _ENVIRONMENT_EXCEPTIONS or (
                    seen.get("exception") in ("SyntaxError", "IndentationError")
                    and _GENERATED_CODE.search(str(seen.get("message") or "")))))
                or (seen.get("origin") == "harness" and isinstance(seen.get("lacks"), str) and seen["lacks"])
                or (seen.get("origin") == "harness" and seen.get("harness_check") is True)
                or (seen.get("origin") == "harness" and (seen.get("let_through") is True
                                                        or seen.get("escaped_raises") is True)
                    and seen.get("exception") not in _ENVIRONMENT_EXCEPTIONS)):
            return True
    return False


def summarize(tests: list[str], runs: list[Run], skips_pass: bool = False) -> Summary:
    if not tests:
        return Summary("none")
    if not runs:
        return Summary("not_run")
    for run in runs:
        if run.status != "complete":
            return Summary("incomplete", message=run.detail, status=run.status)
    signatures = []
    results = []
    for run in runs:
        per = {t: outcome_of(select(run.cases, t), skips_pass) for t in tests}
        signatures.append(tuple((t, o, a) for t, (o, a, _m) in sorted(per.items())))
        results.append(per)
    if len(set(signatures)) > 1:
        seen = ", ".join(sorted({f"{t}={o}" for sig in signatures for (t, o, _a) in sig}))
        return Summary("flaky", message=f"repeats disagree: {seen}", status="complete")
    per = results[0]
    outcome = _aggregate([o for (o, _a, _m) in per.values()])
    assertion = any(a for (_o, a, _m) in per.values())
    message = next((m for (_o, a, m) in per.values() if a), "") or next(
        (m for (o, _a, m) in per.values() if o != "passed" and m), "")
    raised = all(any(raised_in_checkout(run, select(run.cases, t)) for t in tests) for run in runs)
    partly = skips_pass and any(o == "passed" and "skipped" in {c.outcome for c in select(runs[0].cases, t)}
                                for t, (o, _a, _m) in per.items())
    cases = {c.id: c.outcome for t in tests for c in select(runs[0].cases, t)}
    return Summary(outcome, assertion, message, "complete", {t: o for t, (o, _a, _m) in per.items()}, raised,
                   partly, cases=cases)


def _skipped_on_base(base: Summary) -> str:
    """How a base whose expected test skipped showed no defect, in words a person acts on: every case
    skipped, or some passed beside those skipped (markupsafe's escape tests run once with the pure module
    and skip the unbuilt speedups): then the base passed where it ran, and that is the cause."""
    why = f" ({base.message})" if base.message else ""
    if "passed" in base.cases.values() and not {"failed", "error"} & set(base.cases.values()):
        return f"it passed in every case that ran{why}"
    return f"it was skipped{why}"


def skipped_as_on_base(base: Summary, candidate: Summary) -> Summary:
    """The candidate's expected test as passed when it passed every case that ran, passed every case that
    failed or errored on base, and skipped only cases base skipped too (gunicorn's corpus test runs each
    request with two parsers; the cases of its optional C parser skip on both sides when it is not
    installed). A skip the candidate brings, or a defect-showing case it skips, stays a skip: never a pass."""
    if candidate.outcome != "skipped" or base.outcome != "failed" or not candidate.cases:
        return candidate
    skipped = {i for i, o in candidate.cases.items() if o == "skipped"}
    shown = {i for i, o in base.cases.items() if o in ("failed", "error")}
    if (set(candidate.cases.values()) != {"passed", "skipped"} or not shown
            or not skipped <= {i for i, o in base.cases.items() if o == "skipped"}
            or any(candidate.cases.get(i) != "passed" for i in shown)):
        return candidate
    return dataclasses.replace(candidate, outcome="passed", message="", skipped_as_on_base=True,
                               per_test={t: "passed" if o == "skipped" else o for t, o in candidate.per_test.items()})


def reason(code: str, detail: str = "", fix: str = "") -> dict[str, str]:
    """A reason with its detail in one line (the full output stays in the evidence) and, where a
    person can act on it, what to do."""
    first = detail.strip().splitlines()[0] if detail.strip() else ""
    out = {"code": code, "text": REASONS[code], "detail": first[:500]}
    if not fix and code in ("test_error", "missing_test") and _PROJECT_FILES.search(first):
        fix = WORKDIR_FIX
    if not fix:
        fix = {"collection_error": collection_fix, "base_not_reproduced": base_fix, "no_report": no_report_fix,
               "harness_integrity": integrity_fix, "import_shadowed": shadowed_fix, "timeout": timeout_fix}.get(
            code, lambda _d: FIXES.get(code, ""))(first)
    if fix:
        out["fix"] = fix
    return out


def classify(base: Summary, candidate: Summary, regression: Summary,
             violations: list[dict[str, str]] | None = None,
             preflight: list[dict[str, str]] | None = None,
             regression_on_base: Summary | None = None) -> tuple[str, list[dict[str, str]]]:
    """The verdict and its reasons.

    `violations` are policy reasons found before anything ran (ancestry, allowlist): they reject.
    `preflight` are reasons nothing could run (harness changed, sandbox or environment missing).
    `regression_on_base` is the base revision's run of the regression ids the candidate failed (run only
    then; None in evidence written before it existed).
    """
    if preflight:
        return INCONCLUSIVE, list(preflight)
    if violations:
        return REJECTED, list(violations)
    verdict, reasons = _classify_runs(base, candidate, regression, regression_on_base)
    # Tampering outranks every other finding: a run that shows it proves nothing either way.
    tampered = [r for r in reasons if r["code"] == "harness_integrity"]
    if tampered:
        return INCONCLUSIVE, tampered + [r for r in reasons if r["code"] != "harness_integrity"]
    return verdict, reasons


def _fails_on_base(failing: list[str], on_base: Summary | None) -> bool:
    """Each of the candidate's failing regression ids failed (or errored) on base too, in a complete,
    consistent run (Sphinx #13195: Pygments 2.19 changed the HTML its tests compare, on both sides)."""
    return (on_base is not None and on_base.outcome not in ("incomplete", "flaky", "not_run", "none")
            and bool(failing) and all(on_base.per_test.get(t) in ("failed", "error") for t in failing))


# The harness's test file could not be imported on a revision: the name the fix adds is missing there (what
# is missing, without the path it was looked for in: the base's own run and the extra one mount it apart).
_UNIMPORTABLE = re.compile(r"could not be imported: the revision lacks (\S+)|^ImportError: cannot import name "
                           r"('[^']+' from '[^']+')|^ModuleNotFoundError: No module named ('[^']+')")


def _missing_name(message: str) -> str:
    found = _UNIMPORTABLE.search(message.strip())
    return next((g for g in found.groups() if g), "") if found else ""


def _base_ran_none_of_them(base: Summary, regression: Summary, on_base: Summary | None) -> bool:
    """On base the regression tests failed only as the expected test did there: their file could not be
    imported, the base lacking what the fixed test file imports (parsimonious #211: `LeftRecursionError`), so
    no test of that file ran on base at all, while the candidate fails them otherwise. The base says nothing
    about them; the candidate's failure is its own."""
    missing = _missing_name(base.message)
    return (bool(missing) and on_base is not None and _missing_name(on_base.message) == missing
            and _missing_name(regression.message) != missing)


def _fails_alike(base: Summary, candidate: Summary, regression: Summary, on_base: Summary | None) -> bool:
    """The expected test raised the same error (no assertion) on base and candidate, and every regression test
    the candidate fails raises it too, on both revisions: nothing the candidate changed is what stops them
    (babel's tests without the locale data built at install). A candidate whose code still has the defect
    fails its expected test alike, but its regression tests pass: that stays REJECTED."""
    failing = [t for t, o in regression.per_test.items() if o in ("failed", "error")]
    same = base.message.strip()
    return (bool(same) and not base.assertion and base.raised and not candidate.assertion
            and candidate.message.strip() == same and regression.outcome == "failed"
            and regression.message.strip() == same and _fails_on_base(failing, on_base)
            and on_base is not None and on_base.message.strip() == same)


# What a test's setup says when it reached for the network, which runs never have (pip-tools' `pip_conf`
# fixture runs `pip download setuptools`).
_NETWORK = re.compile(r"'pip', '(download|install|wheel)'|\bpip (download|install|wheel)\b|URLError|ConnectionError|"
                      r"NewConnectionError|gaierror|Name or service not known|Temporary failure in name resolution|"
                      r"Network is unreachable|Max retries exceeded|getaddrinfo failed")
NETWORK_FIX = ("the tests' setup reaches for the network (a `pip download`, a URL), and runs have none: pick tests "
               "whose fixtures work offline, or have a person run these where the network is; the run's output is "
               "in the evidence")


# What the run guard says on a run's stderr when a test reached for a host (runner_files/signoff_guard.py).
_GUARD_NETWORK = re.compile(r"^signoff-guard: the tests reached for the network: (\S+)$", re.M)
NETWORK_WAIT_FIX = ("the tests wait on a host they cannot reach (runs have no network; a download retried with pauses "
                    "outlasts the run): give them what they download beforehand, pick tests that work offline, or "
                    "have a person run these where the network is")


def network_reached(stderr: str) -> str:
    """`; the tests reached for the network (HOST:PORT), which runs never have` when the run guard said so on the
    run's stderr (pydicom's tests download their data files at import, retrying with pauses, blind17); "" when
    it did not. A message only: it judges nothing."""
    m = _GUARD_NETWORK.search(stderr)
    return f"; the tests reached for the network ({m.group(1)}), which runs never have" if m else ""


def timeout_fix(detail: str) -> str:
    """What to do about a run that timed out: about the network when the run reached for it."""
    return NETWORK_WAIT_FIX if "reached for the network" in detail else FIXES["timeout"]


def _errors_alike(base: Summary, candidate: Summary, regression: Summary) -> dict[str, str] | None:
    """The expected test errored (its setup, a fixture) on base and on the candidate with the very same error:
    what stops it is the run's, not either revision's code (pip-tools' fixtures download setuptools with pip;
    runs have no network). One reason naming the error, first, in place of `base_not_reproduced` and the
    `test_error`s repeating it; a person can act on that line. Regression tests that fail otherwise keep
    their own reasons after it (nothing is judged on a base that showed nothing)."""
    same = base.message.strip()
    if not (same and base.outcome == "error" and not base.defect_shown and candidate.outcome == "error"
            and candidate.message.strip() == same):
        return None
    also = " and the regression tests" if regression.outcome == "error" and regression.message.strip() == same else ""
    # (a fixture opening the project's files from its root, as scrapy's conftest does: `--workdir project`)
    fix = WORKDIR_FIX if _PROJECT_FILES.search(same) else NETWORK_FIX if _NETWORK.search(same) else ""
    return reason("fails_alike", f"the expected test{also} errored alike on both revisions: {same}", fix)


def _classify_runs(base: Summary, candidate: Summary, regression: Summary,
                   regression_on_base: Summary | None = None) -> tuple[str, list[dict[str, str]]]:
    inconclusive: list[dict[str, str]] = []
    rejecting: list[dict[str, str]] = []
    stages = {"base": base, "candidate": candidate, "regression": regression}
    if regression_on_base is not None and regression_on_base.status == "harness_integrity":
        # Tampering in the extra run proves nothing either way, as in any other.
        stages["regression on base"] = regression_on_base
    for name, s in stages.items():
        if s.outcome == "incomplete" and name == "base" and s.status == "timeout" and candidate.outcome == "passed":
            # uvicorn #2408: on base the app waits for a body h11 never delivers, so the test never returns.
            inconclusive.append(reason("timeout", f"base: {s.message}, while the candidate's run of the same test "
                                       "passed", HANG_FIX))
        elif s.outcome == "incomplete":
            inconclusive.append(reason(s.status if s.status in REASONS else "no_report", f"{name}: {s.message}"))
        elif s.outcome == "flaky":
            inconclusive.append(reason("flaky", f"{name}: {s.message}"))
        elif s.outcome == "not_run":
            inconclusive.append(reason("no_report", f"{name}: not executed"))
    base_ok = base.outcome not in ("incomplete", "flaky", "not_run") and base.defect_shown
    if base.outcome not in ("incomplete", "flaky", "not_run") and not base.defect_shown:
        if base.outcome == "missing":
            inconclusive.append(reason("missing_test", "base: the expected test is not in the report"))
        shown = {"passed": "it passed", "missing": "it did not run",
                 "skipped": _skipped_on_base(base),
                 "error": f"it errored ({base.message})" if base.message else "it errored",
                 "failed": f"it failed without an assertion ({base.message})"}.get(base.outcome, base.outcome)
        inconclusive.append(reason("base_not_reproduced", f"base: {shown}"))
    if base_ok:
        if candidate.outcome == "failed" and _fails_alike(base, candidate, regression, regression_on_base):
            inconclusive.append(reason("fails_alike", f"candidate: {candidate.message}, as on the base revision, and "
                                       "the regression tests on both"))
        elif candidate.outcome == "failed":
            rejecting.append(reason("candidate_failed", f"candidate: {candidate.message}"))
        if regression.outcome == "failed":
            failing = [t for t, o in regression.per_test.items() if o == "failed"]
            if _fails_on_base(failing, regression_on_base) and \
                    not _base_ran_none_of_them(base, regression, regression_on_base):
                inconclusive.append(reason("regression_fails_on_base", f"regression: {', '.join(failing)} fail on "
                                           f"the base revision too: {regression.message}"))
            else:
                rejecting.append(reason("regression_failed",
                                        f"regression: {', '.join(failing)}: {regression.message}"))
    if rejecting:
        return REJECTED, rejecting + inconclusive
    for name, s in (("candidate", candidate), ("regression", regression)):
        if s.outcome == "missing":
            missing = [t for t, o in s.per_test.items() if o == "missing"]
            inconclusive.append(reason("missing_test", f"{name}: {', '.join(missing)}"))
        elif s.outcome == "error":
            inconclusive.append(reason("test_error", f"{name}: {s.message}"))
        elif s.outcome == "skipped":
            inconclusive.append(reason("test_skipped", f"{name}: {s.message}"))
    alike = None if rejecting or any(r["code"] != "base_not_reproduced" and not r["code"].startswith("test_")
                                     for r in inconclusive) else _errors_alike(base, candidate, regression)
    if alike:
        same = base.message.strip()
        return INCONCLUSIVE, [alike, *(r for r in inconclusive if r["code"] != "base_not_reproduced"
                                        and not (r["code"] == "test_error" and same[:400] in r["detail"]))]
    if inconclusive:
        return INCONCLUSIVE, inconclusive
    if candidate.outcome != "passed" or regression.outcome not in ("passed", "none"):
        # Unreachable by construction; kept so that any unforeseen outcome fails closed.
        return INCONCLUSIVE, [reason("no_report", f"unexpected outcomes {candidate.outcome}/{regression.outcome}")]
    return VERIFIED, []
