"""What git knows about a range, as typed facts, and the check of a claim (`meaning.Meaning`) against them.

Read once from a snapshot: the commits (merge commits and bodies included), the tags and their
dates, the references each commit carries, and the counts a changelog may state. A claim is
`supported`, `unsupported` (with the reason: "git says #9164") or `not checkable` (with its kind).
A claim is unsupported only when git says something else, never merely because git is silent.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any

from signoff.notes.facts import PR_TRAILER, area_of
from signoff.notes.meaning import Meaning
from signoff.notes.pulls import (
    CHANGELOG_FILE,
    LONG_ITEM,
    MIN_EVIDENCE_WORDS,
    MIN_ITEM_WORDS,
    SUMMARY,
    common_words,
    diff_decides,
    evidence,
    identifier_words,
    item_words,
    names_unheld_identifier,
    names_unseen_code,
    shared_words,
    unrelated,
    unseen_identifier_parts,
    versions_in,
    without_links,
    words,
)
from signoff.notes.told import ENTRY_MARK, FRAGMENT, FRAGMENT_MARK, MARKS, told_for

__all__ = ["BOTS", "Carrier", "Knowledge", "Verdict", "carried_refs", "similarity", "version_of", "words"]

BOTS = re.compile(r"\[bot\]|dependabot|renovate|github-actions|pre-commit-ci|greenkeeper|snyk-bot|"
                  r"allcontributors|mergify|codecov", re.IGNORECASE)
# Numbers a commit carries: PR and issue references in its subject and body, and the numbers of the
# changelog fragments it adds (towncrier `changes/1234.bugfix.rst`, prettier's
# `changelog_unreleased/less/19574.md`). GitHub numbers from 1: `#0000` is a colour (tailwindcss' "initial value
# `#0000`"), no reference.
_CARRIED = re.compile(r"(?:#|\bGH-|/pulls?/|/issues/|\bpull request\s+#?|\bPR\s*#?|\bissue\s+#?|!)([1-9]\d*)\b",
                      re.IGNORECASE)
# The issues a commit message says it closes (GitHub's closing keywords).
_CLOSES = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:#|GH-|https?://\S+/issues/)(\d+)\b",
                     re.IGNORECASE)
# An issue a subject names as one ("Fix type annotations for replace_with (Issue #602)"): the entry it is
_SUBJECT_ISSUE = re.compile(r"\bissue\s*#(\d+)\b", re.IGNORECASE)
_OWN_PR = re.compile(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+)|\(#(\d+)\)")
_SQUASHED = re.compile(r"\(#(\d+)\)\s*$")
_BACKPORT = re.compile(r"^\s*\[(?:\d+\.)+(?:x|\d+)\]|\bback-?port|\bcherry[- ]pick", re.IGNORECASE)
# A backport that says which pull request it carries ("Backport of: #13079", "backport of PR #12"):
# its number is not lost, and another is wrong.
_BACKPORT_OF = re.compile(r"\bback-?port(?:ed)?\s+(?:of|from)\s*:?\s*(?:PR\s*|pull request\s*)?"
                          r"(?:#|https?://\S+/pulls?/)(\d+)\b", re.IGNORECASE)
# A backport's pull request whose title names the one it carries ("Backport #9662 for v4.3.x: ... (#9683)",
# "Backport add-csv-dependency from #9522 to Jekyll 3 (#9616)", jekyll's): that number is not lost either
_BACKPORT_NAMED = re.compile(r"^\s*back-?port(?:ed)?\s+(?:[^#\n]{0,60}?\s(?:from|of)\s+)?(?:PR\s*)?#(\d+)\b",
                             re.IGNORECASE)
_TAG_VERSION = re.compile(r"(\d+(?:\.\d+)*(?:[-.]?(?:a|b|rc|alpha|beta|dev|post|pre|c)[.-]?\d*)?)$",
                          re.IGNORECASE)
_CLAUSES = re.compile(r",\s+(?:and\s+)?|;\s+|\.\s+")  # where a paragraph moves to another change
# A commit's kind before its title: `feat(cli)!: `, and the bracketed tags some projects use
# (`[New] `, `[Fix] `, `[Tests] `): words of every commit, not of its change.
_CONVENTIONAL = re.compile(r"^(?:\[[^\]]{1,20}\]\s*)+|^\w+(?:\([^)]*\))?!?:\s*")
# The kinds of a conventional commit that say nothing of its change (`docs:`, `perf:`, `revert:` do)
# the kind an item opens with, as a conventional commit's (`docs:`, `fix(cli):`, sinatra's `Fix:`), not a
# topic it opens with, which says what changed (pygments' `BQN: Various improvements` for "Various
# improvements to the BQN lexer", `Lean4:`, `meson:`)
_KIND_PREFIX = re.compile(r"^(?:feat|feature|fix|bugfix|hotfix|docs?|perf|deprecate|revert|security|chore|ci|build|"
                          r"tests?|style|refactor|release|deps|dev|lint|bump|wip|meta|infra|tooling|typo)"
                          r"(?:\([^)]*\))?!?:\s*", re.IGNORECASE)
_KIND = re.compile(r"^(?:feat|chore|ci|build|style)(?:\(([^)]*)\))?!?:\s*", re.IGNORECASE)
STRONG, RELATED = 0.6, 0.3  # word overlap of an item with its own commit; with another carrier
CHANCE = 2  # words a long pull request's messages may share with any item by chance
TOLD = 5  # words of a pull request's messages an item retelling them shares at least (`_off_title`)
LARGE_DIFF = 1000  # words of a diff that holds most words of any item
BRANCH_OF_ONE = 50  # commits a pull request's branch holds at most: a longer one is a release line merged
CONTRADICTS = 0.6  # the overlap an item needs with its own commit for that commit to contradict it
REBASE_HABIT = 3  # numberless commits a maintainer committed for others that show he lands pull requests by rebase
RELEASE_WINDOW = (-1, 0, 1)  # days around a tag's date a release may be dated
# the words a commit writing the changelog says of itself, and of no change
_NOTES_WORDS = words("changelog changes release releases notes note news history mention mentioned document "
                     "documented entry entries update updated wrt add added for")
# a merge of the main line into another branch (to bring it up to date), not of that branch's work
_MAIN_INTO = re.compile(r"^Merge (?:remote-tracking )?branch '(?:[\w.-]+[:/])?(?:master|main|develop|trunk)' into ")
_OWN_NUMBER = re.compile(r"\(#(\d+)\)\s*$")  # a squashed pull request's number, closing its subject
_HEX = re.compile(r"[0-9a-fA-F]{7,40}")
_DOTTED_DAY = re.compile(r"((?:19|20)\d\d)\.(\d\d)\.(\d\d)")  # `2025.04.03`: a date, unless a tag names it
# `29.06.2024` (jason's `## 1.4.3 (29.06.2024)`): a date written day first, as dots are in Europe
_DOTTED_DAY_FIRST = re.compile(r"(\d\d)\.(\d\d)\.((?:19|20)\d\d)")


def version_of(name: str) -> str | None:
    """The version a tag or written version names: `v1.2.3`, `click-8.1.8`, `pkg@1.2.3` -> `1.2.3`."""
    m = _TAG_VERSION.search(name.strip())
    if m is None or ("." not in m.group(1) and name.strip().lstrip("vV") != m.group(1)):
        return None
    return _norm(m.group(1))


def _release_key(v: str) -> tuple[int, ...]:
    """A version's numbers, to be compared (`3.13` is `3.13.0`; a pre-release's suffix is left out)."""
    head = re.match(r"[\d.]*", v)
    numbers = [int(x) for x in re.findall(r"\d+", head.group(0) if head else "")]
    return tuple(numbers + [0] * (3 - len(numbers)))


def _norm(v: str) -> str:
    v = v.lower().lstrip("v").replace("-", "").replace("alpha", "a").replace("beta", "b")
    v = re.sub(r"\.(?=(?:a|b|rc|c|dev|post|pre)\d*$)", "", v)
    while re.search(r"\.0$", v) and v.count(".") > 1:
        v = v[:-2]
    return v


def similarity(item: set[str], title: set[str]) -> float:
    """How much of a commit's title an item restates: the share of the title's words in the item,
    when they share at least three words (two for a two-word title)."""
    shared = len(item & title)
    if shared < min(3, len(title)) or shared < 2:
        return 0.0
    return shared / len(title)


def carried_refs(message: str) -> set[str]:
    """The pull request and issue numbers a commit message carries."""
    return {m.group(1) for m in _CARRIED.finditer(message)}


_UPDATE_WORDS = frozenset(words("bump bumps update updates upgrade upgrades dependency dependencies pin pinned "
                                "require requirement requirements version versions lock lockfile hook hooks "
                                "autoupdate pre-commit renovate dependabot deps"))
_NAME_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")  # `DavidKorczynski`: David, Korczynski
_LOGIN = re.compile(r"[a-z][a-z0-9]{3,}(?:-[a-z0-9]+)*")  # one lower-case word: a login, not a name
_REPORTED = re.compile(r"\b(?:issue|report(?:ed|s)?|suggest(?:ed|ion)?|request(?:ed)?)\s+(?:by|from)\b",
                       re.IGNORECASE)
_CREDIT = re.compile(r"(?<![\w.@/`])@([A-Za-z0-9][\w-]*)|(?::user:|\{user\})`?([A-Za-z0-9][\w-]*)")
_AGENTS = re.compile(r"copilot|claude|devin|codex|cursor|sweep|jules", re.IGNORECASE)
_NOREPLY = re.compile(r"^(?:\d+\+)?([^@]+)@users\.noreply\.github\.com$", re.IGNORECASE)
_CO_AUTHOR = re.compile(r"^co-authored-by:\s*(.*?)\s*<([^>]*)>", re.IGNORECASE | re.MULTILINE)
# Who signed a commit off: in a squashed pull request's body, the authors of its branch's commits
# (`Signed-off-by: chuenchen309 <48723787+chuenchen309@users.noreply.github.com>`). It states their
# account, not that they made this commit (a maintainer signs off what he applies).
_SIGNED_OFF = re.compile(r"^signed-off-by:\s*(.*?)\s*<([^>]*)>", re.IGNORECASE | re.MULTILINE)
_PACKAGE = re.compile(r"^(?:lib|src)/([A-Za-z][\w.-]*)/")  # a package's folder: the project's name
# the account a pull request came from: GitHub's `from owner/branch`, or its head label `from owner:branch` (babel's
# "Merge pull request #1174 from verhovsky: Remove u string prefix from docs")
_MERGED_FROM = re.compile(r"^Merge pull request #\d+ from ([^/:\s]+)[/:]")
_BRANCH_MERGE = re.compile(r"^Merge (?!pull request\b)\S")  # a merge of branches, not GitHub's of a pull request


# The words of code most projects' diffs hold (stems, as `pulls.words` makes them): those in the diffs of half or more
# of the 126 projects whose diffs the bench's records hold (tests/data/notes-real, 2026-12-07, main `f501b1b1`). They
# tie an item to no change in particular: "run" and "write" are in the diff of any Java formatter step.
CODE_WORDS = frozenset("allow annot assert bas build but call check clas cod creat def default document els end "
                       "error expect fals fil first get hint import includ int job list match messag modul nam new "
                       "non object option path requir result return run see self set should start str support test "
                       "tru typ valu version which writ you".split())
# What an item says of a change to the documentation (as `words` reads them)
_DOC_WORDS = frozenset(words("documentation docs doc docstring docstrings example examples typo typos readme "
                             "tutorial guide snippet wording spelling"))
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|spec|__tests__)/|(?:^|/)test_[^/]*$|[._-](?:test|spec)\.[a-z]+$")


def _pushed(c: dict[str, Any]) -> bool:
    """Whether a commit was committed by its own author, not by GitHub (a merge on the web) nor by
    a maintainer who applied someone else's work: a push, which no pull request landed (where its
    author lands others' work, `Knowledge`)."""
    a, m = c["author"], c["committer"]
    return a["email"].lower() == m["email"].lower() and m["email"].lower() != "noreply@github.com" and \
        len(c["parents"]) == 1


@lru_cache(maxsize=1 << 16)  # asked for every commit's people at each credit: a range has few names
def _ident(text: str) -> str:
    """A name or handle as letters and digits: accents dropped (`Bernát Gábor` is `bernatgabor`)."""
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(ch))
    return re.sub(r"[^a-z0-9]", "", plain)


def people_of(c: dict[str, Any]) -> set[str]:
    """Who made a commit, as normalised identities a user handle may be matched with: its author's
    name, each longer word of the name, the email's local part (a GitHub no-reply address holds
    the handle), its co-authors', and for a merged pull request the account it came from. Not its
    committer: a maintainer who rebased or cherry-picked someone's change landed it, and a credit
    ("thanks @ljharb" for a commit Noureldin Shaker wrote and ljharb committed) names who made it."""
    found: set[str] = set()
    people = [(c["author"]["name"], c["author"]["email"]), *_CO_AUTHOR.findall(c["body"])]
    for name, email in people:
        found.add(_ident(name))
        found |= {_ident(w) for w in re.split(r"[\s.\-_]+", name) if len(_ident(w)) >= 4}
        local = _NOREPLY.match(email)
        found.add(_ident(local.group(1) if local else email.split("@")[0]))
    merged = _MERGED_FROM.match(c["subject"])
    if merged:
        found.add(_ident(merged.group(1)))
    return {p for p in found if len(p) >= 3}


def author_of(c: dict[str, Any]) -> set[str]:
    """Who wrote a commit, normalised: the author's name and the local part of the email."""
    local = _NOREPLY.match(c["author"]["email"])
    return {_ident(c["author"]["name"]), _ident(local.group(1) if local else c["author"]["email"].split("@")[0])}


_PLAIN_NUMBER = re.compile(r"(?<![\w.#])\d+(?![\w.])")


