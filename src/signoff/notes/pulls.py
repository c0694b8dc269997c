"""What git holds for a pull request, and whether a changelog item's words are about it.

A claim "Added X (#123)" where #123 is a real pull request of the range about something else is an
invented change with a true number. git holds what the pull request was about: the subjects and
bodies of its commits (the squashed commit, or the merge and the commits of the branch it merged),
the branch name, and the paths it touched. An item is about the pull request when one of its content
words is among those, allowing for a paraphrase's other forms (`color` and `_colorizer.py`,
`deprecated` and `Deprecate`); an item sharing none is not. Items too short to judge are left alone.
Where the messages share none or one of an item's words and the repository is at hand, the words of
the lines the pull request added and removed decide (`diff_decides`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Set
from functools import lru_cache

_STOP = frozenset("the and for with from that this when into when not are was has have its use using used "
                  "now can will also only more than all any add adds added fix fixes fixed".split())
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")


@lru_cache(maxsize=65536)  # the same words recur in every item and commit of a range
def _stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


def words(text: str) -> set[str]:
    """The content words of a text, crudely stemmed (`deprecated` and `Deprecate` agree)."""
    return {_stem(w.strip("_")) for w in _WORD.findall(text.lower()) if w not in _STOP}


# Words every changelog uses around a change and that say nothing of which change it is.
_GENERIC = words("support supports supported allow allows allowed make makes made change changes changed "
                 "update updates updated new now when should been which thanks thank contributor contributors "
                 "contribution first pull request requests issue issues github git hub "
                 "properly correctly correct instead default behaviour behavior option options ability able "
                 "possible work works working handle handles handled case cases without within other "
                 "via per they them their there where what who whose about after before because while "
                 "being does did doing done get gets got set sets one two some many much every each "
                 # how a change is judged, not which it is ("Improve test robustness" for a fix to a
                 # script checking the sources, "Various improvements" for a lexer's pull request)
                 "improve improves improved improvement improvements various better robust robustness "
                 # what stopped ("X no longer accepts Y"), not which change stopped it
                 "longer "
                 # what points to the item's references (cJSON's "Fix conflicting target names 'uninstall', see #617")
                 "see")
# the changelog's label of a breaking change ("**Breaking:**", "BREAKING CHANGE:"), not what changed
_BREAKING_LABEL = re.compile(r"\bbreaking(?:[ -]changes?)?\W{0,3}:", re.IGNORECASE)
_URL = re.compile(r"https?://\S+|\b[\w.-]+\.(?:com|org|io|dev)/\S*")
# Credited users (`@alice`, Sphinx's `:user:`alice``) and the names of Sphinx roles (`:issue:`, `:class:`).
_HANDLE = re.compile(r"(?<![\w.])@[A-Za-z0-9][\w.-]*(?:\[bot\])?|:(?:user|ghuser):`?[\w.\[\]-]+`?|"
                     r":[a-z]+(?::[a-z]+)?:(?=[`~\w])")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[/._\-\s]+")
_BRANCH = re.compile(r"^Merge pull request #\d+ from [^/\s]+/(\S+)")
MIN_ITEM_WORDS = 3  # an item with fewer content words is too short to judge
MIN_EVIDENCE_WORDS = 3  # a pull request git says this little about cannot contradict an item
LONG_ITEM = 6  # an item this long saying only one word many commits share is about something else


# a changelog file, or any file of a folder of release notes (jackson-databind's `release-notes/VERSION-2.x`)
CHANGELOG_FILE = re.compile(r"(?:^|/)(?:CHANGELOG|CHANGES|HISTORY|NEWS|RELEASE[-_]?NOTES)(?:\.\w+)?$|"
                            r"(?:^|/)release[-_]?notes/[^/]+$", re.IGNORECASE)
_FILE_HEADER = re.compile(r"^\+\+\+ (?:b/)?(.*)$")
_CITED = re.compile(r"(?<![\w&/])#(\d+)\b")
_NUMBERS = re.compile(r"(?<![\w.#])\d+(?:\.\d+)+(?![\w])")  # `3.9`, `26.1`: what a pull request may name too
_NEGATED = re.compile(r"^(?:un|non)(?=\w{4})")  # `unequal`, `nonempty`: `equal`, `empty`
SUMMARY = 3  # an item naming this many pull requests sums them up: none of them need say its words


def without_links(text: str) -> str:
    """A text with its bare URLs taken out (their words are the host's and the project's)."""
    return _URL.sub(" ", text)


def identifier_words(text: str) -> set[str]:
    """`words`, with each identifier read whole and by its parts (`generate_async`, `generateAsync`:
    `async`; `StructureHandlerNotFoundError`: `structure`, `handler`, `error`)."""
    return words(_CAMEL.sub(" ", text) + " " + text.replace("_", " ") + " " + text)


def versions_in(text: str) -> set[str]:
    """The versions a text names (`3.8`, `26.1`, `1.2.3`)."""
    return set(_NUMBERS.findall(text))


def item_words(item: str) -> set[str]:
    """The words that say what an item's change is: links, credited users and changelog words out."""
    text = _HANDLE.sub(" ", _URL.sub(" ", _BREAKING_LABEL.sub(" ", item)))
    return (identifier_words(text) - _GENERIC) | set(_NUMBERS.findall(text))


