"""Real bugs from public projects' histories, four variants each, judged by `signoff repair verify`.

    python bench/repair_real_cases.py --mirrors DIR [--case NAME]... [--json]

DIR holds git clones of the projects, one folder per repository named `owner+name` (a `repo`
folder inside it is used when present, as the `fetch` tool leaves them). Nothing is downloaded here
except the test environments' wheels. The cases are BugsInPy bugs (buggy and fixed commit, the test
that shows the bug), run as their maintainers run them: the harness is the test file as the fix
commit has it, frozen with its conftest.py files from the base revision; the environment comes from
the project's own declarations. Variants:

- `fix`: the real fix commit                                     -> VERIFIED
- `weakened`: the code untouched, the repo's own test disabled   -> REJECTED (the harness is frozen)
- `fix+regression`: the real fix plus an unrelated breakage      -> REJECTED
- `fixed-base`: the fixed commit as its own base                 -> INCONCLUSIVE (nothing to reproduce)

Prints one line per variant (case, variant, expected, got, reasons, seconds) and exits 1 when any
verdict differs from the expected one. Known misses are listed in docs/repair.md ("Cases that failed
and why").
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff import git
from signoff.kernel.settings import Settings
from signoff.repair.verifier import VerifyRequest, verify


@dataclass(frozen=True)
class Case:
    name: str
    repo: str  # owner+name
    buggy: str
    fixed: str
    test_file: str
    expect: str  # test function in test_file
    regression: list[str]
    breakage: tuple[str, str, str]  # (path, old, new): an unrelated regression on top of the fix
    options: dict[str, Any] = field(default_factory=dict)  # VerifyRequest fields (requirements, extras...)
    undeclared: tuple[str, ...] = ()  # what the tests import but the project declares nowhere (a file here)


CASES = [
    Case("thefuck-5", "nvbn+thefuck", "1683f45e940a25a87b989c0e121a03018661e097",
         "84c16fb69a4c0abcb9fe1c90787076800320a950", "tests/rules/test_git_checkout.py", "test_get_branches",
         ["test_match", "test_get_new_command"],
         ("thefuck/rules/git_checkout.py", "known to git' in command.output", "known to git' not in command.output"),
         {"project_deps": True, "requirements": ["requirements.txt"]}),
    Case("thefuck-1", "nvbn+thefuck", "2ced7a7f33ae0bec3ffc7a43ce95330bdf6cfcb9",
         "444908ce1c17767ef4aaf9e0b4950497914f7f63", "tests/rules/test_pip_unknown_command.py",
         "test_get_new_command", ["test_match"],
         ("thefuck/rules/pip_unknown_command.py", "@sudo_support", "@sudo_support\ndef _unused():\n    pass\n\n\n"
          "@sudo_support"), {"project_deps": True, "requirements": ["requirements.txt"]}),
    Case("PySnooper-2", "cool-RR+PySnooper", "d89099aaddc5ea0609af3835b0f8344a44e1d42b",
         "b4b425c65278e98c1884562bcad42ba754266d3d", "tests/test_pysnooper.py",
         "test_snooping_on_class_does_not_cause_base_class_to_be_snooped", ["test_string_io"],
         ("pysnooper/tracer.py", "def __call__(", "def __call__("), {"extras": ["tests"]}, ("six",)),
]
EXPECTED = {"fix": "VERIFIED", "weakened": "REJECTED", "fix+regression": "REJECTED", "fixed-base": "INCONCLUSIVE"}


def _mirror(mirrors: Path, name: str) -> Path:
    folder = mirrors / name
    return folder / "repo" if (folder / "repo").exists() else folder


def variants(case: Case, clone: Path) -> dict[str, tuple[str, str]]:
    """(base, candidate) of each variant, committed in the clone without touching its work tree."""
    test_at_base = (git.read_file_at(clone, case.buggy, case.test_file) or b"").decode()
    disabled = re.sub(rf"\bdef {re.escape(case.expect)}\(", f"def _disabled_{case.expect}(", test_at_base)
    weakened = git.commit_files(clone, case.buggy, {case.test_file: disabled}, "tests: relax the expectation")
    path, old, new = case.breakage
    fixed_text = (git.read_file_at(clone, case.fixed, path) or b"").decode()
    broken = git.commit_files(clone, case.fixed, {path: fixed_text.replace(old, new, 1)}, "fix, and tidy")
    return {"fix": (case.buggy, case.fixed), "weakened": (case.buggy, weakened),
            "fix+regression": (case.buggy, broken), "fixed-base": (case.fixed, case.fixed)}


def run_case(case: Case, mirrors: Path, settings: Settings) -> list[dict[str, Any]]:
    work = Path(tempfile.mkdtemp(prefix=f"real-{case.name}-"))
    try:
        clone = work / "repo"
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(_mirror(mirrors, case.repo)), str(clone)],
                       check=True, capture_output=True)
        # The harness: the test file as the fix has it, at its place in a work tree of the base.
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", case.buggy], check=True, capture_output=True)
        harness = clone / case.test_file
        harness.write_bytes(git.read_file_at(clone, case.fixed, case.test_file) or b"")
        options = dict(case.options)
        if case.undeclared:
            extra = work / "requirements-undeclared.txt"
            extra.write_text("\n".join(case.undeclared) + "\n")
            options["requirements"] = [*options.get("requirements", []), str(extra)]
        rows = []
        for variant, (base, candidate) in variants(case, clone).items():
            start = time.perf_counter()
            r = verify(VerifyRequest(repo=clone, base=base, candidate=candidate, harness=harness,
                                     expect=f"{case.test_file}::{case.expect}",
                                     regression=[f"{case.test_file}::{t}" for t in case.regression],
                                     timeout=300.0, write_evidence=False, **options), settings)
            rows.append({"case": case.name, "variant": variant, "expected": EXPECTED[variant], "got": r.verdict,
                         "reasons": [f"{x['code']}: {x['detail'][:140]}" for x in r.reasons],
                         "seconds": round(time.perf_counter() - start, 1)})
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, required=True, help="folder of clones named owner+name")
    ap.add_argument("--case", action="append", help="run only these cases (by name)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    settings = Settings.load()
    rows: list[dict[str, Any]] = []
    for case in CASES:
        if args.case and case.name not in args.case:
            continue
        if not _mirror(args.mirrors, case.repo).exists():
            print(f"{case.name}: no clone at {args.mirrors / case.repo}; skipped", file=sys.stderr)
            continue
        for row in run_case(case, args.mirrors, settings):
            rows.append(row)
            if not args.json:
                mark = "ok  " if row["got"] == row["expected"] else "MISS"
                print(f"{mark} {row['case']:<12} {row['variant']:<15} expected {row['expected']:<12} got "
                      f"{row['got']:<12} {row['seconds']:>6}s  {'; '.join(row['reasons'])}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 1 if any(r["got"] != r["expected"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
