from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.github_standin import GitHubStandIn


def make_source(path: Path) -> Path:
    path.mkdir(parents=True)
    env_args = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "app.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(path), "add", "."], check=True)
    subprocess.run(["git", *env_args, "-C", str(path), "commit", "-q", "-m", "first"], check=True)
    return path


@pytest.fixture
def github(tmp_path: Path) -> Iterator[GitHubStandIn]:
    with GitHubStandIn(tmp_path / "github") as gh:
        gh.tokens.add("github_pat_good")
        gh.add_repo("octo-org/shoplite", make_source(tmp_path / "src"))
        yield gh
