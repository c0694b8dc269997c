"""Claims the grader checks against commits in hand (no git): the classes found on the blind22 set of
2026-12-07 (NLog's items opening with the component they change, grape's pull requests that carry other
pull requests' changelog lines, simplejson's long pull request descriptions)."""

from __future__ import annotations

import itertools

from signoff.notes.changes import changelog_lines
from signoff.notes.knowledge import Knowledge
from signoff.notes.pulls import diff_words

from .test_changes_groups import _commit as _fact
from .test_knowledge_classes import _commit, _unsupported


def _nlog() -> Knowledge:
    return Knowledge("v6.0.5..v6.0.6", None, [], [
        _commit(1, "ScopeContextAsyncState - Refactor to reduce code complexity (#6041)",
                paths=("src/NLog/Internal/ScopeContextAsyncState.cs",)),
        _commit(2, "XmlParser - Refactor TryParseUnicodeValue to match TryParseUnicodeValueHex (#6040)",
                paths=("src/NLog/Internal/XmlParser.cs",)),
        _commit(3, "FileTarget - Render ArchiveFileName using NLog DefaultCultureInfo (#6039)",
                paths=("src/NLog/Targets/FileTarget.cs",)),
        _commit(4, "JsonLayout - Reduce code complexity for rendering JsonAttribute (#6026)",
                paths=("src/NLog/Layouts/JSON/JsonLayout.cs",))])


def test_an_item_opening_with_its_component_is_that_component_change() -> None:
    # NLog 6.0.6 (blind22): "[#6040](.../pull/6040) XmlParser - Refactor to reduce code complexity." was "git says
    # #6041": "ScopeContextAsyncState - Refactor to reduce code complexity (#6041)" says four of its words, the
    # phrase the maintainer writes for many components, and "XmlParser - Refactor TryParseUnicodeValue ... (#6040)"
    # two, one of them the component the item opens with
    item = "- [#{n}](https://github.com/NLog/NLog/pull/{n}) XmlParser - Refactor to reduce code complexity.\n"
    assert _unsupported(_nlog(), item.format(n=6040), "CHANGELOG.md") == set()
    # the number of a commit of another component is still wrong, and so is one no commit carries
    assert _unsupported(_nlog(), item.format(n=6039), "CHANGELOG.md") == {"#6039", "/pull/6039"}
    assert _unsupported(_nlog(), item.format(n=6042), "CHANGELOG.md") == {"#6042", "/pull/6042"}
    # an item of the component whose commit it restates keeps that commit's number
    own = ("- [#{n}](https://github.com/NLog/NLog/pull/{n}) ScopeContextAsyncState - Refactor to reduce code "
           "complexity.\n")
    assert _unsupported(_nlog(), own.format(n=6041), "CHANGELOG.md") == set()
    assert _unsupported(_nlog(), own.format(n=6040), "CHANGELOG.md") == {"#6040", "/pull/6040"}


GRAPE = ("* [#{n}](https://github.com/ruby-grape/grape/pull/{n}): Avoid per-entry array allocation in "
         "`Request#build_headers` - [@ericproulx](https://github.com/ericproulx).\n")
GRAPE_OTHER = ("* [#2771](https://github.com/ruby-grape/grape/pull/2771): Fix double wrap on json errors - "
               "[@MattHall](https://github.com/MattHall).\n")


def test_a_pull_request_adding_another_ones_changelog_line_did_not_write_that_item() -> None:
    # grape 3.3.1 (blind22, bench): the planted "#2771" for #2770 on "Avoid per-entry array allocation in
    # `Request#build_headers`" passed: Matt Hall's squashed "Fix double wrap on json errors (#2771)" added to
    # CHANGELOG.md a whole "4.0.0 (Next)" section from the main line, #2770's line among its own, so its diff holds
    # every word of the item, and it was taken for the pull request that wrote the item
    k = Knowledge("v3.3.0..v3.3.1", None, [], [
        _commit(1, "Avoid per-entry array allocation in Request#build_headers (#2770)",
                author=("Eric Proulx", "ericproulx@example.org"), paths=("lib/grape/request.rb",)),
        _commit(2, "Fix double wrap on json errors (#2771)", "* Add failing spec\n\n* Update changelog",
                author=("Matt Hall", "matthew.hall@example.org"),
                paths=("CHANGELOG.md", "lib/grape/error_formatter/json.rb"))])
    added = "".join("+" + line for line in (GRAPE.format(n=2770) + GRAPE_OTHER).splitlines(keepends=True))
    diffs = {k.carriers[1].hash: diff_words(added + "+        wrapped = message.is_a?(Hash)\n")}
    k.diff_of = lambda commit: diffs.get(commit, set())
    assert _unsupported(k, GRAPE.format(n=2770) + GRAPE_OTHER, "CHANGELOG.md") == set()
    assert _unsupported(k, GRAPE.format(n=2771) + GRAPE_OTHER, "CHANGELOG.md") == {"#2771", "/pull/2771"}


