"""A changelog from commit facts without a model: one line per user-facing change, grouped.

Where the project writes conventional commits (`feat(parser)!: ...`, at least half of the
candidate subjects), the type decides the group; elsewhere a label in the subject (`[fix]`,
`Bug:`), its first verb (Fix, Add, Deprecate, Remove, ...) and the areas its files touch do.
A project that merges pull requests (most lines carry a `#N`) is listed one pull request per line:
a merged pull request by its title, a squashed one by its subject, and commits without a number
are left out as parts of a pull request; elsewhere one line per commit. Housekeeping (tests, CI,
dependency bumps, releases, merges of branches, formatting) and bot commits (`[bot]` authors,
dependabot, renovate, github-actions, pre-commit-ci) are left out. Breaking changes come first,
then deprecations, features, fixes and the rest. A prefix that is no conventional type (`sync:`) is
an area and stays in the line; a tag naming one package (`tokio-1.53.0`) leaves its sibling packages'
commits out; in a new major version a changed default is breaking. Where no merge joins a branch, a
commit without a number is listed by its kind; refactors and upgrades of named dependencies are listed
where the project's changelog lists them (`signoff.notes.practice`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from signoff.notes.facts import area_of
from signoff.notes.knowledge import BOTS
from signoff.notes.practice import Practice, changelog_work, dependency_key
from signoff.notes.pulls import CHANGELOG_FILE
from signoff.notes.told import FRAGMENT

BREAKING, DEPRECATED, FEATURES, FIXES, PERFORMANCE = (
    "Breaking changes", "Deprecations", "Features", "Bug fixes", "Performance")
REMOVED, DOCS, OTHER = "Removals", "Documentation", "Other changes"
REFACTORS, DEPENDENCIES = "Refactoring", "Dependencies"  # only where the project's changelog lists them
ORDER = (BREAKING, DEPRECATED, REMOVED, FEATURES, FIXES, PERFORMANCE, REFACTORS, OTHER, DEPENDENCIES, DOCS)

_CONVENTIONAL = re.compile(r"^(?P<type>[a-zA-Z]+)(?:\((?P<scope>[^)]*)\))?(?P<bang>!)?:\s*(?P<text>.+)$")
_TYPES = {"feat": FEATURES, "feature": FEATURES, "fix": FIXES, "bugfix": FIXES, "perf": PERFORMANCE,
          "docs": DOCS, "doc": DOCS, "deprecate": DEPRECATED, "revert": OTHER, "security": FIXES,
          # numpy's kinds (pypa/build's "MNT: remove workaround for 3.14b1", which its maintainers list)
          "enh": FEATURES, "bug": FIXES, "mnt": OTHER, "maint": OTHER}
_HOUSEKEEPING_TYPES = {"chore", "ci", "build", "test", "tests", "style", "refactor", "release", "deps", "dev",
                       "lint", "bump", "wip", "meta", "infra", "tooling", "typo", "tst", "bld", "sty",
                       # examples and benchmarks ship with no package (tokio's `examples: connect proxy upstream`)
                       "example", "examples", "bench", "benches", "benchmark", "benchmarks"}
# What a conventional commit's type may be; any other prefix is an area (tokio's `sync: wake ...`,
# okhttp's `cache: guard ...`), which names where a change is, not what kind it is.
_KNOWN_TYPES = {*_TYPES, *_HOUSEKEEPING_TYPES, "breaking", "security", "improvement", "enhancement",
                "types", "i18n"}
_LABEL = re.compile(r"^\s*\[(?P<label>[A-Za-z][\w -]*)\]\s*|^(?P<word>Bug|Bugfix|Feature|Docs|Doc|Perf|"
                    r"Deprecation|Breaking|Security)\s*:\s*", re.IGNORECASE)
_LABELS = {"bug": FIXES, "bugfix": FIXES, "fix": FIXES, "feature": FEATURES, "feat": FEATURES,
           "enhancement": FEATURES, "docs": DOCS, "doc": DOCS, "perf": PERFORMANCE, "deprecation": DEPRECATED,
           "breaking": BREAKING, "security": FIXES}
# "Fix kotlin-metadata deprecation warnings" (square/kotlinpoet #2159) silences the project's own use of a
# deprecated API: no deprecation
_DEPRECATES = re.compile(r"^deprecat|\b(?:is|are|now|been|becomes?)\s+deprecated\b|"
                         r"^(?!(?:fix|silence|suppress|resolve|address|avoid|clean)\w*\b).*\bdeprecation warnings?\b",
                         re.IGNORECASE)
_WORDS = re.compile(r"[A-Za-z]{2,}")
_VERBS = ((re.compile(r"^(?:deprecat\w*)\b", re.I), DEPRECATED),
          # a removal of something users had (support, a module, an option, an API); "Subscriber: remove
          # clone_span on enter" (tokio-rs/tracing #3289, which its maintainers list under Performance) is a change
          (re.compile(r"^(?:remove[sd]?|drop(?:s|ped)?|delete[sd]?)\b(?=.*\b(?:support|compat\w*|deprecated|"
                      r"modules?|packages?|options?|arguments?|parameters?|flags?|functions?|methods?|class(?:es)?|"
                      r"apis?|endpoints?|commands?|features?|settings?|alias(?:es)?|hooks?|python|node(?:\.?js)?|"
                      r"ruby|jdk|java|msrv|platforms?|targets?|dependency|dependencies)\b)", re.I), REMOVED),
          (re.compile(r"^(?:fix(?:e[sd])?|correct\w*|resolve[sd]?|handle[sd]?|prevent\w*|avoid\w*|repair\w*|"
                      r"restore[sd]?|don'?t|do not|no longer)\b", re.I), FIXES),
          (re.compile(r"^(?:add(?:s|ed)?|allow\w*|support\w*|implement\w*|introduce[sd]?|new|enable[sd]?|"
                      r"expose[sd]?|provide[sd]?|accept\w*)\b", re.I), FEATURES),
          (re.compile(r"^(?:speed\w* up|optimi[sz]\w*|faster|improve[sd]? performance)\b", re.I), PERFORMANCE),
          (re.compile(r"^(?:docs?|document\w*|readme|typo)\b", re.I), DOCS))
# Verbs that say the change is the documentation, even where it lives in code (doc comments in
# Rust, Go, Java: tokio's "sync: document memory ordering guarantees for Semaphore")
_DOCUMENTS = re.compile(r"^(?:document\w*|explain\w*|"
                        r"clarify\b(?!.*\b(?:message|error|warning|output)s?\b).*\b(?:docs?|documentation|"
                        r"doc comments?|"
                        r"wording|semantics|guarantees?|succeeds)|(?:fix\w*|correct\w*)\b.*\b(?:typos?|docs?|"
                        r"doc ?strings?|comments?)$|(?:fix\w*|correct\w*) (?:a |some |spelling )?typos?|"
                        r"(?:fix|update)\w*\b.*\bdoc(?:s|umentation)? links?)\b", re.I)
# Removing what was never a feature ("tracing: remove unnecessary span clone"): a change, not a removal
_CLEANUP = re.compile(r"^(?:remove[sd]?|drop(?:s|ped)?|delete[sd]?)\s+(?:an?\s+|the\s+|some\s+)?(?:unnecessary|"
                      r"useless|needless|unused|redundant|dead|duplicated?|superfluous)\b", re.I)
# Work on the tests or the build alone, told by the title where the files do not tell it (a test
# helper in the main source set): okhttp's "Avoid FakeDns flakes", "Run all the tests in CI",
# tokio's "net: enable Miri tests for TCP socket"; "Fix a crash in the test client" is not one
_TEST_WORK = re.compile(r"\bflak(?:e|es|y|iness)\b|\b(?:failing|flaky|remote|miri) tests?\b|\btests? in ci\b|"
                        r"^(?:enable|re-?enable|run|skip|disable)\b.*\btests\b|"
                        r"^(?:add|update)\s+(?:the\s+)?(?:missing\s+)?(?:copyright|license)\s+headers?\b|"
                        r"^(?:clear|clean up|remove|silence)\b.*\b(?:lint|compiler) warnings\b|"
                        # the build itself: okhttp's "Adopt a full modern gradle build"
                        r"\b(?:gradle|maven|bazel|cmake|sbt) (?:build|config\w*|wrapper)\b|"
                        r"\bbuild (?:scripts?|logic|system)\b|"
                        # the project's own pages, not the product's documentation: puma's "Update SECURITY.md,
                        # native Github vuln reports", "Rm stackoverflow badge", "Add SVG brand assets ..."
                        r"\b(?:security|contributing|release|code_of_conduct|governance|funding|maintainers)\.md\b|"
                        r"\bbadges?\b|\blogos?\b|\bbrand\b|\bcode of conduct\b|\bcontributing guide|"
                        # the release machinery: "Tidy the release script a little"
                        r"\brelease (?:scripts?|process|workflows?|tooling|automation|checklist)\b", re.I)
# After an area, "merge" joins code, not branches (tokio's "signal: merge windows statics", which the
# maintainers list as "refactor global variables on Windows")
_MERGES_CODE = re.compile(r"^merge\s+(?!(?:branch|remote|tag|pull|stable|main|master)\b|')", re.I)
# A list marker a merged pull request's title kept from its body ("* Drop EOL Python 3.8 support")
_LIST_MARKER = re.compile(r"^\s*[*+-]\s+")
# `Revert "fix(time): binding time with empty value (#4103)"`: the reverted change's title
_REVERT = re.compile(r'^revert\s+"(?P<title>.+)"\s*(?:\(#\d+\))?\s*$', re.IGNORECASE)
_HOUSEKEEPING = re.compile(
    r"^(?:bump|update (?:dependenc|deps|the dependenc|requirements|pre-commit|ci|github action|workflow|lock)|"
    r"upgrade (?:dependenc|deps)|pin |unpin |release |"
    # in any tense: grape's "Preparing for release, 3.3.3.", "Prepared the 2.1 release"
    r"prepar(?:e|es|ed|ing) (?:for )?(?:the )?(?:v?\d[\w.-]* )?release|"
    r"version |v?\d+\.\d+|re-?fmt\b|fmt\b|"
    r"merge (?:branch|remote|tag)|merge '|ci\b|tests?\b|add tests?|lint|format|reformat|pre-commit|"
    r"\[pre-commit\.ci\]|typing|mypy|ruff|black |isort|flake8|update changelog|changelog|update authors|"
    r"back to development|start (?:the )?\d|post[- ]release|empty commit)", re.IGNORECASE)
# Housekeeping a merged pull request's title says anywhere (its merge commit has no files to tell):
# merging or reverting branches, changelog entries, tests alone, refactoring, the copyright year (pygments'
# maintainer's pushed "Fix copyright year.").
_HOUSEKEEPING_TITLE = re.compile(
    r"^(?:revert\W+)*merge\b|\bchanges?\.(?:rst|md)\b|\bchangelog\b|\bchanges? entr|^add (?:more |missing )?tests?\b|"
    r"\brefactor(?:ing|ed)?\b|\bcopyright (?:years?|dates?|notices?|headers?)\b|"
    # a fix aimed at a linter's findings ("Fix up some lints on Windows", "Fix clippy warnings"), not the
    # program: a warning users see ("Fix the DeprecationWarning on import") names no linter
    r"^(?:fix(?:e[sd])?|address|silence|resolve)\b(?:\W+\w+){0,3}?\W+(?:lints?|linter|clippy|mypy|ruff|"
    r"flake8|pylint|eslint|rubocop|golangci-lint)\b", re.IGNORECASE)
_CHANGELOG_WORK = re.compile(r"\bchangelog\b|\bchanges?\.(?:rst|md)\b|\brelease notes\b", re.IGNORECASE)
_DOC_WORDS = re.compile(r"\bdoc(?:s|umentation|umented|string)?\b|\breadme\b|\brst\b|\bmyst\b", re.IGNORECASE)
# gitmoji (https://gitmoji.dev), the other convention for a commit's kind (`✨ Add ...`, `:bug: Fix ...`):
# read as the conventional type it stands for.
_GITMOJI = {"✨": "feat", "sparkles": "feat", "🎉": "feat", "tada": "feat", "🐛": "fix", "bug": "fix",
            "🚑": "fix", "ambulance": "fix", "🩹": "fix", "adhesive_bandage": "fix", "🔒": "security",
            "lock": "security", "⚡": "perf", "zap": "perf", "💥": "feat!", "boom": "feat!",
            "🗑": "deprecate", "wastebasket": "deprecate", "📝": "docs", "memo": "docs", "♻": "refactor",
            "recycle": "refactor", "🎨": "style", "art": "style", "👷": "ci", "construction_worker": "ci",
            "💚": "ci", "green_heart": "ci", "✅": "test", "white_check_mark": "test", "🧪": "test",
            "test_tube": "test", "⬆": "deps", "arrow_up": "deps", "⬇": "deps", "arrow_down": "deps",
            "📌": "deps", "pushpin": "deps", "➕": "deps", "heavy_plus_sign": "deps", "➖": "deps",
            "heavy_minus_sign": "deps", "🔧": "chore", "wrench": "chore", "🔨": "chore", "hammer": "chore",
            "🔖": "release", "bookmark": "release", "🚀": "release", "rocket": "release", "🚨": "lint",
            "rotating_light": "lint", "🔥": "chore", "fire": "chore", "💡": "chore", "bulb": "chore",
            "🙈": "chore", "see_no_evil": "chore", "👥": "chore", "busts_in_silhouette": "chore",
            "🍱": "chore", "bento": "chore", "🔀": "chore", "twisted_rightwards_arrows": "chore"}
_EMOJI = re.compile(r"^\s*(?::(?P<code>[a-z_]+):|(?P<emoji>[\u2190-\u2bff\U0001F000-\U0001FAFF]))[\ufe0f\u200d]*\s+")


def _gitmoji(title: str) -> str:
    """A gitmoji title as the conventional commit it stands for (`✨ Add X` -> `feat: Add X`);
    any other title as it is."""
    m = _EMOJI.match(title)
    kind = _GITMOJI.get(m.group("code") or m.group("emoji")) if m else None
    if m and kind:
        rest = title[m.end():]
        typed = _CONVENTIONAL.match(rest)
        # both conventions at once (tox-dev/filelock: `🐛 fix(packaging): let an unpacked sdist ...`):
        # the written type and scope say it, the emoji only repeats it
        return rest if typed and typed.group("type").lower() in _KNOWN_TYPES else f"{kind}: {rest}"
    return title


_TRAILING_PR = re.compile(r"\s*\(#\d+\)\s*$")
_BREAKING_WORDS = re.compile(r"\bbreaking\b|\bno longer supports?\b|\bbackward[s]?[- ]incompatible\b", re.I)


@dataclass
class Line:
    group: str
    text: str
    facts: list[dict[str, Any]]


def is_bot(f: dict[str, Any]) -> bool:
    """Whether a commit fact's author is a bot (dependabot, renovate, `[bot]` accounts, ...)."""
    return bool(BOTS.search(f.get("email", "")) or BOTS.search(f.get("author", "")))


