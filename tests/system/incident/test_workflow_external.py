"""The incident on an external server (`signoff serve`, started here as its own process): the run
provisions its people, agents, rooms and policies through the operator adapter and the agent
protocol only, never opening the server's database, and the incident passes the grader through
that server's API; with approval cards switched off in the client's view as well."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.incident.external import ServerProvisioner
from signoff.incident.grade import grade
from signoff.incident.stack import RunInfo
from signoff.incident.workflow import Incident, run_demo
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.trust import KeyStore
from tests.support.fixtures.incident import PAYCO_SHOPCO
from tests.support.serve import serve


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(url, the admin's user token) of one `signoff serve` that the module's runs share: every run
    provisions names of its own (a suffix per run), so runs on one server never meet, which is what
    an external server is for; starting one per test cost 4-12 s of setup each under load."""
    tmp_path = tmp_path_factory.mktemp("external")
    db = f"sqlite:///{tmp_path / 'server.db'}"
    ledger = SqlLedger.from_url(db)
    try:
        admin_token = str(RoomService(ledger).init()["admin_token"])
    finally:
        ledger.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    proc, url = serve({**env, "SIGNOFF_HOME": str(tmp_path / "server-home"), "SIGNOFF_DB": db})
    try:
        proc.ready(f"{url}/health")
        yield url, admin_token
    finally:
        proc.stop()


@pytest.mark.slow
@pytest.mark.parametrize("without", [(), ("request_approval",)], ids=["cards", "no-cards"])
def test_the_incident_on_an_external_server(node: str, server: tuple[str, str], tmp_path: Path,
                                            without: tuple[str, ...]) -> None:
    url, admin_token = server
    home = tmp_path / "home"
    settings, keys = Settings.load(home=home, env={}, cwd=tmp_path), KeyStore(home / "keys")
    summary = run_demo(tmp_path / "runs", keys, settings, PAYCO_SHOPCO, without=without,
                       server=lambda secrets: ServerProvisioner(url, admin_token, secrets))
    run = Path(summary["run"])
    info = RunInfo.load(run)
    assert info.url == url and info.decision_channel == ("approval_card" if not without else "addressed_command")
    result = grade(run, keys)
    assert result["ok"], [c["name"] + ": " + c["detail"] for c in result["checks"] if not c["ok"]]
    assert summary["status"] == "closed" and summary["code_lines_crossed"] == 0
    fixes = next(c for c in result["checks"] if c["name"] == "both fixes approved")
    assert fixes["detail"] == ("payco: accepted by priya; shopco: accepted by sam" if not without
                               else "payco: command by priya; shopco: command by sam")
    with Incident(run, keys, settings, PAYCO_SHOPCO) as inc:
        assert inc.rooms is None and inc.rooms_server is None  # nothing of the server runs here
        with pytest.raises(UsageError, match="not this run's to restart"):
            inc.restart("rooms")


@pytest.mark.slow
def test_two_runs_on_one_server_each_with_names_of_its_own(node: str, server: tuple[str, str],
                                                             tmp_path: Path) -> None:
    url, admin_token = server
    home = tmp_path / "home"
    settings, keys = Settings.load(home=home, env={}, cwd=tmp_path), KeyStore(home / "keys")
    runs = [run_demo(tmp_path / "runs", keys, settings, PAYCO_SHOPCO,
                     server=lambda secrets: ServerProvisioner(url, admin_token, secrets)) for _ in range(2)]
    infos = [RunInfo.load(Path(r["run"])) for r in runs]
    assert infos[0].suffix != infos[1].suffix and all(i.suffix.startswith(".r") for i in infos)
    assert not set(infos[0].agents.values()) & set(infos[1].agents.values())
    assert not set(infos[0].rooms.values()) & set(infos[1].rooms.values())
    for summary, info in zip(runs, infos, strict=True):
        result = grade(Path(summary["run"]), keys)
        assert result["ok"], [c["name"] + ": " + c["detail"] for c in result["checks"] if not c["ok"]]
        assert summary["status"] == "closed"
        # The server knows each run's people and agents by their suffixed names.
        with Incident(Path(summary["run"]), keys, settings, PAYCO_SHOPCO) as inc:
            detail = inc.actors["mediator"].op("shared", "get_room_detail", room_id=info.rooms["shared"])
            names = {p["name"] for p in detail["participants"]}
            assert {f"mediator{info.suffix}", f"priya{info.suffix}", f"sam{info.suffix}"} <= names
            assert detail["name"] == f"payco-shopco-shared{info.suffix}"


@pytest.mark.slow
def test_the_demo_command_on_an_external_server(node: str, server: tuple[str, str], home: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from signoff.cli.main import main

    url, admin_token = server
    config = home.parent / "signoff.toml"
    config.write_text(f'[rooms]\nurl = "{url}"\n')
    monkeypatch.setenv("SIGNOFF_CONFIG", str(config))
    code = main(["incident", "demo", "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "error: [rooms] url is set" in err and "fix: pass --operator" in err
    assert not (home / "incident-runs").exists()  # nothing was provisioned

    code = main(["incident", "demo", "--json", "--operator", admin_token])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["ok"]
    assert RunInfo.load(Path(summary["run"])).url == url


@pytest.mark.slow
def test_a_refused_operator_leaves_no_run_behind(server: tuple[str, str], tmp_path: Path) -> None:
    from signoff.incident.stack import provision
    from signoff.kernel.errors import SignoffError

    url, _ = server
    keys = KeyStore(tmp_path / "keys")
    with pytest.raises(SignoffError) as refused:
        provision(tmp_path / "run", keys, PAYCO_SHOPCO.parties,
                  server=lambda secrets: ServerProvisioner(url, "not-a-token", secrets))
    assert refused.value.fix
    assert not (tmp_path / "run").exists()
