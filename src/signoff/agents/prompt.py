"""Prompts: a fixed system prefix per role, then the task as canonical JSON, then outside text as
delimited data.

The system text is the role's prefix followed by its output schema: both are fixed per role, so the
bytes sent first are identical on every call and provider prompt caches hit. Outside text is never
spliced into instructions: each piece is written as a JSON string literal (newlines and quotes
escaped, so it cannot forge an END marker) between BEGIN DATA / END DATA lines that carry its digest.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from signoff.agents.roles import RoleSpec
from signoff.kernel.canonical import canonical_digest, canonical_text
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import UsageError

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
MAX_UNTRUSTED_BYTES = 400_000


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str

    @property
    def digest(self) -> str:
        return canonical_digest({"system": self.system, "user": self.user})

    @property
    def size(self) -> int:
        return len(self.system.encode()) + len(self.user.encode())


def system_text(spec: RoleSpec) -> str:
    return f"{spec.prefix}\nOutput schema (JSON Schema):\n{canonical_text(spec.schema)}\n"


def build_prompt(spec: RoleSpec, task: dict[str, Any], untrusted: dict[str, str] | None = None) -> Prompt:
    if not isinstance(task, dict):
        raise UsageError(f"task must be a JSON object, got {type(task).__name__}", "pass a dict of trusted inputs")
    parts = ["TASK", canonical_text(task)]
    total = 0
    for name, text in sorted((untrusted or {}).items()):
        if not isinstance(name, str) or not _NAME.match(name):
            raise UsageError(f"untrusted block name {name!r} is not a simple identifier",
                             "name data blocks with letters, digits, '_', '.', '-' (e.g. 'report')")
        if not isinstance(text, str):
            raise UsageError(f"untrusted block {name!r} is not text", "pass outside text as str")
        total += len(text.encode())
        if total > MAX_UNTRUSTED_BYTES:
            raise UsageError(f"untrusted text is over {MAX_UNTRUSTED_BYTES} bytes",
                             "shorten or summarise the outside text before asking an agent")
        tag = f"{name} sha256={sha256_bytes(text.encode())}"
        parts += ["", f"BEGIN DATA {tag}", json.dumps(text, ensure_ascii=True), f"END DATA {tag}"]
    return Prompt(system=system_text(spec), user="\n".join(parts) + "\n")