# A first word that is a name as code spells it (kotlinpoet's "emitNullable correctly ...", yargs's "commandDir
# now works ..."): capitalised it would name something else
_CODE_NAME = re.compile(r"^[a-z]\w*(?:[A-Z_.(]|\d)\S*")


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip(" .")
    if _CODE_NAME.match(text):
        return text + "."
    return text[:1].upper() + text[1:] + "." if text else ""


_REFACTOR = re.compile(r"^refactor(?:s|ed|ing)?\b", re.IGNORECASE)


def _listed_refactor(text: str, f: dict[str, Any], refactors: bool) -> bool:
    """Whether a refactor is listed: where the project's changelog lists refactors (`Practice`), one
    that touches code (a merged pull request's merge lists no files: its title decides)."""
    areas = set(f.get("areas") or [])
    return refactors and bool(_REFACTOR.match(text)) and (not areas or "code" in areas)


def _group(title: str, f: dict[str, Any], conventional: bool, refactors: bool = False,
           listed: bool = False) -> tuple[str | None, str]:
    """(group, text) of one change; group None for housekeeping. With `refactors` (the project's
    changelog lists them) a refactor of code is listed under Refactoring. With `listed` (the change wrote
    its own changelog entry) its files do not make it housekeeping: the maintainers listed it (kotlinpoet's
    "Migrate to Sonatype Central Portal", a build and workflow change adding "In-development snapshots are
    now published to the Central Portal Snapshots repository")."""
    breaking = bool(f.get("breaking"))
    m = _CONVENTIONAL.match(title)
    if conventional and m and m.group("type").lower() in _KNOWN_TYPES:
        kind = m.group("type").lower()
        text = m.group("text")
        if m.group("scope"):
            text = f"{m.group('scope')}: {text}"
        if m.group("bang") or breaking:
            return BREAKING, text
        if _listed_refactor(kind, f, refactors):
            return REFACTORS, text
        if kind in _HOUSEKEEPING_TYPES or _CHANGELOG_WORK.search(m.group("text")):
            return None, text  # `docs: fix CHANGELOG links`: the changelog is not a change to it
        if _DEPRECATES.search(m.group("text")):
            return DEPRECATED, text
        areas = set(f.get("areas") or [])
        if areas and areas <= {"docs"}:
            return DOCS, text  # `fix(docs): ...` is a documentation change
        if areas and areas <= {"tests", "ci", "deps", "docs"} and not listed and \
                not (kind in ("feat", "feature") and "docs" in areas):
            # `fix(test): ...`: nothing a user of the package sees; a feature documented and tested
            # (what its code change before it made possible) is still a feature
            return None, text
        return _TYPES.get(kind, OTHER), text
    if m:  # a type or scope prefix in a project that does not write conventional commits throughout
        kind = m.group("type").lower()
        if _listed_refactor(kind, f, refactors):
            return REFACTORS, m.group("text")
        if kind in _HOUSEKEEPING_TYPES:
            return None, title
        if kind in _TYPES:
            typed = BREAKING if m.group("bang") or breaking else _TYPES[kind]
            typed_areas = set(f.get("areas") or [])
            if typed == DOCS and not (typed_areas & {"code"}):
                return None, title
            if typed_areas and typed_areas <= {"tests", "ci", "deps"} and typed != BREAKING and not listed:
                # pytest-asyncio's "fix: make linters happy", "feat(workflows): add gh release instead of
                # ncipollo/release-action" (a workflow file alone): as in a conventional project
                return None, title
            return (DEPRECATED if typed != BREAKING and _DEPRECATES.search(m.group("text")) else typed), \
                m.group("text")
        # an area (`sync: wake the receiver`): the verb after it tells the kind, and the area stays
        f_areas = set(f.get("areas") or [])
        if _listed_refactor(m.group("text"), f, refactors):
            return REFACTORS, title
        if (f_areas and f_areas <= {"tests", "ci", "deps", "docs"} and not listed) \
                or _HOUSEKEEPING.match(m.group("text")) \
                or (_HOUSEKEEPING_TITLE.search(m.group("text")) and not _MERGES_CODE.match(m.group("text"))) \
                or _TEST_WORK.search(m.group("text")):
            return None, title
        if breaking or m.group("bang") or _BREAKING_WORDS.search(m.group("text")):
            return BREAKING, title
        if _DEPRECATES.search(m.group("text")):
            return DEPRECATED, title
        if _DOCUMENTS.search(m.group("text")):
            return DOCS, title
        if _CLEANUP.search(m.group("text")):
            return OTHER, title
        return next((g for rx, g in _VERBS if rx.search(m.group("text"))), OTHER), title
    label = _LABEL.match(title)
    group: str | None = None
    text = title
    if label:
        name = (label.group("label") or label.group("word") or "").lower()
        group = _LABELS.get(name)
        text = title[label.end():]
        if _listed_refactor(name, f, refactors):
            return REFACTORS, text
        if group is None and name in _HOUSEKEEPING_TYPES:
            return None, text
    elif _listed_refactor(text, f, refactors):
        return REFACTORS, text
    if _HOUSEKEEPING.match(text) or _HOUSEKEEPING_TITLE.search(text) or (group is None and _TEST_WORK.search(text)):
        return None, text
    areas = set(f.get("areas") or [])
    if len(_WORDS.findall(text)) < 3 and group is None:
        return None, text  # "Docs.", "Nit", "Update sponsors": too little to tell a user anything
    if areas == {"docs"} and group is None and f.get("pr"):
        # a pull request on the documentation alone, as a merged one is told by its title (puma's
        # "Add gRPC guide ...", #3885, casey/just's "Note that `no-cd` only affects ...", #3679)
        return DOCS, text
    if areas and areas <= {"tests", "ci", "deps", "docs"} and group is None and not listed:
        return None, text  # tests and CI alone (or documentation pushed alone): not a change users see
    if breaking or _BREAKING_WORDS.search(text):
        return BREAKING, text
    if group is None and _DEPRECATES.search(text):
        group = DEPRECATED
    if group is None and _DOCUMENTS.search(text):
        group = DOCS
    if group is None and _CLEANUP.search(text):
        group = OTHER
    if group is None:
        group = next((g for rx, g in _VERBS if rx.search(text)), None)
    if group is None and not areas and _DOC_WORDS.search(text):
        group = DOCS  # a merged pull request about the documentation (its merge lists no files)
    if group == DOCS and "code" in areas and not _DOCUMENTS.search(text):
        group = OTHER
    return group or OTHER, text


