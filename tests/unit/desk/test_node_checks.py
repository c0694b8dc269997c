"""Which call of Prettier, ESLint and tsc the desk runs on a Node project: the project's own plain
call in its scripts, made read-only; shell syntax in a script is never taken."""

from __future__ import annotations

import pytest

from signoff.desk.config import DeskConfig
from signoff.desk.measure import read_only_call, script_call
from signoff.kernel.errors import UsageError

SCRIPTS = {"format": "prettier --write src", "lint": "npx eslint src --fix && tsc -p tsconfig.app.json",
           "sneaky": "echo $HOME | prettier --check ."}


@pytest.mark.parametrize(("tool", "want"), [
    ("prettier", ["prettier", "--check", "src"]),
    ("eslint", ["eslint", "src"]),
    ("tsc", ["tsc", "-p", "tsconfig.app.json", "--noEmit"]),
])
def test_the_projects_own_call_is_run_read_only(tool: str, want: list[str]) -> None:
    assert read_only_call(tool, script_call(SCRIPTS, tool)) == want


@pytest.mark.parametrize("scripts", [
    {"x": "echo $HOME | prettier --check ."},  # a pipe: not a plain call
    {"x": "prettier --check 'src/**'"},  # quotes: not a plain call
    {"x": "tsc -b"},  # a build that emits: the default instead
    {"x": "eslint"},  # no path: the default instead
    {},
])
def test_anything_but_a_plain_call_falls_back_to_the_default(scripts: dict[str, str]) -> None:
    tool = next((t for t in ("prettier", "tsc", "eslint") if any(t in v for v in scripts.values())), "prettier")
    assert read_only_call(tool, script_call(scripts, tool)) is None


def test_the_regression_tests_name_follows_the_stack_and_the_suffix() -> None:
    assert DeskConfig().test_path("BUG-0007") == "tests/test_bug_0007.py"
    assert DeskConfig(stack="node").test_path("BUG-0007") == "tests/bug_0007.test.ts"
    assert DeskConfig(stack="node", test_dir="src", test_suffix=".spec.js").test_path("BUG-7") == "src/bug_7.spec.js"
    with pytest.raises(UsageError):
        DeskConfig(stack="node", test_suffix=".py").validate()
    with pytest.raises(UsageError):
        DeskConfig(stack="ruby").validate()
