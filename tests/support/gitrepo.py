"""Real git repositories for the notes tests: renames, binary files, merges, empty commits,
non-ASCII names, several authors."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

AUTHORS = [("Ada Lovelace", "ada@example.org"), ("Bob Ü", "bob@example.org"), ("Chen 陈", "chen@example.org")]


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.tick = 0
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, author: tuple[str, str] = AUTHORS[0]) -> str:
        self.tick += 1
        stamp = f"2026-11-{1 + self.tick // 24:02d}T{self.tick % 24:02d}:00:00+00:00"
        env = {**os.environ, "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1],
               "GIT_COMMITTER_NAME": author[0], "GIT_COMMITTER_EMAIL": author[1],
               "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp, "GIT_CONFIG_GLOBAL": "/dev/null",
               "GIT_CONFIG_NOSYSTEM": "1"}
        out = subprocess.run(["git", "-C", str(self.path), *args], env=env, check=True, capture_output=True)
        return out.stdout.decode("utf-8", "replace")

    def write(self, name: str, content: str | bytes) -> None:
        p = self.path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")

    def commit(self, message: str, author: tuple[str, str] = AUTHORS[0], allow_empty: bool = False) -> str:
        self.git("add", "-A")
        args = ["commit", "-q", "-m", message] + (["--allow-empty"] if allow_empty else [])
        self.git(*args, author=author)
        return self.git("rev-parse", "HEAD").strip()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()


def rich_history(path: Path) -> Repo:
    """Every case the snapshot must get right, in a dozen commits."""
    r = Repo(path)
    r.write("README.md", "# demo\n\nline one\nline two\n")
    r.write("src/app.py", "".join(f"x{i} = {i}\n" for i in range(40)))
    r.commit("Initial import of app and readme")
    r.git("tag", "v0.1.0")
    r.write("src/app.py", "".join(f"x{i} = {i * 2}\n" for i in range(40)))
    r.commit("Double every constant in app.py for issue 42", author=AUTHORS[1])
    r.git("mv", "src/app.py", "src/core.py")
    r.commit("Rename app.py to core.py")
    r.write("assets/logo.bin", bytes(range(256)) * 4)
    r.commit("Add binary logo", author=AUTHORS[2])
    r.commit("Empty commit to trigger CI", allow_empty=True)
    r.write("docs/naïve café.md", "Unicode path\n")
    r.write("docs/日本語.txt", "こんにちは\n")
    r.commit("Add docs with non-ASCII names", author=AUTHORS[1])
    r.git("checkout", "-q", "-b", "feature")
    r.write("src/feature.py", "def f():\n    return 1\n")
    r.commit("Add feature module", author=AUTHORS[2])
    r.git("checkout", "-q", "main")
    r.write("README.md", "# demo\n\nline one\n")
    r.commit("Trim readme")
    r.git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature")
    r.write("assets/logo.bin", bytes(range(255, -1, -1)) * 4)
    r.write("src/core.py", "".join(f"x{i} = {i * 2}\n" for i in range(30)) + "y = 1\n")
    r.commit("Shrink core and flip logo", author=AUTHORS[2])
    r.git("tag", "v0.2.0")
    return r