_LEADING_GROUPS = (BREAKING, DEPRECATED, REMOVED)  # never moved into a configured group
_HEX_LETTER = re.compile(r"[a-f]")  # a short hash all digits would read as a number


def _leading(f: dict[str, Any]) -> bool:
    """Whether a commit says it breaks or deprecates something (listed even without a pull request)."""
    title = f.get("title") or f["subject"]
    m = _CONVENTIONAL.match(title)
    return bool(f.get("breaking") or (m and m.group("bang")) or _BREAKING_WORDS.search(title)
                or _DEPRECATES.search(title))


def _matches(pattern: str, title: str, paths: Sequence[str]) -> bool:
    """Whether a configured group's pattern takes a change: `label:NAME` a subject label (`[NAME]`,
    `NAME:`) or conventional scope (`fix(NAME):`); a glob (`*`, `?`, `[`) any of its paths; any
    other pattern a path or a folder (`src/cli` takes `src/cli/main.py`)."""
    if pattern.startswith("label:"):
        name = re.escape(pattern[len("label:"):].strip())
        return bool(re.match(rf"^\s*(?:\[{name}\]|{name}\s*:|\w+\({name}\)!?:)", title, re.IGNORECASE))
    if any(ch in pattern for ch in "*?["):
        return any(fnmatchcase(p, pattern) for p in paths)
    folder = pattern.rstrip("/")
    return any(p == folder or p.startswith(folder + "/") for p in paths)


