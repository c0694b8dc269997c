"""What the maintainers wrote for each number, as the range's diffs show it.

A changelog is written in the range itself: towncrier's fragment `changelog/14004.deprecation.rst`
holds the sentence rendered as the entry of #14004, and a pull request adding its own line to
`CHANGES.md` ("- Parse standard git year output in LicenseHeaderStep. ([#2940](...))") says in that
line what the change is, and under which number. `told_words` reads those lines from a commit's diff
and marks each of their words with the number they were written for (`fragment#14004:fixture`), kept
apart from the diff's own words (which hold them already); `told_for` gives them back for a number.
An item of the graded changelog citing that number tells that change in those words, or most of them.
"""

from __future__ import annotations

import re

from signoff.notes.pulls import CHANGELOG_FILE, text_words

# A changelog fragment of the number it names (towncrier `changelog/14004.deprecation.rst`,
# `changes/123.bugfix.md`, prettier's `changelog_unreleased/less/19574.md`, `newsfragments/12.feature`)
FRAGMENT = re.compile(r"(?:^|/)(?:(?:changelog|changes|news|release)[-_])?"
                      r"(?:changes|changelog\.d|changelog|newsfragments|news|\.changes|changes\.d|\.changeset|unreleased)/"
                      r"(?:[^/]+/)?(?:[a-z]+[-_.])?(\d+)[.\-_]", re.IGNORECASE)
FRAGMENT_MARK, ENTRY_MARK = "fragment#", "entry#"  # a fragment's words, and a changelog file entry's
MARKS = (FRAGMENT_MARK, ENTRY_MARK)
_PART = re.compile(r"^diff --git a/\S+ b/(\S+)\n.*?(?=^diff --git |\Z)", re.MULTILINE | re.DOTALL)
_SYMLINK = re.compile(r"^(?:new file |deleted file )?mode 120000$", re.MULTILINE)  # aiohttp's fragments linking one
# A number an entry cites: `#N`, a link to `/issues/N` or `/pull/N`, a Sphinx or MyST role, `GH-N`
_CITED = re.compile(r"(?:#|/issues/|/pulls?/|\bGH-|:(?:issue|pr|pull|gh|bug):`|\{(?:issue|pr|gh)\}`)(\d+)\b",
                    re.IGNORECASE)
_ENTRY_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|#)")  # a list item or a heading opens an entry


def _added(part: str) -> list[str]:
    return [line[1:] for line in part.splitlines() if line.startswith("+") and not line.startswith("+++ ")]


def _entries(lines: list[str]) -> list[str]:
    """The entries the added lines of a changelog file hold: a list item or heading opens one, the lines
    under it continue it (a wrapped item whose number is on its last line, an indented paragraph after a
    blank line: astroid's "Closes #2967"), and an unindented line after a blank line opens another."""
    out: list[list[str]] = []
    blank = False
    for line in lines:
        if not line.strip():
            blank = True
            continue
        if _ENTRY_START.match(line) or not out or (blank and not line[:1].isspace()):
            out.append([line])
        else:
            out[-1].append(line)
        blank = False
    return ["\n".join(entry) for entry in out]


def told_words(diff: str) -> set[str]:
    """The words of what a diff writes for each number, marked with it: every line a changelog
    fragment of that number gains or loses, and each entry a changelog file gains that cites it (not
    the lines around, which hunk headers name: "We adhere to the keepachangelog format")."""
    out: set[str] = set()
    for part in _PART.finditer(diff):
        path, text = part.group(1), part.group(0)
        if _SYMLINK.search(text):
            continue
        if fragment := FRAGMENT.search(path):
            changed = [line[1:] for line in text.splitlines()
                       if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))]
            out |= {f"{FRAGMENT_MARK}{fragment.group(1)}:{w}" for w in text_words("\n".join(changed))}
        elif CHANGELOG_FILE.search(path):
            for entry in _entries(_added(text)):
                found = text_words(entry)
                out |= {f"{ENTRY_MARK}{n}:{w}" for n in set(_CITED.findall(entry)) for w in found}
    return out


def told_for(diff: set[str], number: str, mark: str = FRAGMENT_MARK) -> set[str]:
    """The words a diff's lines wrote for `number` (`told_words` marked them): its fragment's, or with
    `ENTRY_MARK` the changelog entries' citing it."""
    prefix = f"{mark}{number}:"
    return {w[len(prefix):] for w in diff if w.startswith(prefix)}
