"""The draft: numbered sentences, each citing facts out of band (`facts`, never inside `text`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from signoff.kernel.errors import UsageError
from signoff.notes.documents import DRAFT, check_schema, need, read_json

SENTENCE_ID = re.compile(r"^S[1-9][0-9]*$")
MAX_TEXT = 2000


def check_sentences(sentences: Any, path: Path | str, what: str = "draft") -> list[dict[str, Any]]:
    need(isinstance(sentences, list), "sentences", "a list", what, path)
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for i, s in enumerate(sentences):
        where = f"sentences[{i}]"
        need(isinstance(s, dict), where, "an object", what, path)
        need(isinstance(s.get("id"), str) and bool(SENTENCE_ID.match(s["id"])), f"{where}.id",
             "an id like S1", what, path)
        need(isinstance(s.get("text"), str) and bool(s["text"].strip()), f"{where}.text", "a non-empty string",
             what, path)
        need(len(s["text"]) <= MAX_TEXT, f"{where}.text", f"at most {MAX_TEXT} characters", what, path)
        need("\n" not in s["text"] and "\r" not in s["text"], f"{where}.text", "one line (a sentence)", what, path)
        need(isinstance(s.get("facts"), list) and all(isinstance(f, str) for f in s["facts"]), f"{where}.facts",
             "a list of fact ids", what, path)
        if s["id"] in seen:
            raise UsageError(f"{what} {path}: sentence id {s['id']} appears twice", "give every sentence its own id")
        seen.add(s["id"])
        group = s.get("group")
        need(group is None or (isinstance(group, str) and 0 < len(group) <= 80 and "\n" not in group),
             f"{where}.group", "a one-line heading of at most 80 characters", what, path)
        out.append({"id": s["id"], "text": s["text"], "facts": list(s["facts"]), **({"group": group} if group else {})})
    return out


def load_draft(path: Path) -> list[dict[str, Any]]:
    doc = check_schema(read_json(path, "draft"), DRAFT, path, "draft")
    return check_sentences(doc.get("sentences"), path)


def draft_doc(sentences: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"schema": DRAFT, **extra, "sentences": sentences}