def configured_group(groups: Mapping[str, Sequence[str]], title: str, paths: Sequence[str]) -> str | None:
    """The first configured group (`[notes.groups]`, in the order written) that takes a change."""
    return next((name for name, patterns in groups.items()
                 if any(_matches(p, title, paths) for p in patterns)), None)


_SHORT_MERGE = re.compile(r"^Merge #(?P<pr>\d+)\s*:\s*(?P<title>\S.*)$")


def _main_line(humans: Sequence[dict[str, Any]], commits: Sequence[dict[str, Any]]) -> set[str]:
    """The hashes of the commits on the range's first-parent line from its tip (the commit no other names as
    a parent): pushed there or squashed, not brought in by a merge. Empty where the facts hold no parents."""
    by_hash = {f["hash"]: f for f in commits}
    named = {p for f in commits for p in f.get("parents") or ()}
    tips = [f for f in commits if f["hash"] not in named and f.get("parents") is not None]
    line: set[str] = set()
    at = tips[0] if len(tips) == 1 else None
    while at is not None and at["hash"] not in line:
        line.add(at["hash"])
        parents = at.get("parents") or []
        at = by_hash.get(parents[0]) if parents else None
    return line & {f["hash"] for f in humans}


def _numbered_merge(f: dict[str, Any]) -> dict[str, Any]:
    """A merge written `Merge #2703: isolate walk state from Object prototype` (sinonjs/sinon, bors)
    as the pull request it merges, titled by its subject: git's own form is `Merge pull request #N`,
    so the facts give it no number and the writer left the change out."""
    m = _SHORT_MERGE.match(f["subject"]) if f.get("merge") and not f.get("pr") else None
    return {**f, "pr": m.group("pr"), "title": m.group("title")} if m else f