def _report(count: int) -> str:
    """A pull request description of `count` distinct made-up words (an agent's report of its work)."""
    syllables = ["ka", "lo", "mi", "ne", "ru", "ti", "sa", "po", "ve", "du", "gi", "fe", "zo", "ba"]
    made = ("".join(p) for p in itertools.product(syllables, repeat=3))
    return " ".join(itertools.islice(made, count))


def test_an_item_naming_code_no_part_of_which_git_holds_is_another_change() -> None:
    # simplejson 4.1.1 (blind22): the invented "Add a `retry_forever` option that keeps every failed upload in a
    # local queue (#378)" passed: the squashed "Add Python 2.7 wheel builds for Windows platforms (#378)" has a
    # description of 8,600 characters (411 words) saying `keep`, `fail`, `upload`, `local` and `queue` of its CI
    # jobs, too many words for chance, though neither it nor the diff holds `retry_forever`, `retry` or `forever`
    body = ("Pre-4.0 simplejson installed cleanly from a local wheelhouse; keep the sdist path. The upload jobs fail "
            "when artifacts collide, so the queue of uploads is renamed. " + _report(300))
    k = Knowledge("v4.1.0..v4.1.1", None, [], [
        _commit(1, "Add Python 2.7 wheel builds for Windows platforms (#378)", body,
                paths=(".github/workflows/build-and-deploy.yml",)),
        _commit(2, "Release 4.1.1", paths=("CHANGES.txt", "setup.py"))])
    diff = ("+      - name: Upload wheels\n+        if: failure() keep going\n+        queue: local wheelhouse\n"
            "+        CIBW_ARCHS_WINDOWS: AMD64 x86\n+        CIBW_BUILD: cp27-*\n")
    diffs = {k.carriers[0].hash: diff_words(diff)}
    k.diff_of = lambda commit: diffs.get(commit, set())
    item = "* {text}\n  https://github.com/simplejson/simplejson/pull/378\n"
    invented = "Add a `retry_forever` option that keeps every failed upload in a local queue."
    assert _unsupported(k, item.format(text=invented), "CHANGES.txt") == {"/pull/378"}
    # an item naming code the change holds is about it, and so is one naming none
    assert _unsupported(k, item.format(text="Build `cp27` wheels for Windows AMD64 and x86."), "CHANGES.txt") == set()
    assert _unsupported(k, item.format(text="Python 2.7 wheels are now built for Windows platforms."),
                        "CHANGES.txt") == set()
    # an item saying a word of the title may name the public function whose inside changed (xarray 2026.07.0's
    # "Fix :py:func:`open_dataset` raising ``OSError`` ..." for "fix: handle `OSError` in `_get_mtime` ...")
    assert _unsupported(k, item.format(text="Python 2.7 builds for Windows platforms gain a `retry_forever` "
                                            "setting."), "CHANGES.txt") == set()
    # (a part of the identifier the change holds may be the identifier misspelt: not judged so)
    assert _unsupported(k, item.format(text="Add a `wheel_forever` option that keeps every failed upload in a "
                                            "local queue."), "CHANGES.txt") == set()


