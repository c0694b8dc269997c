"""Tool outputs for the learned detector (issue #36, twelfth pass): real structured records, read from
public test fixtures, rendered the way a tool hands them to an agent (JSON or YAML), honest as they
are and with an attack planted in one of their free-text fields.

The detector had only seen attacks bare or planted in prose reports; agent benchmarks plant their
goals in a tool's output (an issue body, an e-mail, a review inside a YAML or JSON record). The
records are honest data named by repository and commit:
- PyGithub's `tests/ReplayData`: the GitHub API's own JSON responses (users, issues, pull requests,
  commits, milestones, releases ...), recorded by its tests;
- mozilla/bugbug's fixtures: Bugzilla bugs and webcompat GitHub issues as their APIs return them;
- InEx-Bug's `msrv3_closed.jsonl`: GitHub issues of npm packages, one record per line.
Everything is content-defined (records sorted, chosen by SHA-256, a seeded generator for the rest),
so the same inputs give the same texts byte for byte."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable

# free-text fields, where an attacker writes in a record (the rest are ids, dates, states, URLs)
TEXT_KEYS = ("body", "title", "description", "message", "summary", "text", "bio", "name", "content", "comment")
MAX_VALUE = 1500  # characters of one field kept: a tool truncates, and the detector reads 4000
MAX_KEYS = 24
LINES_BEFORE, LINES_AFTER = 10, 8  # lines of the rendered record kept around the field
MAX_RECORDS = 400  # per fixture set
PLANT_MODES = ("replace", "append", "paragraph", "prepend")
STYLES = ("json", "yaml", "yaml list")

Record = dict[str, object]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prune(raw: dict[str, object]) -> Record:
    """A record as a tool shows it, without what carries no text: URLs, node ids, avatars; a nested
    user or label by its name; lists of names kept short."""
    out: Record = {}
    for key, value in raw.items():
        if len(out) >= MAX_KEYS:
            break
        if key.endswith("url") or key in ("node_id", "gravatar_id") or key.startswith("cf_"):
            continue
        if isinstance(value, dict):
            name = value.get("login") or value.get("name")
            if isinstance(name, str):
                out[key] = name
        elif isinstance(value, list):
            names = [v.get("name") or v.get("login") if isinstance(v, dict) else v for v in value[:5]]
            kept = [n for n in names if isinstance(n, (str, int, float))]
            if kept:
                out[key] = kept
        elif isinstance(value, str):
            out[key] = value[:MAX_VALUE]
        elif isinstance(value, (int, float, bool)) or value is None:
            out[key] = value
    return out


def text_fields(record: Record) -> list[str]:
    """The free-text fields of a record that hold words (three or more, not a link)."""
    return [key for key in record if key in TEXT_KEYS and isinstance(record[key], str)
            and len(str(record[key]).split()) >= 3 and not str(record[key]).startswith("http")]


def replay_records(texts: Iterable[str]) -> list[Record]:
    """The JSON objects PyGithub's replay files record as responses (one exchange is eleven lines;
    a response is a JSON object or a list of them, on one line)."""
    out = []
    for text in texts:
        for line in text.splitlines():
            if not line.startswith(("{", "[{")):
                continue
            try:
                loaded = json.loads(line)
            except json.JSONDecodeError:
                continue
            for item in loaded[:3] if isinstance(loaded, list) else [loaded]:
                if isinstance(item, dict):
                    out.append(prune(item))
    return out


def bugzilla_record(bug: dict[str, object]) -> Record:
    """A Bugzilla bug as its REST API gives it, its first comments inlined (text, author, time)."""
    keys = ("id", "summary", "product", "component", "status", "resolution", "severity", "priority",
            "creator", "creation_time", "op_sys", "platform", "keywords")
    record: Record = {key: bug[key] for key in keys if key in bug}
    comments = bug.get("comments")
    if isinstance(comments, list) and comments:
        first = comments[0]
        if isinstance(first, dict) and isinstance(first.get("text"), str):
            record["description"] = str(first["text"])[:MAX_VALUE]
    return prune(record)


def inex_record(issue: dict[str, object]) -> Record:
    keys = ("owner", "repo", "number", "title", "body", "state", "created_at", "closed_at", "comments_count")
    return prune({key: issue[key] for key in keys if key in issue})


def capped(records: list[Record], cap: int = MAX_RECORDS) -> list[Record]:
    """Distinct records with a free-text field, the `cap` with the smallest SHA-256 of their JSON."""
    keyed = {json.dumps(r, sort_keys=True, ensure_ascii=False): r for r in records if text_fields(r)}
    return [keyed[key] for key in sorted(keyed, key=_sha)[:cap]]


def render(record: Record, style: str) -> str:
    """The record as a tool returns it: pretty JSON, or YAML (a mapping, or a one-item list)."""
    if style == "json":
        return json.dumps(record, indent=2, ensure_ascii=False)
    import yaml  # PyYAML: a dependency of signoff already

    data: object = [record] if style == "yaml list" else record
    return str(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100000))


def excerpt(rendered: str, key: str) -> str:
    """The lines of a rendered record around `key`'s line, as a tool's output of a few records shows them."""
    lines = rendered.splitlines()
    at = next((i for i, line in enumerate(lines) if line.lstrip(' -"').startswith((f"{key}:", f'{key}":'))), 0)
    return "\n".join(lines[max(0, at - LINES_BEFORE): at + LINES_AFTER + 1])


def plant(value: str, attack: str, mode: str) -> str:
    if mode == "replace":
        return attack
    if mode == "append":
        return f"{value.rstrip()} {attack}"
    if mode == "paragraph":
        return f"{value.rstrip()}\n\n{attack}"
    return f"{attack} {value}"


def tool_outputs(records: list[Record], attacks: list[str], seed: int) -> tuple[list[str], list[tuple[str, str]]]:
    """(honest texts, [(attack, planted text)]): every record honest as it is, and the attacks
    each planted in one record (taken in a seeded order, round and round), in a free-text field,
    by a seeded mode and style; the honest text of a record is the same field's excerpt unplanted."""
    rng = random.Random(seed)
    honest: list[str] = []
    planted: list[tuple[str, str]] = []
    order = list(range(len(records)))
    rng.shuffle(order)
    for index in order:
        record = records[index]
        key = rng.choice(text_fields(record))
        honest.append(excerpt(render(record, rng.choice(STYLES)), key))
    for number, attack in enumerate(attacks):
        if not records:
            break
        record = records[order[number % len(order)]]
        key = rng.choice(text_fields(record))
        mode, style = rng.choice(PLANT_MODES), rng.choice(STYLES)
        changed = {**record, key: plant(str(record[key]), attack, mode)}
        planted.append((attack, excerpt(render(changed, style), key)))
    return honest, planted
