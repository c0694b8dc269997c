"""Default scripted agents: deterministic, rule-based behaviour for each shipped role, so every
workflow runs offline. Workflows register their own (register_script(role, fn, name)) for their
fixtures; these defaults act only on what the task spells out.

Each script gets a copy of the task (outside text under task["untrusted"]) and returns an output
for its role's schema. What a script returns is checked exactly like a model's output.
"""

from __future__ import annotations

import re
from typing import Any

from signoff.agents.providers.scripted import register_script


def fixer(task: dict[str, Any]) -> dict[str, Any]:
    """Applies the task's literal rules: files {path: content} and rules [{path, find, replace}].
    A rule whose `find` text is absent is reported in the summary, never guessed at."""
    files: dict[str, str] = dict(task.get("files", {}))
    changed: dict[str, str] = {}
    missed: list[str] = []
    for rule in task.get("rules", []):
        path, find, replace = rule["path"], rule["find"], rule["replace"]
        source = changed.get(path, files.get(path))
        if source is None or find not in source:
            missed.append(path)
            continue
        changed[path] = source.replace(find, replace, int(rule.get("count", -1)))
    if not changed:
        summary = "no rule applied" + (f" (text not found in {', '.join(sorted(set(missed)))})" if missed else "")
    else:
        summary = task.get("summary") or f"applied {len(task.get('rules', [])) - len(missed)} rule(s) to " \
                                           f"{', '.join(sorted(changed))}"
    return {"summary": summary, "files": [{"path": p, "content": changed[p]} for p in sorted(changed)]}


def reproducer(task: dict[str, Any]) -> dict[str, Any]:
    """Writes a pytest test from task {test_path, imports: [..], cases: [{call, expected}]}."""
    lines = [*task.get("imports", []), "", ""]
    for number, case in enumerate(task.get("cases", []), 1):
        name = case.get("name") or f"case_{number}"
        lines += [f"def test_{re.sub(r'[^A-Za-z0-9_]', '_', name)}():",
                  f"    assert {case['call']} == {case['expected']}", "", ""]
    return {
        "test_path": task.get("test_path", "tests/test_regression.py"),
        "test_source": "\n".join(lines).rstrip() + "\n",
        "rationale": task.get("rationale") or "asserts the behaviour the report expects",
    }


def reviewer(task: dict[str, Any]) -> dict[str, Any]:
    """Asks for changes when a proposed file is outside task["allowed_paths"] or a diff deletes an
    assertion; otherwise recommends approval (advisory)."""
    notes: list[dict[str, Any]] = []
    allowed = task.get("allowed_paths")
    for item in task.get("files", []):
        if allowed is not None and item.get("path") not in allowed:
            notes.append({"path": item.get("path"), "text": "changes a file outside the allowed paths"})
    for line in str(task.get("diff", "")).splitlines():
        if line.startswith("-") and not line.startswith("---") and "assert" in line:
            notes.append({"text": f"removes an assertion: {line[1:].strip()[:200]}"})
    notes = [{k: v for k, v in n.items() if v is not None} for n in notes]
    return {"recommendation": "request_changes" if notes else "approve",
            "summary": f"{len(notes)} concern(s)" if notes else "no concerns found by the scripted checks",
            "notes": notes}


def writer(task: dict[str, Any]) -> dict[str, Any]:
    """One sentence per fact: task["facts"] = [{id, text}] -> the fact's text, citing its id."""
    sentences = []
    for fact in task.get("facts", []):
        text = " ".join(str(fact["text"]).split())
        if text:
            sentences.append({"text": _sentence(text), "cites": [str(fact["id"])]})
    out: dict[str, Any] = {"sentences": sentences}
    if task.get("title"):
        out["title"] = str(task["title"])
    return out


def responder(task: dict[str, Any]) -> dict[str, Any]:
    """States the shareable facts (task["facts"] = [{id, text, shareable}]) and nothing else."""
    shared = [f for f in task.get("facts", []) if f.get("shareable")]
    if shared:
        message = " ".join(_sentence(" ".join(str(f["text"]).split())) for f in shared)
    else:
        message = "We have nothing we may share yet."
    greeting = task.get("to")
    if greeting:
        message = f"To {greeting}: {message}"
    return {"message": message, "cites": [str(f["id"]) for f in shared],
            "questions": [str(q) for q in task.get("questions", [])][:10]}


def _sentence(text: str) -> str:
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


for _role, _fn in (("fixer", fixer), ("reproducer", reproducer), ("reviewer", reviewer), ("writer", writer),
                   ("responder", responder)):
    register_script(_role, _fn)
