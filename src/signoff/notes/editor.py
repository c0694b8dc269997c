"""The scripted editor: copies the verifier's errors verbatim and adds OVERCLAIM judgments.

Deterministic code cannot prove prose true; the editor is the advisory layer on top of the verifier.
The scripted editor flags superlatives, quality and causal claims ("faster", "improved correctness",
"fixes all", "because") unless the same word is in the subject of a commit the sentence cites. Its
task is `{"sentences": [{"id", "text", "cites"}], "facts": {id: fact}}` and its output
`{"judgments": [{"sentence", "code": "OVERCLAIM", "token", "position", "reason"}]}`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

EditorScript = Callable[[dict[str, Any]], dict[str, Any]]

_OVERCLAIM = re.compile(
    r"\b(?:"
    r"best|fastest|quickest|biggest|largest|greatest|smallest|most \w+|first-ever|unprecedented|world-class|"
    r"state-of-the-art|blazing(?:ly)?(?:[- ]fast)?|massive(?:ly)?|huge(?:ly)?|dramatic(?:ally)?|"
    r"significant(?:ly)?|substantial(?:ly)?|revolutionary|seamless(?:ly)?|perfect(?:ly)?|"
    r"faster|quicker|slower|smaller|leaner|better|improv(?:e|es|ed|ing|ement|ements)|"
    r"more (?:reliable|robust|secure|stable|efficient|correct)|robust|reliable|efficient|correctness|"
    r"performance|optimi[sz](?:e|es|ed|ing|ation)|"
    r"because|thanks to|led to|leads to|resulted in|results in|so that|which (?:makes|made|means)|"
    r"fix(?:es|ed)? all|all (?:bugs|issues|problems)|every (?:bug|issue)|bug-free|never|always|completely|"
    r"entirely|fully"
    r")\b",
    re.IGNORECASE,
)


def _stem(word: str) -> str:
    return word.lower().split()[0][:5]


def edit_default(task: dict[str, Any]) -> dict[str, Any]:
    facts: dict[str, dict[str, Any]] = task.get("facts", {})
    judgments = []
    for s in task["sentences"]:
        subjects = " ".join(facts[f]["subject"].lower() for f in s["cites"]
                            if f in facts and facts[f].get("kind") == "commit")
        for m in _OVERCLAIM.finditer(s["text"]):
            if _stem(m.group(0)) in subjects:
                continue  # the cited commit itself says so; the sentence only repeats it
            judgments.append({"sentence": s["id"], "code": "OVERCLAIM", "token": m.group(0),
                              "position": m.start(),
                              "reason": "a superlative, quality or causal claim that no cited fact states"})
    return {"judgments": judgments}


def merge(verdict: dict[str, Any], judgments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The review of each sentence: the verifier's errors copied verbatim (never taken from the editor,
    so no editor can drop one) plus the editor's judgments for that sentence."""
    out = []
    for s in verdict["sentences"]:
        mine = [{k: v for k, v in j.items() if k != "sentence"} for j in judgments if j["sentence"] == s["id"]]
        errors = [dict(e) for e in s["errors"]]
        out.append({"id": s["id"], "text": s["text"], "facts": s["facts"],
                    "status": "rejected" if errors or mine else "ok", "errors": errors, "judgments": mine})
    return out


SCRIPTS: dict[str, EditorScript] = {"default": edit_default}
