"""A live run page reads the rooms again only when its change token moved (web/incident_pages.py):
the token must move with every change of the run's rooms, stay put while nothing changes, and say
"recorded" once the run is over; with the rooms on an external server there is no token (read each
time)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from signoff.incident import console
from signoff.incident.recording import record_run
from signoff.incident.stack import RunInfo
from signoff.incident.workflow import Incident, new_run, run_script
from signoff.kernel.settings import Settings
from signoff.trust import KeyStore
from tests.support.fixtures.incident import PAYCO_SHOPCO


def test_the_token_moves_with_each_change_of_the_rooms_and_only_then(tmp_path: Path, node: str) -> None:
    settings = Settings.load(home=tmp_path / ".signoff", env={}, cwd=tmp_path)
    keys = KeyStore(settings.keys_dir)
    run_dir = new_run(settings.home / "incident-runs", keys, PAYCO_SHOPCO, ("request_approval",))
    with Incident(run_dir, keys, settings, PAYCO_SHOPCO, over_http=False) as inc:
        first = console.change_token(run_dir)
        assert first is not None and first[0] is False
        assert console.change_token(run_dir) == first  # nothing happened: the page reads nothing
        run_script(inc, until=1)  # messages in the shared room, drafts in each company's
        posted = console.change_token(run_dir)
        assert posted != first
        assert console.change_token(run_dir) == posted
        agent = inc.actors["shopco-agent"]
        draft = json.loads(agent.documents("shopco")["D-SHOP-1"]["content"])
        draft["evidence"]["note"] = "edited"
        agent.write_document("shopco", "D-SHOP-1", json.dumps(draft))  # a document, not a message
        assert console.change_token(run_dir) != posted
    record_run(run_dir, keys)
    assert console.change_token(run_dir) == (True, 0, "")


def test_rooms_on_an_external_server_have_no_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    external = RunInfo(tmp_path, "sqlite:///unused.db", {}, {}, {}, url="https://rooms.example.invalid")
    monkeypatch.setattr(RunInfo, "load", classmethod(lambda cls, path: external))
    assert console.change_token(tmp_path) is None
