"""What an operator's tools ask a running server: is it alive (`/health`), may it take traffic
(`/ready`), and what has it done (`/metrics`, Prometheus' text format).

- `/health` answers as long as the process serves requests and can read its database's chain head.
- `/ready` checks what taking traffic needs: the database answers, its schema is at the heads this
  build migrates to (a replica running older code beside a migrated database is not ready), and the
  outbox is being worked: no job has waited for a worker longer than `[serve] ready_outbox_wait_seconds`
  (default 300; 0 leaves the check out, for a server that runs no workers on purpose).
- `/metrics`: the counters `signoff.kernel.metrics` declares (this process's), and gauges read from the
  database at each scrape (every process's work: the outbox, the chain head, the last checkpoint). It
  answers a local scraper that comes without a proxy, or anyone with `[serve] metrics_token` as a bearer
  token; through a proxy without the token it is a 404, so a public site does not publish its counters.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from signoff.kernel import metrics
from signoff.kernel.errors import UsageError
from signoff.kernel.logs import REQUESTS
from signoff.kernel.settings import Settings
from signoff.kernel.wire import UNIX_PEER
from signoff.ledger.checkpoints import last_signed_at
from signoff.ledger.engine import HEADS, stored_revisions
from signoff.ledger.outbox import Outbox
from signoff.ledger.store import SqlLedger
from signoff.rooms.protocol import wire as protocol

DEFAULT_OUTBOX_WAIT = 300.0
_requests_log = logging.getLogger(REQUESTS)
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost", UNIX_PEER})  # a Unix-socket peer is on this machine
_PROXY_HEADERS = ("x-forwarded-for", "forwarded", "x-real-ip")


def outbox_wait_limit(settings: Settings | None) -> float:
    value = (settings.section("serve") if settings is not None else {}).get(
        "ready_outbox_wait_seconds", DEFAULT_OUTBOX_WAIT)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise UsageError(f"[serve] ready_outbox_wait_seconds must be a number of seconds (0: no check), not {value!r}",
                         f"set ready_outbox_wait_seconds = {int(DEFAULT_OUTBOX_WAIT)} in signoff.toml")
    return float(value)


def metrics_token(settings: Settings | None) -> str | None:
    value = (settings.section("serve") if settings is not None else {}).get("metrics_token")
    if value is not None and (not isinstance(value, str) or len(value) < 16):
        raise UsageError("[serve] metrics_token must be a string of at least 16 characters",
                         "generate one: python -c 'import secrets; print(secrets.token_urlsafe(32))'")
    return value


def readiness(ledger: SqlLedger, wait_limit: float) -> tuple[bool, dict[str, dict[str, Any]]]:
    checks: dict[str, dict[str, Any]] = {}
    try:
        seq, _ = ledger.head()
        checks["database"] = {"ok": True, "detail": f"chain head at seq {seq}"}
    except Exception as exc:  # any failure to read is "not ready", said, not a 500
        checks["database"] = {"ok": False, "detail": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
        return False, checks
    with ledger.engine.connect() as conn:
        at = stored_revisions(conn)
    checks["migrations"] = {"ok": at == HEADS, "detail": "at head" if at == HEADS else
                            f"database at {sorted(at)}, this build needs {sorted(HEADS)}"}
    if wait_limit > 0:
        waited = Outbox(ledger).oldest_wait(ledger.clock.now())
        checks["workers"] = {"ok": waited <= wait_limit,
                             "detail": f"oldest claimable job waited {waited:.0f} s (limit {wait_limit:.0f} s)"}
    return all(c["ok"] for c in checks.values()), checks


def _may_scrape(request: Request, token: str | None) -> bool:
    given = request.headers.get("authorization", "")
    if token is not None and given.startswith("Bearer ") and hmac.compare_digest(given[7:].strip(), token):
        return True
    client = request.client.host if request.client else ""
    return client in LOOPBACK and not any(h in request.headers for h in _PROXY_HEADERS)


class _DatabaseGauges:
    """Prometheus collector: gauges read from the database at each scrape."""

    def __init__(self, ledger: SqlLedger) -> None:
        self.ledger = ledger

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        queue = Outbox(self.ledger)
        jobs = GaugeMetricFamily("signoff_outbox_jobs", "Outbox jobs by status.", labels=["status"])
        for status, n in sorted(queue.counts().items()):
            jobs.add_metric([status], float(n))
        yield jobs
        yield GaugeMetricFamily("signoff_outbox_oldest_wait_seconds", "Seconds the longest-waiting claimable "
                                "job has waited for a worker (the outbox's lag).",
                                value=queue.oldest_wait(self.ledger.clock.now()))
        yield GaugeMetricFamily("signoff_ledger_head_seq", "Position of the ledger's chain head.",
                                value=float(self.ledger.head()[0]))
        signed_at = last_signed_at(self.ledger.engine)
        if signed_at is not None:
            yield GaugeMetricFamily("signoff_ledger_last_checkpoint_timestamp_seconds",
                                    "When the newest checkpoint was signed (Unix time).",
                                    value=datetime.fromisoformat(signed_at.replace("Z", "+00:00")).timestamp())


class _Counters:
    """Prometheus collector: each declared counter, once with `source="serve"` (this process's count
    since it started) and once with `source="commands"` (the totals the CLI commands sharing this
    home added when they ended: the workers' sandbox runs, verdicts, checkpoints). Every replica on
    one home shows the same `commands` series: add them up across replicas with max, not sum."""

    def __init__(self, own: metrics.Tally, totals: Path | None) -> None:
        self.own = own
        self.totals = totals

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily

        families = {name: CounterMetricFamily(name, m.help, labels=[*m.labels, "source"])
                    for name, m in metrics.METRICS.items() if m.kind == "counter"}
        for source, values in (("serve", self.own.values()),
                               ("commands", metrics.command_totals(self.totals) if self.totals else {})):
            for (name, labels), value in sorted(values.items()):
                if name in families:
                    by_name = dict(labels)
                    families[name].add_metric([by_name.get(k, "") for k in metrics.METRICS[name].labels] + [source],
                                              value)
        yield from families.values()


class Metrics:
    """This app's Prometheus registry, fed by `signoff.kernel.metrics` once `enable`d."""

    def __init__(self, ledger: SqlLedger, home: Path | None = None) -> None:
        from prometheus_client import CollectorRegistry, Histogram

        self.registry = CollectorRegistry()
        self._own = metrics.Tally()
        self._histograms: dict[str, Any] = {}
        for name, m in metrics.METRICS.items():
            if m.kind == "histogram":
                self._histograms[name] = Histogram(name, m.help, m.labels, registry=self.registry)
        self.registry.register(_Counters(self._own, home / metrics.COMMAND_TOTALS if home else None))  # type: ignore[arg-type]
        self.registry.register(_DatabaseGauges(ledger))  # type: ignore[arg-type]

    def enable(self) -> None:
        metrics.enable(self._own.add, self._observe)

    def _observe(self, name: str, value: float, labels: dict[str, str]) -> None:
        histogram = self._histograms[name]
        (histogram.labels(**labels) if labels else histogram).observe(value)

    def exposition(self) -> bytes:
        from prometheus_client import generate_latest

        return bytes(generate_latest(self.registry))


class RequestMetrics:
    """ASGI middleware: each HTTP request counted by its route's template (never its raw path), and the
    time to its response's start."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [0]

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
                route = getattr(scope.get("route"), "path", None) or "unmatched"
                metrics.observe("signoff_http_request_seconds", time.perf_counter() - started, route=route)
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            method = _method(scope.get("method", ""))
            metrics.count("signoff_http_requests_total", route=route, method=method,
                          status=f"{status[0] // 100}xx" if status[0] else "none")
            if _requests_log.isEnabledFor(logging.INFO):  # `[log] requests = true`
                _requests_log.info("%s %s %s", method, route, status[0] or "-", extra={"fields": {
                    "route": route, "method": method, "status": status[0] or None,
                    "seconds": round(time.perf_counter() - started, 6)}})


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _method(method: str) -> str:
    return method if method in _METHODS else "other"


def install(app: FastAPI, ledger: SqlLedger, settings: Settings | None, head: Any) -> None:
    """Add /health, /ready and /metrics, and the request counter, to `app`. `head()` gives /health's
    chain position."""
    wait_limit = outbox_wait_limit(settings)
    token = metrics_token(settings)
    collected = Metrics(ledger, settings.home if settings is not None else None)
    collected.enable()
    app.state.metrics = collected
    app.add_middleware(RequestMetrics)
    router = APIRouter()

    @router.get("/health")
    def health() -> Response:
        try:
            sequence = head()
        except Exception as exc:  # alive but cannot read its database: said as such, not a 500
            return JSONResponse({"ok": False, "server": protocol.server_info(),
                                 "problem": f"database: {type(exc).__name__}"}, status_code=503)
        return JSONResponse({"ok": True, "server": protocol.server_info(), "sequence": sequence})

    @router.get("/ready")
    def ready() -> Response:
        ok, checks = readiness(ledger, wait_limit)
        return JSONResponse({"ready": ok, "checks": checks}, status_code=200 if ok else 503)

    @router.get("/metrics")
    def scrape(request: Request) -> Response:
        if not _may_scrape(request, token):
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        return Response(collected.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")

    app.include_router(router)