def _says_whole_title(item: str, title: str) -> bool:
    """Whether an item holds each word and number of a title of three words or more (its `#N` out)."""
    title = re.sub(r"#\d+", " ", title)
    said = identifier_words(title) | set(_PLAIN_NUMBER.findall(title))
    return len(said) >= 3 and said <= identifier_words(item) | set(_PLAIN_NUMBER.findall(re.sub(r"#\d+", " ", item)))


# a commit preparing a release or its notes ("🚀 RELEASE v4.2.0 (#395)", changesets' "Version Packages (#812)")
_RELEASE_SUBJECT = re.compile(r"\b(?:releas\w*|version\w*|prepar\w*|changelog)\b", re.IGNORECASE)


def _content_words(subject: str) -> set[str]:
    """The words of a commit subject that say what it changed: its conventional kind and its numbers out."""
    return {w for w in words(_CONVENTIONAL.sub("", subject)) if re.search(r"[a-z]", w)}


def handles_of(c: dict[str, Any]) -> set[str]:
    """The GitHub accounts git states for a commit's author: a no-reply address's handle, or the
    account a merged pull request came from (normalised)."""
    found = set()
    local = _NOREPLY.match(c["author"]["email"])
    if local:
        found.add(_ident(local.group(1)))
    merged = _MERGED_FROM.match(c["subject"])
    if merged:
        found.add(_ident(merged.group(1)))
    return found


def _account_of(account: str, c: Carrier) -> bool:
    """Whether a GitHub account is plainly the one who wrote a commit (not a co-author): it is the
    author's name or email local part, or holds every word of a name of two words or more
    (`gaborbernat` for Bernát Gábor; not `alexandreabrioux` for an "Alex")."""
    parts = [_ident(w) for w in re.split(r"[\s.\-_]+", c.author) if len(_ident(w)) >= 3]
    return account in c.authored or (len(parts) >= 2 and all(p in account for p in parts))


def _other_credits(handle: str, item: str) -> set[str]:
    """The users an item credits besides `handle` (lower case). A name called somewhere in the item
    is code, not a user (`@content(name)` -> `@content (name)`, its markup gone)."""
    called = {m.group(1).lower() for m in re.finditer(r"@([\w-]+)\(", item)}
    return {(m.group(1) or m.group(2)).lower() for m in _CREDIT.finditer(item)} - called - {handle.lower()}


def _credits_maker(item: str, carriers: list[Carrier], own: Carrier) -> bool:
    """Whether an item credits who made a commit carrying its number, and not who made the commit its
    words restate: the credit and the number agree on the change (fmt's "Optimized formatting into
    back-insert iterators ... (#4679). Thanks @user202729." is user202729's "Speed up iterator_buffer
    (#4679)", not Stéén's "std.h: Allow formatting std::unexpected type. (#4675)", whose words it shares)."""
    handles = _other_credits("", item)

    def made(c: Carrier) -> bool:
        return any(_ident(h) in c.handles or same_person(h, c.people) for h in handles)

    return bool(handles) and any(made(c) for c in carriers) and not made(own)


def same_person(handle: str, people: set[str]) -> bool:
    """Whether a user handle names one of these identities: equal, or one holding the other (a
    handle `graingert` and a name `Thomas Grainger`), for identities of four characters or more."""
    h = _ident(handle)
    return any(h == p or (len(p) >= 4 and len(h) >= 4 and (p in h or h in p)) for p in people)


# An item opening with its number as a label (Sphinx's `* #13392: Fix ...`, ripgrep's `[BUG #2750]: ...`)
_LABEL_NUMBER = re.compile(r"^\W*(?:[A-Za-z]+\s+)?#(\d+)\W*:\s")


# The component an item or a commit subject opens with, naming what changed: NLog's "XmlParser - Refactor ...",
# "FileTarget - ...", pygments' "Haskell: ..." (after the numbers an item opens with); a kind (`fix:`) is none
_TOPIC = re.compile(r"^[\s*+-]*(?:(?:#\d+|\+)[\s,:+]*)*([A-Za-z][\w.]*[A-Za-z0-9])(?:\s+-|:)\s+\S")


def _topic(text: str) -> str | None:
    """The component a text opens with (lower case), or None."""
    m = _TOPIC.match(text)
    return m.group(1).lower() if m and not _KIND_PREFIX.match(m.group(0).lstrip(" *+-")) else None


def _opening_numbers(item: str) -> list[str]:
    """The numbers and hashes an item opens with (changesets' "df424a4 #1482 Thanks @x! - ..."): a list made from
    commits writes each commit's pull request beside its hash, before the text, which may name other changes
    ("Fix regression from #4639 ..." in mobx's item for #4659)."""
    found = re.findall(r"[0-9A-Za-z]+", item)
    return list(itertools.takewhile(lambda w: w.isdigit() or bool(_HEX.fullmatch(w)), found))


# an item opening with the issue it is about, labelled as a report ("Bug #692:", "Feature #549:"), not "PR #696:"
_ISSUE_LABEL = re.compile(r"^\W*(?:[Bb]ug|[Ff]eature|[Ii]ssue|[Ee]nhancement)\s+#(\d+)\W*:\s")
_THANKED = re.compile(r"\bthanks?\b(?:\s+to)?[\s`\[]*@", re.IGNORECASE)


def _labelled(item: str, n: str) -> bool:
    """Whether an item opens with `#n` as the label of what it is about: the issue it fixes, as Sphinx
    and ripgrep write it, or its pull request. Below the pull request of the commit it restates it
    may be the issue (Sphinx 8.2.2's "#13392: Fix argument type for ``jieba.load_userdict()``" for
    "... (#13396)", in a section where no other item shows issues cited)."""
    m = _LABEL_NUMBER.match(item)
    return m is not None and m.group(1) == n


def _said(item: str) -> set[str]:
    """An item's words as they are compared with commit titles: without the kind it opens with
    (`docs: fix comment ...`), as a title is read without its own (`docs: added comment in doc.go`),
    and its identifiers by their parts too (cattrs' "raise `StructureHandlerNotFoundError` more
    eagerly" restates "Raise errors for missing structure handlers more eagerly (#577)")."""
    said = _KIND_PREFIX.sub("", item.lstrip(" -*+"))
    return identifier_words(said) | versions_in(said)


def _dates(iso: str) -> set[str]:
    """The calendar days a timestamp may be written as: its own offset's day and UTC's."""
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return set()
    out = {when.date().isoformat()}
    if when.tzinfo is not None:
        out.add(when.astimezone(UTC).date().isoformat())
    return out


@dataclass
class Carrier:
    hash: str
    subject: str
    title: str  # the words the item is compared with: the subject, or a merge's pull request title
    refs: set[str]
    named: set[str]  # the numbers in its subject (its own pull request's, an issue's): what it says it is
    own: str | None  # the pull request number the commit names as its own (or the one it backports)
    backport: bool
    words: set[str] = field(default_factory=set)
    # What the commit says its changelog entry is numbered: the changelog fragments it adds (the
    # entry a fragment becomes carries the fragment's number), and the issues its message closes.
    fragments: set[str] = field(default_factory=set)
    closes: set[str] = field(default_factory=set)
    people: set[str] = field(default_factory=set)  # who made it, normalised (`people_of`)
    author: str = ""
    handles: set[str] = field(default_factory=set)  # its author's account, where git states it (`handles_of`)
    authored: set[str] = field(default_factory=set)  # its author's name and email local part, normalised
    body: str = ""
    paths: tuple[str, ...] = ()
    parents: tuple[str, ...] = ()
    pushed: bool = False  # a maintainer's push naming no pull request: no pull request landed it
    email: str = ""  # its author's, lower case
    carried_over: bool = False  # brought by a pull request merging one branch into another, under its number
    versions: set[str] = field(default_factory=set)  # the versions its title names
    rebased: bool = False  # committed by a maintainer who lands pull requests by rebasing them (`Knowledge`)


@dataclass
class Verdict:
    claim: Meaning
    status: str  # supported | unsupported | not_checkable
    reason: str = ""