def _reverted(titles: Sequence[str]) -> set[str]:
    """The titles (lower case, without their `(#N)`) of changes reverted within the range, and of
    their reverts: gin v1.10.0..v1.11.0 has `fix(time): binding time with empty value (#4103)` and
    `Revert "fix(time): binding time with empty value (#4103)" (#4245)`, neither of which a user gets.
    A revert of a change from before the range stays (it changes what users had)."""
    own = {_TRAILING_PR.sub("", t).strip().lower() for t in titles}
    out: set[str] = set()
    for t in titles:
        m = _REVERT.match(_TRAILING_PR.sub("", t).strip())
        if m and _TRAILING_PR.sub("", m.group("title")).strip().lower() in own:
            out |= {_TRAILING_PR.sub("", m.group("title")).strip().lower(), _TRAILING_PR.sub("", t).strip().lower()}
    return out


_TAG_PACKAGE = re.compile(r"^(?:.*/)?(?P<package>[A-Za-z][\w.-]*?)[-_@]v?\d+(?:\.\d+)+\S*$")


_VERSION = re.compile(r"(?:^|[-_@/v])(?P<major>\d+)\.(?P<minor>\d+)(?:\.\d+)*$")
# A changed default (puma's "Use IPv6 (`::`) default for production", #3847, which its maintainers
# list under Breaking changes): breaking where the release is a new major version
_NEW_DEFAULT = re.compile(r"^(?:use|switch|change|make|set)\w*\b.*\bdefault\b|\bby default\b|"
                          r"\bdefaults? (?:to|is now|changed)\b", re.I)


