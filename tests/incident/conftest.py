"""Shared fixtures: the fixture run once per module with the real node, and a set-up workspace."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.incident.simulate import SimulationResult, simulate
from signoff.incident.workspace import Workspace
from signoff.trust import KeyStore
from tests.support.requires import require_binary

NODE_HOW = "install Node.js (apt-get install -y nodejs); ShopCo's side of the fixture is JavaScript"


@pytest.fixture(scope="session")
def node() -> str:
    return require_binary("node", NODE_HOW)


@pytest.fixture(scope="session")
def buggy_run(node: str, tmp_path_factory: pytest.TempPathFactory) -> SimulationResult:
    return simulate(tmp_path_factory.mktemp("buggy"))


@pytest.fixture()
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    ws = Workspace(tmp_path / "incident", KeyStore(tmp_path / "keys"))
    ws.setup()
    yield ws
    ws.close()
