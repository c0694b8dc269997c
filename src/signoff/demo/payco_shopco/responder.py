"""The demo's scripted responder: the offline default that writes the company agents' drafts in the
scripted incident runs (`signoff incident demo`, `redteam`, `preflight`). It states exactly the
shareable facts it was given, citing them.

The incident asks for the `responder` role with this script's name (`RESPONDER_SCRIPT`); a real
incident configures `[agents.responder]` with a provider instead. It is registered here, in the
demo, because no product package registers scripted agents (tests/unit/test_layers.py).
"""

from __future__ import annotations

from typing import Any

from signoff.agents import register_script
from signoff.incident.playbooks.company import RESPONDER_SCRIPT


def responder(task: dict[str, Any]) -> dict[str, Any]:
    facts = task.get("facts", [])
    return {"message": " ".join(str(f["text"]) for f in facts) or "Nothing to share yet.",
            "cites": [str(f["id"]) for f in facts] or ["none"]}


register_script("responder", responder, RESPONDER_SCRIPT)
