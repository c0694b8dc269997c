"""Proposals and the checks every proposal passes before anyone sees it: schema, size, paths."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from signoff.agents.paths import diff_paths, path_problem
from signoff.agents.roles import RoleSpec
from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.errors import RefusedError, UsageError


class ProposalRejected(RefusedError):
    """A model's output failed the role's schema, size or path rules. It counts as a failed attempt
    and is never applied; `reason` says what was wrong, `record` is the call's record."""

    def __init__(self, reason: str, record: dict[str, Any] | None = None) -> None:
        super().__init__(f"proposal rejected: {reason}",
                         "nothing was applied; try again, or look at the recorded call with `signoff agents calls`")
        self.reason = reason
        self.record: dict[str, Any] = record or {}


@dataclass(frozen=True)
class Proposal:
    role: str
    output: dict[str, Any]
    provider: str
    model: str
    kind: str  # "simulated" for scripted and replay agents, "advisory" for models
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def output_digest(self) -> str:
        return str(self.record.get("output_digest", ""))


def check_output(
    spec: RoleSpec,
    output: Any,
    allowed_paths: list[str] | None = None,
    denied_paths: list[str] | None = None,
    root: Path | None = None,
) -> dict[str, Any]:
    """Return `output` if the role may propose it; raise ProposalRejected with the first reason otherwise."""
    if not isinstance(output, dict):
        raise ProposalRejected(f"output is {type(output).__name__}, not a JSON object")
    try:
        size = len(canonical_bytes(output))
    except UsageError as exc:
        raise ProposalRejected(f"output is not plain JSON: {exc.message}") from exc
    if size > spec.max_output_bytes:
        raise ProposalRejected(
            f"output is {size} bytes, over the {spec.max_output_bytes} byte limit of role {spec.name}")
    errors = sorted(Draft202012Validator(spec.schema).iter_errors(output), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(top)"
        raise ProposalRejected(f"output does not match the {spec.name} schema at {where}: {first.message[:300]}")
    allowed = spec.allowed_paths if allowed_paths is None else allowed_paths
    denied = list(spec.denied_paths) + list(denied_paths or [])
    _check_paths(spec, output, allowed, denied, root)
    return output


def _named_paths(spec: RoleSpec, output: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for key in spec.path_fields:
        value = output.get(key)
        if isinstance(value, str):
            found.append(value)
    for item in output.get("files", []) if isinstance(output.get("files"), list) else []:
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            found.append(item["path"])
    for note in output.get("notes", []) if isinstance(output.get("notes"), list) else []:
        if isinstance(note, dict) and isinstance(note.get("path"), str):
            found.append(note["path"])
    return found


def _check_paths(
    spec: RoleSpec, output: dict[str, Any], allowed: list[str] | None, denied: list[str], root: Path | None
) -> None:
    paths = _named_paths(spec, output)
    diff = output.get("diff")
    if isinstance(diff, str) and diff.strip():
        touched, refusal = diff_paths(diff)
        if refusal:
            raise ProposalRejected(refusal)
        if not touched:
            raise ProposalRejected("the diff names no files")
        paths.extend(touched)
    seen: dict[str, str] = {}
    for path in paths:
        problem = path_problem(path, allowed, denied, root)
        if problem:
            raise ProposalRejected(problem)
    for item in output.get("files", []) if isinstance(output.get("files"), list) else []:
        # Two entries for one file (or for names that collide on a case-insensitive file system)
        # would make "what was proposed" ambiguous.
        folded = item["path"].lower()
        if folded in seen:
            raise ProposalRejected(f"path {item['path']!r} appears twice (or collides with {seen[folded]!r})")
        seen[folded] = item["path"]
        size = len(item["content"].encode())
        if size > spec.max_file_bytes:
            raise ProposalRejected(
                f"file {item['path']!r} is {size} bytes, over the {spec.max_file_bytes} byte limit per file"
            )
