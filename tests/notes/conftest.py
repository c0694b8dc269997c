from __future__ import annotations

from pathlib import Path

import pytest

from signoff.notes.facts import build_facts
from signoff.notes.snapshot import take_snapshot
from tests.notes.gitrepo import Repo, rich_history
from tests.support.requires import require_binary


@pytest.fixture(scope="session")
def history(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    require_binary("git", "apt-get install -y git")
    return rich_history(tmp_path_factory.mktemp("notes-git") / "repo")


@pytest.fixture(scope="session")
def built(history: Repo, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(snapshot, facts) of the whole rich history."""
    folder = tmp_path_factory.mktemp("notes-built")
    take_snapshot(history.path, None, folder / "snapshot.json")
    build_facts(folder / "snapshot.json", folder / "facts.json")
    return folder / "snapshot.json", folder / "facts.json"


@pytest.fixture
def notes_home(home: Path) -> Path:
    """An isolated home (the working directory) whose signoff.toml names the tests' deciders."""
    from tests.notes.deciding import DECIDERS

    (home.parent / "signoff.toml").write_text("[notes]\ndeciders = [" + ", ".join(f'"{d}"' for d in DECIDERS)
                                              + "]\n")
    return home