def path_words(path: str) -> set[str]:
    """The words of a path: each folder and file name, split at `_`, `-`, `.` and camelCase."""
    return words(" ".join(_CAMEL.sub(" ", part) + " " + part for part in _SPLIT.split(path)))


# What a summary item calls a kind of change, and the words of a pull request of that kind: "Type hints
# improvements and fixes" for "Disable mypy allow_any_generics", "Documentation fixes" for a change to
# `README.rst`. A pull request holding one of the second set holds the first set's words too.
_CONCEPTS = [(words("type types typing hint hints annotation annotations"),
              words("mypy pyright typealias typevar typeddict typing annotations pyi stub stubs overload "
                    "type_checking")),
             (words("documentation docs doc docstring docstrings"),
              words("docs readme rst sphinx mkdocs docstring")),
             # "Faster canonicalize_name" for "perf: dual replace" (`perf` is no form of `performance`
             # to the word matching, which takes `read` for no form of `readme`)
             (words("performance faster speed speedup"), words("perf speedup"))]


def with_concepts(found: set[str]) -> set[str]:
    """`found` with the words of each kind of change (`_CONCEPTS`) its words show."""
    out = set(found)
    for said, shown in _CONCEPTS:
        if found & shown:
            out |= said
    return out


def evidence(messages: Iterable[str], paths: Iterable[str], people: Iterable[str] = ()) -> set[str]:
    """What git holds for a pull request as words: its commits' messages (and the versions they
    name), the branch it was merged from, the paths it touched and the names of who made it (a
    contributors' list credits a pull request by its author's name)."""
    out: set[str] = words(" ".join(people))
    for message in messages:
        # an identifier by its parts too, as an item's (`JEMALLOC_SYS_WITH_LG_PAGE=16`: the page size)
        out |= words(_CAMEL.sub(" ", message) + " " + message.replace("_", " ") + " " + message) | \
            set(_NUMBERS.findall(message))
        branch = _BRANCH.match(message)
        if branch:
            out |= path_words(branch.group(1))
    typed: set[str] = set()
    for path in paths:
        # a file's extension says its type, not the change (`yaml` of `.github/workflows/ci.yaml` for "Support
        # reading settings from a YAML file"), though a type shows a kind of change (`.pyi`: typing; `.rst`: docs)
        folder, _, name = path.rpartition("/")
        stem, dot, extension = name.rpartition(".")
        out |= path_words(f"{folder}/{stem}" if dot and stem.strip(".") else path)
        typed |= path_words(extension) if dot and stem.strip(".") else set()
    return with_concepts(out | typed) - (typed - with_concepts(out))


# What a word's other form adds to it (`color` and `colorizer`, `read` and `reader`), unlike a short
# word written after it (`read` and `readme`, `lock` and `lockfile`): checked for short words only.
_ENDING = re.compile(r"[esy]|e?[rd]s?|ors?|ings?|i?ons?|ations?|at(?:e|ed|or|ors)?|ures?|ur|"
                     r"i[sz](?:e|er|ed|es|ing|ation)?|it(?:y|ies)|(?:al)?ly|al|ments?|[ai]ble|ive|ness|"
                     r"i(?:c|cal|sm|st|es|ed|fy|fication)|en|[ae]nc[ey]|[ae]nt|y")
_SHORT = 6  # a word this long or longer may match any longer word it begins


def _extends(longer: str, shorter: str) -> bool:
    rest = longer[len(shorter):]
    # an abbreviation's word is more than twice as long (`dist` and `distribution`, `perf` and `performance`)
    return len(shorter) >= 4 and longer.startswith(shorter) and (
        len(shorter) >= _SHORT or bool(_ENDING.fullmatch(rest)) or rest == shorter[-1] or  # `plan`, `plann(ed)`
        len(rest) > len(shorter))