class Knowledge:
    """Typed facts of one snapshot (commits streamed once)."""

    def __init__(self, rng: str, head: str | None, tags: list[dict[str, str]], commits: Iterable[dict[str, Any]],
                 authors_before: dict[str, list[str]] | None = None) -> None:
        self.range = rng
        self.carriers: list[Carrier] = []
        self.by_ref: dict[str, list[Carrier]] = {}
        self.by_hash: dict[str, Carrier] = {}
        self.head = head
        self._mainline: set[str] | None = None
        self._common: set[str] | None = None  # words many commits share (`pulls.common_words`), when asked
        self._known: dict[str, set[str]] = {}  # what git holds for a pull request, as words, when asked
        self._made: dict[tuple[str, frozenset[str]], list[Carrier]] = {}  # `made`, by item and its numbers
        self._owns: dict[frozenset[str], Carrier | None] = {}  # `own_commit`, by the item's words
        self._merged_as: dict[str, Carrier | None] = {}  # the pull request merge that brought a commit in, by hash
        # The names git gives each account it knows in the range (`known_as`), normalised.
        self._known_as: dict[str, set[str]] = {}
        # the words of the project's name (`js-yaml`: `yaml`): of its package folders (`lib/js-yaml/`,
        # `src/requests/`) and of the repository the changelog links into most (`grade`)
        self.project_words: set[str] = set()
        self._merges_tied = False  # the accounts merges came from, tied to their branches' authors (`known_as`)
        self.accounts: set[str] = set()  # the GitHub accounts git states in the range (no-reply addresses, merges)
        self.logins: dict[str, str] = {}  # an email's local part, normalised: the login its author writes as name
        self._login_names: dict[str, set[str]] = {}  # an email's names of one lower-case word, by its local part
        self._full_names: dict[str, set[str]] = {}  # every name an email's local part goes by in the range
        # The names git gives an email (as author, co-author or signer), normalised: one person's, so a
        # trailer `Co-authored-by: bluwy <bjornlu.dev@gmail.com>` names Bjorn Lu, who writes as that email.
        self._email_names: dict[str, set[str]] = {}
        # The words of a commit's diff (against its first parent, `pulls.diff_words`), when the
        # repository is at hand: read only for a pull request a claim names whose messages leave
        # the judgment uncertain.
        self.diff_of: Callable[[str], set[str]] | None = None
        # with the repository: the subjects of the commits anywhere in it (every branch) that name a number as
        # their own pull request's, read only for a number the range's commits contradict (`_twin_elsewhere`)
        self.subjects_elsewhere: Callable[[str], list[str]] | None = None
        self._diffs: dict[str, set[str]] = {}
        self._commit_diffs: dict[str, set[str]] = {}  # each commit's diff words, read once
        self.hashes: list[str] = []
        self.commit_days: set[str] = set()
        self.commit_months: set[str] = set()
        emails: set[str] = set()
        names: set[str] = set()
        human_emails: set[str] = set()
        human_names: set[str] = set()
        new_emails: set[str] = set()
        new_names: set[str] = set()
        before_e = set((authors_before or {}).get("emails", []))
        before_n = set((authors_before or {}).get("names", []))
        # accounts the history before the range states too (`gaborbernat@users.noreply.github.com`)
        self.accounts |= {_ident(m.group(1)) for e in before_e if (m := _NOREPLY.match(e)) and not BOTS.search(e)}
        merges = plain = 0
        landers: set[str] = set()  # who committed someone else's commit in the range
        committers: dict[str, str] = {}  # each commit's committer's email, by hash
        releaser = ""  # who pushed the range's tip (the release), if its author pushed it
        pushed: dict[str, str] = {}  # the commits their author committed, by hash: the author's email
        head_days: set[str] = set()
        subject_days: list[tuple[str, set[str]]] = []  # each commit's subject and the days it was made
        own_days: dict[str, set[str]] = {}  # the days each squashed pull request's commit was written, by number
        day_of: dict[str, set[str]] = {}  # the days each commit was made, by hash
        after: list[tuple[str, str]] = []  # each commit's subject and its first parent's hash
        everyone: set[str] = set()  # authors of every commit, merges included (the facts' count)
        thanked: set[str] = set()  # authors and co-authors of every commit, by name, people only
        added = deleted = 0
        paths: set[str] = set()
        renamed: dict[str, tuple[str, int]] = {}  # a fragment's number, renamed: its new number, by which commit
        for c in commits:
            self.hashes.append(c["hash"])
            is_merge = len(c["parents"]) > 1
            merges += is_merge
            plain += not is_merge
            subject_days.append((c["subject"], _dates(c["author"]["date"]) | _dates(c["committer"]["date"])))
            day_of[c["hash"]] = subject_days[-1][1]
            after.append((c["subject"], c["parents"][0] if c["parents"] else ""))
            for who in (c["author"], c["committer"]):
                self.commit_days |= _dates(who["date"])
                if c["hash"] == head:
                    head_days |= _dates(who["date"])
            a = c["author"]
            email, name = a["email"].lower(), a["name"]
            bot = bool(BOTS.search(email) or BOTS.search(name))
            everyone.add(a["email"])
            # the people a project thanks by name: authors and co-authors of every commit, bots and agents left
            # out (xarray's "Thanks to the 16 contributors to this release", three of them co-authors only)
            for who in [name, *(n for n, _ in _CO_AUTHOR.findall(c["body"]))]:
                if not BOTS.search(who) and not _AGENTS.search(who) and _ident(who):
                    thanked.add(_ident(who))
            if not is_merge:
                emails.add(email)
                names.add(name)
                if not bot:
                    human_emails.add(email)
                    human_names.add(name)
                    if email not in before_e and name not in before_n:
                        new_emails.add(email)
                        new_names.add(name)
            for f in c["files"]:
                paths.add(f["path"])
                if f.get("old_path") and (old := FRAGMENT.search(f["old_path"])) and \
                        (new := FRAGMENT.search(f["path"])) and old.group(1) != new.group(1):
                    renamed.setdefault(old.group(1), (new.group(1), len(self.carriers)))
                if (package := _PACKAGE.match(f["path"])) is not None:
                    self.project_words |= words(package.group(1).replace("-", " ").replace("_", " "))
                added += f["added"]
                deleted += f["deleted"]
            self._carry(c)
            if (own := self.carriers[-1].own) is not None and not is_merge:
                own_days.setdefault(own, set()).update(_dates(a["date"]))
            if c["committer"]["email"].lower() not in (email, "noreply@github.com"):
                landers.add(c["committer"]["email"].lower())
            committers[c["hash"]] = c["committer"]["email"].lower()
            if self.carriers[-1].pushed:
                pushed[c["hash"]] = email
                if c["hash"] == head:
                    # who pushed the release itself ("Update CHANGELOG and bump version", tagged) is a
                    # maintainer, whose other pushes no pull request landed either
                    releaser = email
        self.landers = {_ident(m.group(1) if (m := _NOREPLY.match(e)) else e.split("@")[0]) for e in landers}
        # A name of one lower-case word is a login written as name (`fisker`) only beside a fuller name of
        # the same email that begins with it ("fisker Cheung", the profile GitHub writes on a squash): many
        # people write their name in lower case ("qingmu", "jessetang", "guangwu" in gin, whose logins are
        # kingcanfish, demoManito and testwill).
        for account, logins in self._login_names.items():
            for login in logins:
                if any(n != login and n.lower().startswith(login.lower() + " ") for n in self._full_names[account]):
                    self.logins[account] = login
        if releaser:
            landers.add(releaser)
        for carrier in self.carriers:
            # a push by someone who lands others' work (a maintainer): a contributor's own commit is
            # pushed by its author too when a maintainer fast-forwards the pull request's branch
            carrier.pushed = carrier.pushed and pushed[carrier.hash] in landers
        self._mark_rebased(committers, landers)
        # A pull request merging one branch into another ("Merge 'tokio-1.51.4' into 'tokio-1.52.x' (#8288)")
        # brings changes made in other pull requests; a commit of it naming its number ("taskdump: remove
        # crate disambiguators from output (#8288)", a cherry-pick of #8264) is such a change carried over,
        # whose item names the original's number: git holds that number nowhere in the range.
        over = {c.own for c in self.carriers if c.own and len(c.parents) > 1 and _BRANCH_MERGE.match(c.subject)}
        for carrier in self.carriers:
            carrier.carried_over = carrier.own in over and len(carrier.parents) <= 1
        self._rename_fragments(renamed)
        self.commit_months = {d[:7] for d in self.commit_days}
        self.head_days = set(head_days)
        in_range = set(self.hashes) | ({head} if head else set())
        sides = [s for s in rng.split("..") if s]
        self.tags = tags
        self.range_versions: set[str] = set()
        self.release_days: set[str] = set()
        self.all_versions: set[str] = set()
        # the day the release the range starts from was tagged: a commit made before it names the version while
        # it was developed beside that release (FluentValidation's "12.0 upgrade guide ..." of 2022, in the range
        # 11.11.0..12.0.0 of 2024-2025), not while its publication was prepared
        started = min((d for t in tags if len(sides) == 2 and t["name"] == sides[0] for d in _dates(t["date"])),
                      default="")
        for t in tags:
            v = version_of(t["name"])
            if v is None:
                continue
            self.all_versions.add(v)
            if t["commit"] in in_range or t["name"] in sides:
                self.range_versions.add(v)
            if t["commit"] in in_range:
                # A changelog is dated the day its release was prepared, which may be days before the
                # tag: the day of a commit of the range whose subject names the version (rust-lang/log's
                # "prepare for 0.4.30 release" of 2026-05-21, tagged on 2026-05-25).
                # (written in full: `8.0.0` of "Release v8.0.0" is the tag's `8.0`; a pre-release of it, "Cut
                # 1.22.0-rc.0 (#1768)" a month before client_golang's "Cut 1.22.0 (#1793)", prepared another release)
                named = re.compile(rf"(?<![\w.])v?{re.escape(v)}(?:\.0)*(?![\w]|\.\d|-[A-Za-z])")
                prepared = {d for subject, days in subject_days if named.search(subject) for d in days
                            if d >= started}
                self.release_days |= prepared
                # One a pull request of its own made ("Release v8.0.0 (#3914)", squashed on the tag's day) was
                # prepared when that pull request was opened, which git does not date: about when the pull
                # requests numbered next to it were written (puma 8.0.0, dated 2026-03-27, the day of #3913)
                self.release_days |= {d for subject, _ in subject_days if named.search(subject)
                                      and (m := _OWN_NUMBER.search(subject)) is not None
                                      for k in (-1, 1) for d in own_days.get(str(int(m.group(1)) + k), set())}
                # or when it was last written: release-please rewrites its release pull request, and its date, on
                # every push to the main line, so the newest commit before it dates it (lazy.nvim 11.17.3, dated
                # 2025-10-28, the day of "chore(update): update repository (#2079)"; "chore(main): release 11.17.3
                # (#2077)" was squashed and tagged on 2025-11-03)
                self.release_days |= {d for subject, parent in after if named.search(subject)
                                      and _OWN_NUMBER.search(subject) for d in day_of.get(parent, set())}
                # A release is often dated a day before its tag (the release commit, when no commit
                # says which it is) or published the day after it (a review, another timezone). A
                # commit of the tag's own day naming the version ("Bump 1.4.1") says no other day; one
                # of an earlier day says the changelog was dated when the release was prepared, not
                # when it was published: neither the day before the tag nor the day after is assumed
                # (rust-lang/log 0.4.28, prepared on 2025-09-02 and tagged on 2025-09-04, is no
                # release of 2025-09-05).
                tag_days = _dates(t["date"])
                window = (0,) if prepared - tag_days else RELEASE_WINDOW
                for d in tag_days:
                    day = date.fromisoformat(d)
                    self.release_days |= {(day + timedelta(days=k)).isoformat() for k in window}
        for s in sides:
            v = version_of(s)
            if v is not None:
                self.range_versions.add(v)
        self.side_names = sides
        refs = set(self.by_ref)
        pr_numbers = {c.own for c in self.carriers if c.own}
        self.counts: dict[str, set[int]] = {
            "commits": {plain + merges, plain},
            "pull_requests": {merges, len(pr_numbers), len(refs)},
            "contributors": {len(emails), len(names), len(human_emails), len(human_names), len(everyone),
                             len(thanked)},
            "new_contributors": {len(new_emails), len(new_names)},
            "files_changed": {len(paths)},
            "lines_added": {added},
            "lines_deleted": {deleted},
            "lines_changed": {added + deleted, added, deleted},
        }
        self.lines = (added, deleted)

    def _mark_rebased(self, committers: dict[str, str], landers: set[str]) -> None:
        """Mark the commits a maintainer landed by rebasing pull requests himself, where the range shows that
        habit: most commits he committed for other authors carry no pull request number (echo's Martti T. committed
        23 of the 61 commits of v5.0.4..v5.3.1 for others, one of them with a number: "fix(static): preserve matched
        handler 404s" is #3043). The numbers such a commit's message names are not its pull request's (an issue it
        fixes, a pull request it improves, its author's own "(#3036)" for #3038), and its own is in no commit. A
        maintainer squashing locally keeps the numbers ("... (#N)" on most): no habit, the numbers are his."""
        applied = [c for c in self.carriers if len(c.parents) == 1 and committers.get(c.hash, "") in landers
                   and c.email != committers[c.hash] and not BOTS.search(c.author)]
        numberless = sum(c.own is None for c in applied)
        if numberless < REBASE_HABIT or numberless * 2 <= len(applied):
            return
        for c in self.carriers:
            c.rebased = len(c.parents) == 1 and committers.get(c.hash, "") in landers

    def _carry(self, c: dict[str, Any]) -> None:
        subject, body = c["subject"], c["body"]
        for name, email in [(c["author"]["name"], c["author"]["email"]), *_CO_AUTHOR.findall(body),
                            *_SIGNED_OFF.findall(body)]:
            local = _NOREPLY.match(email)
            account = _ident(local.group(1) if local else email.split("@")[0])
            if len(account) >= 3 and _ident(name):
                self._known_as.setdefault(account, set()).add(_ident(name))
            if local and not BOTS.search(email):
                self.accounts.add(account)
            elif _LOGIN.fullmatch(name) and not BOTS.search(name + " " + email) and len(account) >= 3:
                self._login_names.setdefault(account, set()).add(name)  # a login written as name? (`__init__`)
            if _ident(name) and not BOTS.search(name + " " + email):
                self._email_names.setdefault(email.lower(), set()).add(_ident(name))
                self._full_names.setdefault(account, set()).add(name)
        refs = carried_refs(subject + "\n" + body)
        # a fragment the commit writes names its entry; one it only empties is the release collecting
        # it into the changelog ("Release v3.14.0 (#12757)" deleting 76 of aiohttp's `CHANGES/N.*.rst`)
        fragments = {m.group(1) for f in c["files"] if f["added"] or not f["deleted"]
                     for m in FRAGMENT.finditer(f["path"])}
        refs |= fragments
        # GitHub appends a squashed pull request's number: "... (#3975) (#3976)" is #3976, fixing #3975
        own_m = _SQUASHED.search(subject) or _OWN_PR.search(subject) or PR_TRAILER.search(body)
        own = next((g for g in own_m.groups() if g), None) if own_m else None
        backported = {m.group(1) for m in _BACKPORT_OF.finditer(subject + "\n" + body)}
        if own is not None and not backported and (named_original := _BACKPORT_NAMED.match(subject)):
            backported = {named_original.group(1)}  # a backport's own pull request names the one it carries
        if own is None and len(backported) == 1:
            own = next(iter(backported))  # the pull request it is, on the release branch
        title = subject
        if subject.startswith("Merge pull request") and body:
            title = body.splitlines()[0]
        title = _CONVENTIONAL.sub("", title)
        carrier = Carrier(c["hash"], subject, title, refs, carried_refs(subject) | backported, own,
                          bool(_BACKPORT.search(subject + "\n" + body)) and not backported, words(title), fragments,
                          {m.group(1) for m in _CLOSES.finditer(subject + "\n" + body)} |
                          {m.group(1) for m in _SUBJECT_ISSUE.finditer(subject)}, people_of(c),
                          c["author"]["name"], handles_of(c), author_of(c), body, tuple(f["path"] for f in c["files"]),
                          tuple(c["parents"]), own is None and _pushed(c), c["author"]["email"].lower())
        carrier.versions = versions_in(title)
        self.carriers.append(carrier)
        self.by_hash[carrier.hash] = carrier
        self.accounts |= {h for h in carrier.handles if not BOTS.search(h)}
        for r in refs:
            self.by_ref.setdefault(r, []).append(carrier)

    def _rename_fragments(self, renamed: dict[str, tuple[str, int]]) -> None:
        """A fragment a later commit of the range renames names its entry by its new name (pip 26.1's "Rename
        12018.bugfix.rst to 9243.bugfix.rst (#13926)", a week after "Allow unpinned requirements to use hashes
        from constraints (#13887)" wrote it under another issue's number): the commit that wrote it carries the
        new number, and the old one only where its message says it. (Commits come newest first: the renaming
        one is earlier in the list than the one it corrects.)"""
        for old, (new, by) in renamed.items():
            for at, carrier in enumerate(self.carriers):
                if at <= by or old not in carrier.fragments:
                    continue
                carrier.fragments = (carrier.fragments - {old}) | {new}
                if old not in carried_refs(carrier.subject + "\n" + carrier.body):
                    carrier.refs.discard(old)
                    self.by_ref[old] = [x for x in self.by_ref.get(old, []) if x is not carrier]
                    if not self.by_ref[old]:
                        del self.by_ref[old]
                carrier.refs.add(new)
                if carrier not in self.by_ref.setdefault(new, []):
                    self.by_ref[new].append(carrier)

    def own_commit(self, item_words: set[str], merged: bool = False, numbered: bool = False) -> Carrier | None:
        """The commit an item describes: the one whose title shares most of the item's words, when
        that is clearly one commit; with `merged`, a merge and a commit of the branch it merged,
        alike, are that one change (for an issue the item names, which the commit's message closes);
        with `numbered`, so are they when one is a pull request's merge and the other names no number: the merge."""
        key = frozenset(item_words) | ({"\0merged"} if merged else set()) | ({"\0numbered"} if numbered else set())
        if key not in self._owns:  # asked for each claim of an item, and for each text graded against the range
            # a commit adding only changelog fragments ("News fragment", "Add feature fragment") says in
            # its title what it is, not what changed: its fragment's number names its entry (`fragments`)
            # the project's name says nothing of which change an item is (mkdocs' "`mkdocs --no-color build`
            # disables color output" is not "Add `mkdocs build --no-strict`")
            # versions are what an item and a title say, not words to share: an item naming Python 3.8
            # restates no title naming 3.12 and 3.13 ("Add support for Python 3.12 and 3.13" is not
            # "Python 3.8 is no longer supported", whatever their other words)
            said = item_words - self.project_words
            named = {w for w in said if w[:1].isdigit()}
            best: list[tuple[float, Carrier]] = sorted(((similarity(said, c.words - self.project_words), c)
                                                        for c in self.carriers
                                                        if not (c.paths and all(FRAGMENT.search(p) for p in c.paths))
                                                        and not (named and c.versions and not named & c.versions)),
                                                       key=lambda x: -x[0])[:2]
            twin = numbered and len(best) > 1 and best[1][0] == best[0][0] and \
                sum(bool(c.own) and len(c.parents) > 1 and not c2.named for c, c2 in ((best[0][1], best[1][1]),
                                                                                       (best[1][1], best[0][1]))) == 1 \
                and self._one_change(best[0][1], best[1][1])
            clear = bool(best) and best[0][0] >= STRONG and not (
                len(best) > 1 and best[1][0] >= STRONG and best[1][1].refs != best[0][1].refs
                and not ((merged or twin) and self._one_change(best[0][1], best[1][1])))
            if clear and twin and not best[0][1].own:
                best = best[1:]
            if clear and len(best) > 1 and best[1][0] == best[0][0] and best[1][1].named and not best[0][1].named \
                    and len(best[0][1].parents) > 1 and self._one_change(best[0][1], best[1][1]):
                # a merge titled as the commit it brought in, that commit's number left out (javaparser's "build:
                # add OSGi support to all deployable modules" merging "... (#1477)"), is that commit's change, told
                # by the commit whose title names the number
                best = best[1:]
            self._owns[key] = best[0][1] if clear else None
        return self._owns[key]

    def _one_change(self, a: Carrier, b: Carrier) -> bool:
        """Whether one of two commits is a merge that brought the other in."""
        return any(len(m.parents) > 1 and other in self._branch(m) for m, other in ((a, b), (b, a)))

    @staticmethod
    def _bot_change(n: str, item_words: set[str], own: Carrier | None, carriers: list[Carrier]) -> Carrier | None:
        """The bot commit a number belongs to, when the item credits it with something else: every
        commit naming `n` as its own pull request is a bot's (a dependency bump, a pre-commit
        update), and the item neither restates a commit nor says a word of the bot's subject or of
        updating a dependency ("Add a retry option (#1904)" for dependabot's "Bump ty from ...")."""
        made = [c for c in carriers if c.own == n]
        if not made or own is not None or not all(BOTS.search(c.author) for c in made):
            return None
        if any((f := FRAGMENT.search(p)) and f.group(1) == n for c in made for p in c.paths):
            # no bot writes the changelog fragment its pull request's number names: a person pushed a change
            # onto the bot's branch and told it there (trio's `newsfragments/3277.bugfix.rst`, "Ensure that the
            # DTLS server does not mutate SSL context", in github-actions' "Bump dependencies ... (#3277)")
            return None
        if item_words & (set().union(*(c.words for c in made)) | _UPDATE_WORDS):
            return None
        return made[0]

    def pull_request(self, n: str) -> list[Carrier]:
        """The commits git holds for pull request `n`: those naming it as their own (a squashed
        commit, or the merge commit with the commits of the branch it merged), and every other
        commit carrying the number."""
        made = [c for c in self.by_ref.get(n, [])]
        for merge in [c for c in made if c.own == n and len(c.parents) > 1]:
            made += self._branch(merge)
        return made

    def _main_line(self) -> set[str]:
        """The commits of the range's first-parent line from its head."""
        if self._mainline is None:
            self._mainline = set()
            at = self.by_hash.get(self.head or "") or (self.carriers[0] if self.carriers else None)
            while at is not None and at.hash not in self._mainline:
                self._mainline.add(at.hash)
                at = self.by_hash.get(at.parents[0]) if at.parents else None
        return self._mainline

    def _branch(self, merge: Carrier, limit: int = 300) -> list[Carrier]:
        """The commits a merge brought in: from its second parent back to the main line."""
        mainline = self._main_line()
        out: list[Carrier] = []
        seen: set[str] = set()
        todo = list(merge.parents[1:])
        while todo and len(out) < limit:
            h = todo.pop()
            c = self.by_hash.get(h)
            if c is None or h in seen or h in mainline:
                continue
            seen.add(h)
            out.append(c)
            todo += c.parents
        return out

    def _invented(self, n: str, item: str, item_refs: set[str], unit: str = "",
                  code: tuple[str, str] | None = None) -> Carrier | None:
        """The pull request `n` names, when the item credits it with something else: `n` is a pull
        request of the range (a commit names it as its own), and none of the item's words is in what
        git holds for it (`pulls.unrelated`); with the repository at hand, the words of the pull
        request's diff decide where its messages share none or one of the item's words. `code` is the
        unit and the item with their inline code quoted: what an item quotes is code (`` `timeout` ``)."""
        unit_code, item_code = code or (unit, item)
        carriers = self.by_ref.get(n, [])
        # Only a pull request of the range: an issue is written as its symptom ("TypeError when
        # rendering help"), and the commit that fixes it as the cure, so their words need not meet.
        own = [c for c in carriers if c.own == n]
        if len(item_refs) >= SUMMARY:
            return None
        if any(_says_whole_title(item, c.title) for c in own):
            # an item saying every word of the pull request's title, its numbers too, tells that change in
            # more words (standard's "Allow standard to run on Node 11, even though it's not officially
            # supported #1597" for "Support node 11", of which only `node` is not a word every change says)
            return None
        if any(({c.own} | c.refs) & (item_refs - {n}) for c in carriers):
            # an item naming an issue and the pull request whose message closes it names the pair git links: the
            # issue is its symptom, the pull request the cure (fmt's "Fixed a dynamic linking issue with clang-cl
            # (#4576, #4584)" for "Move FMT_API from ostream class to members (#4584)", saying "Fixes .../4576")
            return None
        if not own:
            if any(shared_words(item_words(item), self._evidence(self.by_ref.get(m, []))) for m in item_refs - {n}):
                # an item naming several issues tells their changes in one phrase: one it shares words with ties
                # the item to the others (kotlinx.coroutines' "Improved the published jar files (#3842, #4599)",
                # whose #4599 commit fills "Jar's manifests" and whose #3842 commit names an Automatic-Module-Name)
                return None
            return self._invented_issue(n, item, carriers)
        if n not in self._known:
            # a release's commit carrying `n` (changesets' "Version Packages (#18640)", whose body is the section
            # and whose paths are the `.changeset/*.md` files it collects) says the release's words, not the change's
            self._known[n] = self._evidence([c for c in self.pull_request(n) if c.own in (n, None) or
                                             not (c.versions or _RELEASE_SUBJECT.search(c.subject))])
        if self._common is None:
            self._common = common_words([self._evidence([c]) for c in self.carriers])
        said, known = item_words(item), self._known[n]
        if self.diff_of is None:
            return own[0] if unrelated(said, known, self._common) else None
        if len(known) >= LARGE_DIFF and len(item_refs) == 1 and self._off_large_messages(said, n, own):
            return own[0]
        # The messages leave it uncertain when they share none of the item's words, or one: the
        # words of the lines the pull request changed then decide (`pulls.diff_decides`).
        shared = shared_words(said, known)
        # the code of the item itself, or of what it continues where its own line says little
        # (towncrier's "Related issues" line under the paragraph it numbers)
        named = unit_code if len(item_words(unit)) >= MIN_ITEM_WORDS else item_code
        # (the parts of an identifier git holds nowhere whole tie nothing: `retry` of `retry_forever`)
        chance = [w for w in shared if w not in unseen_identifier_parts(named, known)]
        # (however many words a long description shares by chance, none of them its title's, an identifier of
        # which neither the messages nor the diff hold any part is no name of this change: simplejson's
        # description of 411 words says `keep`, `fail`, `upload`, `local` and `queue` of CI jobs, and nothing of
        # `retry_forever`; an item saying words of the title may name the public function whose inside changed,
        # xarray's "Fix :py:func:`open_dataset` raising ``OSError`` ..." for "fix: handle `OSError` in `_get_mtime`")
        off_title = not shared_words(said, set().union(*(item_words(c.title) for c in own)))
        untitled = len(chance) > CHANCE and off_title
        # (a diff of a word or two, a line of data, says little of what the change is, but no less that the code an
        # item saying no word of the title names is not in it: faker's "Remove duplicate 'Recalled to Life' book
        # title (#3238)", whose diff is one line of `book.yml`, credited with a `retry_forever` option)
        # (a diff so large that it holds most words of any item holds the code most items name too: Alamofire's
        # "Stabilize CI And Fix Bugs (#4030)", 1,054 words, says `session`, `request`, `timeout` and `deadline` of
        # an invented "`Session.request()` no longer accepts a `timeout` argument; pass `deadline=` instead")
        if len(item_refs) == 1 and names_unseen_code(named, known) and \
                (len(chance) <= CHANCE or (untitled and names_unheld_identifier(named, known))) and \
                (len(diff := self._diff(n, own)) >= MIN_EVIDENCE_WORDS or (bool(diff) and off_title)) and \
                names_unseen_code(named, known | (diff if len(diff) < LARGE_DIFF else set())) and \
                (len(chance) <= CHANCE or names_unheld_identifier(named, known | diff)) and \
                (len(said & diff) * 2 <= len(said) or len(diff) >= LARGE_DIFF):
            # code the item names that neither the messages nor the diff hold: about another change,
            # whatever chance words it shares with them (a `retry_forever` option credited to "Fix
            # test failures on NetBSD", whose messages say `fail` and `local`). An item the messages
            # tie by more words is about the change, and may name a setting it did not touch; so is
            # one whose other words the diff mostly holds (requests' "The proxy_bypass implementation
            # ... CPython's fix" naming CPython's function), unless the diff is so large that it holds
            # most words of any item.
            return own[0]
        if said & _DOC_WORDS and all(self._touched(c) and all(area_of(p) == "docs" for p in self._touched(c))
                                     for c in own):
            # a pull request changing the documentation only, credited with a change to it: its diff is
            # prose and examples, which an item tells in other words ("Remove an unused variable from
            # example code block" for "Update usage.rst", whose diff drops `>>> kid = "..."`)
            return None
        # the words most commits of the range say (jest's `config` and `file`) tie a long item to this change no
        # more than to any other: one sharing only those with the messages is judged by the diff, as one sharing none
        far = unrelated(said, known, self._common) or (
            len(said) >= LONG_ITEM and len(item_refs) == 1 and bool(shared) and set(shared) <= self._common)
        if len(shared) > 1 and not far:
            return own[0] if len(item_refs) == 1 and self._off_title(said, shared, n, own) else None
        if len(shared) == 1 and len(item_refs) == 1 and self._off_title(said, shared, n, own):
            # one word met outside the title (`config` of `uvicorn/config.py` for "Support reading settings
            # from a YAML file in the user's config directory", credited to "Don't include `cwd()` when
            # non-empty `--reload-dirs` is passed"): chance, unless the diff holds half the item
            return own[0]
        if len(shared) == 1 and len(item_refs) == 1 and len(said) == LONG_ITEM - 1 and \
                self._named_by_paths_alone(said, shared[0], n, own):
            return own[0]
        if len(item_refs) > 1 and self._joint_change(said, n, own, item_refs):
            return None
        diff = self._diff(n, own)
        # sharing one word or none with the messages (here), an item naming code neither they nor
        # the diff hold is about another change ("longer" meets the `formatLong` of a locale's paths);
        # one a rare word ties to them ("bpo-39057") may name another project's code (the check above
        # judged it by the diff already)
        if far and len(diff) >= MIN_EVIDENCE_WORDS and names_unseen_code(item_code, known | diff):
            return own[0]
        return own[0] if diff_decides(said, shared, far, diff, len(diff) >= LARGE_DIFF) else None

    def _joint_change(self, said: set[str], n: str, own: list[Carrier], item_refs: set[str]) -> bool:
        """Whether an item naming several pull requests tells their joint change in one phrase: a word of the item
        is a word of `n`'s title and of the title of another pull request the item names (ocamlformat's "Consistent
        formatting of comments (#2371, #2550, @Julow)" for "Refactor handling of comments (#2371)" and "Fix
        doc-comments '*)' exceeding the margin (#2550)"), as the issues rule of `_invented` ties several issues."""
        titled = shared_words(said, set().union(*(item_words(c.title) for c in own)))
        return bool(titled) and any(shared_words(set(titled), item_words(c.title))
                                    for m in sorted(item_refs - {n}) for c in self.by_ref.get(m, []) if c.own == m)

    def _off_large_messages(self, said: set[str], n: str, own: list[Carrier]) -> bool:
        """Whether a long item credited to a pull request whose messages hold most words of any item (1,000
        or more, as a diff that large: simplejson's #367, whose description of 36,000 characters is an agent's
        report of 1,381 words) is about something else: what they share ties nothing, and the item says no
        word of the title, and the diff holds fewer than half its words or is as large (a `Session.request()`
        that no longer accepts a `timeout` for "Fix free-threading (3.14t) crashes: heap types, ...")."""
        titled = set().union(*(item_words(c.title) for c in own))
        if len(said) < LONG_ITEM or len(titled) < MIN_EVIDENCE_WORDS or shared_words(said, titled):
            return False
        diff = self._diff(n, own)
        return len(diff) >= MIN_EVIDENCE_WORDS and (len(diff) >= LARGE_DIFF or len(said & diff) * 2 < len(said))

    def _named_by_paths_alone(self, said: set[str], word: str, n: str, own: list[Carrier]) -> bool:
        """Whether an item of five words shares its one word with the pull request only by the name of a
        file it touched, and its diff holds none of its other words: a word of the project's layout, not of
        the change (trio's "Add prebuilt wheels and binaries for Windows on ARM64" for "Drop 3.9 support",
        which edits `_io_windows.py`). A longer item is judged by `_off_title` and `diff_decides`."""
        made = self.pull_request(n)
        told = evidence([_CLOSES.sub(" ", _KIND.sub(r"\1 ", c.subject) + "\n" + c.body) for c in made], [])
        diff = self._diff(n, own)
        return not shared_words(said, told) and len(diff) >= MIN_EVIDENCE_WORDS and not (said & diff) - {word}

    def _off_title(self, said: set[str], shared: list[str], n: str, own: list[Carrier]) -> bool:
        """Whether a long item sharing words only with a pull request's body or paths, none with its
        title, is about something else: the words of its diff decide, as for an item the messages
        call unrelated ("Speed up start-up by caching the parsed plugin manifest" for "Add `gfm-like2`
        preset", whose body says "parsers" and "plugins"). A maintainer's item names what the title
        names, or what the diff changed. Only for an item of one number (one naming several pull
        requests tells their joint change) and a title that says something ("fix #1732" says nothing)."""
        titled = set().union(*(item_words(c.title) for c in own))
        if len(said) < LONG_ITEM or len(titled) < MIN_EVIDENCE_WORDS or shared_words(said, titled):
            return False
        # An item retelling the pull request's description in its own words shares many of them, a
        # quarter of its own or more, beyond the project's name (mkdocs' "`mkdocs serve` no longer
        # locks up the browser when more than 5 tabs are open ... closing the polling connection" for
        # "Improve editing experience when using `--livereload`", whose body says tabs, connection,
        # inactive): it tells that change, by words no chance gives.
        told = [w for w in shared if w not in self.project_words]
        if len(told) >= TOLD and len(told) * 4 >= len(said):
            return False
        diff = self._diff(n, own)
        return len(diff) >= MIN_EVIDENCE_WORDS and len((said & diff) | set(shared)) * 2 < len(said)

    def _invented_issue(self, n: str, item: str, carriers: list[Carrier]) -> Carrier | None:
        """The commit carrying issue `n`, when the item credits the issue with something else. An
        issue is written as its symptom and its fix as the cure, so only an item sharing no word
        at all with the messages of the commits carrying the number is about something else: a long
        one from the snapshot alone, and with the repository one whose words the diffs of those
        commits do not hold half of either ("Deprecate the legacy_mode argument of connect() #128" for the commit "Add
        --format-options to allow disabling sorting, etc. #128"). A commit changing tests only
        reproduces the symptom ("Add a test to reproduce #1006"): it says nothing of the cure. With the
        repository, a long item the messages and the diffs meet only by words of any code (`CODE_WORDS`) is
        about something else too."""
        said = item_words(item)
        fragment, writer = self._told(n, carriers, FRAGMENT_MARK)
        entry, entry_writer = self._told(n, carriers, ENTRY_MARK)
        titles = set().union(*(item_words(c.title) for c in carriers if not _MAIN_INTO.match(c.subject)))
        if len(said) >= MIN_ITEM_WORDS and len(fragment) >= MIN_EVIDENCE_WORDS and \
                len(shared_words(said, fragment | entry | titles)) * 2 < len(said):
            # the range's changelog fragment for `n` is the maintainers' own sentence for it, which towncrier renders
            # as the item, whole (every line of its final text was added in the range): an item most of whose words
            # neither it nor the titles of the commits carrying `n` hold tells another change (pytest's "Support
            # reading settings from a YAML file in the user's config directory" cited as #14004, whose fragments
            # deprecate `baseid` and fix conftest fixture scoping)
            return writer
        carriers = [c for c in carriers if not self._tests_only(c)]
        if not carriers:
            return None
        if all(self._notes_only(c) for c in carriers) and \
                not item_words(" ".join(f"{c.subject}\n{c.body}" for c in carriers)) - _NOTES_WORDS:
            # commits that only write the changelog and say nothing but that ("Changelog for #3045", "Update
            # release notes wrt #4787 fix") tell nothing of what the change was ("[changelog][#4019] Fixed: JDK26
            # is now supported." does)
            return None
        key = f"issue {n}"
        if key not in self._known:  # a merge carrying it brought its branch's commits (`pull_request`), but
            # one merging the main line into the issue's branch ("Merge branch 'master' into cachescrubber-gh-3950")
            # brought everyone else's: their words are not the issue's
            self._known[key] = self._evidence(carriers + [b for c in carriers if len(c.parents) > 1
                                                          and not _MAIN_INTO.match(c.subject) for b in self._branch(c)])
        known = self._known[key]
        # a word of the project's name (`yaml` in every path of js-yaml) does not tie a long item to
        # the issue ("... settings from a YAML file ... #432" for the commit adding `noArrayIndent`)
        shared = [w for w in shared_words(said, known) if len(said) < LONG_ITEM or w not in self.project_words]
        if len(said) < MIN_ITEM_WORDS or len(known) < MIN_EVIDENCE_WORDS:
            return None
        if self.diff_of is None:
            return carriers[0] if len(said) >= LONG_ITEM and not shared else None
        if not shared and len(entry) >= MIN_EVIDENCE_WORDS and not shared_words(said, entry):
            # an entry the commit carrying `n` added to the changelog citing it says what the change is, in the
            # maintainers' words (spotless' "Fix #2940 - Parse standard git year output in LicenseHeaderStep"
            # adding "Parse standard git year output in LicenseHeaderStep. ([#2940](...))"); a later commit may
            # reword it, so only an item sharing no word with it, nor with the messages, is about something else,
            # whatever words of any code the diff holds (its test's `setDirectory`, `setFile`, `clearGitConfig`)
            return entry_writer
        if not shared and len(said & self._diff(key, carriers)) * 2 < len(said):
            return carriers[0]
        # words of any code tie an item to no change: a long item the messages and the diffs meet only by them, and
        # which says two words they do not (spotless' "Add a `--dry-run` flag that prints the planned changes without
        # writing them #2945" for "Add shortenFullyQualifiedTypes step (fixes #2945)", whose body says "designed to
        # run before importOrder()" and whose diff says `run` and `write`), is about something else
        if len(said) < LONG_ITEM or len(said - CODE_WORDS) < 2 or \
                len(diff := self._diff(key, carriers)) < MIN_EVIDENCE_WORDS:
            return None
        return carriers[0] if set(shared) | (said & diff) <= CODE_WORDS else None

    def _told(self, n: str, carriers: list[Carrier], mark: str) -> tuple[set[str], Carrier | None]:
        """The words the commits carrying `n` wrote for it (with the repository at hand), and the first of them
        to write any: with `FRAGMENT_MARK` the lines of its changelog fragment (`changelog/14004.deprecation.rst`:
        every word its final text holds, as a line of it was added by one of them), with `ENTRY_MARK` the entries
        they added to a changelog file citing it (`told.told_words`). A merge bringing the main line into the
        issue's branch wrote everyone else's entries, none of them for it."""
        if self.diff_of is None:
            return set(), None
        # (only a commit that changed the changelog, its file or a fragment, can have written anything for `n`)
        found = [(told_for(self._read_diff(c.hash), n, mark), c) for c in carriers if not _MAIN_INTO.match(c.subject)
                 and any(CHANGELOG_FILE.search(p) or FRAGMENT.search(p) for p in self._touched(c))]
        wrote = [c for told, c in found if told]
        return set().union(*(told for told, _ in found)), wrote[-1] if wrote else None  # (newest first)

    def _touched(self, c: Carrier) -> tuple[str, ...]:
        """The paths a commit changed; a merge commit lists none (git log shows none for merges): its
        branch's commits say what it changed."""
        return c.paths if len(c.parents) <= 1 else tuple(p for b in self._branch(c) for p in b.paths)

    def _notes_only(self, c: Carrier) -> bool:
        """Whether a commit changes the changelog only (its file, or fragments of it)."""
        paths = self._touched(c)
        return bool(paths) and all(CHANGELOG_FILE.search(p) or FRAGMENT.search(p) for p in paths)

    def _tests_only(self, c: Carrier) -> bool:
        """Whether a commit changes tests only ("Fix regression introduced by #610 (#651)", a merge, is
        no test: its branch changed code)."""
        paths = self._touched(c)
        # a line of the changelog beside the test says what the test is for, and changes nothing
        # (ripgrep's "test: add regression test for fixed gitignore bug" touches CHANGELOG.md too)
        tests = [p for p in paths if not (CHANGELOG_FILE.search(p) or FRAGMENT.search(p))]
        return bool(tests) and all(_TEST_PATH.search(p) for p in tests)

    def _diff(self, n: str, own: list[Carrier]) -> set[str]:
        """The words of the lines pull request `n` changed: the diff of each commit naming it as its
        own (a squashed commit, or a merge against its first parent, which is the branch's work)."""
        if n not in self._diffs and self.diff_of is not None:
            # (a fragment's words, copied apart marked with its number, are the diff's already)
            self._diffs[n] = {w for c in own for w in self._read_diff(c.hash) if not w.startswith(MARKS)}
        return self._diffs.get(n, set())

    def _read_diff(self, commit: str) -> set[str]:
        if commit not in self._commit_diffs and self.diff_of is not None:
            self._commit_diffs[commit] = self.diff_of(commit)
        return self._commit_diffs.get(commit, set())

    @staticmethod
    def _evidence(made: list[Carrier]) -> set[str]:
        # a conventional commit's kind (`feat:`, `chore(deps):`) is a word of every such commit, not of
        # its change ("feat: implement response.has" says nothing of a "feature"); its scope is
        # its closing keywords too ("close #6433", "Fixes #12"): they say which issue, not what changed
        return evidence([_CLOSES.sub(" ", _KIND.sub(r"\1 ", c.subject) + "\n" + c.body) for c in made],
                        [p for c in made for p in c.paths], [c.author for c in made])

    def _substituted(self, own: Carrier, item_refs: set[str], n: str) -> str:
        """The item names some of the numbers its own commit's subject names, and in place of
        another of them a number the commit does not carry (`Revert "... (#6218)" (#6729)` written
        with #6219 for #6218): whatever kind of link the number is written as. Likewise an item
        naming all the numbers its commit carries but one, and one it does not in its place (scrapy's
        `(:gh:`4623`, :gh:`5297`, :gh:`7567`)` for a commit #7567 that "Fixes #5297, fixes #4622"). The
        numbers other commits of the range carry are the item's other pull requests (those that merged
        it: click's "... by {pr}`3126` ... {issue}`3502` {issue}`3043` {pr}`3504` {pr}`3508`"), in
        place of none of the commit's."""
        missing = own.named - item_refs
        if not (missing and item_refs & own.named):
            missing, others = own.refs - item_refs, item_refs - own.refs
            unexplained = {r for r in others if r not in self.by_ref}
            if len(unexplained) == 1:
                others = unexplained
            if not (len(missing) == 1 and others == {n} and item_refs & own.refs):
                return ""
        return f"git says #{sorted(missing, key=int)[0]} ({own.hash[:10]}: {own.subject[:60]})"

    def cites_issue(self, item: str, item_refs: set[str]) -> bool:
        """Whether an item names an issue: a number the commit it restates carries (`Fixes #925`,
        `... #128` in its message) that is not that commit's own pull request; or a number a commit of
        the range says it fixes, when the item names none of that commit's own pull request (Sphinx's
        `#3099: LaTeX: PDF build crashes ...` for "fix #3099 (#14213)", whose few words no item restates)."""
        said = words(without_links(item))
        own = self.own_commit(said)
        if own is not None and self._restates(said, own.words) and bool(item_refs & own.refs - {own.own}):
            return True
        return any(n in c.closes and c.own is not None and c.own not in item_refs
                   for n in item_refs for c in self.by_ref.get(n, []))

    @staticmethod
    def _wrong_pr(role: str, n: str, own: Carrier, item_refs: set[str], issues_cited: bool = False) -> str:
        """Why a pull request reference (or a bare `#N`) is contradicted by the item's own commit,
        or "": its subject names a number the item does not (an item may name an older pull request
        beside its own, which is no contradiction). What the commit says its entry is numbered counts
        too: the changelog fragment it adds, and for a bare `#N` of a commit whose subject names no
        number, the one issue its message closes (`Fixes #3912`) when `N` is lower: `N` can then be
        neither that issue nor the pull request that closed it, which was opened after it. A higher
        `N` may be that pull request, whose number a rebase merge does not keep, unless the commit was
        pushed by its author (`Carrier.pushed`: no pull request landed it, so a number its message
        does not carry is wrong either way: httpie's `#129` for "Add --format-options ... #128"; and an item
        naming several numbers, none of those a pushed commit carries, left out the issue it fixed:
        js-yaml's "#471, #557" for a push saying "fix .../issues/470"). In a changelog that
        cites issues (`issues_cited`: another item names one), a bare `#N` below the commit's own pull
        request may be the issue it fixed, opened before it: only a higher one is contradicted."""
        if issues_cited and role == "any" and own.own is not None and own.named - item_refs == {own.own} and \
                int(n) < int(own.own):
            if len(item_refs) == 1 and own.closes and n not in own.closes:
                # unless the commit's message says which issues it fixes, none of them `N` (dart_style's "Prefer to
                # split call chains for single-element targets (#1733)" for #1842, saying "Fix #1732")
                return f"git says #{sorted(own.closes, key=int)[0]} ({own.hash[:10]}: {own.subject[:60]})"
            return ""
        # a pull request link names the pull request its commit states on a trailer line as much as one its subject
        # names (griffe's rebased "feat: Support `await` expressions" over "PR-479: .../pull/479")
        stated = own.named | ({own.own} if role == "pr" and own.own else set())
        if stated - item_refs:
            says = own.own if own.own and own.own not in item_refs else sorted(stated - item_refs, key=int)[0]
            return f"git says #{says} ({own.hash[:10]}: {own.subject[:60]})"
        if role == "any" and (len(item_refs) == 1 or own.pushed) and not own.named:
            entry = own.fragments or (own.refs if own.pushed else own.closes if all(int(n) < int(x) for x in own.closes)
                                      else set())
        else:
            entry = own.fragments
        if entry and not entry & item_refs:
            return f"git says #{sorted(entry, key=int)[0]} ({own.hash[:10]}: {own.subject[:60]})"
        return ""

    def _wrong_merge(self, role: str, n: str, own: Carrier, item_refs: set[str], carriers: list[Carrier],
                     issues_cited: bool = False) -> str:
        """Why a pull request reference no commit of the range carries is contradicted by the pull request
        that merged the item's own commit, or "": a commit naming no number that a pull request's branch
        brought in is numbered by that pull request (markupsafe 3.0.0's "Declare free-threaded support" of "Build
        Python 3.13 wheels (#461)", written as `:pr:`461``). Only a pull request's merge of a short branch: a
        merge of one branch into another (a release line) brings changes of many pull requests. A bare `#N`
        below that number, in a changelog citing issues, may be the issue it fixed (as in `_wrong_pr`)."""
        if carriers or own.own or own.named or len(own.parents) > 1:
            return ""
        if own.hash not in self._merged_as:
            self._merged_as[own.hash] = None
            for m in self.carriers:
                if len(m.parents) > 1 and m.own and not _BRANCH_MERGE.match(m.subject):
                    branch = self._branch(m, BRANCH_OF_ONE)
                    if len(branch) < BRANCH_OF_ONE and any(b is own for b in branch):
                        self._merged_as[own.hash] = m
                        break
        merge = self._merged_as[own.hash]
        if merge is None or merge.own is None or merge.own in item_refs or (
                issues_cited and role == "any" and int(n) < int(merge.own)):
            return ""
        return f"git says #{merge.own} ({merge.hash[:10]}: {merge.subject[:60]})"

    @staticmethod
    def _wrong_issue(n: str, own: Carrier, item_refs: set[str], test: bool = False) -> str:
        """Why an issue reference `n` is contradicted, or "". An issue may be fixed by a pull
        request of another number, so the pull request number of the item's own commit does not
        contradict it by being different; what does is the commit saying which entry it is (the
        changelog fragment it adds, or, for an item naming this one number, the issues it closes)
        with another number, or `n` being higher than the commit's own pull request: GitHub numbers
        issues and pull requests in one sequence as they are opened, and a pull request fixes
        issues opened before it (a link to `/issues/N` is also how release-please links a pull
        request). Only when the item names none of that commit's numbers. An item naming several
        issues often lists the history of a problem, which the closing commit need not repeat. A
        commit changing tests only (`test`) closes an issue by showing it fixed elsewhere ("test: add
        regression test for fixed gitignore bug ... Closes #3067"): an item about a fix of the same
        area names the issue that fix closed, not this one."""
        if item_refs & own.refs:
            return ""
        entry = own.fragments or (own.closes if len(item_refs) == 1 and not test else set())
        if not entry and len(item_refs) == 1 and not test and own.own is None and len(own.named) == 1 and \
                len(own.parents) <= 1:
            # a commit pushed with no pull request of its own, labelled with one number (lombok's "[FEATURE]
            # Support Jackson3 in @Jacksonized #3950", "[changelog][#4019] Fixed: JDK26 is now supported."):
            # the issue it is for
            entry = set(own.named)
        if entry:
            return f"git says #{sorted(entry, key=int)[0]} ({own.hash[:10]}: {own.subject[:60]})"
        if own.own is not None and int(n) > int(own.own):
            return (f"git says #{own.own} ({own.hash[:10]}: {own.subject[:60]}), opened before #{n}")
        return ""

    @staticmethod
    def _restates(item: set[str], title: set[str]) -> bool:
        """Whether an item is clearly its commit's title restated: most of the title's words, at
        least three of them, or every word of a two-word title ("Remove WatchGod")."""
        shared = len(item & title)
        return (shared >= 3 and shared >= CONTRADICTS * len(title)) or (shared == len(title) == 2)

    def check(self, claim: Meaning, item: str, item_refs: set[str], context: str = "",
              credited: dict[str, list[frozenset[str]]] | None = None, issues_cited: bool = False,
              code: tuple[str, str] | None = None) -> Verdict:
        """The verdict on one claim of an item; `context` is all the item says (its paragraphs and
        nested lists above the unit), for what the item says it changed; `credited` is, for each
        handle the document credits, the commits of each item it is credited for (`made`);
        `issues_cited` is whether the document cites issues as well as pull requests (`cites_issue`);
        `code` is the item and its context with their inline code still quoted (`grade.code_text`)."""
        if not claim.checkable:
            return Verdict(claim, "not_checkable", claim.why)
        kind = claim.kind
        if kind == "hash":
            return self._hash(claim)
        if kind == "version":
            return self._version(claim)
        if kind == "date":
            return self._date(claim)
        if kind == "count":
            values = self.counts.get(claim.role, set())
            if int(claim.value) in values:
                return Verdict(claim, "supported")
            return Verdict(claim, "unsupported", f"git says {min(values)} {claim.role.replace('_', ' ')}"
                           if len(values) == 1 else f"git says one of {sorted(values)} {claim.role.replace('_', ' ')}")
        if kind == "ref":
            return self._ref(claim, item, item_refs, context or item, issues_cited, code)
        if kind == "author":
            return self._author(claim, context or item, item_refs, credited or {})
        if kind == "percent":
            added, deleted = self.lines
            candidates = []
            if deleted:
                candidates += [(added - deleted) / deleted * 100, added / deleted * 100]
            if added + deleted:
                candidates += [added / (added + deleted) * 100, deleted / (added + deleted) * 100]
            value = Decimal(claim.value)
            places = len(claim.value.split(".", 1)[1]) if "." in claim.value else 0
            if any(round(Decimal(repr(abs(c))), places) == value for c in candidates):
                return Verdict(claim, "supported")
            return Verdict(claim, "unsupported", f"git says {added} lines added and {deleted} deleted")
        return Verdict(claim, "not_checkable", claim.why or kind)

    def made(self, item: str, item_refs: set[str]) -> list[Carrier]:
        """The commits an item names as its own: those whose subject names one of its numbers, and
        the commit it restates."""
        key = (item, frozenset(item_refs))
        if key not in self._made:  # asked for each credit of an item, and again for the document's credits
            # a commit writing the item into the changelog ("docs(changelog): add entry for #2820", by
            # the maintainer) names the change and did not make it
            made = [c for c in self.carriers if item_refs & c.named and not self._notes_only(c)]
            said = words(without_links(item))
            own = self.named_commit(item) or self.own_commit(said)  # an item naming its commit is that one
            if own is not None and (own is self.named_commit(item) or self._restates(said, own.words)):
                made.append(own)
            self._made[key] = made
        return list(self._made[key])

    def _author(self, claim: Meaning, item: str, item_refs: set[str],
                credited: dict[str, list[frozenset[str]]]) -> Verdict:
        """A user credited for an item made (or landed) the commits the item names as its own: those
        whose subject names one of its numbers, or the commit it restates. A handle is unsupported
        when git ties it to another commit of the range and not to these, when git states these
        commits' author's account and it is another, when it is a bot's and these commits are a
        person's, or when the same document credits it for other changes, all made by someone else
        than who made these (`credited`: the changelog's own credits tie a handle to a person git
        knows by name). A handle git ties to nothing (most people's handles are not in their names
        or emails) credited once is not checkable. A merge commit's author only merged the pull request,
        and the account it merged from may be an organisation's fork: who made a merged pull request is
        who wrote the commits of its branch."""
        named = self.made(item, item_refs)
        if not named:
            return Verdict(claim, "not_checkable", "author of no commit the item names")
        branch = [b for m in named if len(m.parents) > 1 for b in self._branch(m)]
        # the handle itself is the account git states for the author (`ab@users.noreply...`: a login
        # too short to be read as a name), or a name git gives the author's email elsewhere
        if any(same_person(claim.value, c.people) or _ident(claim.value) in c.handles or
               same_person(claim.value, self._email_names.get(c.email, set())) for c in named + branch) or \
                any(self.known_as(claim.value) & c.people for c in named + branch):
            return Verdict(claim, "supported")
        if all(c.backport and c.own is None for c in named):
            # a backport pushed with no pull request of its own ("Backport #1331 library upgrade", by the
            # maintainer) ports a change someone else may have made on another branch, the one credited
            # (jackson-core 2.17.3); a backport's own pull request (aiohttp's "[PR #13054/ed8b040c backport][3.14]
            # ... (#13197)") is its author's, whom the credit names
            return Verdict(claim, "not_checkable", "backport: who ported a change need not have made it")
        if (issue := _ISSUE_LABEL.match(item)) and _THANKED.search(item) and \
                all(c.own != issue.group(1) or c.pushed for c in named) and len(credited.get(claim.value, [])) <= 1:
            # an item opening with the issue it settles ("Bug #692: ... (thanks @drpjm)", transitions) thanks the
            # one who reported it as often as one who made the fix: where the commits naming that issue are not
            # its own pull request (the maintainer's "fix: ... this fixes #692"), git cannot tell which, unless
            # the changelog credits the handle for other changes too, whose makers then say who it is
            return Verdict(claim, "not_checkable", "thanks on an issue its commits fix: may be for the report")
        if claim.role == "signed" and _other_credits(claim.value, item):
            # one of several handles signing an item (jq's "... bright backgrounds. @mjarosie @taoky @nicowilliams
            # @itchyny #2904", a change by taoky): who helped, reviewed or rewrote it signs beside its author
            return Verdict(claim, "not_checkable", "one of several people signing the change")
        if claim.role == "signed" and not all(item_refs & c.named for c in named):
            # a signature is judged as a name is (`_name_credit`): against the commit its number names, not one its
            # words merely restate (jq's "Fix memory leak on failed get for setpath/2. @emanuele6 #2970", whose
            # number no subject carries, restating DavidKorczynski's "jq_fuzz_execute: fix memory leak")
            return Verdict(claim, "not_checkable", "handle signing a change git ties to its commit by words only")
        if _other_credits(claim.value, item) and any(not self.by_ref.get(n) for n in item_refs):
            # several people credited for several changes, one of which no commit of the range carries (a pull
            # request merged elsewhere, or whose commit lost its number): the handle may be that one's author
            # (fmt's "(#4445, #4448, #4473, #4522). Thanks @localspook, @tchaikov and @way4sahil": #4473 is
            # in no subject; Sahil Sinha's "Add double and float support to scan test" names no number)
            return Verdict(claim, "not_checkable", "credit among several for a change git does not number")
        if not item_refs and len(_CLAUSES.split(without_links(item))) > 2:
            # a paragraph of several changes with no number, tied to one of them by its words, may
            # credit another it summarises ("Strict type checking ..., ruff ..., and fuzzing tests
            # ..., thanks to @alice"): who made the restated one says nothing of the credit
            return Verdict(claim, "not_checkable", "credit in a summary of several changes with no number")
        if item_refs and not any(self.by_ref.get(n) for n in item_refs) and any(
                same_person(claim.value, c.people)
                for c in self._unnumbered_restated(_said(item), self.own_commit(_said(item)))):
            # the item's number is in no commit, and the commit that lost it (rebase-merged) is the credited one's
            return Verdict(claim, "supported")
        made = [c for c in named if len(c.parents) == 1] + branch or named
        if any(BOTS.search(c.author) or _AGENTS.search(c.author) for c in made):
            # "by @alice with @Copilot": a bot or coding agent wrote the commit for the person credited
            return Verdict(claim, "not_checkable", "commit written by a bot or agent for someone")
        if claim.role in ("name", "names"):
            return self._name_credit(claim, made, all(item_refs & c.named for c in named))
        if BOTS.search(claim.value):
            return Verdict(claim, "unsupported", "git says " + ", ".join(sorted({c.author for c in made})))
        mine = {c.hash for c in made}
        # (a signature names everyone who made a change, its co-authors too: jq's "@wader", signing Mattias Wadman's
        # change and one he co-authored with itchyny, is no one else on either; a credit "by @x" names its author)
        makers = self._makers if claim.role == "signed" else self._authors
        elsewhere = [makers(hashes) for hashes in credited.get(claim.value, []) if not hashes & mine]
        if elsewhere and all(others and not others & makers(frozenset(mine)) for others in elsewhere):
            return Verdict(claim, "unsupported", "git says " + ", ".join(sorted({c.author for c in made})) +
                           f"; the changelog credits @{claim.value} for a change by someone else")
        # the account a merge came from stands for its branch's commits
        stated = [c for c in named if len(c.parents) > 1] + [c for c in made if c not in branch]
        # a commit whose author is named by the handle itself, one word (a release commit by `sl0thentr0py
        # <...+sl0thentr0py@users.noreply...>`), ties the account to no person's name: it says nothing of
        # whether Neel Shah, who wrote the change as neel.shah@sentry.io, is that account (a login that
        # reads as a name, `DavidKorczynski`, names a person)
        named = [c for c in self.carriers if same_person(claim.value, c.people) and not (
            _ident(c.author) == _ident(claim.value) and len(_NAME_WORDS.findall(c.author)) < 2)]
        if not named and not all(c.handles for c in stated):
            # most handles are in no name or email; where git states the author's account (a
            # no-reply address, "Merge pull request #N from alice/..."), another handle is wrong,
            # and so is one git ties to nobody for a change whose author has an account git states
            # elsewhere in the range (Bernát Gábor's commits, and `gaborbernat`'s no-reply address)
            # a login an author writes as name is read only where the item credits no one else
            # ("PR by @rasmusfaber, @x42005e1f and @agronholm": the others helped without a commit)
            logins = set() if _other_credits(claim.value, item) else \
                {self.logins[x] for c in made for x in c.authored if x in self.logins}
            theirs = sorted({a for a in self.accounts
                             if any(_account_of(a, c) or _ident(c.author) in self.known_as(a) for c in made)} | logins)
            if theirs and not all(c.handles or any(x in self.logins for x in c.authored) or any(
                    _account_of(a, c) or _ident(c.author) in self.known_as(a) for a in self.accounts) for c in made):
                # an item several people made, some of whose accounts git never states: the handle may be the
                # account of one of those (fmt's "Thanks @arBmind, @tkhyn, @Mishura4, ..." over five pull requests,
                # two of them from no-reply addresses; Andreas Reischuck's is @arBmind)
                return Verdict(claim, "not_checkable", "handle of an author whose account git does not state")
            if not theirs:
                known = self._credited_as(claim.value, item, mine, credited)
                if known:
                    return Verdict(claim, "unsupported", "git says " + ", ".join(sorted({c.author for c in made})) +
                                   f"; the changelog credits @{known} for their other changes")
                return Verdict(claim, "not_checkable", "handle git ties to no commit of the range")
            return Verdict(claim, "unsupported", "git says " + ", ".join(sorted({c.author for c in made})) + "".join(
                f" (@{a})" for a in theirs))
        return Verdict(claim, "unsupported", "git says " + ", ".join(sorted({c.author for c in made})) + "".join(
            sorted({f" (@{h})" for c in stated for h in c.handles})))

    def _name_credit(self, claim: Meaning, made: list[Carrier], numbered: bool) -> Verdict:
        """A person credited by name ("Patch by Adam Turner") who made none of these commits: a name is
        no account, so only git naming that person as the author of another change of the range says
        the credit is wrong ("git says Tim Nordell"), and only for commits the item names by number:
        anyone who wrote a commit of the range is tied to a name, so a commit the item's words merely
        restate (Sphinx 7.3.0's "Change the text of the versionadded directive ... Patch by Bénédikt
        Tran" and the maintainer's "Add versionadded directives") decides nothing against it. One of
        several names credited together may have helped without a commit of their own, and a name git
        ties to no commit says nothing."""
        if claim.role == "name" and numbered and \
                any(same_person(claim.value, c.people) for c in self.carriers if c not in made):
            return Verdict(claim, "unsupported", "git says " + ", ".join(sorted({c.author for c in made})))
        return Verdict(claim, "not_checkable", "one of several people credited" if claim.role == "names"
                       else "name credited for a change git ties to its commit by words only" if not numbered
                       else "name git ties to no commit of the range")

    def _credited_as(self, handle: str, item: str, mine: set[str], credited: dict[str, list[frozenset[str]]]) -> str:
        """The one handle the changelog credits for every other change these commits' author made,
        where `handle` (tied to nobody by git) is credited for none of them: the changelog's own
        credits name that person, and `handle` is another name ("by @morgan in #1160" beside "by
        @henryiii" on each of Henry Schreiner's other pull requests). An item crediting several
        people, or who reported an issue, says nothing of who made the change."""
        authors = self._authors(frozenset(mine))
        if _REPORTED.search(item) or _other_credits(handle, item) or authors & self.landers:
            return ""  # a maintainer who commits others' work in the range may have rewritten this one
        # every credit of this author's other changes names one handle, which credits nobody else's:
        # an author whose changes are credited to several people lands others' work (a maintainer
        # rewriting contributors' pull requests), and says nothing of who made this one
        on_theirs = {h.lower() for h, items in credited.items() for made in items
                     if not made & mine and self._authors(made) & authors}
        if len(on_theirs) != 1 or handle.lower() in on_theirs:
            return ""
        known = next(h for h in credited if h.lower() in on_theirs)
        if not all(self._authors(made) & authors for made in credited[known] if not made & mine):
            return ""
        return known

    def known_as(self, handle: str) -> set[str]:
        """The names git gives an account in the range: an author's, co-author's or signer's name
        beside the account's no-reply address (`<id>+<handle>@users.noreply.github.com`) or an email
        whose local part is the handle (`J. Nick Koston <bdraco@gmail.com>` in a `Co-authored-by:`
        trailer ties @bdraco to J. Nick Koston, who writes as nick@koston.org), and the authors of
        the commits a pull request merged "from alice/..." brought in."""
        if not self._merges_tied:
            self._merges_tied = True
            for merge in self.carriers:
                source = _MERGED_FROM.match(merge.subject)
                if source and len(merge.parents) > 1 and not BOTS.search(source.group(1)):
                    branch = self._branch(merge)
                    made = {_ident(b.author) for b in branch} - {""}
                    if len(made) == 1:  # one person's branch: several may be a maintainer's merge of others'
                        # and the other names git gives that person's email: echo's maintainer writes as `toim`
                        # and as "Martti T." from one address, and "from aldas/..." ties @aldas to both
                        made |= {n for b in branch for n in self._email_names.get(b.email, set())}
                        self._known_as.setdefault(_ident(source.group(1)), set()).update(made)
        return self._known_as.get(_ident(handle), set())

    def _makers(self, hashes: frozenset[str] | set[str]) -> set[str]:
        """Who made these commits: their authors (`_authors`) and the people their `Co-authored-by:` trailers name
        (a bot's or agent's help is no one's), normalised."""
        out = self._authors(hashes)
        for h in hashes:
            c = self.by_hash.get(h)
            if c is not None:
                out |= {x for name, email in _CO_AUTHOR.findall(c.body)
                        if not (BOTS.search(name) or _AGENTS.search(name))
                        for x in (_ident(name), _ident(email.split("@")[0]))}
        return out - {""}

    def _authors(self, hashes: frozenset[str] | set[str]) -> set[str]:
        """Who wrote these commits (not who landed them), normalised: names and email local parts."""
        out: set[str] = set()
        for h in hashes:
            c = self.by_hash.get(h)
            if c is not None:
                out |= {_ident(c.author)} | c.handles | c.authored
        return out - {""}

    def _hash(self, claim: Meaning) -> Verdict:
        token = claim.value
        if any(h.startswith(token) for h in self.hashes) or any(s.lower().startswith(token) or token.startswith(
                s.lower()) for s in self.side_names if len(s) >= 7) or any(
                t["commit"].startswith(token) for t in self.tags):
            return Verdict(claim, "supported")
        return Verdict(claim, "unsupported", f"no commit in {self.range} starts with {token}")

    def _version(self, claim: Meaning) -> Verdict:
        v = version_of(claim.value)
        day = _DOTTED_DAY.fullmatch(claim.value)
        ymd = day.groups() if day else None
        if ymd is None and (day := _DOTTED_DAY_FIRST.fullmatch(claim.value)):
            ymd = day.groups()[::-1]
        if ymd and v not in self.all_versions:
            # `2025.04.03` in `## [7.37.5] - 2025.04.03` is a date written with dots, unless a tag
            # names it (calendar versions): checked as the date it is.
            iso = "-".join(ymd)
            try:
                date.fromisoformat(iso)
            except ValueError:
                pass
            else:
                return self._date(replace(claim, kind="date", value=iso))
        if v is None:
            return Verdict(claim, "not_checkable", "version git cannot read")
        if claim.role in ("release", "range", "since"):
            if v in self.range_versions or claim.value in self.side_names:
                return Verdict(claim, "supported")
            if claim.role == "since" and v in self.all_versions and self.range_versions and \
                    _release_key(v) < max(_release_key(r) for r in self.range_versions):
                # a compare link from an earlier release made on another branch, not an ancestor of this
                # one (rspec-core's 3.13.0 "compare/v3.12.3...v3.13.0", 3.12.3 cut on 3-12-maintenance)
                return Verdict(claim, "supported")
            if not self.range_versions:
                return Verdict(claim, "not_checkable", "no tag in the range")
            return Verdict(claim, "unsupported", "the range's tags are " + ", ".join(sorted(self.range_versions)))
        if v in self.all_versions or any(t.startswith(v + ".") for t in self.all_versions):
            return Verdict(claim, "supported")
        return Verdict(claim, "not_checkable", "version no tag names")

    def _date(self, claim: Meaning) -> Verdict:
        """A release date is the day of a tag in the range or of its tip commit (the tag's own
        offset or UTC); any other date may be the day of any commit in the range."""
        day = claim.value
        release = self.release_days | self.head_days
        allowed = release if claim.role == "release" and self.release_days else release | self.commit_days
        if len(day) == 7:
            if any(d.startswith(day) for d in allowed):
                return Verdict(claim, "supported")
        elif day in allowed:
            return Verdict(claim, "supported")
        if claim.role != "release":
            return Verdict(claim, "not_checkable", "date of something else than the release")
        known = sorted(release) or sorted(self.commit_days)[-1:]
        if not known:
            return Verdict(claim, "not_checkable", "no tag or commit date")
        return Verdict(claim, "unsupported", "git says " + " or ".join(known))

    def _about(self, n: str, item: str, own: Carrier, item_refs: set[str]) -> bool:
        """Whether pull request `n` of the range is what an item is about rather than the commit
        taken for its own: more of the item's words (two at least) are among what git holds for `n`
        than for that commit. An item may name a second pull request of its change whose title it
        does not restate ("CloseSpider can now be raised while the spider is starting" for "Support
        CloseSpider during spider startup", taken for "Report exceptions from Spider.start()"); a
        neighbouring pull request on the same subject (#1767 "Add script to remove Python 3.9 files"
        beside #1766 "Drop support for Python 3.9") is not, where the item restates its own. An item
        naming several numbers lists the pull requests of its change: one whose title says two of its
        words is one of them (scrapy's S3 item citing #7370 "Dynamic loading for S3 HTTPS handler",
        taken for "Refactor HTTP download handlers")."""
        said = item_words(item)
        # its title says two of the item's words (a release pull request whose body lists every
        # change says them all, and is about none)
        if not any(c.own == n and len(shared_words(said, c.words)) >= 2 for c in self.by_ref.get(n, [])):
            return False
        if len(item_refs) > 1:
            return True
        for key, made in ((n, None), (own.hash, [own])):
            if key not in self._known:
                self._known[key] = self._evidence(made if made is not None else self.pull_request(key))
        theirs = shared_words(said, self._known[n])
        return len(theirs) >= 2 and len(theirs) > len(shared_words(said, self._known[own.hash]))

    @staticmethod
    def _stranger(n: str, item: str, own: Carrier, item_refs: set[str], carriers: list[Carrier]) -> bool:
        """Whether `#n` stands where the item's own commit's number should: the item leaves that number
        out and `n` is the own number of commits saying at most one of its words. Another number the item
        is about then does not excuse it (mkdocs 1.5.3's "(#3367, #3381)" written "(#3368, #3381)",
        #3368 being "Switch to ruff linter" and #3367 "Allow plugins to provide their own `Page`")."""
        said = item_words(item)
        return own.own is not None and own.own not in item_refs and bool(carriers) and all(
            c.own == n and len(shared_words(said, c.words)) < 2 for c in carriers)

    def named_commit(self, item: str) -> Carrier | None:
        """The commit of the range an item names by its hash as its first or last word, as lists
        made from commits write them (sinon's "[`819bb64b`](.../commit/...) Migration to ... (#2683)",
        conventional changelogs' "... ([abc1234](...))"): the item is that commit, whatever else it
        quotes (sinon's items go on with the commit's body). A hash inside the item ("Revert
        abc1234") may name another commit than the item's."""
        found = re.findall(r"[0-9A-Za-z]+", item)  # a reStructuredText link's `__` is no word
        # or among the numbers and hashes the item opens with (changesets: "#1482 df424a4 Thanks @x! - ...")
        # or opening the one parenthesis after its text that credits a commit (git-changelog's "Support `await`
        # expressions ([6b3caab](.../commit/...) by Vincent Gao). [PR-479](...)", a reference after it)
        cited = re.findall(r"\(\s*\[?([0-9a-f]{7,40})\b", item)
        words = {found[0], found[-1], *_opening_numbers(item), *(cited if len(cited) == 1 else [])} if found else set()
        for word in words:
            if _HEX.fullmatch(word) and re.search(r"[a-f]", word) and re.search(r"\d", word):
                made = [c for c in self.carriers if c.hash.startswith(word.lower())]
                if len(made) == 1:
                    return made[0]
        return None

    def _twin_elsewhere(self, n: str, own: Carrier) -> bool:
        """Whether the repository holds, outside the range, pull request `n` making the change of the item's
        own commit: the same change opened twice, once for each branch, and the release's changelog citing the
        other branch's number (composer 2.10.2's "Only follow HTTP redirects from HTTP responses (#12948)": the
        range holds "Only follow http(s) redirects in HTTP transports (#12947)", and the 2.2 branch the same
        subject as #12948, committed the same minute)."""
        if self.subjects_elsewhere is None:
            return False
        # The same change says what the own commit's subject says and nothing else: a sibling pull request of
        # the same contributor, "fix(pt_BR): correct BBAN length so iban() generates valid Brazilian IBANs
        # (#2410)" beside faker's Danish #2409, restates the words of the commit but is another change.
        said = _content_words(own.subject)
        return any(self._restates(words(_CONVENTIONAL.sub("", subject)), own.words)
                   and not _content_words(subject) - said
                   for subject in self.subjects_elsewhere(n) if (m := _OWN_NUMBER.search(subject)) and m.group(1) == n)

    def _unnumbered_restated(self, said: set[str], own: Carrier | None) -> list[Carrier]:
        """The commits of the main line carrying no number that an item restates besides `own`: a pull
        request rebase-merged without its number, one of two changes an item tells (python-dotenv 1.2.2's
        "Corrected the license specifier and added missing Python 3.14 classifiers ... in [#590]": #597 and James
        Ouyang's "fix: Add missing 3.14 PyPI classifier." of #590). A number no commit carries may be that one's."""
        mainline = self._main_line()
        return [c for c in self.carriers if c is not own and not c.refs and not c.named and len(c.parents) <= 1
                and c.hash in mainline and not BOTS.search(c.author) and len(c.words) >= 3
                and len(said & c.words) >= max(2, CONTRADICTS * len(c.words))
                and not (own is not None and said & c.words & own.words)]  # another change than own's

    def _wrote_the_line(self, n: str, said: set[str], carriers: list[Carrier]) -> bool:
        """Whether pull request `n` wrote the item into the changelog itself: it changed the changelog (its
        file or a fragment), and its diff holds nine in ten of the item's words, the line it added among them.
        No other commit the item's words restate can contradict a number whose own pull request wrote the item
        (jest 30.4.0's "Project config validator now emits ... (#16132)", written by #16132, sharing more words
        with #16133's subject, "fix: support `silent` and `verbose` as project config"), unless the item says every
        word of that commit's title: a pull request may add other pull requests' lines with its own (grape's
        "Fix double wrap on json errors (#2771)" added #2770's "Avoid per-entry array allocation in
        `Request#build_headers`", its branch holding the main line's new section), and checks in `_ref`."""
        made = [c for c in carriers if c.own == n]
        if self.diff_of is None or not made or len(said) < MIN_ITEM_WORDS or not any(
                CHANGELOG_FILE.search(p) or FRAGMENT.search(p) for c in made for p in self._touched(c)):
            return False
        if any(len(c.parents) > 1 for c in made):
            # a merged branch may hold a commit writing the changelog for other pull requests too (gunicorn's
            # "docs: add TTIN/TTOU to changelog" in #3504, which wrote #3503's line): only a squashed pull request,
            # its code and its changelog lines in one commit, wrote its own line
            return False
        if any(self._names_release(c) or _RELEASE_SUBJECT.search(c.subject) or self._notes_only(c) for c in made):
            # a release's commit, or one writing the changelog alone, wrote every item of the section
            # (markdown-it-py's "🚀 RELEASE v4.2.0 (#395)"): the change of none of them
            return False
        if self._entry_cites_another(n, said, made):
            return False
        return len(said & self._diff(n, made)) * 10 >= len(said) * 9

    def _entry_cites_another(self, n: str, said: set[str], made: list[Carrier]) -> bool:
        """Whether the changelog entry pull request `n` wrote that the item restates cites another number, not
        `n`: it wrote that line for another change (devise's #5826 adding its own entry and correcting #5825's,
        "[#5824]" to "[#5825]"), so its diff holding the item's words makes it no writer of the item."""
        said = said - self.project_words
        for c in made:
            diff = self._read_diff(c.hash)
            cited = {w[len(ENTRY_MARK):].split(":", 1)[0] for w in diff if w.startswith(ENTRY_MARK)}
            restated = {m for m in cited if self._restates(said, entry := told_for(diff, m, ENTRY_MARK) -
                                                         self.project_words) and self._restates(entry, said)}
            if restated and n not in restated:
                return True
        return False

    def _names_release(self, c: Carrier) -> bool:
        """Whether a commit's title names a version as a release's commit does: one its range releases, or one
        no tag names; not only releases tagged outside the range, which a fix names as where its bug came from
        (commonmark's "Fix 2.9.0 regression: restore Cursor::match() remainder semantics (#1146)", in 2.9.2)."""
        named = {_norm(v) for v in c.versions}
        return bool(named & self.range_versions or named - self.all_versions)

    def _wrote_its_number(self, n: str, said: set[str], own: Carrier) -> bool:
        """Whether the item's own commit wrote the item into the changelog itself, `n` in it: a squashed pull request
        that changed the changelog beside its code, and whose diff holds `n` and nine in ten of the item's words. The
        number is the one its author chose to cite (the issue it fixes: pint 0.25.3's "Defer expensive loading of
        dask.array (#2265)", written by #2276), not one the commit contradicts; a number its line does not say is."""
        if self.diff_of is None or len(own.parents) > 1 or len(said) < MIN_ITEM_WORDS or \
                self._names_release(own) or _RELEASE_SUBJECT.search(own.subject) or self._notes_only(own) or \
                not any(CHANGELOG_FILE.search(p) or FRAGMENT.search(p) for p in self._touched(own)):
            return False
        diff = self._diff(f"commit {own.hash}", [own])
        return f"#{n}" in diff and len(said & diff) * 10 >= len(said) * 9

    def _entry_cites(self, n: str, said: set[str], item_refs: set[str], own: Carrier) -> str:
        """What git says of a number no commit of the range carries, when the item's own commit wrote the item's
        entry into the changelog itself, citing other numbers: the maintainer's own line for the change names
        them (pygments' "awk: recognize ternary operator", pushed by its author, adding "Awk: recognize ternary
        operator (#2687)" to `CHANGES`: "(#2688)" is no number of that change). An item naming one of them, or
        entries of the commit citing `n` too, leave it alone; so does a commit that did not change the
        changelog."""
        if self.diff_of is None or not any(CHANGELOG_FILE.search(p) for p in self._touched(own)):
            return ""
        diff = self._read_diff(own.hash)
        cited = {w[len(ENTRY_MARK):].split(":", 1)[0] for w in diff if w.startswith(ENTRY_MARK)}
        # the item is that entry, in most of its words and the entry in most of the item's (the project's name, in
        # every entry, is none of them: scrapy's "``scrapy.utils.misc.md5sum()`` is now deprecated" is no
        # "``scrapy.utils.datatypes.CaselessDict``, deprecated since Scrapy 2.10.0, is removed")
        said = said - self.project_words
        restated = sorted((m for m in cited if self._restates(said, entry := told_for(diff, m, ENTRY_MARK) -
                                                              self.project_words) and self._restates(entry, said)),
                          key=int)
        if not restated or n in cited or set(restated) & item_refs or self._entry_recited(n, said, own):
            return ""
        return f"git says #{restated[0]} ({own.hash[:10]}, {own.subject[:50]!r}, wrote its entry citing it)"

    def _entry_recited(self, n: str, said: set[str], own: Carrier) -> bool:
        """Whether a later commit of the range wrote the item's entry again citing `n`: the maintainer
        correcting the number the change's own commit wrote (kotlinpoet's "Prepare for release 2.3.0" turning
        "... recursively bound generics ... (#1914)", the issue, into "(#2162)", the pull request). The entry as
        the range leaves it names `n`; a number no commit wrote stays contradicted."""
        at = next((i for i, c in enumerate(self.carriers) if c is own), 0)
        for c in self.carriers[:at]:  # (newest first: the commits after own's)
            if len(c.parents) > 1 or not any(CHANGELOG_FILE.search(p) for p in c.paths):
                continue
            entry = told_for(self._read_diff(c.hash), n, ENTRY_MARK) - self.project_words
            if entry and self._restates(said, entry) and self._restates(entry, said):
                return True
        return False

    @staticmethod
    def _misquoted(own: Carrier, item: str, n: str) -> str:
        """Why `#n` is wrong where the item quotes its commit's subject word for word but for that
        number, or "": sinon's "fix(#2694): Remove ESM-only supports-color ... (#2693)" for a commit
        "fix(#2692): Remove ESM-only supports-color ... (#2693)". Whatever kind of link the number
        was, the same words cannot name another."""
        parts = re.split(r"#(\d+)", own.subject)
        literal, numbers = parts[0::2], parts[1::2]
        if not numbers or len(re.sub(r"\W", "", "".join(literal))) < 12:
            return ""  # a subject of a few letters ("Fix #12") is too short to be quoted
        pattern = r"#(\d+)".join(r"\s+".join(map(re.escape, part.split())) if part.strip() else r"\s*"
                                  for part in literal)
        m = re.search(pattern, item, re.IGNORECASE)
        if m is None:
            return ""
        for said, says in zip(m.groups(), numbers, strict=True):
            if said == n and says != n:
                return f"git says #{says} ({own.hash[:10]}: {own.subject[:60]})"
        return ""

    def _ref(self, claim: Meaning, item: str, item_refs: set[str], context: str, issues_cited: bool = False,
             code: tuple[str, str] | None = None) -> Verdict:
        n = claim.value
        carriers = self.by_ref.get(n, [])
        item_words = _said(item)
        named = self.named_commit(item)
        own = named or self.own_commit(item_words)
        if own is None and claim.role == "issue":
            # a merge and a commit of the branch it merged are one change told twice (pluggy's "Merge pull
            # request #472" titled "Fix `call_extra` call ordering regression" over "hooks: fix `call_extra`
            # extra methods getting ordered ..." saying "Fix #441"): for an issue, which the commit closes,
            # not two commits the item could be. (A pull request number is not judged so: a changelog
            # citing issues as pull requests, gunicorn's `/pull/3662` for "Merge pull request #3688",
            # would be contradicted by the merge's own.)
            own = self.own_commit(item_words, merged=True)
        if own is None and not carriers and claim.role != "issue":
            # a number no commit carries, for an item restating alike a merge of a one-commit branch and that commit
            # (semver's "#254: Fix for allowing some version that were invalid" for "Merge pull request #253 from
            # mattfarina/fix-bad-versions", whose body is the subject of the one commit it merged): one change told
            # twice, whose number is the merge's. A lower number may be the issue it fixed, opened before it.
            twin = self.own_commit(item_words, numbered=True)
            own = twin if twin is not None and twin.own is not None and int(n) > int(twin.own) else None
        # a change carried over by a pull request merging branches names the original's number, opened
        # before the pull request that carried it (tokio's #8264 under "(#8288)"); a higher one is no original
        original = own is not None and own.carried_over and own.own is not None and int(n) < int(own.own)
        # An item opening with the component it changes ("XmlParser - Refactor to reduce code complexity") is the
        # commit of that component it shares words with, when one alone does, not another component's commit saying
        # more of its words (NLog's "ScopeContextAsyncState - Refactor to reduce code complexity", a phrase the
        # maintainer writes for many components); other components' commits then excuse no number either.
        topic, topical = _topic(item), False
        if own is not None and named is None and topic is not None and _topic(own.subject) not in (None, topic):
            same = [c for c in self.carriers if _topic(c.subject) == topic and len(item_words & c.words) >= 2]
            if len(same) == 1:
                own, topical = same[0], True
        # In an item naming its commit by hash with its pull request beside it, before the text, the numbers the text
        # goes on to name are other changes it speaks of, not more of its own (mobx 6.16.0's "7eb5441 #4659 Thanks
        # @kubk! - Fix regression from #4639 where ...": #4639 excuses no other number in place of #4659)
        lead = _opening_numbers(item)
        spoken = item_refs - set(lead) if named is not None and n in lead else set()
        if own is not None and n not in own.refs and not (own.backport or original) and \
                (wrong := self._misquoted(own, item, n)):
            return Verdict(claim, "supported") if self._twin_elsewhere(n, own) else Verdict(claim, "unsupported", wrong)
        # Only the commit the item clearly restates can contradict a number it does not carry, and
        # only when no commit related to the item carries the number (an item may name an older
        # pull request, or an issue, beside its own). An issue may be fixed by a pull request of
        # another number: the kinds of link differ in what contradicts them (`_wrong_issue`,
        # `_wrong_pr`); a number substituted for one of the commit's own is wrong as any kind.
        # A number a changelog fragment of the range carries names the entry of the commit that wrote it, when that
        # commit's subject says something the item says, whatever commit the item's words recall better (pytest's
        # "approx: fix buggy `__array_interface__` check" wrote `changelog/14456.bugfix.rst`, beside "Type
        # `pytest.approx` (#14373)"); a commit writing the fragment alone ("NEWS ENTRY") ties it to nothing.
        # A backport whose subject says so ("[0.47.x] ... (#3030)") names the backport's pull request,
        # and the item the original's; a cherry-pick that kept its subject ("... (#1049)") kept its number.
        if own is not None and n not in own.refs and not original and \
                (not own.backport or (bool(own.named) and not _BACKPORT.search(own.subject))) \
                and (named is not None or topical or self._restates(item_words, own.words)) \
                and not any(similarity(item_words, c.words) >= RELATED and not (topical and _topic(c.subject) != topic)
                            for c in carriers) \
                and not any(n in c.fragments and item_words & c.words and not self._notes_only(c) for c in carriers) \
                and not _credits_maker(item, carriers, own) \
                and not (self._wrote_the_line(n, item_words, carriers) and not _says_whole_title(item, own.title)) \
                and not self._wrote_its_number(n, item_words, own) \
                and (bool(carriers) or not self._unnumbered_restated(item_words, own)) \
                and (topical or self._stranger(n, item, own, item_refs, carriers)
                     or not any(self._about(m, item, own, item_refs) for m in sorted(item_refs - spoken)
                                if m != own.own)):
            wrong = self._substituted(own, item_refs, n) or (
                self._wrong_issue(n, own, item_refs, self._tests_only(own)) if claim.role == "issue"
                else self._wrong_pr(claim.role, n, own, item_refs, issues_cited or _labelled(item, n))
                or self._wrong_merge(claim.role, n, own, item_refs, carriers, issues_cited or _labelled(item, n)))
            if wrong and self._twin_elsewhere(n, own):
                return Verdict(claim, "supported")
            fixes_only = bool(own.named) and own.named <= own.closes and not issues_cited
            # (an item saying it fixes `N` names the issue, as its commit names the one it fixes: cJSON's "Fix #881,
            # check overlap ..." for "fix #881, check overlap ...", whose planted "Fix #882" is no lost pull request)
            said_fixed = claim.role == "any" and n in {m.group(1) for m in _CLOSES.finditer(item)}
            if wrong and own.rebased and not carriers and (claim.role == "pr" or (claim.role == "any" and fixes_only)) \
                    and all(int(n) > int(x) for x in own.named) and not said_fixed:
                # a pull request link opened after every number its commit names may be the one the maintainer
                # rebased it from, whose number git does not keep; a lower one cannot be (GitHub numbers in
                # order). A bare `#N` may be the issue the commit closes, as its message says (`_wrong_pr`),
                # unless the message names only the issues it fixes, each lower, in a changelog citing pull requests,
                # no issue (jq's "Reject U+001F in string literals (fix #2909)" for the item's `#2911`): an issue there
                # is cited as such, and a bare number that is none of the commit's is then its lost pull request's
                return Verdict(claim, "not_checkable", "pull request landed by a maintainer's rebase, its number lost")
            if wrong:
                return Verdict(claim, "unsupported", wrong)
        if not carriers and own is not None and (cited := self._entry_cites(n, item_words, item_refs, own)):
            return Verdict(claim, "unsupported", cited)
        if carriers:
            if (bot := self._bot_change(n, item_words, own, carriers)) is not None:
                return Verdict(claim, "unsupported", f"git says #{n} is {bot.author}'s {bot.subject[:70]!r}")
            if (pr := self._invented(n, context, item_refs, item, code)) is not None:
                return Verdict(claim, "unsupported", f"git says #{n} is {pr.title[:70]!r}")
            return Verdict(claim, "supported")
        if own is not None and (own.backport or original):
            return Verdict(claim, "not_checkable", "backport whose commit lost the number")
        if claim.role == "issue":
            return Verdict(claim, "not_checkable", "issue link no commit carries")
        return Verdict(claim, "not_checkable", "reference no commit in the range carries")
