"""Claims by meaning: what a piece of changelog text says that git could confirm or contradict.

Each claim has a kind, and the kind decides how it is checked (`knowledge.py`):

- `version`  `0.28.2`, `v2.0.0rc1`, kept whole (never cut into `0.28` and `2`); `role` is `release`
             in a heading, a link definition or a "Released"/"Version" line, `range` and `since` for the
             two sides of a compare link (`/compare/v1.2.2...v1.2.3`), `mention` elsewhere
- `date`     `2024-11-28`, `28th November, 2024`, `27-Nov-2024`, `Nov 28, 2024`, `November 2024`; `role` as above
- `count`    a number with the thing it counts: `3 new contributors`, `12 commits`, `two pull requests`
- `ref`      a pull request or issue: `#N`, `(#N)`, `/pull/N`, `/issues/N`, `:pr:`/`:issue:`/`:ticket:` roles
             (Sphinx and MyST) and any role whose text is `#N`, `GH-N`, `PR #N`; `role` is `pr`, `issue` or `any`
- `hash`     a commit hash: 7-40 hex characters with a digit and a letter, or a `/commit/` link
- `percent`  a percentage of lines (`35% more lines`)
- `author`   a user credited for a change: `by @alice`, `thanks @bob`, `(#12 @carol)`; `value` is the handle

and claims git cannot check (`checkable` False, `why` says which kind): dependency and standard
versions (`ItsDangerous >= 2.2`, `Python 3.8`, `PEP 681`, `metadata version 2.3`), external ticket
ids (`ABC-123`, `CVE-2024-1234`), measurements (`2x faster`, `30% less memory`) and other numbers.
Code spans, user mentions and link targets other than the ones above are not claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|" \
         r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"

_URL = re.compile(r"https?://[^\s)<>\]`'\"]+")
_URL_PR = re.compile(r"/pulls?/(\d+)")
_URL_ISSUE = re.compile(r"/issues/(\d+)")
_URL_COMMIT = re.compile(r"/commits?/([0-9a-f]{7,40})\b")
_URL_COMPARE = re.compile(r"/compare/([^.\s]+(?:\.[^.\s]+)*?)\.{2,3}([^\s#?]+)")
_URL_TAG = re.compile(r"/(?:releases/tag|tree)/([^\s/#?]+)")
# a role's name: any a project defines too (`:gh-pr:`, psycopg's `:ticket:`)
_ROLE = re.compile(r"[:{](pr|pull|issue|issues|bug|gh|ghissue|ghpull|commit|user|ghuser|[a-z][a-z0-9_.:-]*)[:}]"
                   r"`([^`]*)`")
# Code spans; a reStructuredText hyperlink reference (`0.7.3`_, `#1184 <url>`_) is text, not code.
_CODE = re.compile(r"``[^`]*``|`[^`]*`(?!_)")
_MENTION = re.compile(r"(?<![\w.])@[A-Za-z0-9][\w.-]*(?:\[bot\])?")
_CREDIT_BEFORE = re.compile(r"(?:\bby|\bthanks(?:\s+to)?(?:\s+(?:our\s+)?(?:new\s+|first[- ]time\s+)?contributors?)?|"
                            r"\bthank\s+you|\bfrom|\bcredits?\s+to|\band|[(\[\],&])"
                            r"[\s`\[]*$", re.IGNORECASE)
# who opened or asked for the issue an item fixes, not who made the change
_REPORTER_BEFORE = re.compile(r"\b(?:issue|report(?:ed|s)?|suggest(?:ed|ion)?|request(?:ed)?)\s+(?:by|from)[\s`\[]*$",
                              re.IGNORECASE)
# what lies between two mentions listed together
_LISTED = re.compile(r"[\s`\]]*(?:,|&|\band\b|,\s*and\b)[\s`\[]*")
_CREDIT_AFTER = re.compile(r"[`_\]]*\s*(?:\([^)]*\)\s*)?[)\]]|"
                           r"[`_\]]*\s+made\s+(?:their|his|her)\s+first\s+contribution")
# a handle signing an item: after its text, only other handles and the item's reference or commit up to the line's
# end (jq's "Fix assertion failure when ... the query. @itchyny #3350", "... @AsafMeizner @itchyny 0c7d133c3c")
_SIGNED_AFTER = re.compile(r"(?:[ \t]+@[A-Za-z0-9][\w.-]*)*[ \t]+\(?(?:#\d+|[0-9a-f]{7,40})\)?[ \t]*$", re.MULTILINE)
_SIGNED_BEFORE = re.compile(r"[.!?)][ \t]+(?:@[A-Za-z0-9][\w.-]*[ \t]+)*$")  # the item's sentence ended before
# or, at the line's end, after the item's sentence and its references (Kingfisher's "... tuning `totalCostLimit`.
# [#2532](...) [#2530](...) @onevcat @aronspringfield", its links' addresses blanked by then)
_SIGNED_LAST = re.compile(r"(?:[ \t]+@[A-Za-z0-9][\w.-]*)*[ \t]*$", re.MULTILINE)
_SIGNED_AFTER_REFS = re.compile(r"[.!?][ \t]+(?:(?:\[#\d+\]\([ \t]*\)|#\d+)[ \t]+)+(?:@[A-Za-z0-9][\w.-]*[ \t]+)*$")
# A credit by name (Sphinx's "Patch by Adam Turner", "Contributed by Ann Lee and Bo Chen"): who made the
# change, as a handle in a credit says it. Each name is one to four words, each capitalised but a
# particle (`van`, `de`), listed with `,`, `and` or `&` up to the end of the sentence.
_NAME_CREDIT = re.compile(r"\b(?:[Pp]atch(?:es)?|[Cc]ontributed|[Ii]mplemented)[ \t]+by[ \t]+")
_NAME_LIST = re.compile(r"[^\n;:()\[\]<>`@#]*?(?=\.?[ \t]*$|(?<=\w\w)\.[ \t]|[;:()\[\]<>`@#]|$)")
_NAME_SEPARATOR = re.compile(r"[ \t]*,[ \t]*(?:and[ \t]+)?|[ \t]+and[ \t]+|[ \t]*&[ \t]*")
_PARTICLES = frozenset("van von de der den da di du le la del dos ten ter bin al el".split())
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?(?!\d)")
_SLASH_DATE = re.compile(r"(?<![\d/])(\d{4})/(\d{2})/(\d{2})(?![\d/])")
_DMY = re.compile(r"(?<![\w])" + _DAY + r"\s+(?:of\s+)?(" + _MONTH + r"),?\s+(\d{4})(?!\d)", re.IGNORECASE)
# day, month and year joined by hyphens (`27-Nov-2024`, jackson-databind's release headings)
_DMY_DASHED = re.compile(r"(?<![\w-])(\d{1,2})-(" + _MONTH.removesuffix(r"\.?") + r")-(\d{4})(?![\w-])", re.IGNORECASE)
_MDY = re.compile(r"(?<![\w])(" + _MONTH + r")\s+" + _DAY + r",?\s+(\d{4})(?!\d)", re.IGNORECASE)
_MY = re.compile(r"(?<![\w])(" + _MONTH + r"),?\s+(\d{4})(?!\d)", re.IGNORECASE)
_STANDARD = re.compile(
    r"\b(?:PEP|RFC|BCP|CWE|ISO|ECMA|ES|ECMAScript|IEEE)[\s-]?\d[\d.]*|\b(?:HTTP|HTTPS)/\d(?:\.\d)?|"
    r"\b(?:TLS|SSL|UTF|UCS|Unicode|OpenAPI|Swagger|JSON[\s-]?Schema|OAuth|SemVer|Core\s+Metadata|"
    r"metadata(?:\s+version)?|protocol(?:\s+version)?|draft|level|ABI|API\s+version|schema\s+version|"
    r"manylinux|musllinux|macOS|Windows|iOS|Android|Ubuntu|Debian)[\s_-]?v?\d+(?:[._]\d+)*",
    re.IGNORECASE)
# A hash a dependency update pins is a commit of that dependency's repository, not of this one (renovate's
# "chore(deps): update dtolnay/rust-toolchain digest to 4be7066", "Bump vendored foo from 1a2b3c4 to 5d6e7f8")
_PINNED = re.compile(r"\b(?:digests?|update[sd]?|bump(?:s|ed)?|upgraded?|upgrades|pin(?:s|ned)?)\b[^.\n]{0,80}?"
                     r"\b(?:to|from)\s+$", re.IGNORECASE)
_TICKET = re.compile(r"\b(?!GH-|PR-\d)(?:CVE-\d{4}-\d+|GHSA(?:-[0-9a-z]{4}){3}|[A-Z][A-Z0-9]{1,9}-\d+)\b")
_GH = re.compile(r"\bGH-(\d+)\b", re.IGNORECASE)
# git-changelog's references (griffe's `[PR-479](.../pull/479)`, `[Issue-452](.../issues/452)`): its pull requests
# and issues, not an external tracker's tickets
_DASHED_REF = re.compile(r"\b(PR|Issue)-(\d+)\b")
_REF_WORDS = re.compile(r"\b(pull requests?|PRs?|issues?|bugs?)\s*#?\s?(\d+)\b", re.IGNORECASE)
_HASH_REF = re.compile(r"(?<![\w&/#])#(\d+)\b")
# not a file name's stem (`+abc1234.feature`, an orphan towncrier fragment): a hash is no file's name
_HEX = re.compile(r"(?<![0-9A-Za-z_.\-/])[0-9a-fA-F]{7,40}(?![0-9A-Za-z_]|\.[A-Za-z])")
_VERSION = re.compile(
    r"(?<![\w.\-/+])(v?)(\d+(?:\.\d+)+(?:[-.]?(?:a|b|rc|alpha|beta|dev|post|pre|c)[.-]?\d*)?)(?![\w-]|\.\d)",
    re.IGNORECASE)
# A version after a comparison or a named platform/package is that dependency's, never the release's;
# after any other capitalised name it is a dependency's too, except in a release heading.
_DEPENDENCY = re.compile(
    r"(?:[<>=!~^]=?|==|>=|<=|\b(?:Python|PyPy|CPython|Node(?:\.js)?|npm|yarn|pnpm|Deno|Bun|TypeScript|Django|"
    r"Flask|Werkzeug|Jinja2?|Click|pytest|pip|setuptools|wheel|hatch(?:ling)?|flit|mypy|Pydantic|"
    r"SQLAlchemy|NumPy|pandas|attrs|typing[_-]extensions|requests|urllib3|certifi|Sphinx|Ruby|Rust|Go|Java|"
    r"PHP|Perl|Chrome|Firefox|Safari|Electron|React|Vue|Angular|Webpack|Babel|ESLint|Jest)"
    r"(?:\s+(?:version|v))?)\s*(?:[<>=!~^]=?|==)?\s*$", re.IGNORECASE)
# A heading's first word, before its version ("pytest 9.1.1 (...)", "## pytest 9.1.1 ...")
_LEAD_WORD = re.compile(r"\W*[A-Za-z][\w.-]*\s+")
# What makes a version the start or end of a range of versions ("3.0.0 and later", "2.1+", "1.4 or older")
_LATER = re.compile(r"\+(?!\w)|\s+(?:and|or)\s+(?:later|newer|above|higher|up|earlier|older|below|lower)\b|"
                    r"\s+onwards?\b", re.IGNORECASE)
_MEASURE = re.compile(r"\s*(?:%|per ?cent\b|x\b|times\b|ms\b|s\b|seconds?\b|minutes?\b|[KMG]i?B\b)",
                      re.IGNORECASE)
_NAMED = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)*\s*$")
_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
          "ten": 10, "eleven": 11, "twelve": 12, "a dozen": 12}
_COUNT = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+|" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")\s+"
    r"(?:(new|first[- ]time|different|distinct|unique|merged)\s+)?"
    r"(contributors?|contributions?|commits?|pull[- ]requests?|PRs?|authors?|people|persons|"
    r"files?(?:\s+changed)?|lines?(?:\s+(?:added|deleted|removed|changed))?|insertions?|additions?|deletions?)"
    r"(?![\w-])", re.IGNORECASE)
_RANGE_TOTAL = re.compile(r"files?\s+changed|added|deleted|removed|changed|insertions?|additions?|deletions?",
                         re.IGNORECASE)
_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:%|per ?cent\b)", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_RELEASE_WORDS = re.compile(r"^\W*(?:released?|version|release\s+date|tagged|published)\b", re.IGNORECASE)
# A sentence opening with a version and going on in prose ("Version 1.4.0 brings improved alignment ...", of the
# h5netcdf an item's sentence before named) speaks of that version, not of the release as a line of its own does
_VERSION_PROSE = re.compile(r"^\W*(?i:version)\s+v?\d[\w.+-]*\s+(?!released\b)[a-z]{3,}\b")
_LINES_CONTEXT = re.compile(r"\blines?\b|\bcode\b|\binsertions?\b|\bdeletions?\b", re.IGNORECASE)
# git's line totals are written as a pair ("120 insertions(+), 30 deletions(-)", "120 additions and 30
# deletions") or beside the files changed; "96 additions including anchor-name, ..." alone counts things added
_CHANGE_NOUN = re.compile(r"^(?:insertions?|additions?|deletions?)$", re.IGNORECASE)
_LINE_TOTALS = re.compile(r"\d\s+(?:insertions?|additions?|deletions?|files?\s+changed)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Meaning:
    kind: str  # version | date | count | ref | hash | percent | author | other
    token: str
    position: int
    value: str = ""  # version text, ISO date (YYYY-MM-DD or YYYY-MM), ref number, hash, count value
    role: str = ""  # release | mention (version, date); pr | issue | any (ref); the metric (count)
    checkable: bool = True
    why: str = ""  # for a claim git cannot check: which kind it is


def _own_heading(work: str, m: re.Match[str], read: list[Meaning]) -> bool:
    """Whether a version after a name the dependency list holds is a release heading's own: one word opening
    the heading, the version, and the release's date after it ("pytest 9.1.1 (2026-06-19)", the project's own
    name; "Python 3.15 support" has no date)."""
    return bool(_LEAD_WORD.fullmatch(work, 0, m.start())) and \
        any(c.kind == "date" and 0 < c.position - m.end() <= 3 for c in read)


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def month_number(name: str) -> int:
    low = name.lower().rstrip(".")
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(low[:3]))


def _iso(y: str, m: int | str, d: str | None = None) -> str | None:
    try:
        return date(int(y), int(m), int(d)).isoformat() if d is not None else date(int(y), int(m), 1).isoformat()[:7]
    except ValueError:
        return None


def _metric(noun: str, qualifier: str | None) -> str:
    n = noun.lower()
    q = (qualifier or "").lower()
    if n.startswith(("contributor", "author", "people", "person", "contribution")):
        return "new_contributors" if q in ("new", "first-time", "first time") else "contributors"
    if n.startswith("commit"):
        return "commits"
    if n.startswith(("pull", "pr")):
        return "pull_requests"
    if n.startswith("file"):
        return "files_changed"
    if n.startswith(("deletion",)) or n.endswith(("deleted", "removed")):
        return "lines_deleted"
    if n.startswith(("insertion", "addition")) or n.endswith("added"):
        return "lines_added"
    return "lines_changed"


def _ref_numbers(value: str) -> list[tuple[str, int]]:
    """The numbers in a role's text: `123`, `123, 456`, `text <123>`."""
    inner = re.search(r"<([^>]*)>", value)
    text = inner.group(1) if inner else value
    return [(m.group(0), m.start()) for m in re.finditer(r"\d+", text)] if not re.search(r"[a-f]", text) or \
        text.strip().isdigit() else []