def _matches(word: str, known: set[str]) -> bool:
    if word in known or _NEGATED.sub("", word) in known:  # `unequal` is said of what `equal` does
        return True
    # a final `y` is the `i` of the word's other forms as stemmed: `advisory` and `advisori` (`advisories`,
    # composer's "security advisory" for "... when matching security advisories"), `apply` and `appli` (`applied`)
    if word[-1:] in ("y", "i") and len(word) >= 4 and word[:-1] + ("i" if word[-1] == "y" else "y") in known:
        return True
    # one word extends another only from a shared start of four letters at least: compared first, as it is cheap
    head = word[:4]
    return len(word) >= 4 and any(k[:4] == head and (_extends(k, word) or _extends(word, k)) for k in known)


def shared_words(item: set[str], known: set[str]) -> list[str]:
    """The item's words git holds (in any of their forms). An identifier git holds only as a word
    its part already matches is that one word, not two (`legacy_mode` and `legacy` meet "Support
    legacy encodings" once)."""
    found = [w for w in item if _matches(w, known)]
    return [w for w in found if "_" not in w or w in known or not any(p in found for p in w.split("_"))]


def unrelated(item: set[str], known: set[str], common: Set[str] = frozenset()) -> bool:
    """Whether an item's words are clearly about something else than what git holds for a pull
    request: enough words on both sides, and none of the item's among git's, or only one that
    many commits of the range share (`config`, `file`: a word of the project, not of the change)
    in an item of many words (a short item may name the one thing it changed: "Improve the README")."""
    if len(item) < MIN_ITEM_WORDS or len(known) < MIN_EVIDENCE_WORDS:
        return False
    shared = shared_words(item, known)
    return not shared or (len(shared) == 1 and shared[0] in common and len(item) >= LONG_ITEM)


def diff_decides(item: set[str], shared: list[str], unrelated_so_far: bool, diff: set[str],
                 large: bool = False) -> bool:
    """Whether an item the messages leave uncertain is about something else, once the words of the
    pull request's diff are known (matched exactly: a diff holds thousands of words, and a stray
    one of a long invented item is easily among them). One the messages call unrelated is about
    the change after all when the diff holds at least half its words (a policy document's
    pull request titled "Separate out a release policy document", credited with "old major versions
    now supported for 12 months"); a long item sharing one word with the messages is about
    something else when the diff holds none of its words (that word was chance: "local" in "Add a
    retry option that keeps failed uploads in a local queue"), or when the diff is `large`: one so
    large holds most words of any item, and what it holds ties nothing (packaging's PEP 639 pull
    request, 1,004 words, holds `config`, `directory` and `read` of "Support reading settings from a
    YAML file in the user's config directory")."""
    if len(diff) < MIN_EVIDENCE_WORDS:
        return unrelated_so_far
    in_diff = item & diff
    if unrelated_so_far:
        return len(in_diff | set(shared)) * 2 < len(item)
    return len(shared) == 1 and len(item) >= LONG_ITEM and (large or not in_diff - set(shared))


# Code an item names, as it is left once the markup is read: a flag (`--dry-run`), a dotted name or
# call (`Session.request()`, `connect()`), a snake_case or camelCase identifier (`retry_forever`,
# `includePrerelease`), or anything it quoted in backquotes. A plain word (`timeout`) cannot be told
# from prose.
_NAMED_CODE = (r"--?[A-Za-z][\w-]*[A-Za-z0-9]|[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+(?:\(\))?|"
               r"[A-Za-z_]\w*\(\)|[A-Za-z][A-Za-z0-9]*_\w+|[a-z]{2,}(?:[A-Z]+[a-z0-9]+)+\w*")
_CODE = re.compile(r"`([^`\n]+)`|(?<![\w./-])(" + _NAMED_CODE + ")")
_HASH_OR_NUMBER = re.compile(r"(?=[0-9a-f]*\d)[0-9a-f]{7,40}|v?\d[\d.]*")  # a commit or a version, quoted


_EMAIL = re.compile(r"\S+@\S+")


