"""Reading the chain a page at a time, for people browsing it (the console's ledger page): events
newest or oldest first, of one type or all, whose case, type or payload contain every word asked
for. Read-only; the database does the filtering and the paging, so a long chain is never loaded."""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import ColumnElement, and_, func, or_, select, true

from signoff.ledger.engine import single_statement
from signoff.ledger.events import Event, stored_event
from signoff.ledger.schema import events
from signoff.ledger.store import SqlLedger


class EventPage(NamedTuple):
    events: list[Event]
    matched: int  # events the query matches in all (the page holds at most `limit` of them)


def _matches(words: list[str], type_: str | None) -> ColumnElement[bool]:
    found: list[ColumnElement[bool]] = [] if type_ is None else [events.c.type == type_]
    for word in words:
        folded = word.casefold()
        found.append(or_(*[func.lower(c).contains(folded, autoescape=True)
                           for c in (events.c.case_id, events.c.type, events.c.payload)]))
    return and_(true(), *found)


def event_types(ledger: SqlLedger) -> dict[str, int]:
    """Each event type in the chain with how many events it has."""
    with single_statement(ledger.engine) as conn:
        rows = conn.execute(select(events.c.type, func.count()).group_by(events.c.type).order_by(events.c.type)).all()
    return {str(t): int(n) for t, n in rows}


def event_page(ledger: SqlLedger, words: list[str], type_: str | None, newest_first: bool, offset: int,
               limit: int) -> EventPage:
    where = _matches(words, type_)
    order = events.c.seq.desc() if newest_first else events.c.seq
    with single_statement(ledger.engine) as conn:
        matched = int(conn.execute(select(func.count()).select_from(events).where(where)).scalar() or 0)
    with single_statement(ledger.engine) as conn:
        rows = conn.execute(select(events).where(where).order_by(order).offset(offset).limit(limit)).all()
    return EventPage([stored_event(r) for r in rows], matched)  # type: ignore[arg-type]
