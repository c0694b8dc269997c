"""signoff.gate: a person's approval, bound to the exact content, before code runs.

    from signoff.gate import gate

    @gate(approvers=["alice"], room="ops")
    def deploy(service: str, version: str) -> None: ...

The rooms server decides (approval cards: people only, named responders, first allowed answer);
this package binds the content digest into the card (binding.py), reads the outcome back from the
server (approvals.py), and signs and records every decision (record.py). `signoff.mcp` uses the
same approvals for its tools.
"""

from signoff.gate.agent import RoomsAgent
from signoff.gate.approvals import Approvals, Decision, decide
from signoff.gate.binding import BoundContent, bound_content, card_title, content_digest
from signoff.gate.gate import Gate, GatedBlock, GateRefused, GateTimeout, call_content, gate
from signoff.gate.record import PREDICATE_TYPE

__all__ = [
    "PREDICATE_TYPE",
    "Approvals",
    "BoundContent",
    "Decision",
    "Gate",
    "GateRefused",
    "GateTimeout",
    "GatedBlock",
    "RoomsAgent",
    "bound_content",
    "call_content",
    "card_title",
    "content_digest",
    "decide",
    "gate",
]
