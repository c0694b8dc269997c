"""Restarting any service mid-incident, or crashing one after its effect but before it saved its
cursor, resumes without losing or duplicating a disclosure, an approval or a routed request."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from signoff.demo.payco_shopco.fixture import ORGS
from signoff.incident.actors import RoomAgent
from signoff.incident.grade import grade
from signoff.incident.playbooks import parse_disclosure_post
from signoff.incident.stack import SHARED
from signoff.incident.workflow import SCRIPT, SERVICES, Incident, new_run, run_script
from signoff.kernel.settings import Settings
from signoff.trust import KeyStore
from tests.support.fixtures.incident import PAYCO_SHOPCO


class Crash(Exception):
    """A process dying between doing something and recording that it did."""


def fresh(tmp: Path) -> tuple[Settings, KeyStore]:
    return Settings.load(home=tmp / "home", env={}, cwd=tmp), KeyStore(tmp / "home" / "keys")


def assert_exactly_once(inc: Incident, run: Path, keys: KeyStore) -> None:
    shared = inc.messages("admin", SHARED)
    crossed = Counter(p[0]["d_id"] for m in shared if (p := parse_disclosure_post(m["body"])))
    assert crossed == Counter({"D-PAY-1": 1, "D-SHOP-1": 1, "D-PAY-2": 1, "D-SHOP-2": 1, "D-SHOP-3": 1})
    for org in ORGS:
        ids = [r["body"]["d_id"] for r in inc.ws.approvals(org).records()]
        assert len(ids) == len(set(ids)), ids
    bodies = Counter(m["body"] for m in shared if m["sender"] == f"agent:{inc.info.agents['mediator']}")
    assert max(bodies.values()) == 1, [b for b, n in bodies.items() if n > 1]
    result = grade(run, keys)
    assert result["ok"], [c for c in result["checks"] if not c["ok"]]


@pytest.mark.slow
def test_restarting_every_service_mid_incident_loses_and_duplicates_nothing(node: str, tmp_path: Path) -> None:
    settings, keys = fresh(tmp_path)
    run = new_run(tmp_path / "runs", keys, PAYCO_SHOPCO)
    restarted: list[str] = []

    def restart(i: int, inc: Incident) -> None:
        name = SERVICES[i % len(SERVICES)]
        inc.restart(name)
        restarted.append(name)

    with Incident(run, keys, settings, PAYCO_SHOPCO) as inc:
        run_script(inc, between=restart)
        assert set(restarted) == set(SERVICES)
        assert_exactly_once(inc, run, keys)


# (service that crashes, the scripted step during which it crashes)
CRASHES = [("approver", 1), ("payco-agent", 1), ("mediator", 0), ("notary", 6), ("shopco-agent", 10)]


@pytest.mark.slow
@pytest.mark.parametrize(("service", "step"), CRASHES, ids=[f"{s}-step{n}" for s, n in CRASHES])
def test_a_crash_after_the_effect_before_the_cursor_resumes_once(node: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 service: str, step: int) -> None:
    settings, keys = fresh(tmp_path)
    run = new_run(tmp_path / "runs", keys, PAYCO_SHOPCO)
    armed = {"on": False, "fired": 0}
    save = RoomAgent._save_cursor

    def crashing_save(self: RoomAgent) -> None:
        if armed["on"] and self.name == service:
            armed["on"] = False
            armed["fired"] += 1
            raise Crash(f"{service} died before saving its cursor")
        save(self)

    monkeypatch.setattr(RoomAgent, "_save_cursor", crashing_save)
    # In process: the crash is about cursors and idempotent effects, not the transport (HTTP is
    # covered by the restart test above).
    with Incident(run, keys, settings, PAYCO_SHOPCO, over_http=False) as inc:
        run_script(inc, until=step)
        armed["on"] = True
        with pytest.raises(Crash):
            SCRIPT[step][1](inc)
            inc.pump()
        assert armed["fired"] == 1
        inc.restart(service)  # comes back from its saved cursor: the event it died on is delivered again
        inc.pump()
        run_script(inc, start=step + 1)
        assert_exactly_once(inc, run, keys)


def test_unknown_service_is_a_usage_error(node: str, tmp_path: Path) -> None:
    settings, keys = fresh(tmp_path)
    run = new_run(tmp_path / "runs", keys, PAYCO_SHOPCO)
    from signoff.kernel.errors import UsageError

    with Incident(run, keys, settings, PAYCO_SHOPCO, over_http=False) as inc:
        with pytest.raises(UsageError, match="unknown service 'dns'"):
            inc.restart("dns")