def major_release(range_: str) -> bool:
    """Whether a range ends a new major version: `v7.2.0..v8.0.0`."""
    a, _, b = range_.partition("..")
    ma, mb = _VERSION.search(a.strip()), _VERSION.search(b.strip())
    return bool(ma and mb and int(mb.group("major")) > int(ma.group("major")))


def tag_package(range_: str) -> str | None:
    """The package a release's tag names (`tokio-1.53.0` -> `tokio`; `v1.53.0` none): in a repository
    holding several packages, each with its own changelog, the tag says which one the notes are for."""
    m = _TAG_PACKAGE.match(range_.rsplit("..", 1)[-1].strip())
    return m.group("package") if m else None


def _sibling(package: str, folder: str) -> bool:
    """Whether a top folder holds a sibling of `package`: one named from the same stem (`tokio-stream`
    beside `tokio`; `tracing`, `tracing-core`, `tracing-appender` beside `tracing-subscriber`)."""
    stem = re.split(r"[-_]", package, maxsplit=1)[0]
    return folder != package and (folder == stem or folder.startswith((f"{stem}-", f"{stem}_")))


def _another_package(package: str, paths: Sequence[str]) -> bool:
    """Whether a commit's code is all in sibling packages' folders (`tokio-stream/`, `tokio-util/`
    beside `tokio/`): their changes go to their own changelogs. Paths outside any package folder
    (the workspace's manifest, CI) do not decide; no path in a sibling, no decision."""
    tops = {p.split("/", 1)[0] for p in paths if "/" in p and area_of(p) == "code"}
    return bool(tops) and package not in tops and all(_sibling(package, t) for t in tops)


