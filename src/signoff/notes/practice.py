"""What a project's own changelog, as it stood where a range starts, says its maintainers publish.

The writer leaves refactors and dependency updates out by default, as most maintainers do; some list
them. gin-gonic/gin's changelog lists `refactor:` pull requests release after release, and
square/okhttp's lists "Upgrade: [Okio 3.16.0]" (which renovate, a bot, made). The changelog written
before the range tells the writer which of them the maintainers publish, so it can list the same
kinds without listing the rest of the bots' updates.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff import git
from signoff.kernel.errors import SignoffError

_CHANGELOG = re.compile(r"(?:^|/)(?:CHANGELOG|CHANGES|HISTORY|NEWS|RELEASE[-_]?NOTES)(?:\.\w+)?$", re.IGNORECASE)
# An entry of the changelog to be: towncrier's `changelog.d/1164.added.rst`, `newsfragments/`, changesets
_FRAGMENT = re.compile(r"(?:^|/)(?:changelog\.d|changelog|changes|newsfragments|news|\.changeset|unreleased)/[^/]+$",
                       re.IGNORECASE)
_VENDORED = re.compile(r"(?:^|/)(?:node_modules|vendor|third[_-]party|\.github)/", re.IGNORECASE)
# The newest releases only (changelogs are written newest first): what the maintainers publish now,
# not what they did years ago
MAX_FILES, MAX_CHARS = 6, 60_000
# A list item typed as a refactor, or a heading for refactors: gin's "* refactor: use bytes.ReplaceAll
# directly [#3455]", sqlmodel's "### Refactors", conventional-changelog's "### ♻️ Code Refactoring". An
# item that only starts with the word (uuid's fix "refactor v1 internal state ...", its type left out)
# says nothing of refactors.
_REFACTOR_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+refactor(?:\([^)]*\))?!?:"
                            r"|^\s*#+\s*(?:\W+\s*)?(?:code\s+)?refactor(?:ing|s)?\s*$", re.IGNORECASE | re.MULTILINE)
# A line that says a dependency was upgraded, and a name written with its version in it
_UPGRADE_LINE = re.compile(r"\b(?:upgrade[sd]?|update[sd]?|bump(?:s|ed)?|depend\w*)\b", re.IGNORECASE)
# a name in a link's text may be words (okhttp's "[AndroidX Annotation 1.1.0][...]")
_NAMED_VERSION = re.compile(r"(?<![\w.-])(?:\[(?P<words>[A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){0,2})|"
                            r"(?P<name>[A-Za-z][\w.-]*[A-Za-z0-9]))\s+v?\d+\.\d+")
_GENERIC = frozenset({"version", "versions", "release", "python", "to", "from", "v", "and", "the", "of", "in",
                      "upgrade", "update", "updated", "bump", "minimum", "require", "requires", "support"})


def changelog_work(paths: Sequence[str]) -> bool:
    """Whether a commit touched the changelog and nothing else: its files or fragments (pytest-asyncio's
    "docs: add newsfragment", "Update new fragment"): an entry of the changelog, not a change."""
    return bool(paths) and all(_CHANGELOG.search(p) or _FRAGMENT.search(p) for p in paths)


def dependency_key(name: str) -> str:
    """A dependency's name as compared: lower case, without separators (`kotlinx.coroutines` and
    `kotlinx-coroutines` are one name)."""
    return re.sub(r"[-_.\s]", "", name.lower())


@dataclass
class Practice:
    """`refactors`: the changelog lists refactors; `dependencies`: the dependencies whose upgrades it
    lists, by `dependency_key`, each as the changelog spells it."""
    refactors: bool = False
    dependencies: dict[str, str] = field(default_factory=dict)

    def as_task(self) -> dict[str, Any]:
        return {"refactors": self.refactors, "dependencies": dict(sorted(self.dependencies.items()))}

    @classmethod
    def from_task(cls, doc: Any) -> Practice:
        if not isinstance(doc, dict):
            return cls()
        deps = doc.get("dependencies")
        return cls(bool(doc.get("refactors")),
                   {str(k): str(v) for k, v in deps.items()} if isinstance(deps, dict) else {})


# A list item that is a name and its version alone, after a label at most: kotlinpoet's " * New: KSP
# 2.1.21-2.0.1.", okhttp's " *  Upgrade: [Okio 3.16.0][okio_3_16_0]."
_VERSION_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+(?:\w+:\s*)?\[?[A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){0,2}\s+v?\d+\.\d+"
                           r"[\w.+-]*\]?(?:\[[^\]]*\]|\([^)]*\))?\.?\s*$")


def read_practice(text: str) -> Practice:
    """What a changelog's text says its maintainers publish."""
    deps: dict[str, str] = {}
    for line in text.splitlines():
        if not (_UPGRADE_LINE.search(line) or _VERSION_ITEM.match(line)):
            continue
        for m in _NAMED_VERSION.finditer(line):
            name = m.group("words") or m.group("name")
            key = dependency_key(name)
            if len(key) >= 3 and name.lower() not in _GENERIC:
                deps.setdefault(key, name)
    return Practice(bool(_REFACTOR_ITEM.search(text)), deps)


def changelog_before(repo: Path, rev_range: str) -> str:
    """The changelog files' text at the start of `rev_range` (`A..B`: at A); empty where the range
    has no start, the repository does not answer, or it holds no changelog."""
    start = rev_range.partition("..")[0].strip() if ".." in rev_range else ""
    if not start:
        return ""
    try:
        names = git.output(repo, "ls-tree", "-r", "--name-only", start).splitlines()
        files = sorted((p for p in names if _CHANGELOG.search(p) and not _VENDORED.search(p)),
                       key=lambda p: (p.count("/"), p))[:MAX_FILES]
        return "\n".join(git.output(repo, "show", f"{start}:{p}")[:MAX_CHARS] for p in files)
    except (SignoffError, UnicodeDecodeError):
        return ""
