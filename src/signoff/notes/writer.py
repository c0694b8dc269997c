"""The scripted writer: deterministic sentences from facts (the offline default, labelled simulated).

A writer (the `writer` role of signoff.agents) receives a task `{"range", "facts": [...],
"revise": [...]?}` and returns `{"sentences": [{"text", "cites"}]}`; the workflow numbers them S1..Sn.
With `revise` (a list of `{"id", "text", "cites", "problems"}`), it returns exactly one sentence per
listed one, in the same order, and the workflow replaces only those.

Two scripts ship: `default` writes a changelog only from what its facts support (one line per
user-facing change, grouped; `changes.py`); `demo` takes the former summary sentences (totals,
authors' shares, the newest commits) and adds the kind of embellishment
a model adds (a causal quality claim, an invented timing) to its first draft, so the editor's
rejection and the one revision round can be seen offline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from signoff.notes.changes import changelog_lines, is_bot, major_release
from signoff.notes.facts import round_half_up
from signoff.notes.practice import Practice
from signoff.notes.verify import Support, check_claims

WriterScript = Callable[[dict[str, Any]], dict[str, Any]]
MAX_COMMIT_SENTENCES = 6


def _fmt(value: float) -> str:
    return f"{value:g}" if value != int(value) else str(int(value))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _supported(text: str, facts: list[dict[str, Any]]) -> bool:
    support = Support()
    for f in facts:
        support.add_fact(f)
    return not check_claims(text, support)


def _commit_text(f: dict[str, Any]) -> str:
    subject = f["subject"].strip().rstrip(".")
    return f"Commit {f['hash'][:10]} by {f['author']}: {subject}."


def compose(facts: list[dict[str, Any]]) -> str:
    """A plain sentence stating exactly the given facts (used to revise a rejected sentence)."""
    parts: list[str] = []
    for f in facts:
        if f["kind"] == "commit":
            parts.append(_commit_text(f).rstrip("."))
        elif f["kind"] == "file":
            parts.append(f"{f['path']} changed (+{f['added']} -{f['deleted']} lines)")
        elif f["kind"] == "count":
            scope = "" if f["scope"] == "range" else f" by {f.get('author') or f['scope'][7:]}"
            parts.append(f"{f['metric'].replace('_', ' ')}{scope}: {f['value']}")
        elif f["kind"] == "derived":
            parts.append(f"{f['op'].replace('_', ' ')}: {_fmt(f['value'])}")
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "." if parts else "No change."


def write_default(task: dict[str, Any]) -> dict[str, Any]:
    """Notes worth publishing without a model: one line per user-facing change with its pull
    request, grouped, breaking changes and deprecations first, housekeeping and bots left out
    (`changes.changelog_lines`), after one sentence of totals. Every line is checked against the
    facts it cites before it is kept."""
    facts: list[dict[str, Any]] = task["facts"]
    if task.get("revise"):
        return _revised(task["revise"], facts)
    counts = {(f["metric"], f["scope"]): f for f in facts if f["kind"] == "count"}
    sentences: list[dict[str, Any]] = []
    commits, people = counts.get(("commits", "range")), counts.get(("contributors", "range"))
    if commits is None or people is None:
        return {"sentences": []}
    total = f"This release has {_plural(commits['value'], 'commit')}"
    if any(is_bot(f) for f in facts if f["kind"] == "commit"):
        # the contributors fact counts every author, bots too: "from 6 contributors" would count them
        sentences.append({"text": total + ".", "cites": [commits["id"]]})
    else:
        sentences.append({"text": f"{total} from {_plural(people['value'], 'contributor')}.",
                          "cites": [commits["id"], people["id"]]})
    for line in changelog_lines([f for f in facts if f["kind"] == "commit"], task.get("groups"), task.get("paths"),
                                task.get("package"), major_release(task.get("range") or ""),
                                Practice.from_task(task.get("practice"))):
        if _supported(line.text, line.facts):
            sentences.append({"text": line.text, "cites": [f["id"] for f in line.facts], "group": line.group})
    return {"sentences": sentences}


def _revised(revise: list[dict[str, Any]], facts: list[dict[str, Any]]) -> dict[str, Any]:
    """A revision asked by the editor: each sentence composed again from the facts it cites."""
    by_id = {f["id"]: f for f in facts}
    return {"sentences": [{"cites": s["cites"], "text": compose([by_id[i] for i in s["cites"] if i in by_id])}
                          for s in revise]}


def write_summary(task: dict[str, Any]) -> dict[str, Any]:
    """The former default, kept for the `demo` script: totals, the change in lines, the top three
    authors' shares and the newest commits verbatim. Not a changelog: `write_default` is."""
    facts: list[dict[str, Any]] = task["facts"]
    if task.get("revise"):
        return _revised(task["revise"], facts)
    counts = {(f["metric"], f["scope"]): f for f in facts if f["kind"] == "count"}
    derived = [f for f in facts if f["kind"] == "derived"]
    sentences: list[dict[str, Any]] = []

    def add(text: str, cited: list[dict[str, Any]]) -> None:
        sentences.append({"text": text, "cites": [f["id"] for f in cited]})

    commits, people = counts.get(("commits", "range")), counts.get(("contributors", "range"))
    if commits is None or people is None:
        return {"sentences": []}
    add(f"This release brings {_plural(commits['value'], 'commit')} from {_plural(people['value'], 'contributor')}.",
        [commits, people])
    files = counts.get(("files_changed", "range"))
    added, deleted = counts.get(("lines_added", "range")), counts.get(("lines_deleted", "range"))
    if files and added and deleted and files["value"]:
        add(f"The changes touch {_plural(files['value'], 'file')}, adding {_plural(added['value'], 'line')} and "
            f"deleting {deleted['value']}.", [files, added, deleted])
    of = {tuple(f["of"]): f for f in derived}
    if added and deleted:
        pct = of.get((deleted["id"], added["id"]))
        if pct is not None and pct["op"] == "pct_change" and pct["value"] != 0:
            more = "more" if pct["value"] > 0 else "fewer"
            add(f"That is {_fmt(round_half_up(abs(pct['value']), 1))}% {more} lines added than deleted.",
                [pct, added, deleted])
    authors = sorted((f for (m, scope), f in counts.items() if m == "commits" and scope != "range"),
                     key=lambda f: (-f["value"], f["scope"]))
    for a in authors[:3]:
        share = of.get((a["id"], commits["id"]))
        name = a.get("author") or a["scope"][7:]
        if share is not None:
            pct_text = _fmt(round_half_up(share["value"] * 100, 1))
            add(f"{name} wrote {a['value']} of the {commits['value']} commits ({pct_text}%).", [a, commits, share])
    shown = 0
    for f in facts:
        if f["kind"] != "commit" or shown >= MAX_COMMIT_SENTENCES:
            continue
        text = _commit_text(f)
        if _supported(text, [f]):
            add(text, [f])
            shown += 1
    return {"sentences": sentences}



def write_demo(task: dict[str, Any]) -> dict[str, Any]:
    out = write_summary(task)
    if task.get("revise"):
        return out
    sentences = out["sentences"]
    for s in sentences:
        if s["text"].startswith("Commit "):
            s["text"] = s["text"].rstrip(".") + ", which improved correctness and runs in under 2 seconds."
            break
    return out


SCRIPTS: dict[str, WriterScript] = {"default": write_default, "demo": write_demo}
