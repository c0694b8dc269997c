"""Grade any changelog (ours, a maintainer's, or one written by a model) against a snapshot.

The grader has no citations to go on, so it reads each claim by meaning (`meaning.py`) and checks it
against what git knows of the range (`knowledge.py`): a count against the count it names, a version
against the range's tags, a release date against the tags' and commits' dates, a pull request or
issue reference by which commit carries it, a hash against the commits. Each claim is supported,
unsupported (with git's word), or not checkable (with its kind). A unit (heading, list item,
paragraph) is checkable when it holds at least one checkable claim, and supported when all of them
are. `[F1]` tags and the facts appendix labels are stripped first, so our notes and a baseline are
graded the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from signoff import git
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.notes.claims import numbers_in
from signoff.notes.documents import GRADE
from signoff.notes.facts import Aggregate, generate_facts
from signoff.notes.knowledge import Knowledge
from signoff.notes.meaning import Meaning, read_claims
from signoff.notes.pulls import DIFF_BYTES, diff_words, words
from signoff.notes.snapshot import Snapshot
from signoff.notes.told import told_words
from signoff.notes.verify import Support

_FENCE_OPEN = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
# HTML tags (`<a href=...>`, `</sup>`, `<br/>`), not words in angle brackets: factory_bot's "conflict between
# '<attribute>' and '<attribute_id>'" names what it fixed
_HTML_TAG = (r"</?(?:a|abbr|b|br|code|del|details|div|em|h[1-6]|hr|i|img|ins|kbd|li|ol|p|pre|s|small|span|strong|"
             r"sub|summary|sup|table|tbody|td|th|thead|tr|u|ul)\b[^>]*>")
_TAGS = re.compile(r"\[F[0-9]+\]|" + _HTML_TAG + r"|\bF[0-9]+\b")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKER = re.compile(r"^\s{0,3}(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s?)")
_REPO_URL = re.compile(r"https?://(?:www\.)?(?:github\.com|gitlab\.com|codeberg\.org)/([\w.-]+/[\w.-]+)"
                       r"[^\s)<>\]`'\"]*", re.IGNORECASE)
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")


def without_fences(markdown: str) -> str:
    """A text with its fenced code blocks (```` ``` ```` or `~~~` to the same fence) removed. A line of
    tildes or backticks alone under a line of text at least as long is a reStructuredText title's
    underline (`Deprecations` over `~~~~~~~~~~~~`), not a fence: taking it for one dropped everything
    up to the next such title."""
    lines = markdown.splitlines()
    out: list[str] = []
    fenced: list[str] = []  # the lines of an open fence (kept if it never closes)
    fence = ""
    for i, line in enumerate(lines):
        if fence:
            fenced.append(line)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence, fenced = "", []
            continue
        m = _FENCE_OPEN.match(line)
        title = lines[i - 1].strip() if i else ""
        underline = m is not None and bool(title) and not line.strip().strip(m.group(1)[0]) and \
            len(line.strip()) >= len(title)
        if m is None or underline:
            out.append(line)
        else:
            fence, fenced = m.group(1), [line]
    return "\n".join(out + fenced)


def sentences_of(markdown: str) -> list[str]:
    """Sentences of a Markdown text: paragraphs and list items, split at sentence ends, with markup,
    link targets and citation tags removed."""
    text = without_fences(markdown)
    units: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for line in block.splitlines():
            if re.match(r"^\s*(?:[-*_]\s*){3,}$", line):
                continue
            if _MARKER.match(line) and lines:
                units.append(" ".join(lines))
                lines = []
            lines.append(_MARKER.sub("", line))
        units.append(" ".join(lines))
    out: list[str] = []
    for unit in units:
        clean = _TAGS.sub("", _LINK.sub(r"\1", unit)).replace("`", "").replace("**", "").replace("__", "")
        out += [s.strip() for s in _SPLIT.split(" ".join(clean.split())) if s.strip()]
    return out


def snapshot_support(snapshot_path: Path) -> Support:
    snap = Snapshot(snapshot_path)
    support = Support()
    agg = Aggregate()
    for fact in generate_facts(snap.commits(), agg):
        support.add_fact(fact)
    support.exact |= numbers_in(snap.range)
    return support


def grade(markdown_path: Path, snapshot_path: Path, repo: Path | None = None) -> dict[str, Any]:
    if not markdown_path.is_file():
        raise NotFoundError(f"Markdown file not found: {markdown_path}", "pass the notes file to grade")
    try:
        markdown = markdown_path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{markdown_path} is not UTF-8 text", "pass a Markdown file") from None
    return grade_text(markdown, markdown_path.name, snapshot_path, repo)


def grade_text(markdown: str, name: str, snapshot_path: Path, repo: Path | None = None) -> dict[str, Any]:
    """`grade` of Markdown already in hand (a preview that is not a file yet)."""
    return grade_with(markdown, name, snapshot_knowledge(snapshot_path, repo))


def grade_with(markdown: str, name: str, knowledge: Knowledge) -> dict[str, Any]:
    """`grade_text` against a snapshot already read (several texts graded against one range)."""
    total = supported = checkable = good = 0
    unsupported: list[dict[str, Any]] = []
    unchecked: list[dict[str, Any]] = []
    units = _units(markdown)
    credited = _credits(units, knowledge)
    home = home_repository(markdown)
    if (linked := _REPO_URL.findall(markdown)):
        # the repository the changelog links into most is the project's: its name's words are of every change
        knowledge.project_words |= words(Counter(r.lower().removesuffix(".git") for r in linked).most_common(1)[0][0]
                                        .split("/")[-1].replace("-", " ").replace("_", " "))
    issues_cited = any(knowledge.cites_issue(plain_text(text), {c.value for c in read_claims(text) if c.kind == "ref"})
                       for text, heading, *_ in units if not heading and "#" in text)
    # the text of every unit that is no heading, where a link definition's label may be used
    prose = "\n".join(text for text, heading, *_ in units if not heading)
    # the units of the item above this one: (indent, list item?, text, text with its code quoted)
    above: list[tuple[int, bool, str, str]] = []
    for text, heading, continues, (indent, listed) in units:
        # Claims are read per sentence, each in the context of its whole unit (the item's own
        # commit is found from all of it, and the item's other references count). What an item
        # says it changed includes the paragraphs and nested lists above it in the same item: its
        # parents, not its siblings (pygments' "* Lean4: Add operators" under "- Updated lexers:" is
        # no part of the thirty lexers listed before it), nor what was nested under them.
        plain, coded = plain_text(text), code_text(text)
        if not continues:
            above = []
        above = [u for u in above if u[0] < indent or (u[0] == indent and not (listed and u[1]))]
        # a parent that only labels the group ("Updated lexers:") says what every item under it is,
        # as a heading does, and nothing of which change this one is
        context = " ".join([*(u[2] for u in above if not _LABEL.fullmatch(u[2])), plain])
        code = (coded, " ".join([*(u[3] for u in above if not _LABEL.fullmatch(u[2])), coded]))
        above.append((indent, listed, plain, coded))
        # a reStructuredText hyperlink target names a link of the text (`.. _Docutils 0.21: URL`), not the
        # release, as a Markdown link definition of a version (`[1.2.3]: .../compare/...`) does
        release = heading and not _RST_TARGET.match(text) and not _defines_a_prose_link(text, prose)
        sentences = [(s, [_foreign(s, c, home) for c in read_claims(s, release=release)])
                     for s in _SPLIT.split(text) if s.strip()]
        refs = {c.value for _, cs in sentences for c in cs if c.kind == "ref"}
        for sentence, claims in sentences:
            shown = plain_text(sentence)
            ok_all, any_checked = True, False
            for c in claims:
                v = knowledge.check(c, plain, refs, context, credited, issues_cited, code)
                if v.status == "not_checkable":
                    unchecked.append({"sentence": shown, "kind": c.kind, "token": c.token, "why": v.reason})
                    continue
                any_checked = True
                total += 1
                if v.status == "supported":
                    supported += 1
                else:
                    ok_all = False
                    unsupported.append({"sentence": shown, "kind": c.kind, "token": c.token, "reason": v.reason})
            checkable += any_checked
            good += any_checked and ok_all
    return {
        "schema": GRADE, "file": name, "ok": not unsupported,
        "claims": {"total": total, "supported": supported, "pct": _pct(supported, total),
                   "not_checkable": len(unchecked)},
        "sentences": {"checkable": checkable, "supported": good, "pct": _pct(good, checkable)},
        "unsupported": unsupported, "not_checkable": unchecked,
    }


def home_repository(markdown: str) -> str | None:
    """The repository a changelog's links are mostly into (`owner/name`, lower case), when it links
    into more than one: the project's own. With one repository linked, or two as often, None."""
    top = Counter(m.group(1).lower().removesuffix(".git") for m in _REPO_URL.finditer(markdown)).most_common(2)
    return top[0][0] if len(top) == 2 and top[0][1] > top[1][1] else None


def _foreign(sentence: str, claim: Meaning, home: str | None) -> Meaning:
    """A claim read from a link into another repository than the changelog's own is not checkable
    against this range: the versions of a dependency's compare link quoted from a bump's message
    (sinon's "[Commits](https://github.com/ruby/rexml/compare/v3.3.7...v3.3.9)"), another project's
    pull request or commit."""
    if home is None or not claim.checkable:
        return claim
    for m in _REPO_URL.finditer(sentence):
        if m.start() <= claim.position < m.end() and m.group(1).lower().removesuffix(".git") != home:
            return replace(claim, checkable=False, why=f"link into another repository ({m.group(1)})")
    return claim


def _credits(units: list[Unit], knowledge: Knowledge) -> dict[str, list[frozenset[str]]]:
    """For each handle a document credits, the commits of each item it is credited for."""
    out: dict[str, list[frozenset[str]]] = {}
    for text, heading, *_ in units:
        if "@" not in text and "user:`" not in text:
            continue  # no credit in it
        claims = read_claims(text, release=heading)
        handles = {c.value for c in claims if c.kind == "author"}
        if not handles or (len(handles) > 1 and any(c.role == "signed" for c in claims if c.kind == "author")):
            continue  # (handles signing an item together may have helped: they tie none of them to its author)
        made = frozenset(c.hash for c in knowledge.made(plain_text(text), {c.value for c in claims if c.kind == "ref"}))
        for handle in handles:
            if made:
                out.setdefault(handle, []).append(made)
    return out


def snapshot_knowledge(snapshot_path: Path, repo: Path | None = None) -> Knowledge:
    """What git knows of a snapshot's range; with the repository it was taken from, the diffs of the
    pull requests a claim names are read too where their messages leave a claim uncertain."""
    snap = Snapshot(snapshot_path)
    knowledge = Knowledge(snap.range, snap.head, snap.tags, snap.commits(), snap.authors_before)
    if repo is not None:
        knowledge.diff_of = diff_reader(git.open_repo(repo))
        knowledge.subjects_elsewhere = subjects_reader(git.open_repo(repo))
    return knowledge


def repository_here(snapshot_path: Path, here: Path) -> Path | None:
    """`here` when it is a git repository holding the snapshot's tip (`notes grade` run in the
    repository the snapshot was taken from reads the diffs without `--repo`), else None."""
    head = Snapshot(snapshot_path).head
    if head is None or git.run(here, "rev-parse", "--git-dir", check=False).returncode != 0:
        return None
    return here if git.has_commit(here, head) else None


def diff_reader(repo: Path) -> Callable[[str], set[str]]:
    """Reads the words of a commit's diff against its first parent (a merge's: the branch it
    merged), without context lines and cut at `DIFF_BYTES`; a commit the repository lacks has none."""
    drivers = git.neutral_drivers(repo)

    def diff_of(commit: str) -> set[str]:
        if not git.is_full_id(commit):
            return set()
        out = git.run(repo, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", f"{commit}^1", commit,
                      "--", check=False, drivers=drivers)
        if out.returncode != 0:  # a root commit, or one the repository lacks
            out = git.run(repo, "show", "-U0", "--format=", "--no-color", "--no-ext-diff", "--no-textconv", commit,
                          "--", check=False, drivers=drivers)
        if out.returncode != 0:
            return set()
        text = out.stdout[:DIFF_BYTES].decode("utf-8", errors="replace")
        return diff_words(text) | told_words(text)  # (what it wrote for each number, marked apart: `told`)

    return diff_of


def subjects_reader(repo: Path) -> Callable[[str], list[str]]:
    """Reads the subjects of the commits of every branch and tag of the repository that name `#N`
    (`git log --all --grep`), for a number the range's commits contradict: the same change may be a pull
    request of another number on another branch."""

    drivers = git.neutral_drivers(repo)

    def subjects_of(number: str) -> list[str]:
        if not number.isdigit():
            return []
        out = git.run(repo, "log", "--all", "--format=%s", "--fixed-strings", f"--grep=#{number}", check=False,
                      drivers=drivers)
        return out.stdout.decode("utf-8", errors="replace").splitlines() if out.returncode == 0 else []

    return subjects_of


# Citation tags and the facts appendix's anchors; other angle brackets may be link targets.
_UNIT_TAGS = re.compile(r"\[F[0-9]+\]|</?a\b[^>]*>|\bF[0-9]+\b")
_RST_RULE = re.compile(r"^\s*([=\-~^*+#\"'`.:_])\1{2,}\s*$")
_ITEM = re.compile(r"^\s{0,8}(?:[-*+]|\d+[.)])\s+")
# A Markdown link definition (`[1.2.3]: URL`) or a reStructuredText hyperlink target (`.. _PR#1450: URL`,
# ``.. _`#12`: URL``): a line of its own whatever follows it, never part of an item's text.
_LINK_DEF = re.compile(r"^\s{0,3}(?:\[[^\]]+\]|\.\.\s+_(?:`[^`]+`|[^:`]+)):\s*\S+")
_RST_TARGET = re.compile(r"^\s{0,3}\.\.\s+_")
_LINK_LABEL = re.compile(r"^\s{0,3}\[([^\]]+)\]:")


def _defines_a_prose_link(text: str, prose: str) -> bool:
    """Whether a Markdown link definition defines a link the section's prose uses (tracing-subscriber 0.3.22's
    "... depended explicitly on [tracing-0.1.42], which was yanked", defined as `[tracing-0.1.42]: .../tag/...`):
    it names what that sentence links to, not the release, as a definition only a heading uses does
    (`[1.2.3]: .../compare/v1.2.2...v1.2.3` under `## [1.2.3]`)."""
    label = _LINK_LABEL.match(text)
    return label is not None and f"[{label.group(1)}]" in prose
# A line that is only a bold version (`**4.14.2**`, `**4.14.2** (2026-05-01)`): a release heading.
_BOLD_HEADING = re.compile(r"^\s{0,3}\*\*v?\d+\.\d+[^*]*\*\*[^*\w]*(?:\([^)]*\))?\s*$")
# A line that is only a version and its date in parentheses, with no markup (jackson-databind's plain-text
# `2.18.2 (27-Nov-2024)` over its items): a release heading.
# So is a version and its date after a dash (FluentValidation's `Changelog.txt`: `12.1.1 - 3 Dec 2025`; eslint's
# generated `v10.9.0 - August 21, 2026` over its list of commits), and a version and its ISO date apart (a Perl
# `Changes` file's `9.47  2026-07-05`, mojo's).
_PLAIN_HEADING = re.compile(r"^v?\d+\.\d+(?:\.\d+)*\S*[ \t]+(?:\d{4}-\d{2}-\d{2}|\([^()]*\d{4}[^()]*\)|[-–—][ \t]+(?:"
                            r"\d{1,2}(?:st|nd|rd|th)?[ \t]+[A-Z][a-z]+\.?,?[ \t]+\d{4}|"
                            r"[A-Z][a-z]+\.?[ \t]+\d{1,2}(?:st|nd|rd|th)?,?[ \t]+\d{4}|\d{4}[-/]\d{2}[-/]\d{2}))\s*$")
# A paragraph with no list marker whose every line opens with a capital and at least half of them end with a
# parenthesised reference (`Add Tamil language (#2334)` over `Add Telugu language (#2333)`): one change a line,
# each line an item of its own, not one long sentence naming every number.
_ENDS_WITH_REF = re.compile(r"\(#\d+\)\s*$")
# A line standing alone at the margin that dates a named version, with no markup (libuv's `ChangeLog`:
# `2026.03.06, Version 1.52.1 (Stable), <hash>`; GNU-style `Noteworthy changes in release 9.5 (2024-03-28)`):
# a release heading, whatever follows the version.
_DATED_RELEASE = re.compile(r"^(?=[^\n]*\b\d{4}[-./]\d{2}[-./]\d{2}\b)(?:\d{4}[-./]\d{2}[-./]\d{2},?[ \t]+)?"
                            r"(?:[Vv]ersion|(?:[Nn]oteworthy changes in )?[Rr]elease)[ \t]+v?\d+\.\d+\S*[^\n]{0,120}$")
# An item opening at the margin with the issue it fixes, its other lines indented below it (jackson-databind's
# `#4733: Wrong serialization of ...` over ` (reported by @nlisker)`): a list item with no list marker.
_NUMBERED_ITEM = re.compile(r"^#\d+(?::|[ \t]+(?=[A-Z`@]))")


def units_of(markdown: str) -> list[tuple[str, bool]]:
    """The units of a changelog (Markdown or reStructuredText) a claim is read in: headings (True:
    their versions and dates name the release, a bold version alone on its line included), link
    definitions (True), list items with their
    continuation lines, and paragraphs. Fenced code and rules are left out; `[F1]` tags are removed."""
    return [(text, heading) for text, heading, *_ in _units(markdown)]


# a list item that only labels the items nested under it: a few words and a colon, no reference
_LABEL = re.compile(r"[^\W\d][\w ,&/+-]{0,40}:")


Unit = tuple[str, bool, bool, tuple[int, bool]]  # text, heading?, continues the item above?, (indent, list item?)


def _units(markdown: str) -> list[Unit]:
    """`units_of`, each with whether it continues the item above it: a paragraph or nested list
    item indented under it (towncrier's "Related issues" line, a note after a nested list), and its
    indentation and whether it is a list item (which of the units above it are its parents)."""
    lines = without_fences(markdown).splitlines()
    units: list[Unit] = []
    current: list[str] = []
    listed: list[bool] = []  # whether the unit being read is a list item
    base: list[int] = []  # the indentation of the item being read, when one is

    def flush() -> None:
        if current and not listed and _one_change_a_line(current):
            lines_of = list(current)
            current.clear()
            for one in lines_of:
                listed.append(True)
                current.append(one)
                flush()
            return
        if current:
            indent = len(current[0]) - len(current[0].lstrip())
            continues = bool(base) and indent > base[0]
            if not continues:
                base[:] = [indent]
            units.append((" ".join(x.strip() for x in current), False, continues, (indent, bool(listed))))
            current.clear()
            listed.clear()

    for i, raw in enumerate(lines):
        line = _UNIT_TAGS.sub("", raw)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not line.strip() or _RST_RULE.match(line) or re.match(r"^\s*(?:[-*_]\s*){3,}$", line):
            flush()
            continue
        if line.lstrip().startswith("#") and re.match(r"^\s{0,3}#{1,6}\s", line):
            flush()
            base.clear()
            units.append((re.sub(r"^\s*#+\s*", "", line).strip(), True, False, (0, False)))
            continue
        if _RST_RULE.match(nxt) and not _ITEM.match(line):
            flush()
            base.clear()
            units.append((line.strip(), True, False, (0, False)))
            continue
        alone = not (lines[i - 1].strip() if i else "") and not nxt.strip()
        if _LINK_DEF.match(line) or _BOLD_HEADING.match(line) or _PLAIN_HEADING.match(line) or \
                (alone and _DATED_RELEASE.match(line)):
            flush()
            base.clear()
            units.append((line.strip(), True, False, (0, False)))
            continue
        if _ITEM.match(line):
            flush()
            listed.append(True)
            current.append(line[:len(line) - len(line.lstrip())] + _ITEM.sub("", line))
            continue
        if _NUMBERED_ITEM.match(line):
            flush()
            listed.append(True)
            current.append(line)
            continue
        current.append(line)
    flush()
    return units


def _one_change_a_line(lines: list[str]) -> bool:
    """Whether a paragraph lists one change a line with no list marker (see `_ENDS_WITH_REF`)."""
    return len(lines) >= 2 and all(re.match(r"[A-Z`]", line) for line in lines) and \
        2 * sum(1 for line in lines if _ENDS_WITH_REF.search(line)) >= len(lines)


def plain_text(unit: str) -> str:
    """A unit as it reads: link text kept, link targets, markup and citation tags removed."""
    clean = _TAGS.sub("", _LINK.sub(r"\1", unit)).replace("`", "").replace("**", "").replace("__", "")
    return " ".join(clean.split())


# a role's or reference's quotes (`:user:`alice``, `{pr}`12``, `` `#12 <url>`_ ``) mark no code
_ROLE_QUOTES = re.compile(r"(?<=[:}])`([^`\n]*)`|`([^`\n]*)`_{1,2}")


def code_text(unit: str) -> str:
    """A unit as `plain_text` reads it, but for the quotes of inline code (`` `timeout` ``): what an item
    quotes is code, however plain its word (`pulls.names_unseen_code`)."""
    clean = _TAGS.sub("", _LINK.sub(r"\1", unit))
    clean = _ROLE_QUOTES.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), clean)
    return " ".join(clean.replace("**", "").replace("__", "").split())


def _pct(a: int, b: int) -> float:
    return round(100.0 * a / b, 1) if b else 100.0
