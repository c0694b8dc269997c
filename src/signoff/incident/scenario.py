"""A reproducible incident: organisations plus a way to make their traffic.

A real incident brings its own evidence (each organisation's configured captures). The scripted
runs (`signoff incident demo`, the red team, the preflight's scratch run) need traffic made on the
spot, with the bug and again with the fixes: a `Scenario` gives both, and its organisations with
their protected values (which a red team attacks with). The PayCo/ShopCo demo is one
(`signoff.demo.payco_shopco.scenario`); the product never imports it, faces hand it in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from signoff.incident.parties import Parties, with_captures


@dataclass(frozen=True)
class Rerun:
    """The traffic sent again with every fix: how many requests, how many accepted and rejected."""

    events: int
    accepted: int
    rejected: int


@dataclass(frozen=True)
class Scenario:
    name: str
    parties: Parties
    # Writes each organisation's capture of the traffic with the bug into the folder: {org: path}.
    reproduce: Callable[[Path], dict[str, Path]]
    # Sends the traffic again with every fix (into the folder) and counts it.
    rerun: Callable[[Path], Rerun]

    def captured_in(self, folder: Path) -> Parties:
        """The organisations, each with its capture of the traffic in `folder` (where `reproduce`
        writes it: `<org>-capture.jsonl`)."""
        return with_captures(self.parties, {o.key: [Path(folder) / f"{o.key}-capture.jsonl"] for o in self.parties})


__all__ = ["Rerun", "Scenario"]