def names_unseen_code(item: str, seen: set[str]) -> bool:
    """Whether an item names code of which git holds nothing: not the identifier whole
    (`retry_forever`, also written `retryForever`), not every part of a flag, hyphenated name or
    setting (`dry` and `run` for `--dry-run`), not the last part of a dotted name. A change's own item
    names what it changed, which its messages or diff hold; an invented one names code the pull
    request never touched, whatever chance words it shares. A plain word the item quotes (`` `timeout` ``,
    `` `deadline=` ``) is code too, but one alone may be a name misspelt (pygments' ``rtt`` style for
    "rrt style: ..."): two such words git holds nothing of are code of another change."""
    flat = {w.replace("_", "") for w in seen}
    quoted_unseen = 0
    for quoted, code in _CODE.findall(_EMAIL.sub(" ", without_links(item))):
        name = (quoted or code).strip()
        if quoted and not re.fullmatch(_NAMED_CODE, name):
            # a quoted commit or version (`[`c76b232`](.../commit/...)`) is no code; a quoted plain word is
            found = {w.replace("_", "") for w in words(re.sub(r"[^\w]+", " ", name))}
            quoted_unseen += not _HASH_OR_NUMBER.fullmatch(name) and bool(found) and not found & flat
            continue
        whole = {w.replace("_", "") for w in words(re.sub(r"[^\w]+", "_", name.lower()).strip("_"))}
        parts = words(_CAMEL.sub(" ", name).replace("_", " "))
        if "." in name.strip("."):
            # a dotted name by what it names last (`request` of `Session.request()`, `json` of
            # `package.json`): its module or class is a word of many changes
            parts_of = re.split(r"\.", name.rstrip("().").replace("()", ""))
            last = words(_CAMEL.sub(" ", parts_of[-1]).replace("_", " "))
            if last and not last & seen:
                return True
            # a class's method (`Session.request()`): the class is a name of this code, where a module's
            # or a placeholder's (`string.endsWith()`, `os.path`) may be written anywhere else
            owner = parts_of[0]
            if len(parts_of) == 2 and re.fullmatch(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)*", owner) and \
                    not {w.replace("_", "") for w in words(_CAMEL.sub(" ", owner))} & flat and \
                    owner.lower() not in flat:
                return True
        elif parts and not whole & flat and (not ("-" in name or name.isupper()) or not parts <= seen):
            # an identifier is written whole in the code that has it (`retry_forever` or `retryForever`,
            # not `retry` in one place and `forever` in another); a flag (`--dry-run`) by its parts, and
            # so may a setting be (`TWISTED_DNS_RESOLVER`), which an item names as the context of a change
            return True
    return quoted_unseen >= 2


def unseen_identifier_parts(item: str, seen: set[str]) -> set[str]:
    """The words of the snake_case or camelCase identifiers an item names that git holds nowhere whole
    (`retry` and `forever` of `retry_forever`): a part met elsewhere ("the intended retry pattern") is
    chance, not the identifier."""
    flat = {w.replace("_", "") for w in seen}
    out: set[str] = set()
    for quoted, code in _CODE.findall(_EMAIL.sub(" ", without_links(item))):
        name = (quoted or code).strip()
        if name.isupper() or not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*_\w+|[a-z]{2,}(?:[A-Z]+[a-z0-9]+)+\w*", name):
            continue  # (a setting in capitals, `FMT_ENFORCE_COMPILE_STRING`, may be named by its parts)
        whole = {w.replace("_", "") for w in words(name.lower())}
        if not whole & flat:
            out |= words(_CAMEL.sub(" ", name).replace("_", " "))
    return out


def names_unheld_identifier(item: str, seen: set[str]) -> bool:
    """Whether an item names a snake_case or camelCase identifier of which git holds nothing at all: neither
    the identifier whole nor any of its parts (`retry_forever`, with no `retry` and no `forever`). A change's
    own item names what it changed; one whose parts git holds (`wheel_forever`) may be the name misspelt."""
    flat = {w.replace("_", "") for w in seen}
    for quoted, code in _CODE.findall(_EMAIL.sub(" ", without_links(item))):
        name = (quoted or code).strip()
        if name.isupper() or not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*_\w+|[a-z]{2,}(?:[A-Z]+[a-z0-9]+)+\w*", name):
            continue
        whole = {w.replace("_", "") for w in words(name.lower())}
        parts = words(_CAMEL.sub(" ", name).replace("_", " "))
        if not whole & flat and not {w.replace("_", "") for w in parts} & flat:
            return True
    return False


