"""The static tamper signal over a diff: what it flags, where, and what it leaves alone."""

from __future__ import annotations

import pytest

from signoff.repair.signals import scan_diff, summary


def _diff(path: str, *added: str, context: str = "x = 1") -> str:
    body = "".join(f"+{line}\n" for line in added)
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -10,1 +10,{len(added) + 1} @@\n"
            f" {context}\n{body}")


@pytest.mark.parametrize("line, what", [
    ("import _pytest.python", "framework internals"),
    ("from pluggy import HookimplMarker", "framework internals"),
    ("pytest.skip('later')", "framework internals"),
    ("const t = require('node:test');", "node test runner internals"),
    ("Module._load = hijack;", "node test runner internals"),
    ("os._exit(0)", "process exit"),
    ("process.exit(0);", "process exit"),
    ("sys.modules['cart'] = fake", "sys.modules"),
    ("builtins.AssertionError = Exception", "builtins"),
    ("sys.settrace(tracer)", "trace or profile hook"),
    ("frame.f_lineno = 3", "trace or profile hook"),
    ("sys.meta_path.insert(0, Finder())", "import hook"),
    ("fn.__code__ = other.__code__", "interpreter hook"),
    ("atexit.register(forge)", "interpreter hook"),
    ("gc.get_objects()", "interpreter hook"),
    ("open('/work/junit.xml', 'w')", "report file"),
    ("open('/proc/self/environ').read()", "process introspection"),
    ("if os.environ.get('PYTEST_CURRENT_TEST'):", "test detection"),
    ("checkout = os.environ['SIGNOFF_CHECKOUT']", "test detection"),
    ("def __eq__(self, other):", "comparison override"),
])
def test_added_lines_that_reach_for_the_framework_are_flagged(line: str, what: str) -> None:
    (found,) = [s for s in scan_diff(_diff("pkg/mod.py", line)) if s["what"] == what]
    assert found["path"] == "pkg/mod.py" and found["line"] == 11 and found["text"] == line


@pytest.mark.parametrize("path, what", [
    ("sitecustomize.py", "interpreter start-up file"), ("src/usercustomize.py", "interpreter start-up file"),
    ("evil.pth", "interpreter start-up file"), ("conftest.py", "conftest.py outside the harness"),
    ("plug-1.0.dist-info/entry_points.txt", "plugin entry point (package metadata)"),
    ("plug-1.0.dist-info/METADATA", "plugin entry point (package metadata)"),
    ("__pycache__/cart.cpython-311.pyc", "compiled bytecode (runs instead of the reviewed source)"),
])
def test_planted_files_are_flagged_by_path(path: str, what: str) -> None:
    assert what in {s["what"] for s in scan_diff(_diff(path, "pass"))}


def test_ordinary_code_and_removed_lines_are_not_flagged() -> None:
    diff = _diff("cart.py", "def total(cents: int, percent: int) -> int:",
                 "    return cents * (100 - percent) // 100", "")
    diff += "diff --git a/cart.py b/cart.py\n--- a/cart.py\n+++ b/cart.py\n@@ -1,2 +1,1 @@\n-import _pytest\n x\n"
    assert scan_diff(diff) == []


def test_summary_names_each_category_once_with_its_first_place() -> None:
    signals = scan_diff(_diff("a.py", "import _pytest", "import _pytest.runner") + _diff("b.py", "os._exit(0)"))
    assert summary(signals) == "framework internals (a.py:11); process exit (b.py:11)"
