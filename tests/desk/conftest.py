"""Fixtures for the desk tests: a real local forge (bare git), a real ledger, the real sandbox.

Reaching a stage costs sandbox runs, so two templates are built once per session (a reproduced bug,
and one whose draft change request is under review) and copied for each test that starts there.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from signoff.desk.config import DeskConfig
from signoff.desk.credentials import DeskCaller
from signoff.desk.engineering import EngineeringService
from signoff.desk.local import LocalDesk, init_local
from signoff.desk.notify import Concierge
from signoff.desk.workflow import Desk, Intake, forge_for
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from tests.support.requires import require_sandbox

COUPON = {"title": "Coupon larger than the cart gives a negative total", "component": "checkout",
          "steps": "Add one item for 200 and apply SAVE300.", "expected": "0", "actual": "-100"}
COUPON_2 = {"title": "Negative total when the coupon is larger than the cart", "component": "checkout",
            "actual": "the total is negative"}
OVERFLOW = {"title": "A huge price gives an infinite total", "component": "checkout", "actual": "inf"}



@dataclass
class World:
    home: Path
    settings: Settings
    ledger: SqlLedger
    desk: Desk
    tokens: dict[str, str]
    intakes: dict[str, Intake] = field(default_factory=dict)

    def actor(self, name: str) -> DeskCaller:
        return self.desk.credentials.authenticate(self.tokens[name])

    def reporter(self, key: str) -> DeskCaller:
        i = self.intakes[key]
        return self.desk.reporter(i.report_id, i.capability)

    @property
    def engineering(self) -> EngineeringService:
        return EngineeringService(self.desk, self.actor("engineering"))

    @property
    def concierge(self) -> Concierge:
        return Concierge(self.desk, self.actor("concierge"))

    def deliver(self) -> int:
        return LocalDesk(self.desk).deliver_webhooks()

    def with_config(self, **changes: Any) -> Desk:
        cfg = DeskConfig(**{**DeskConfig().__dict__, **changes})
        self.desk = Desk(self.ledger, self.settings, self.desk.forge, cfg)
        return self.desk

    @property
    def bug_id(self) -> str:
        return self.intakes["first"].bug_id

    def bug(self) -> Any:
        return self.desk.bug(self.bug_id)


def open_world(home: Path, tokens: dict[str, str] | None = None, intakes: dict[str, Intake] | None = None,
               db_url: str | None = None) -> World:
    settings = Settings.load(home=home, db_url=db_url, env={}, cwd=home.parent)
    ledger = SqlLedger.open(settings)
    if tokens is None:
        local = init_local(settings, ledger)
        desk, tokens = local.desk, local.tokens
    else:
        desk = Desk(ledger, settings, forge_for(settings, ledger), DeskConfig())
    return World(home, settings, ledger, desk, tokens, dict(intakes or {}))


@pytest.fixture(scope="session", autouse=True)
def _shared_env_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # Prepared sandbox environments (pytest; ruff for the configured checks) are cached by digest.
    old = os.environ.get("SIGNOFF_REPAIR_ENV_CACHE")
    cache = tmp_path_factory.mktemp("desk-envs")
    cache.chmod(0o755)
    os.environ["SIGNOFF_REPAIR_ENV_CACHE"] = str(cache)
    yield
    if old is None:
        os.environ.pop("SIGNOFF_REPAIR_ENV_CACHE", None)
    else:
        os.environ["SIGNOFF_REPAIR_ENV_CACHE"] = old


@pytest.fixture(scope="session")
def sandbox_ok() -> None:
    require_sandbox()


@pytest.fixture
def world(tmp_path: Path) -> World:
    """A fresh desk: ShopLite in the local forge, one credential per role, no reports."""
    return open_world(tmp_path / ".signoff")


@dataclass
class Template:
    home: Path
    tokens: dict[str, str]
    intakes: dict[str, Intake]


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory, sandbox_ok: None) -> dict[str, Template]:
    root = tmp_path_factory.mktemp("desk-templates")
    w = open_world(root / "work" / ".signoff")
    w.intakes["first"] = w.desk.submit_report(COUPON, "198.51.100.7")
    w.intakes["second"] = w.desk.submit_report(COUPON_2, "198.51.100.8")
    w.engineering.drain()
    assert w.bug().state == "awaiting_reporter", w.bug().summary()
    out: dict[str, Template] = {}

    def snapshot(name: str) -> None:
        w.ledger.close()
        dest = root / name / ".signoff"
        shutil.copytree(w.home, dest)
        out[name] = Template(dest, dict(w.tokens), dict(w.intakes))
        w.ledger = SqlLedger.open(w.settings)
        w.desk = Desk(w.ledger, w.settings, forge_for(w.settings, w.ledger), DeskConfig())

    snapshot("reproduced")
    w.desk.confirm(w.reporter("first"), "yes", bug_id=w.bug_id)
    w.engineering.drain()
    assert w.bug().state == "in_review", w.bug().summary()
    snapshot("review")
    return out


def _from(template: Template, tmp_path: Path) -> World:
    dest = tmp_path / ".signoff"
    shutil.copytree(template.home, dest)
    return open_world(dest, template.tokens, template.intakes)


@pytest.fixture
def reproduced(templates: dict[str, Template], tmp_path: Path) -> World:
    """BUG-0001 (two reports) reproduced by a failing test, awaiting its reporters."""
    return _from(templates["reproduced"], tmp_path)


@pytest.fixture
def review(templates: dict[str, Template], tmp_path: Path) -> World:
    """BUG-0001 confirmed and fixed: a draft change request under review, assigned to alice."""
    return _from(templates["review"], tmp_path)