def _names(text: str, at: int) -> list[tuple[str, int, bool]]:
    """The names a credit lists from `at` (`_NAME_CREDIT`): each with its position and whether the
    credit lists several; none past the first piece that reads as no name ("Patch by the team")."""
    listed = _NAME_LIST.match(text, at)
    if listed is None:
        return []
    out: list[tuple[str, int]] = []
    start = at
    for sep in [*_NAME_SEPARATOR.finditer(listed.group(0)), None]:
        end = at + sep.start() if sep is not None else listed.end()
        words = list(re.finditer(r"\S+", text[start:end]))
        # the capitalised words the piece opens with ("Ann Lee" of "Ann Lee in"), a particle inside
        n = next((i for i, w in enumerate(words) if not re.fullmatch(r"[^\W\d_][\w'’.-]*", w.group(0)) or not (
            w.group(0)[:1].isupper() or (i and w.group(0) in _PARTICLES))), len(words))
        while n and words[n - 1].group(0) in _PARTICLES:
            n -= 1
        if not 1 <= n <= 4:
            break
        out.append((text[start + words[0].start():start + words[n - 1].end()].rstrip("."), start + words[0].start()))
        if sep is None or n < len(words):
            break
        start = at + sep.end()
    return [(name, pos, len(out) > 1) for name, pos in out]