def common_words(per_commit: list[set[str]]) -> set[str]:
    """The words many commits of a range share (in at least three, and a tenth of them)."""
    seen: dict[str, int] = {}
    for found in per_commit:
        for w in found:
            seen[w] = seen.get(w, 0) + 1
    floor = max(3, len(per_commit) // 10)
    return {w for w, n in seen.items() if n >= floor}


_HUNK = re.compile(r"^@@ [^@]* @@ ?(.*)$", re.MULTILINE)
DIFF_BYTES = 1 << 20  # the part of a pull request's diff read: a vendored or generated file says nothing more
# A dependency lock file's part of a diff: the pinned packages' names and hashes, generated, not the change
_LOCK_PART = re.compile(r"^diff --git a/\S*?(?:yarn\.lock|package-lock\.json|npm-shrinkwrap\.json|pnpm-lock\.yaml|"
                        r"bun\.lockb?|deno\.lock|Cargo\.lock|poetry\.lock|uv\.lock|pdm\.lock|Pipfile\.lock|"
                        r"Gemfile\.lock|composer\.lock|go\.sum|mix\.lock|flake\.lock) .*?(?=^diff --git |\Z)",
                        re.MULTILINE | re.DOTALL)
LOCKED = "lock:"  # marks a word only a lock file's part of a diff holds: counted in its size, no word of the change
MOVED = "moved:"  # marks a word only lines a diff moves hold (removed and added alike): counted, no word of it
_LINE_END = re.compile(r"[\s;,]+$")
_CHANGELOG_PART = re.compile(r"^diff --git a/\S*?(?:CHANGELOG|CHANGES|HISTORY|NEWS|RELEASE[-_]?NOTES)[^/\s]* "
                             r".*?(?=^diff --git |\Z)", re.MULTILINE | re.DOTALL | re.IGNORECASE)


def _changed_words(diff: str) -> set[str]:
    # the added and removed lines, and the function or class each hunk changed, which git names after
    # its line numbers (`@@ -853,0 +854,4 @@ def canonicalize_name(...)`): the code a change is in
    changed = [line[1:] for line in diff.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))] + \
        [m.group(1) for m in _HUNK.finditer(diff)]
    return text_words("\n".join(changed))


def text_words(text: str) -> set[str]:
    """The words of lines of a diff, links out and identifiers split at `_` and camelCase, as an item's are."""
    text = without_links(text)
    return with_concepts(words(_CAMEL.sub(" ", text) + " " + text.replace("_", " ") + " " + text) |
                         set(_NUMBERS.findall(text)))


def diff_words(diff: str) -> set[str]:
    """The words of the lines a diff adds and removes (identifiers split at `_` and camelCase, as
    an item's are): what a pull request changed when its messages say little of it ("Separate out
    a release policy document" adding a page on supported major versions). A dependency lock file
    names packages, not the change (jest's 838 lines of `yarn.lock` in "update React Native testing
    example project" hold `cache`, `parse`, `plugin` and `start`): its words are kept apart, marked
    `LOCKED`, so they match no item's word but still count in the diff's size (fastapi/sqlmodel's
    "Drop support for Python 3.9", 229 files and 771 lines of `uv.lock`, is a diff so large that what
    it holds ties nothing, with or without the lock file)."""
    locked = "\n".join(m.group(0) for m in _LOCK_PART.finditer(diff))
    # a line removed and added alike (its line end aside: `;`, `,`) is code moved, not changed: yargs' "use entry point
    # with file extension ..." moves `Yargs.applyExtends = (config, cwd, mergeExtends) => {` from `yargs` to
    # `yargs.cjs`. Indented otherwise it is a change of scope (log's `#[cfg(feature = "kv_std")]` moved into a module),
    # and a changelog's lines moved are its entries filed under the release (sqlite-utils' "Release 4.2")
    lines = [line for line in _CHANGELOG_PART.sub("", _LOCK_PART.sub("", diff)).splitlines()
             if not line.startswith(("+++ ", "--- "))]
    removed = {_LINE_END.sub("", line[1:]) for line in lines if line[:1] == "-"}
    added = {_LINE_END.sub("", line[1:]) for line in lines if line[:1] == "+"}
    moved = {line for line in removed & added if line.strip()}
    own = _changed_words("\n".join(line for line in _LOCK_PART.sub("", diff).splitlines()
                                   if line[:1] not in "+-" or line.startswith(("+++ ", "--- "))
                                   or _LINE_END.sub("", line[1:]) not in moved)) | changelog_citations(diff)
    out = own | {MOVED + w for w in text_words("\n".join(moved)) - own}
    return out | {LOCKED + w for w in _changed_words(locked) - own} if locked else out


def changelog_citations(diff: str) -> set[str]:
    """The numbers (`#2265`) of the lines a diff adds to a changelog file: what the change's author cited in the
    entry it wrote (pint's pull request #2276 adding "Defer expensive loading of dask.array (#2265)" to `CHANGES`).
    Written with their `#`, they match no word of an item."""
    out: set[str] = set()
    writing = False
    for line in diff.splitlines():
        if (header := _FILE_HEADER.match(line)) is not None:
            writing = bool(CHANGELOG_FILE.search(header.group(1).strip()))
        elif writing and line.startswith("+"):
            out |= {"#" + n for n in _CITED.findall(line)}
    return out
