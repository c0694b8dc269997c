"""The static tamper signal: what in a candidate's diff reaches for the test framework or the interpreter.

A fix to application code has little reason to touch pytest's or pluggy's internals, node's test
runner, `sys.modules`, `builtins`, `os._exit`, trace, profile, audit or import hooks, or to ship
interpreter start-up files and plugin entry points. Such a diff is flagged for the person who
reviews the case. The signal never decides a verdict on its own (a genuine fix may use
`importlib`): the run guard (`guard.py`) decides from what actually happened in the run, and this
signal tells a human where to look.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from signoff import git

# (category, pattern over one added line)
LINE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((what, re.compile(rx)) for what, rx in (
    ("framework internals", r"\b_pytest\b|\bpluggy\b|\bpytest\s*\.\s*(?:Function|Item|Session|Module|Class|Config|"
                            r"CallInfo|TestReport|CollectReport|hookimpl|main|exit|skip|xfail|fail|importorskip)\b|"
                            r"^\s*(?:import|from)\s+pytest\b|\bunittest\.(?:case|result)\b"),
    ("node test runner internals", r"node:test\b|node:assert\b|['\"]assert['\"]\s*\)|\bModule\._(?:load|compile|"
                                   r"extensions|resolveFilename)\b|\brequire\.cache\b|process\.(?:reallyExit|binding|"
                                   r"_rawDebug)\b|node:internal|--test-reporter"),
    ("process exit", r"\bos\._exit\b|\bprocess\.exit\b|\bprocess\.kill\s*\(\s*process\.pid|\bsignal\.SIGKILL\b"),
    ("sys.modules", r"\bsys\.modules\b"),
    ("builtins", r"\bbuiltins\b|__builtins__|\bglobalThis\b"),
    ("trace or profile hook", r"\bsys\.(?:settrace|setprofile|_getframe|monitoring)\b|\bthreading\.(?:settrace|"
                              r"setprofile)\b|\bf_lineno\b|\bf_trace\b|\bf_locals\b"),
    ("import hook", r"\bsys\.(?:meta_path|path_hooks|path_importer_cache)\b|\bimportlib\b|\b__import__\b"),
    ("interpreter hook", r"\bsys\.(?:excepthook|addaudithook|unraisablehook|breakpointhook|displayhook)\b|"
                         r"\batexit\b|\b__code__\b|\bgc\.get_(?:referrers|objects|referents)\b|\bctypes\b"),
    ("report file", r"junit|\.xml['\"]|signoff-guard|SIGNOFF_GUARD"),
    ("process introspection", r"/proc/self|\bsys\.argv\b|\bprocess\.(?:argv|execArgv)\b"),
    # Code that behaves differently under test, or values that compare equal to anything.
    ("test detection", r"PYTEST_CURRENT_TEST|PYTEST_VERSION|PYTEST_XDIST|\bSIGNOFF_\w+|NODE_TEST_CONTEXT|"
                       r"['\"]/harness\b"),
    ("comparison override", r"\bdef\s+__(?:eq|ne|bool|hash)__\b|\[Symbol\.toPrimitive\]|\bvalueOf\s*\("),
))

START_UP_NAMES = ("sitecustomize.py", "usercustomize.py", "conftest.py")
START_UP_SUFFIXES = (".pth",)
START_UP_PARTS = (".dist-info", ".egg-info")
MAX_SIGNALS = 100


def _start_up(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1]
    if name.endswith((".pyc", ".pyo")) or "__pycache__/" in path:
        return "compiled bytecode (runs instead of the reviewed source)"
    if name in START_UP_NAMES or name.endswith(START_UP_SUFFIXES):
        return "interpreter start-up file" if name != "conftest.py" else "conftest.py outside the harness"
    if name == "entry_points.txt" or any(part.endswith(START_UP_PARTS) for part in path.split("/")[:-1]):
        return "plugin entry point (package metadata)"
    return None


def scan_diff(diff: str) -> list[dict[str, Any]]:
    """Signals over the added lines of a unified diff: {path, line, what, text}."""
    out: list[dict[str, Any]] = []
    path: str | None = None
    line = 0
    for raw in diff.splitlines():
        added: str | None = None
        if raw.startswith("+++ "):
            target = raw[4:].strip()
            added = target[2:] if target.startswith("b/") else None
            path = added
        elif raw.startswith("Binary files ") and " and b/" in raw and raw.endswith(" differ"):
            added = raw.split(" and b/", 1)[1][:-len(" differ")]
            path = None
        if raw.startswith(("+++ ", "Binary files ")):
            what = _start_up(added) if added else None
            if added and what:
                out.append({"path": added, "line": 0, "what": what, "text": added})
            continue
        if raw.startswith("@@"):
            m = re.search(r"\+(\d+)", raw)
            line = int(m.group(1)) if m else 0
            continue
        if path is None or raw.startswith("---"):
            continue
        if raw.startswith("+"):
            text = raw[1:]
            for what, rx in LINE_PATTERNS:
                if rx.search(text):
                    out.append({"path": path, "line": line, "what": what, "text": text.strip()[:200]})
            line += 1
        elif not raw.startswith("-"):
            line += 1
        if len(out) >= MAX_SIGNALS:
            break
    return out[:MAX_SIGNALS]


ATTRIBUTES = "git attributes (how git exports, converts and shows files; signoff exports committed bytes)"


def attribute_edits(changes: list[git.Change]) -> list[dict[str, Any]]:
    """A `.gitattributes` the candidate adds, edits or removes, anywhere in the tree: attributes can make
    git rewrite a file on export or hide its lines from a diff, so a person should see the change."""
    return [{"path": c.path, "line": 0, "what": ATTRIBUTES, "text": f"{c.status} {c.path}"}
            for c in changes if c.path.rsplit("/", 1)[-1] == ".gitattributes"]


def scan(repo: Path, base: str, candidate: str, changes: list[git.Change] | None = None) -> list[dict[str, Any]]:
    """Signals in what the candidate adds relative to base (package metadata paths included), and in
    the paths it changes (`changes`, from `git.changed_paths`)."""
    if base == candidate:
        return []
    return [*attribute_edits(changes or []), *scan_diff(git.diff_text(repo, base, candidate))][:MAX_SIGNALS]


def summary(signals: list[dict[str, Any]]) -> str:
    """One line for a person: the categories and where they first appear."""
    seen: dict[str, str] = {}
    for s in signals:
        seen.setdefault(s["what"], f"{s['path']}:{s['line']}" if s["line"] else s["path"])
    return "; ".join(f"{what} ({where})" for what, where in seen.items())
