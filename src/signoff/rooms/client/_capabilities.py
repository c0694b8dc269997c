"""What a rooms server offers, negotiated from its operation catalogue (`GET /agents/{id}/ops`),
never assumed from who it claims to be.

signoff's server has approval cards (`request_approval`) and room links (`link_rooms`); Switch 0.19
has room links but no approval cards. Where approval cards are missing a decision is asked
for as an addressed command and accepted only against its receipt (the approver's bound sender id,
the server-assigned message id, the exact text): `decision_channel` says which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Capabilities:
    operations: frozenset[str]

    @classmethod
    def from_catalogue(cls, catalogue: Mapping[str, Any]) -> Capabilities:
        ops = catalogue.get("operations", catalogue)
        return cls(frozenset(str(name) for name in ops) if isinstance(ops, Mapping) else frozenset())

    @property
    def approval_cards(self) -> bool:
        return "request_approval" in self.operations

    @property
    def room_links(self) -> bool:
        return "link_rooms" in self.operations

    @property
    def decision_channel(self) -> str:
        """`approval_card`, or `addressed_command` (receipt-checked) where cards are missing."""
        return "approval_card" if self.approval_cards else "addressed_command"

    def without(self, *names: str) -> Capabilities:
        """This view with `names` switched off: a client may decide not to use what a server offers
        (to run a fallback on purpose, e.g. decisions by addressed commands on signoff's own server)."""
        return Capabilities(self.operations - frozenset(names))

    def missing(self, *names: str) -> list[str]:
        return [n for n in names if n not in self.operations]
