"""What an earlier verification learnt about a test environment's plan: the direct test dependencies pip
found no wheel for, left out one pip attempt at a time (verifier._prepare_without_wheel_less).

A long test requirements file of integration SDKs (ansible's 2019 `units.txt`: placebo, pycrypto, f5-sdk,
f5-icontrol-rest, linode-python, published as source only) costs one failing pip run per such line, 40-70 s
each on a loaded two-core machine; the environment itself is cached, the failures were not, so every
verification of the same plan paid them again. The memo is keyed by everything that decides pip's answer
(the plan's lines and constraints, the interpreter) and lives beside the cached environments."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.replace import replace_bytes


@dataclass(frozen=True)
class Learnt:
    left_out: list[str]  # the plan's lines pip found no wheel for, in the order they were found
    message: str  # pip's first error, the reason when the tests import one of them after all
    fix: str | None
    log: str


def memo_path(cache: Path, lines: list[str], constraints: list[str], python: str | None) -> Path:
    key = canonical_digest({"lines": lines, "constraints": constraints, "python": python})
    return cache / "wheel-less" / f"{key[:24]}.json"


def recall(path: Path) -> Learnt | None:
    """What was learnt for this plan, or None (never learnt, or a file this version cannot read)."""
    try:
        data = json.loads(path.read_text())
        return Learnt([str(x) for x in data["left_out"]], str(data["message"]), data.get("fix"), str(data["log"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember(path: Path, learnt: Learnt) -> None:
    """Kept whole or not at all, so a verification running beside this one never reads half."""
    try:
        replace_bytes(path, json.dumps({"left_out": learnt.left_out, "message": learnt.message, "fix": learnt.fix,
                                        "log": learnt.log}).encode())
    except OSError:
        pass  # a cache that cannot be written costs the next run time, never its verdict
