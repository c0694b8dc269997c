"""Render a shipped run as Markdown: each kept sentence with `[F1][F2]` appended at its end, under
the heading of its group when the writer gave one ("Breaking changes", "Bug fixes"), and a facts
appendix in which every cited fact is listed with an anchor and every hash in full."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from signoff.kernel.errors import RefusedError
from signoff.notes.checks import blockers
from signoff.notes.facts import FactsFile
from signoff.notes.model import State
from signoff.notes.run import FACTS_FILE, current_sentences


def _fact_line(f: dict[str, Any], commit_url: str | None) -> str:
    fid = f["id"]
    anchor = f'<a id="{fid.lower()}"></a>**{fid}**'
    kind = f["kind"]
    if kind == "commit":
        url = commit_url.replace("{hash}", f["hash"]) if commit_url else None
        hash_text = f"[`{f['hash']}`]({url})" if url else f"`{f['hash']}`"
        return f"- {anchor} commit {hash_text}: {f['subject']} ({f['author']}, {f['date']})"
    if kind == "file":
        binary = ", binary" if f.get("binary") else ""
        return f"- {anchor} file `{f['path']}`: +{f['added']} -{f['deleted']} lines{binary}"
    if kind == "count":
        scope = "range" if f["scope"] == "range" else f"author {f.get('author') or f['scope'][7:]}"
        return f"- {anchor} {f['metric']} ({scope}): {f['value']}"
    return f"- {anchor} {f['op']} of {f['of'][0]} and {f['of'][1]}: {f['value']}"


# The reference the writer ends a line with: its pull request `(#N)`, or its commit's short hash.
_LINE_REF = re.compile(r"\((?:#(?P<pr>\d+)|(?P<hash>[0-9a-f]{7,40}))\)(?=\.?$)")


def link_reference(text: str, cited: list[dict[str, Any]], commit_url: str | None, pr_url: str | None) -> str:
    """The line with its closing reference linked: `(#N)` through `pr_url` (`{number}`), a short
    hash through `commit_url` (`{hash}`, the full hash of the cited commit it starts)."""
    def link(m: re.Match[str]) -> str:
        if m.group("pr") is not None:
            return f"([#{m.group('pr')}]({pr_url.replace('{number}', m.group('pr'))}))" if pr_url else m.group(0)
        full = next((f["hash"] for f in cited if f.get("kind") == "commit" and f["hash"].startswith(m.group("hash"))),
                    None)
        return f"([{m.group('hash')}]({commit_url.replace('{hash}', full)}))" if commit_url and full else m.group(0)
    return _LINE_REF.sub(link, text)


def render(folder: Path, state: State, commit_url: str | None = None, pr_url: str | None = None) -> str:
    """The notes of a run in `state` (its decisions replayed)."""
    if not state.shipped:
        problems = blockers(folder, state)
        raise RefusedError("this run has not shipped yet" + (": " + " | ".join(problems) if problems else ""),
                           "decide on every sentence, then `signoff notes decide RUN ship`")
    return preview(folder, state, commit_url, pr_url)


def preview(folder: Path, state: State, commit_url: str | None = None, pr_url: str | None = None) -> str:
    """The notes as they would render with the decisions so far: the approved sentences only."""
    kept = [s for s in state.sentences if s.status == "approved"]
    cited = [f for s in kept for f in s.facts]
    facts = FactsFile(folder / FACTS_FILE, wanted=set(cited))
    order = list(dict.fromkeys(cited))
    lines = [f"# Release notes: {facts.range}", ""]
    groups = {s["id"]: s["group"] for s in current_sentences(folder) if s.get("group")}
    shown: str | None = None
    for s in kept:
        group = groups.get(s.id)
        if group is not None and group != shown:
            lines += ["", f"## {group}", ""] if shown is not None or lines[-1] != "" else [f"## {group}", ""]
            shown = group
        tags = "".join(f"[{f}]" for f in s.facts)
        text = link_reference(s.text, [facts.by_id[f] for f in s.facts if f in facts.by_id], commit_url, pr_url)
        lines.append(f"- {text} {tags}")
    lines += ["", "## Facts", ""]
    lines += [_fact_line(facts.by_id[f], commit_url) for f in order if f in facts.by_id]
    return "\n".join(lines) + "\n"