# A dependency update as bots and people write it: renovate's "Update dependency com.squareup.okio:okio to
# v3.17.0", "Update kotlinx-coroutines monorepo to v1.11.0"; dependabot's "Bump requests from 2.31.0 to 2.32.0"
_DEP_UPDATE = re.compile(r"^(?:update|upgrade|bump)\s+(?:dependency\s+|plugin\s+)?(?P<name>[\w.:@/-]+?)"
                         r"(?:\s+monorepo)?\s+(?:from\s+\S+\s+)?to\s+(?P<version>v?\d+(?:\.\d+)+[\w.+-]*)",
                         re.IGNORECASE)


def _dependency_names(name: str) -> list[str]:
    """The keys a dependency's coordinates may be known by: `com.squareup.okio:okio` as a whole, each
    `:`/`/` part, and each part's last dotted segment (`square.okio` is Okio)."""
    parts = [p for p in re.split(r"[:/@]", name) if p]
    return [dependency_key(k) for k in (name, *parts, *(p.rsplit(".", 1)[-1] for p in parts))]


def dependency_lines(commits: Sequence[dict[str, Any]], known: Mapping[str, str]) -> list[Line]:
    """One line per dependency the project's changelog lists upgrades of (`known`, see `Practice`),
    for its newest update in the range, bots' included: okhttp's "Update square.okio to v3.17.0
    (#9367)" is "Upgrade Okio to v3.17.0 (#9367)."; the bots' other updates stay out."""
    lines: list[Line] = []
    done: set[str] = set()
    for f in commits:
        title = _gitmoji(f.get("title") or f["subject"])
        typed = _CONVENTIONAL.match(title)
        m = _DEP_UPDATE.match(typed.group("text") if typed else title)
        if f.get("merge") or not m or (f.get("areas") and not {"deps", "code"} & set(f["areas"])):
            continue  # pytest-asyncio's pytest bumped in its tests' constraints.txt: not what users get
        key = next((k for k in _dependency_names(m.group("name")) if k in known), None)
        if key is None or key in done:
            continue
        done.add(key)
        ref = f" (#{f['pr']})" if f.get("pr") else ""
        lines.append(Line(DEPENDENCIES, f"Upgrade {known[key]} to {m.group('version')}{ref}.", [f]))
    return lines