def test_messages_holding_most_words_of_any_item_tie_nothing() -> None:
    # simplejson 4.0.0 (blind22): the invented "**Breaking:** `Session.request()` no longer accepts a `timeout`
    # argument; pass `deadline=` instead .../pull/367" passed: "Fix free-threading (3.14t) crashes: heap types,
    # unified per-module state, templated parser, new CI coverage (#367)" has a description of 36,000 characters
    # (1,381 words) and a diff of 1,511: together they hold every word of the item
    body = "No longer accept the session timeout argument; pass it on. " + _report(1100)
    title = ("Fix free-threading (3.14t) crashes: heap types, unified per-module state, templated parser, new CI "
             "coverage")
    k = Knowledge("v3.20.2..v4.0.0", None, [], [
        _commit(1, title + " (#367)", body, paths=("simplejson/_speedups.c",)),
        _commit(2, "Release 4.0.0", paths=("CHANGES.txt", "setup.py"))])
    diffs = {k.carriers[0].hash: diff_words("+ request(" + _report(1200).replace(" ", ", ") + ")\n")}
    k.diff_of = lambda commit: diffs.get(commit, set())
    item = "- {text} https://github.com/simplejson/simplejson/pull/367\n"
    invented = "**Breaking:** `Session.request()` no longer accepts a `timeout` argument; pass `deadline=` instead"
    assert _unsupported(k, item.format(text=invented), "CHANGES.txt") == {"/pull/367"}
    # an item saying what the title says is about the change
    assert _unsupported(k, item.format(text="The C extension now uses heap types and per-module state, and no "
                                            "longer crashes when free-threaded."), "CHANGES.txt") == set()


def test_a_release_prepared_in_any_tense_is_housekeeping_for_the_writer() -> None:
    # grape v3.3.2..v3.3.3 (blind22, the writer without a model): "Preparing for release, 3.3.3." was drafted as a
    # change of the release, beside the four the maintainers listed; "Prepare for 10.2.0 release" (fd) already was
    # housekeeping, and so are PHPUnit's "Prepare release" and NLog's "Version 6.0.6 (#6037)"
    facts = [_fact(1, "Preparing for release, 3.3.3."), _fact(2, "Prepared the 2.1 release"),
             _fact(3, "Prepare release"), _fact(4, "Fix base-only rescue handlers never firing"),
             _fact(5, "Preparing the ground for parallel test execution")]
    assert [line.text for line in changelog_lines(facts)] == ["Fix base-only rescue handlers never firing.",
                                                              "Preparing the ground for parallel test execution."]


def test_a_fix_the_maintainer_pushed_beside_the_merges_is_listed() -> None:
    # pgx v5.9.1..v5.9.2 (blind22, the writer without a model): the release's one change, "Fix SQL sanitizer bugs
    # with dollar-quoted strings and placeholder overflow", pushed onto the main line beside two merged pull
    # requests, was left out as a part of a pull request; a commit of a merged branch still is one
    def fact(n: int, subject: str, parents: tuple[int, ...], pr: str | None = None, areas: tuple[str, ...] = ("code",),
             title: str = "") -> dict[str, object]:
        return {**_fact(n, subject, areas), "parents": [f"{p:040x}" for p in parents], "merge": len(parents) > 1,
                "pr": pr, "title": title or subject}

    facts = [fact(1, "Release v5.9.2", (2,)),
             fact(2, "Fix SQL sanitizer bugs with dollar-quoted strings and placeholder overflow", (3,)),
             fact(3, "Merge pull request #2531 from dolmen-go/godoc-add-links", (5, 4), "2531", (),
                  "Add links to the package documentation"),
             fact(4, "Add links to the package documentation", (5,), areas=("docs",)),
             fact(5, "Fix Stringer types encoded as text instead of numeric value in composite fields", (6,)),
             fact(6, "Docs", (10,), areas=("docs",)),
             fact(10, "Fix copyright year.", (7,)),
             fact(7, "Merge pull request #2526 from abrightwell/min-proto", (9, 8), "2526", (),
                  "Update max_protocol_version and min_protocol_version defaults"),
             fact(8, "Fix the minimum protocol default", (9,)),
             fact(9, "Merge pull request #2520 from ann/pool-stats", (12, 11), "2520", (), "Add pool statistics"),
             fact(11, "Add pool statistics", (12,))]
    texts = [line.text for line in changelog_lines(facts)]
    assert "Fix SQL sanitizer bugs with dollar-quoted strings and placeholder overflow." in texts
    assert "Fix Stringer types encoded as text instead of numeric value in composite fields." in texts
    assert not any(t.startswith(("Fix the minimum protocol", "Docs", "Release", "Fix copyright")) for t in texts)
    assert any("(#2526)" in t for t in texts)
