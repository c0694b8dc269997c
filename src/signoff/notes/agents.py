"""The notes workflow's agents, through signoff.agents: the `writer` role (shared) with the notes
scripts registered on it, and a `notes-editor` role whose only output is judgments.

The editor role is the workflow's own because its job differs from the shared clarity editor: it
may only add OVERCLAIM judgments. The verifier's errors are copied into the review by code, so no
editor, scripted or model, can drop one.
"""

from __future__ import annotations

from typing import Any

from signoff.agents import RoleSpec, agent_for, register_role, register_script
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.notes import editor, writer

WRITER_SCRIPTS = {"notes": writer.write_default, "notes-demo": writer.write_demo}

EDITOR_ROLE = register_role(RoleSpec(
    name="notes-editor",
    description="judges drafted release-note sentences for claims no cited fact states",
    schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["judgments"],
        "properties": {"judgments": {"type": "array", "maxItems": 1000, "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["sentence", "code", "token", "reason"],
            "properties": {
                "sentence": {"type": "string", "pattern": "^S[1-9][0-9]*$"},
                "code": {"const": "OVERCLAIM"},
                "token": {"type": "string", "maxLength": 200},
                "position": {"type": ["integer", "null"], "minimum": 0},
                "reason": {"type": "string", "maxLength": 500},
            },
        }}},
    },
    prefix=(
        "You are the editor of release notes. Each sentence has already been checked by code for hashes "
        "and numbers. Flag with code OVERCLAIM every superlative, quality or causal claim (faster, "
        "improved, fixes all, because) that the sentence's cited facts do not state. Add nothing else."
    ),
    max_output_bytes=200_000,
))

for _name, _fn in WRITER_SCRIPTS.items():
    register_script("writer", _fn, _name)
register_script("notes-editor", editor.edit_default)


def _script_name(script: str) -> str:
    # "default"/"demo" on the command line map to the notes scripts of the shared writer role.
    return {"default": "notes", "demo": "notes-demo"}.get(script, script)


def write(task: dict[str, Any], settings: Settings, role: str = "writer",
          script: str = "default") -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Ask the writer; returns its sentences ({"text", "cites"}) and the call record."""
    proposal = agent_for(role, settings, script=_script_name(script)).propose(task, client="notes")
    sentences = proposal.output.get("sentences")
    if not isinstance(sentences, list):
        raise UsageError(f"the {role} agent returned no sentences", "check the role's schema and provider")
    record = dict(proposal.record)
    record["kind"] = proposal.kind
    return sentences, record


def judge(sentences: list[dict[str, Any]], facts: dict[str, dict[str, Any]], settings: Settings,
          role: str = "notes-editor", script: str = "default") -> tuple[list[dict[str, Any]], dict[str, Any]]:
    task = {"sentences": [{"id": s["id"], "text": s["text"], "cites": s["facts"]} for s in sentences],
            "facts": facts}
    proposal = agent_for(role, settings, script=script).propose(task, client="notes")
    known = {s["id"] for s in sentences}
    judgments = [j for j in proposal.output["judgments"] if j["sentence"] in known]
    record = dict(proposal.record)
    record["kind"] = proposal.kind
    return judgments, record
