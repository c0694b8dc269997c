"""Claims the grader checks against commits in hand (no git): the classes found on the blind22 set of
2026-12-07 (NLog's items opening with the component they change, grape's pull requests that carry other
pull requests' changelog lines, simplejson's long pull request descriptions)."""

from __future__ import annotations

from signoff.notes.knowledge import Knowledge
from signoff.notes.pulls import diff_words

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