def read_claims(text: str, release: bool = False) -> list[Meaning]:
    """Every claim in `text` by meaning, in order of position. With `release`, versions and dates
    name the release itself (a heading, a "Released ..." line): they must be the range's."""
    return list(_read_claims(text, release))


@lru_cache(maxsize=4096)  # a changelog's units are read again for each text graded against a range
def _read_claims(text: str, release: bool) -> tuple[Meaning, ...]:
    out: list[Meaning] = []
    work = text
    release = release or (bool(_RELEASE_WORDS.match(text)) and not _VERSION_PROSE.match(text))
    vrole = "release" if release else "mention"

    def add(m: Meaning, start: int, end: int) -> None:
        nonlocal work
        out.append(m)
        work = _mask(work, start, end)

    for m in list(_URL.finditer(work)):
        url, s = m.group(0), m.start()
        for pr in _URL_PR.finditer(url):
            out.append(Meaning("ref", pr.group(0), s + pr.start(), pr.group(1), "pr"))
        for issue in _URL_ISSUE.finditer(url):
            out.append(Meaning("ref", issue.group(0), s + issue.start(), issue.group(1), "issue"))
        for c in _URL_COMMIT.finditer(url):
            out.append(Meaning("hash", c.group(1), s + c.start(1), c.group(1).lower()))
        for cmp in _URL_COMPARE.finditer(url):
            for side, role in ((1, "since"), (2, "range")):  # the release compared with, and this one
                out.append(Meaning("version", cmp.group(side), s + cmp.start(side), cmp.group(side), role))
        for tag in _URL_TAG.finditer(url):
            if re.search(r"\d+\.\d+", tag.group(1)):
                # a tag's page linked from a heading is the release's; from a sentence, the release it speaks of
                # (tracing-subscriber 0.3.22's "depended explicitly on [tracing-0.1.42]", linked to that tag)
                out.append(Meaning("version", tag.group(1), s + tag.start(1), tag.group(1),
                                   "range" if release else "mention"))
        work = _mask(work, m.start(), m.end())
    for m in list(_ROLE.finditer(work)):
        role, value = m.group(1), m.group(2)
        if role in ("pr", "pull", "ghpull"):
            for num, _ in _ref_numbers(value):
                out.append(Meaning("ref", m.group(0), m.start(), num, "pr"))
        elif role in ("issue", "issues", "bug", "ghissue", "gh", "ticket", "tickets"):
            # (psycopg's `:ticket:`#1210`` is its issue tracker's link)
            for num, _ in _ref_numbers(value):
                out.append(Meaning("ref", m.group(0), m.start(), num, "issue"))
        elif re.fullmatch(r"#\d+", value.strip()):
            # a role a project defines for its own links, whose text is `#N`: an issue or a pull request
            out.append(Meaning("ref", m.group(0), m.start(), value.strip()[1:], "any"))
        elif role == "commit":
            out.append(Meaning("hash", value, m.start(), value.strip().lower()))
        elif role in ("user", "ghuser") and re.fullmatch(r"[A-Za-z0-9][\w-]*(?:\[bot\])?", value.strip()):
            # towncrier's and Sphinx's credit: `by :user:`gaborbernat`` is `by @gaborbernat`
            out.append(Meaning("author", m.group(0), m.start(), value.strip().lower().removesuffix("[bot]")))
        work = _mask(work, m.start(), m.end())
    for m in list(_CODE.finditer(work)):
        work = _mask(work, m.start(), m.end())
    previous: tuple[int, str] | None = None  # where the mention before ended, and what it was read as
    for m in list(_MENTION.finditer(work)):
        # A user mention in a credit ("by @alice", "thanks @bob", "(#12 @carol)") says who made the
        # change; any other (`@property` in prose) is not a claim. One listed after another ("@a and
        # @b", "@a, @b") is what that one is: `@JsonCreator and @ConstructorProperties` are two Java
        # annotations, `by @a and @b` two credits. Who reported an issue ("(reported by @ragnhov)",
        # "#3737 issue by @x") is named, but git holds nothing of who opens issues: not checkable.
        token = m.group(0).rstrip(".")  # a sentence's full stop is not part of the handle
        listed = previous is not None and _LISTED.fullmatch(work, previous[0], m.start())
        read = previous[1] if listed and previous is not None else \
            "reporter" if _REPORTER_BEFORE.search(work, 0, m.start()) else \
            "credit" if _CREDIT_BEFORE.search(work, 0, m.start()) or _CREDIT_AFTER.match(work, m.end()) else \
            "signed" if (_SIGNED_AFTER.match(work, m.end()) and _SIGNED_BEFORE.search(work, 0, m.start())) or (
                _SIGNED_LAST.match(work, m.end()) and _SIGNED_AFTER_REFS.search(work, 0, m.start())) else ""
        if read in ("credit", "signed"):
            out.append(Meaning("author", token, m.start(), token[1:].lower().removesuffix("[bot]"),
                               "signed" if read == "signed" else ""))
        elif read == "reporter":
            out.append(Meaning("author", token, m.start(), token[1:].lower().removesuffix("[bot]"), checkable=False,
                               why="who reported the issue, not who made the change"))
        previous = (m.end(), read)
        work = _mask(work, m.start(), m.end())
    for m in list(_NAME_CREDIT.finditer(work)):
        for name, at, several in _names(work, m.end()):
            out.append(Meaning("author", name, at, name.lower(), "names" if several else "name"))
            work = _mask(work, at, at + len(name))
    for rx, parts in ((_ISO_DATE, "ymd"), (_SLASH_DATE, "ymd"), (_DMY, "dmy"), (_DMY_DASHED, "dmy"), (_MDY, "mdy"),
                      (_MY, "my")):
        for m in list(rx.finditer(work)):
            g = m.groups()
            if parts == "ymd":
                iso = _iso(g[0], g[1], g[2])
            elif parts == "dmy":
                iso = _iso(g[2], month_number(g[1]), g[0])
            elif parts == "mdy":
                iso = _iso(g[2], month_number(g[0]), g[1])
            else:
                iso = _iso(g[1], month_number(g[0]))
            if iso is not None:
                add(Meaning("date", m.group(0), m.start(), iso, vrole), m.start(), m.end())
    for m in list(_STANDARD.finditer(work)):
        add(Meaning("other", m.group(0), m.start(), checkable=False, why="standard or platform version"),
            m.start(), m.end())
    for m in list(_TICKET.finditer(work)):
        add(Meaning("other", m.group(0), m.start(), checkable=False, why="external ticket id"), m.start(), m.end())
    for m in list(_DASHED_REF.finditer(work)):
        add(Meaning("ref", m.group(0), m.start(), m.group(2), "pr" if m.group(1) == "PR" else "issue"), m.start(),
            m.end())
    for m in list(_GH.finditer(work)):
        add(Meaning("ref", m.group(0), m.start(), m.group(1), "any"), m.start(), m.end())
    for m in list(_REF_WORDS.finditer(work)):
        role = "pr" if m.group(1).lower().startswith(("pull", "pr")) else "issue"
        add(Meaning("ref", m.group(0), m.start(), m.group(2), role), m.start(), m.end())
    for m in list(_HASH_REF.finditer(work)):
        add(Meaning("ref", m.group(0), m.start(), m.group(1), "any"), m.start(), m.end())
    for m in list(_HEX.finditer(work)):
        tok = m.group(0)
        if re.search(r"[a-fA-F]", tok) and re.search(r"\d", tok):
            if _PINNED.search(work, max(0, m.start() - 120), m.start()):
                add(Meaning("other", tok, m.start(), checkable=False, why="a dependency's commit"), m.start(), m.end())
                continue
            add(Meaning("hash", tok, m.start(), tok.lower()), m.start(), m.end())
    for m in list(_VERSION.finditer(work)):
        if not release and _MEASURE.match(work, m.end()) and not m.group(1) and m.group(2).count(".") == 1:
            continue  # 37.5%, 2.5x, 1.5 seconds: a quantity, read below
        before = work[max(0, m.start() - 40):m.start()]
        if _LATER.match(work, m.end()):
            # "compatible with pyparsing versions 3.0.0 and later": which versions work, not a release
            add(Meaning("other", m.group(0), m.start(), checkable=False, why="version range"), m.start(), m.end())
        elif (_DEPENDENCY.search(before) and not (release and _own_heading(work, m, out))) or \
                (not release and _NAMED.search(before)):
            add(Meaning("other", m.group(0), m.start(), checkable=False, why="dependency version"),
                m.start(), m.end())
        else:
            add(Meaning("version", m.group(0), m.start(), m.group(2), vrole), m.start(), m.end())
    for m in list(_COUNT.finditer(work)):
        raw = m.group(1).lower()
        value = _WORDS.get(raw)
        n = value if value is not None else int(raw.replace(",", ""))
        metric = _metric(m.group(3), m.group(2))
        alone = _CHANGE_NOUN.match(m.group(3)) is not None and \
            len(_LINE_TOTALS.findall(text, max(0, m.start() - 80), m.end() + 80)) < 2
        if metric.startswith(("lines", "files")) and (value is not None or not _RANGE_TOTAL.search(m.group(0))
                                                      or alone):
            # "one line", "up to 80 lines", "3 files": sizes of something, not the range's totals
            add(Meaning("other", m.group(0), m.start(), checkable=False, why="size of something else"),
                m.start(), m.end())
            continue
        add(Meaning("count", m.group(0), m.start(), str(n), metric), m.start(), m.end())
    for m in list(_PERCENT.finditer(work)):
        after = work[m.end():m.end() + 40]
        if _LINES_CONTEXT.search(after):
            add(Meaning("percent", m.group(0), m.start(), m.group(1)), m.start(), m.end())
        else:
            add(Meaning("other", m.group(0), m.start(), checkable=False, why="measurement"), m.start(), m.end())
    for m in list(_NUMBER.finditer(work)):
        add(Meaning("other", m.group(0), m.start(), checkable=False, why="number git does not count"),
            m.start(), m.end())
    # `#N` written as the text of a link to an issue or a pull request (`[#N](.../issues/N)`,
    # `` `#N <.../issues/N>`_ ``) is what its link says it is.
    linked = {c.value: c.role for c in out if c.kind == "ref" and c.role in ("issue", "pr") and "/" in c.token}
    out = [replace(c, role=linked[c.value]) if c.kind == "ref" and c.role == "any" and c.value in linked else c
           for c in out]
    return tuple(sorted(out, key=lambda c: c.position))
