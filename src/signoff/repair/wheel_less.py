"""What an earlier verification learnt about a test environment's plan: the direct test dependencies pip
found no wheel for, left out one pip attempt at a time (verifier._prepare_without_wheel_less).

A long test requirements file of integration SDKs (ansible's 2019 `units.txt`: placebo, pycrypto, f5-sdk,
f5-icontrol-rest, linode-python, published as source only) costs one failing pip run per such line, 40-70 s
each on a loaded two-core machine; the environment itself is cached, the failures were not, so every
verification of the same plan paid them again. The memo is keyed by everything that decides pip's answer
(the plan's lines and constraints, the interpreter) and lives beside the cached environments.

So is pip's **final** failure for the plan (`final`: nothing left to leave out, the same error whatever the harness
imports), when pip's answer cannot change without the plan changing: no distribution, or a conflict, with no sign
of a network that failed. A plan whose test dependency has no wheel and is needed cost 40-166 s of pip on every
variant of a case; the next verification of the same plan says the same at once."""

from __future__ import annotations

import json
import re
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
    final: dict[str, str | None] | None = None  # pip's final error for the plan (message, fix, log), when decided


# What pip says only when its answer follows from the plan itself; what it says when the index cannot be reached.
_DECIDED = re.compile(r"No matching distribution found|ResolutionImpossible|conflicting dependencies")
_NETWORK = re.compile(r"connected to the Internet|Failed to establish a new connection|NewConnectionError|"
                      r"Temporary failure in name resolution|Network is unreachable|Retrying \(Retry|timed out|"
                      r"Connection reset|HTTP error [45]\d\d|SSLError|ProxyError")


def decided(message: str, log: str) -> bool:
    """Whether pip's failure follows from the plan alone, so that running pip again would say the same."""
    return bool(_DECIDED.search(message)) and not _NETWORK.search(f"{message}\n{log}")


# The rules that decide what is left out (testenv.wheel_less_line): a memo an older rule wrote, a final failure above
# all, is never found again (2: a direct requirement pip's conflict names, websockets' mitmproxy; blind18bz).
RULES = 2


def memo_path(cache: Path, lines: list[str], constraints: list[str], python: str | None) -> Path:
    key = canonical_digest({"lines": lines, "constraints": constraints, "python": python, "rules": RULES})
    return cache / "wheel-less" / f"{key[:24]}.json"


def recall(path: Path) -> Learnt | None:
    """What was learnt for this plan, or None (never learnt, or a file this version cannot read)."""
    try:
        data = json.loads(path.read_text())
        final = data.get("final")
        return Learnt([str(x) for x in data["left_out"]], str(data["message"]), data.get("fix"), str(data["log"]),
                      {k: (None if final.get(k) is None else str(final[k])) for k in ("message", "fix", "log")}
                      if isinstance(final, dict) and final.get("message") else None)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember(path: Path, learnt: Learnt) -> None:
    """Kept whole or not at all, so a verification running beside this one never reads half."""
    try:
        replace_bytes(path, json.dumps({"left_out": learnt.left_out, "message": learnt.message, "fix": learnt.fix,
                                        "log": learnt.log, "final": learnt.final}).encode())
    except OSError:
        pass  # a cache that cannot be written costs the next run time, never its verdict
