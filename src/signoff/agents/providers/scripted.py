"""Offline providers: scripted agents (deterministic Python per role) and replay of recorded outputs.

Their outputs are `simulated` evidence: no model produced them. They cost nothing and are not
metered, but their outputs pass exactly the same checks and are recorded the same way.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from signoff.agents.prompt import Prompt
from signoff.agents.providers.base import Reply
from signoff.agents.roles import RoleSpec
from signoff.kernel.canonical import canonical_text
from signoff.kernel.errors import NotFoundError, SignoffError, UsageError

Script = Callable[[dict[str, Any]], dict[str, Any]]
_SCRIPTS: dict[tuple[str, str], Script] = {}
_LOCK = threading.Lock()


def register_script(role: str, fn: Script, name: str = "default") -> Script:
    """Register deterministic behaviour for a role. `fn` receives a copy of the task; outside text
    passed to propose() is under task["untrusted"] (name -> text) unless the task already has that key."""
    with _LOCK:
        _SCRIPTS[(role, name)] = fn
    return fn


def get_script(role: str, name: str = "default") -> Script:
    with _LOCK:
        fn = _SCRIPTS.get((role, name))
        known = sorted(n for r, n in _SCRIPTS if r == role)
    if fn is None:
        raise NotFoundError(
            f"no script {name!r} for role {role!r}" + (f"; this role has: {', '.join(known)}" if known else ""),
            "register one with register_script(role, fn, name) or set script = \"default\"",
        )
    return fn


def scripts() -> list[tuple[str, str]]:
    with _LOCK:
        return sorted(_SCRIPTS)


class ScriptedProvider:
    name = "scripted"
    kind = "simulated"
    metered = False

    def __init__(self, script: str = "default") -> None:
        self.script = script
        self.model = f"script:{script}"

    def worst_case_micros(self, spec: RoleSpec, prompt: Prompt) -> int:
        return 0

    def cost_micros(self, reply: Reply) -> int | None:
        return 0

    def complete(self, spec: RoleSpec, prompt: Prompt, task: dict[str, Any], untrusted: dict[str, str],
                 cancel: threading.Event | None = None) -> Reply:
        fn = get_script(spec.name, self.script)
        given = json.loads(canonical_text(task))  # a deep copy the script cannot use to change the caller's task
        if untrusted and "untrusted" not in given:
            given["untrusted"] = dict(untrusted)
        try:
            output = fn(given)
        except SignoffError:
            raise
        except Exception as exc:  # a script is our code: name its failure plainly instead of a traceback
            raise UsageError(f"script {self.script!r} of role {spec.name!r} failed: {type(exc).__name__}: {exc}",
                             "check the task you passed has what this script needs") from exc
        return Reply(output=output, model=self.model, input_tokens=0, output_tokens=0)


class ReplayProvider:
    """Returns outputs recorded earlier (JSON lines of {role, prompt_digest, output, model}), matched by
    role and prompt digest, so a session recorded against a model can be re-run offline."""

    name = "replay"
    kind = "simulated"
    metered = False

    def __init__(self, path: str) -> None:
        if not path:
            raise UsageError("the replay provider needs a recording", 'set path = "recordings.jsonl" for the role')
        self.path = Path(path)
        self.model = f"replay:{self.path.name}"

    def _entries(self) -> list[dict[str, Any]]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError as exc:
            raise NotFoundError(f"replay recording {self.path} does not exist",
                                "record one with record_path on a live role, or fix the path") from exc
        entries = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{self.path}:{number} is not JSON: {exc.msg}", "fix or re-record the file") from exc
            if not isinstance(entry, dict) or "prompt_digest" not in entry or "output" not in entry:
                raise UsageError(f"{self.path}:{number} lacks prompt_digest or output", "fix or re-record the file")
            entries.append(entry)
        return entries

    def worst_case_micros(self, spec: RoleSpec, prompt: Prompt) -> int:
        return 0

    def cost_micros(self, reply: Reply) -> int | None:
        return 0

    def complete(self, spec: RoleSpec, prompt: Prompt, task: dict[str, Any], untrusted: dict[str, str],
                 cancel: threading.Event | None = None) -> Reply:
        digest = prompt.digest
        for entry in self._entries():
            if entry.get("role", spec.name) == spec.name and entry["prompt_digest"] == digest:
                recorded = str(entry.get("model", "unknown"))
                return Reply(output=entry["output"], model=f"{self.model} (recorded from {recorded})",
                             input_tokens=0, output_tokens=0)
        raise NotFoundError(
            f"no recorded output for role {spec.name} and prompt {digest[:16]} in {self.path}",
            "the task or the role's prompt changed since recording; record again against a live provider",
        )


def append_recording(path: Path, role: str, prompt: Prompt, output: Any, model: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    line = canonical_text({"role": role, "prompt_digest": prompt.digest, "output": output, "model": model})
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
