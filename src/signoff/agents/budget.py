"""Spend and rate limits, kept in the ledger database so they hold across processes.

A call reserves its worst-case cost before it starts, inside one write transaction that first reads
what is already spent or reserved (SQLite: BEGIN IMMEDIATE; PostgreSQL: the ledger's chain-head row
lock), so parallel callers are serialised at the reservation and cannot overshoot the cap together.
When the call ends the row is settled at its real cost; an unknown outcome stays at the worst case.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, func, insert, select, update

from signoff.agents.config import SpendLimits
from signoff.agents.tables import agent_calls
from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import RefusedError
from signoff.ledger import SqlLedger

HOUR = 3600.0


class BudgetExceeded(RefusedError):
    """A spend or rate limit refuses the call before it starts. `limit` names it
    (budget | calls_per_hour | calls_per_client_per_hour); `resets_at` is when it frees up (None: never)."""

    def __init__(self, limit: str, message: str, resets_at: float | None) -> None:
        when = f"resets at {utc_iso(resets_at)}" if resets_at is not None else "does not reset by itself"
        fix = {
            "budget": "wait for the reset, or raise [agents] budget_usd in signoff.toml",
            "calls_per_hour": "wait for the reset, or raise [agents] calls_per_hour",
            "calls_per_client_per_hour": "wait for the reset, or raise [agents] calls_per_client_per_hour",
        }.get(limit, "wait or raise the limit in signoff.toml")
        super().__init__(f"{message}; this limit {when}", fix)
        self.limit = limit
        self.resets_at = resets_at


def period_bounds(period: str, now: float) -> tuple[float, float | None]:
    """Start of the budget period containing `now`, and when the next one starts (None: never)."""
    if period == "total":
        return 0.0, None
    t = datetime.fromtimestamp(now, UTC)
    if period == "day":
        start = t.replace(hour=0, minute=0, second=0, microsecond=0)
        return start.timestamp(), start.timestamp() + 86_400
    start = t.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    nxt = start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)
    return start.timestamp(), nxt.timestamp()


def usd(micros: int | float) -> str:
    return f"${micros / 1_000_000:.4f}"


@dataclass(frozen=True)
class Usage:
    budget_micros: int
    period: str
    period_start: float
    resets_at: float | None
    charged_micros: int  # settled and unknown calls in this period
    in_flight_micros: int  # still reserved (running, or the process died: counted at worst case)
    calls_last_hour: int
    calls_per_hour: int
    calls_per_client_per_hour: int
    clients_last_hour: dict[str, int]

    @property
    def spent_micros(self) -> int:
        return self.charged_micros + self.in_flight_micros

    @property
    def remaining_micros(self) -> int:
        return max(0, self.budget_micros - self.spent_micros)

    def as_json(self) -> dict[str, Any]:
        return {
            "budget_usd": self.budget_micros / 1e6,
            "period": self.period,
            "period_start": utc_iso(self.period_start),
            "resets_at": utc_iso(self.resets_at) if self.resets_at is not None else None,
            "spent_usd": self.spent_micros / 1e6,
            "charged_usd": self.charged_micros / 1e6,
            "in_flight_usd": self.in_flight_micros / 1e6,
            "remaining_usd": self.remaining_micros / 1e6,
            "calls_last_hour": self.calls_last_hour,
            "calls_per_hour": self.calls_per_hour,
            "calls_per_client_per_hour": self.calls_per_client_per_hour,
            "clients_last_hour": self.clients_last_hour,
        }


class Budget:
    def __init__(self, ledger: SqlLedger, limits: SpendLimits) -> None:
        self.ledger = ledger
        self.limits = limits

    def reserve(self, call_id: str, client: str, role: str, provider: str, model: str, worst_micros: int) -> None:
        """Book `worst_micros` for a call about to start, or raise BudgetExceeded naming the limit."""
        lim = self.limits

        def run(conn: Connection) -> None:
            now = self.ledger.clock.now()
            self._check_rate(conn, now, None, lim.calls_per_hour, "calls_per_hour")
            self._check_rate(conn, now, client, lim.calls_per_client_per_hour, "calls_per_client_per_hour")
            start, resets = period_bounds(lim.period, now)
            spent = _spent(conn, start)
            if spent + worst_micros > lim.budget_micros:
                if worst_micros > lim.budget_micros:
                    message = (f"budget: this call may cost up to {usd(worst_micros)}, more than the whole "
                               f"{lim.period} budget of {usd(lim.budget_micros)}")
                else:
                    message = (f"budget: {usd(spent)} of {usd(lim.budget_micros)} this {lim.period} is spent or "
                               f"reserved; this call needs up to {usd(worst_micros)}")
                raise BudgetExceeded("budget", message, resets)
            conn.execute(insert(agent_calls).values(
                call_id=call_id, client=client[:200], role=role, provider=provider, model=model[:200],
                reserved_micros=worst_micros, charged_micros=None, status="reserved", started_at=now,
            ))

        self.ledger.transact(run)

    def _check_rate(self, conn: Connection, now: float, client: str | None, limit: int, name: str) -> None:
        query = select(agent_calls.c.started_at).where(agent_calls.c.started_at > now - HOUR)
        if client is not None:
            query = query.where(agent_calls.c.client == client)
        times = sorted(float(t) for t in conn.execute(query).scalars())
        if len(times) < limit:
            return
        # The window frees a slot when the oldest call that keeps it full leaves the last hour.
        resets = times[len(times) - limit] + HOUR if limit > 0 else None
        who = f"client {client!r}" if client is not None else "all clients"
        raise BudgetExceeded(name, f"{name}: {len(times)} calls in the last hour for {who}, limit {limit}", resets)

    def settle(self, call_id: str, charged_micros: int, status: str) -> None:
        """status: settled (cost known), unknown (booked at worst case), released (did not run)."""

        def run(conn: Connection) -> None:
            conn.execute(update(agent_calls).where(agent_calls.c.call_id == call_id).values(
                charged_micros=charged_micros, status=status, finished_at=self.ledger.clock.now()))

        self.ledger.transact(run)

    def usage(self) -> Usage:
        lim = self.limits
        now = self.ledger.clock.now()
        start, resets = period_bounds(lim.period, now)
        with self.ledger.engine.connect() as conn:
            charged = conn.execute(select(func.coalesce(func.sum(agent_calls.c.charged_micros), 0)).where(
                agent_calls.c.started_at >= start, agent_calls.c.status != "reserved")).scalar()
            flight = conn.execute(select(func.coalesce(func.sum(agent_calls.c.reserved_micros), 0)).where(
                agent_calls.c.started_at >= start, agent_calls.c.status == "reserved")).scalar()
            rows = conn.execute(select(agent_calls.c.client, func.count()).where(
                agent_calls.c.started_at > now - HOUR).group_by(agent_calls.c.client)).all()
        clients = {str(r[0]): int(r[1]) for r in rows}
        return Usage(lim.budget_micros, lim.period, start, resets, int(charged or 0), int(flight or 0),
                     sum(clients.values()), lim.calls_per_hour, lim.calls_per_client_per_hour, clients)

    def calls(self, limit: int = 50) -> list[dict[str, Any]]:
        with self.ledger.engine.connect() as conn:
            rows = conn.execute(select(agent_calls).order_by(agent_calls.c.started_at.desc()).limit(limit)).all()
        return [
            {"call_id": r.call_id, "client": r.client, "role": r.role, "provider": r.provider, "model": r.model,
             "reserved_usd": r.reserved_micros / 1e6,
             "charged_usd": None if r.charged_micros is None else r.charged_micros / 1e6,
             "status": r.status, "started_at": utc_iso(r.started_at)}
            for r in rows
        ]


def _spent(conn: Connection, since: float) -> int:
    # A settled row counts what it cost; a row still reserved counts its worst case.
    value = conn.execute(
        select(func.coalesce(func.sum(func.coalesce(agent_calls.c.charged_micros, agent_calls.c.reserved_micros)), 0))
        .where(agent_calls.c.started_at >= since)
    ).scalar()
    return int(value or 0)
