"""/health, /ready and /metrics of the server, in-process: what each says, and who may scrape."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from signoff.kernel import metrics
from signoff.kernel.clock import FixedClock
from signoff.kernel.settings import Settings
from signoff.ledger import NewEvent, NewJob, SqlLedger, sign_checkpoint
from signoff.rooms.http.app import create_app
from signoff.trust import KeyStore

TOKEN = "a-scrape-token-of-enough-length"


def _settings(tmp_path: Path, serve: str = "") -> Settings:
    config = tmp_path / "signoff.toml"
    config.write_text(f"[serve]\n{serve}\n")
    return Settings.load(home=tmp_path / "home", db_url=f"sqlite:///{tmp_path / 'db.sqlite'}",
                         env={"SIGNOFF_CONFIG": str(config)}, cwd=tmp_path)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


def _app(tmp_path: Path, clock: FixedClock, serve: str = "") -> tuple[TestClient, SqlLedger]:
    settings = _settings(tmp_path, serve)
    ledger = SqlLedger.from_url(settings.db_url, clock)
    app = create_app(ledger, settings)
    return TestClient(app, client=("127.0.0.1", 50000), raise_server_exceptions=False), ledger


@pytest.fixture(autouse=True)
def _metrics_off_afterwards() -> object:
    yield None
    metrics.disable()


def test_health_and_ready_on_a_fresh_server(tmp_path: Path, clock: FixedClock) -> None:
    client, _ = _app(tmp_path, clock)
    health = client.get("/health")
    assert health.status_code == 200 and health.json()["ok"] is True and health.json()["sequence"] == 0
    ready = client.get("/ready")
    assert ready.status_code == 200, ready.text
    assert {name: c["ok"] for name, c in ready.json()["checks"].items()} == {
        "database": True, "migrations": True, "workers": True}


def test_not_ready_when_no_worker_claims_the_outbox(tmp_path: Path, clock: FixedClock) -> None:
    client, ledger = _app(tmp_path, clock, "ready_outbox_wait_seconds = 60")
    ledger.append("BUG-1", None, [NewEvent("step", {})], [NewJob("k1", "desk.reproduce", {})])
    clock.advance(30)
    assert client.get("/ready").status_code == 200  # waiting, within the limit
    clock.advance(31)
    ready = client.get("/ready")
    assert ready.status_code == 503
    assert ready.json()["checks"]["workers"] == {"ok": False, "detail": "oldest claimable job waited 61 s (limit 60 s)"}


def test_the_worker_check_can_be_left_out(tmp_path: Path, clock: FixedClock) -> None:
    client, ledger = _app(tmp_path, clock, "ready_outbox_wait_seconds = 0")
    ledger.append("BUG-1", None, [NewEvent("step", {})], [NewJob("k1", "desk.reproduce", {})])
    clock.advance(10_000)
    ready = client.get("/ready")
    assert ready.status_code == 200 and "workers" not in ready.json()["checks"]


def test_not_ready_beside_a_database_at_another_schema(tmp_path: Path, clock: FixedClock) -> None:
    client, ledger = _app(tmp_path, clock)
    with ledger.engine.begin() as conn:  # another build migrated (or not) the database under us
        conn.execute(text("UPDATE alembic_version SET version_num = '0002' WHERE version_num = '0003'"))
    ready = client.get("/ready")
    assert ready.status_code == 503
    assert ready.json()["checks"]["migrations"]["ok"] is False
    assert "0002" in ready.json()["checks"]["migrations"]["detail"]


def test_metrics_count_by_route_template_and_read_the_database(tmp_path: Path, clock: FixedClock) -> None:
    client, ledger = _app(tmp_path, clock)
    ledger.append("BUG-1", None, [NewEvent("step", {})], [NewJob("k1", "desk.reproduce", {})])
    sign_checkpoint(ledger, KeyStore(tmp_path / "keys").ensure("ledger"))
    for agent in ("a-1", "a-2", "../../etc"):  # three raw paths, one route: one series
        client.get(f"/agents/{agent}/events")
    body = client.get("/metrics").text
    series = [line for line in body.splitlines() if line.startswith("signoff_http_requests_total{")]
    assert any('route="/agents/{agent_id}/events"' in line and 'status="4xx"' in line and line.endswith(" 2.0")
               for line in series), series
    assert not any("a-1" in line or "etc" in line for line in body.splitlines())
    assert 'signoff_outbox_jobs{status="pending"} 1.0' in body
    assert "signoff_ledger_head_seq 1.0" in body
    assert 'signoff_ledger_checkpoints_total{source="serve"} 1.0' in body
    assert "signoff_ledger_last_checkpoint_timestamp_seconds" in body


def test_what_the_cli_workers_counted_reaches_the_servers_metrics(tmp_path: Path, clock: FixedClock) -> None:
    # The workers (`signoff desk work`, `repair run`) are CLI commands that end: their sandbox runs,
    # verdicts and checkpoints are added to the home's totals, which the server exports.
    from tests.support.cli import run_cli

    settings = _settings(tmp_path)
    SqlLedger.from_url(settings.db_url, clock).append("BUG-1", None, [NewEvent("step", {})])
    env = {"SIGNOFF_HOME": str(settings.home), "SIGNOFF_DB": settings.db_url,
           "SIGNOFF_CONFIG": str(tmp_path / "signoff.toml")}
    for _ in range(2):
        assert run_cli(["ledger", "checkpoint"], env).exit_code == 0
    client, _ = _app(tmp_path, clock)
    body = client.get("/metrics").text
    assert 'signoff_ledger_checkpoints_total{source="commands"} 2.0' in body
    assert 'signoff_ledger_checkpoints_total{source="serve"}' not in body  # this server signed none

    assert run_cli(["ledger", "checkpoint"], env).exit_code == 0  # counted while the server runs
    assert 'signoff_ledger_checkpoints_total{source="commands"} 3.0' in client.get("/metrics").text


def test_a_damaged_totals_file_costs_its_series_not_the_scrape(tmp_path: Path, clock: FixedClock) -> None:
    totals = tmp_path / "home" / metrics.COMMAND_TOTALS
    totals.parent.mkdir(parents=True)
    totals.write_text('{"counters": [{"name": "signoff_made_up_total", "labels": {}, "value": 9}, '
                      '{"name": "signoff_verdicts_total", "labels": {"workflow": "repair"}, "value": 1}, "x"]}')
    client, _ = _app(tmp_path, clock)
    scraped = client.get("/metrics")
    assert scraped.status_code == 200 and 'source="commands"' not in scraped.text
    totals.write_text("{not json")
    assert client.get("/metrics").status_code == 200


def test_metrics_are_not_published_through_a_proxy_without_the_token(tmp_path: Path, clock: FixedClock) -> None:
    client, _ = _app(tmp_path, clock, f'metrics_token = "{TOKEN}"')
    assert client.get("/metrics").status_code == 200  # a local scraper, no proxy
    proxied = {"X-Forwarded-For": "203.0.113.9"}
    assert client.get("/metrics", headers=proxied).status_code == 404
    assert client.get("/metrics", headers={**proxied, "Authorization": "Bearer wrong-token-wrong-token"}
                      ).status_code == 404
    assert client.get("/metrics", headers={**proxied, "Authorization": f"Bearer {TOKEN}"}).status_code == 200
    remote = TestClient(client.app, client=("198.51.100.7", 40000))
    assert remote.get("/metrics").status_code == 404
    assert remote.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


@pytest.mark.parametrize("serve", ['metrics_token = "short"', "ready_outbox_wait_seconds = -1",
                                   'ready_outbox_wait_seconds = "soon"'])
def test_bad_ops_settings_are_refused_with_a_fix(tmp_path: Path, clock: FixedClock, serve: str) -> None:
    from signoff.kernel.errors import UsageError

    with pytest.raises(UsageError) as refused:
        _app(tmp_path, clock, serve)
    assert refused.value.fix


def test_the_unix_socket_is_the_owners_and_groups_and_never_replaces_a_file(tmp_path: Path) -> None:
    import socket
    import stat

    from signoff.cli.serve import _listen_unix
    from signoff.kernel.errors import UsageError
    from tests.support.pg import socket_dir

    where = socket_dir("signoff-ops-") / "s.sock"
    first = _listen_unix(where)
    assert stat.S_IMODE(where.stat().st_mode) == 0o660
    first.close()  # a server that died leaves its socket file behind: the next one replaces it
    again = _listen_unix(where)
    probe = socket.socket(socket.AF_UNIX)
    probe.connect(str(where))
    probe.close()
    again.close()

    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    with pytest.raises(UsageError) as refused:
        _listen_unix(a_file)
    assert "not a socket" in refused.value.message and a_file.read_text() == "keep me"


@pytest.fixture
def restored_logging() -> object:
    import logging

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield None
    root.handlers[:] = handlers
    root.setLevel(level)
    from signoff.kernel.logs import QUIET_CLIENTS, REQUESTS

    for name in (REQUESTS, *QUIET_CLIENTS):
        logging.getLogger(name).setLevel(logging.NOTSET)


def test_json_logs_with_one_line_per_request_and_no_raw_path(tmp_path: Path, clock: FixedClock,
                                                               capsys: pytest.CaptureFixture[str],
                                                               restored_logging: object) -> None:
    import json
    import logging

    from signoff.kernel.logs import LogConfig, configure

    configure(LogConfig.load(Settings.load(home=tmp_path / "h", env={"SIGNOFF_CONFIG": str(_log_config(tmp_path))},
                                           cwd=tmp_path)))
    client, _ = _app(tmp_path, clock)
    client.get("/agents/secret-looking-id/events?token=hunter2")
    logging.getLogger("signoff.test").warning("a plain %s", "warning", extra={"fields": {"case": "BUG-1"}})
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    request = next(line for line in lines if line["logger"] == "signoff.requests")
    assert request["route"] == "/agents/{agent_id}/events" and request["method"] == "GET"
    assert request["status"] == 401 and request["level"] == "info" and request["seconds"] >= 0
    assert not [line for line in lines if "secret-looking-id" in json.dumps(line) or "hunter2" in json.dumps(line)]
    plain = next(line for line in lines if line["logger"] == "signoff.test")
    assert plain["message"] == "a plain warning" and plain["case"] == "BUG-1" and plain["time"].endswith("Z")


def _log_config(tmp_path: Path) -> Path:
    config = tmp_path / "log.toml"
    config.write_text('[log]\nformat = "json"\nlevel = "info"\nrequests = true\n')
    return config


@pytest.mark.parametrize("log", ['format = "xml"', 'level = "loud"', 'requests = "yes"', 'colour = true'])
def test_bad_log_settings_are_refused_with_a_fix(tmp_path: Path, log: str) -> None:
    from signoff.kernel.errors import UsageError
    from signoff.kernel.logs import LogConfig

    config = tmp_path / "signoff.toml"
    config.write_text(f"[log]\n{log}\n")
    with pytest.raises(UsageError) as refused:
        LogConfig.load(Settings.load(home=tmp_path, env={"SIGNOFF_CONFIG": str(config)}, cwd=tmp_path))
    assert refused.value.fix