def changelog_lines(commits: list[dict[str, Any]], groups: Mapping[str, Sequence[str]] | None = None,
                    paths: Mapping[str, Sequence[str]] | None = None, package: str | None = None,
                    major: bool = False, practice: Practice | None = None) -> list[Line]:
    """The lines of a changelog from commit facts (newest first), grouped in `ORDER`.

    With `groups` (a configured map: heading -> patterns, see `configured_group`) a change the map
    takes is listed under that heading instead of its kind's, after the breaking changes,
    deprecations and removals (which stay first) and before the other groups; `paths` gives each
    commit's paths by hash (a merged pull request's are those of the commits it merged, see
    `signoff.notes.paths`); a commit that touched only the changelog is left out. With `package`
    (the one a tag like `tokio-1.53.0` names, see `tag_package`) and a folder of that name among the
    paths, a commit whose code is all in sibling packages' folders (`_sibling`) is left out. With
    `major` (the range ends a major version, see `major_release`) a change of a default is breaking.
    With `practice` (what the project's changelog before the range lists, see
    `signoff.notes.practice`) refactors of code are listed where it lists refactors, and upgrades of
    the dependencies it names (`dependency_lines`)."""
    groups = groups or {}
    paths = paths or {}
    practice = practice or Practice()
    upgrades = dependency_lines(commits, practice.dependencies)
    upgraded = {f["hash"] for line in upgrades for f in line.facts}
    humans = [_numbered_merge(f) for f in commits if not is_bot(f) and f["hash"] not in upgraded
              and not changelog_work(paths.get(f["hash"], ()))]
    if package and any(p.startswith(f"{package}/") for ps in paths.values() for p in ps):
        humans = [f for f in humans if not _another_package(package, paths.get(f["hash"], ()))]
    numbered = [f for f in humans if f.get("pr")]
    # Pull requests are the unit wherever a project has them; commits pushed beside them (a
    # maintainer's "Docs", "Nit") are left out, as a maintainer's changelog leaves them out.
    by_pr = len(numbered) >= 3 or (bool(numbered) and len(numbered) * 4 >= len(humans))
    # Where no merge commit joins a branch, every commit is on the main line: one without a number was
    # pushed or rebased there as it is (square/kotlinpoet's "Handle recursively bound generics in
    # KType.asTypeName", labstack/echo's pull requests rebased without their numbers, its "docs(csrf): fix
    # godoc typo ..." among them), not a part of a merged branch: listed as the commits of a project
    # without pull requests are.
    linear = by_pr and not any(f.get("merge") for f in humans)
    # A breaking change or a deprecation is listed even when pushed without a pull request, and so is a fix or a
    # feature a maintainer pushed onto the main line beside the merges (pgx 5.9.2's "Fix SQL sanitizer bugs with
    # dollar-quoted strings and placeholder overflow", the release's one change), not a commit of a merged branch.
    pushed = _main_line(humans, commits) if by_pr and not linear else set()
    candidates = [f for f in humans if f.get("pr") or (not f.get("merge") and (linear or _leading(f)
                                                                               or f["hash"] in pushed))] if by_pr \
        else [f for f in humans if not f.get("merge")]
    titles = [_LIST_MARKER.sub("", _gitmoji(f.get("title") or f["subject"])) for f in candidates]
    typed = [_CONVENTIONAL.match(t) for t in titles]
    conventional = sum(bool(m and m.group("type").lower() in _KNOWN_TYPES) for m in typed) * 2 >= len(titles) > 0
    reverted = _reverted(titles)
    seen: set[str] = set()
    lines: list[Line] = []
    for f, title in zip(candidates, titles, strict=True):
        pr = f.get("pr")
        if pr is not None and pr in seen:
            continue  # a pull request merged and squashed both: listed once
        if _TRAILING_PR.sub("", title).strip().lower() in reverted:
            continue  # reverted within the range (and the revert itself): nothing a user gets
        listed = any(CHANGELOG_FILE.search(p) or FRAGMENT.search(p) for p in paths.get(f["hash"], ()))
        group, text = _group(_TRAILING_PR.sub("", title), f, conventional, practice.refactors, listed)
        if group is None or (f["hash"] in pushed and not pr and not _leading(f) and group not in (FEATURES, FIXES)):
            continue  # (a maintainer's pushed "Docs", "Nit" beside the pull requests: no change a user gets)
        if major and group not in (BREAKING, FIXES, DOCS) and _NEW_DEFAULT.search(text):
            group = BREAKING
        if groups and group not in _LEADING_GROUPS:
            group = configured_group(groups, title, paths.get(f["hash"], ())) or group
        if package and text[:len(package) + 1].lower() == f"{package.lower()}:":
            # the package the notes are for, named as an area in its own notes ("tracing-subscriber: Switch to
            # unconditional no_std" in tracing-subscriber's): it says nothing there
            text = text[len(package) + 1:].strip()
        text = _sentence(text)
        if not text:
            continue
        if pr is not None:
            seen.add(pr)
            text = f"{text[:-1]} (#{pr})."
        elif by_pr and _HEX_LETTER.search(f["hash"][:10]):
            # pushed beside the pull requests (a breaking change, a deprecation): its commit is its reference
            text = f"{text[:-1]} ({f['hash'][:10]})."
        lines.append(Line(group, text, [f]))
    lines += upgrades
    order = [*_LEADING_GROUPS, *(g for g in groups if g not in ORDER), *ORDER[len(_LEADING_GROUPS):]]
    rank = {g: i for i, g in enumerate(order)}
    return sorted(lines, key=lambda line: rank[line.group])
