"""The concierge as a process: the crew's public face, an `AgentLoop` in the public intake room.

    notices   it delivers the desk's notifications (the outbox's notify jobs, `notify.Concierge`,
              with the desk's concierge credential): each goes on its reporter's tracking page and,
              for a reporter linked to a room user (`crew.link_reporter`), becomes a card ("Is this
              the bug you saw?", "Does the live fix work for you?") asked through this loop.
    answers   on every event it gets (a card's outcome, a reporter's reason note) it applies the
              answered cards by the desk's rules (`Concierge.collect_answers`): a "no" carries the
              reason its reporter posted with it, which the desk passes through the airlock.
    talk      a person who addresses it is answered. Their text is scanned by the airlock and never
              read as an instruction or a command: text the airlock holds is not read at all; a
              linked reporter hears the public state of their own reports (what their tracking page
              shows), anyone else how to get one linked.

What it cannot do: it holds the concierge credential only, so the desk refuses it the dossier, the
repository, the change diff and every submission (engineering's); it is a member of the intake room
only, so the rooms server refuses it the engineering room and every bug room; and it has no
workspace: no sandbox, no checkout, no model. No allowlisted crew command is for the concierge, so
a command addressed to it is plain talk.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from signoff import airlock
from signoff.desk.credentials import DeskCaller, require
from signoff.desk.crew import Crew, reporter_links
from signoff.desk.crew.commands import strip_mentions
from signoff.desk.crew.questions import LoopQuestions
from signoff.desk.notify import Cards, Concierge
from signoff.desk.workflow import Desk
from signoff.kernel.errors import SignoffError
from signoff.rooms.client import AgentLoop, Capabilities, Transport


@dataclass
class LoopCards:
    """`notify.Cards` through the concierge's agent loop (called from a worker thread)."""

    loop: AgentLoop
    room_id: str
    users: dict[str, str]

    def ask(self, request_id: str, title: str, options: list[dict[str, str]], expires_at: float,
            responders: list[str]) -> None:
        self.loop.blocking(self.loop.call(self.room_id, "request_approval", request_id=request_id, title=title,
                                          options=options, expires_at=expires_at, responders=responders))

    def outcome(self, request_id: str) -> tuple[str, str | None]:
        card = self.loop.blocking(self.loop.call(self.room_id, "get_approval", request_id=request_id))
        reason = card.get("reason")
        return str(card["state"]), (str(reason) if isinstance(reason, str) else None)


@dataclass
class ConciergeMember:
    """The concierge's behaviour, run by `crew_serve.run_member` on an `AgentLoop`."""

    desk: Desk
    crew: Crew
    transport: Transport
    credential: DeskCaller  # the desk's concierge credential: notices and cards, nothing else
    role: str = "concierge"
    loop: AgentLoop | None = field(default=None, repr=False)
    # Operations the concierge will not use even where the server offers them (to run the
    # addressed-question fallback on purpose, e.g. `("request_approval",)` on signoff's server).
    without: tuple[str, ...] = ()
    channel: str | None = None  # the decision channel, negotiated from the server's catalogue once

    def __post_init__(self) -> None:
        require(self.credential, "concierge", what="run the concierge")

    @property
    def room(self) -> str:
        return self.crew.intake_room

    def _cards(self) -> Cards:
        """Approval cards where the server has them, else addressed questions (`crew.questions`)."""
        assert self.loop is not None
        links = reporter_links(self.desk.ledger)
        users = {rid: link["user"] for rid, link in links.items()}
        if self.channel is None:
            offered = Capabilities.from_catalogue(self.loop.blocking(self.transport.operations()))
            self.channel = offered.without(*self.without).decision_channel
        if self.channel == "approval_card":
            return LoopCards(self.loop, self.room, users)
        return LoopQuestions(self.loop, self.desk.ledger, self.room, users,
                             {link["user"]: link["sender"] for link in links.values()}, self.desk.clock)

    def _concierge(self) -> Concierge:
        return Concierge(self.desk, self.credential, self._cards())

    def work_once(self) -> bool:
        """Deliver one due notification (in a worker thread); False when none was due."""
        concierge = self._concierge()
        delivered = concierge.run_once()
        concierge.collect_answers()
        return delivered

    async def on_event(self, loop: AgentLoop, env: dict[str, Any]) -> None:
        if env.get("room_id") != self.room:
            return
        payload = env.get("payload") or {}
        cards = await asyncio.to_thread(self._cards)
        answered = isinstance(cards, LoopQuestions) and await asyncio.to_thread(cards.judge, env)
        if (not answered and env.get("type") == "message" and payload.get("addressed") is True
                and payload.get("sender") != self.crew.senders["concierge"]):
            reply = await asyncio.to_thread(self.reply_to, str(payload.get("sender")), str(payload.get("body", "")))
            await loop.send(self.room, reply, key=f"reply:{payload.get('message_id')}")
        # A card's outcome, or the reason note a reporter posts after answering "no".
        await asyncio.to_thread(self._concierge().collect_answers)

    def reply_to(self, sender: str, body: str) -> str:
        """The answer to a person's message: never built from their words, which are data."""
        try:
            verdict = airlock.scan(strip_mentions(body)[:20_000])
        except SignoffError as exc:  # binary or oversize: not text the desk reads
            return f"Your message could not be read: {exc.message}. Describe your bug in plain words."
        if verdict.quarantined:
            return (f"Your message was held by the airlock ({', '.join(verdict.families)}) and was not read. "
                    "Describe your bug in plain words, or file a report on the desk.")
        mine = sorted(rid for rid, link in reporter_links(self.desk.ledger).items() if link["sender"] == sender)
        if not mine:
            return ("I answer reporters about the reports linked to their room account. File a report on the "
                    "desk and ask its owner to link it to you here.")
        lines = []
        for rid in mine:
            seen = self.desk.track(DeskCaller("reporter", rid, report_id=rid))
            ask = {"reproduction": ": is the failing test the bug you saw? (your card)",
                   "release": ": does the live fix work for you? (your card)"}.get(seen["question"] or "", "")
            lines.append(f"{rid} ({seen['bug_id']}) is {seen['state']}{ask}")
        return ("Your reports: " + "; ".join(lines) + ". I cannot run code or read the repository: "
                "the engineering crew works on the bug.")
