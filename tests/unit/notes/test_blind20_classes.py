"""Claims the grader checks against commits in hand (no git): the classes found on the blind20 set of
2026-12-07 (pytest's own release headings, echo's maintainer under two names, xarray's dependency prose and
contributor counts)."""

from __future__ import annotations

from signoff.notes.knowledge import Knowledge
from signoff.notes.meaning import read_claims

from .test_knowledge_classes import _commit, _hash, _unsupported


def test_a_release_heading_of_a_project_the_dependency_list_names_states_the_release_version() -> None:
    # pytest 9.1.1 (blind20): "pytest 9.1.8 (2026-06-19)", the heading's version bumped, was "not checkable" as a
    # dependency's version (`pytest` is among the names whose versions are dependencies'); all six missed
    tag = {"name": "9.1.1", "commit": _hash(1), "date": "2026-06-19T10:00:00+00:00"}
    k = Knowledge("9.1.0..9.1.1", _hash(1), [tag], [_commit(1, "Fix conftest loading regression (#14610)")])
    section = ("pytest {v} (2026-06-19)\n=========================\n\nBug fixes\n---------\n\n"
               "- Fixed a regression in conftest loading.\n")
    assert _unsupported(k, section.format(v="9.1.1"), "doc/en/changelog.rst") == set()
    assert _unsupported(k, section.format(v="9.1.8"), "doc/en/changelog.rst") == {"9.1.8"}
    # a dependency named in an item, or a heading naming one with no date, is still the dependency's
    assert [c.checkable for c in read_claims("- Support pytest 9.1.8 (#12).") if c.kind != "ref"] == [False]
    assert [c.checkable for c in read_claims("Python 3.15 support", release=True)] == [False]


def _echo() -> Knowledge:
    me = ("Martti T.", "martti@example.org")
    return Knowledge("v5.0.4..v5.1.0", None, [], [
        _commit(1, "Merge pull request #2933 from aldas/LegacyIPExtractor", author=me, parents=(3, 2)),
        _commit(2, "Remove legacy IP extraction logic from context.RealIP method",
                author=("toim", "martti@example.org"), committer=("toim", "martti@example.org"), parents=(3,)),
        _commit(3, "Add NewDefaultFS function to help create filesystem that allows absolute paths (#2931)",
                author=me, parents=(4,)),
        _commit(4, "fix proxy panic when balancer has no target", author=("Jihun Kim", "shblue21@example.org"),
                committer=me)])


def test_a_handle_tied_to_one_name_of_an_email_is_tied_to_its_other_names() -> None:
    # echo 5.1.0 (blind20, bench): "Add NewDefaultFS function ... by @aldas in .../pull/2931" was "git says Martti
    # T.": "Merge pull request #2933 from aldas/..." ties @aldas to `toim`, who writes from Martti T.'s email
    section = ("* Remove legacy IP extraction logic from context.RealIP method by @aldas in "
               "https://github.com/labstack/echo/pull/2933\n"
               "* Add NewDefaultFS function to help create filesystem that allows absolute paths by {who} in "
               "https://github.com/labstack/echo/pull/2931\n")
    assert _unsupported(_echo(), section.format(who="@aldas")) == set()
    assert _unsupported(_echo(), section.format(who="@shblue21")) == {"@shblue21"}


def test_a_sentence_opening_with_a_version_followed_by_prose_speaks_of_the_version_named_before() -> None:
    # xarray 2026.01.0 (blind20): "The minimum supported version of ``h5netcdf`` is now 1.4. Version 1.4.0 brings
    # improved alignment ..." was "the range's tags are 2025.12, 2026.01": read as a line stating the release
    k = Knowledge("v2025.12.0..v2026.01.0", None, [], [_commit(1, "Bump minimum h5netcdf to 1.4 (#11068)")])
    item = ("- The minimum supported version of ``h5netcdf`` is now 1.4. Version 1.4.0\n"
            "  brings improved alignment between h5netcdf and libnetcdf4 in the storage of\n"
            "  complex numbers (:pull:`11068`).\n")
    assert _unsupported(k, item, "doc/whats-new.rst") == set()
    # a line of its own stating a version is still the release's
    assert [c.role for c in read_claims("Version 2026.01.7") if c.kind == "version"] == ["release"]
    assert [c.role for c in read_claims("Version 2026.01.7 (released 2026-01-28)") if c.kind == "version"] == \
        ["release"]


def test_contributors_counted_with_their_co_authors() -> None:
    # xarray 2025.12.0 (blind20): "Thanks to the 16 contributors to this release: Benoit Bovy, ..." was "git says
    # one of [13, 15]": xarray counts the authors and co-authors of the range's commits, bots and agents left out
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Fix pydap backend (#10901)", "Co-authored-by: Benoit Bovy <bb@example.org>\n"
                "Co-authored-by: Claude <noreply@anthropic.com>\n"
                "Co-authored-by: pre-commit-ci[bot] <66853113+pre-commit-ci[bot]@users.noreply.github.com>",
                author=("Ann Lee", "ann@example.org")),
        _commit(2, "Speed up indexing (#10902)", "Co-authored-by: Ann Lee <ann@example.org>",
                author=("Bo Chen", "bo@example.org")),
        _commit(3, "Bump actions (#10903)", author=("dependabot[bot]", "49699333+dependabot[bot]@example.org")),
        _commit(4, "[pre-commit.ci] auto fixes", author=("pre-commit-ci[bot]", "pre-commit-ci[bot]@example.org"))])
    line = "Thanks to the {n} contributors to this release:\nAnn Lee, Benoit Bovy and Bo Chen\n"
    assert _unsupported(k, line.format(n=3)) == set()
    assert _unsupported(k, line.format(n=5)) == {"5 contributors"}


def test_a_number_a_fragment_of_the_range_carries_names_the_commit_that_wrote_it() -> None:
    # pytest 9.1.0 (blind20): "`#14456 <.../issues/14456>`_: Fixed :func:`pytest.approx` not recognizing types with
    # ``__array_interface__`` ..." was "git says #14373": "Type `pytest.approx` (#14373)" shares more of its words
    # than "approx: fix buggy `__array_interface__` check", which wrote `changelog/14456.bugfix.rst`
    k = Knowledge("8.3.0..9.1.0", None, [], [
        _commit(1, "Type `pytest.approx` (#14373)",
                paths=("changelog/14373.improvement.rst", "src/_pytest/python_api.py")),
        _commit(2, "approx: fix buggy `__array_interface__` check",
                paths=("changelog/14456.bugfix.rst", "src/_pytest/python_api.py"))])
    item = ("- `#{n} <https://github.com/pytest-dev/pytest/issues/{n}>`_: Fixed :func:`pytest.approx` not recognizing "
            "types with ``__array_interface__`` as numpy-like arrays.\n")
    assert _unsupported(k, item.format(n=14456), "doc/en/changelog.rst") == set()
    assert _unsupported(k, item.format(n=14457), "doc/en/changelog.rst") == {"#14457", "/issues/14457"}


def test_a_backport_pull_request_naming_the_one_it_carries_numbers_both() -> None:
    # jekyll 4.3.4 and 3.10.0 (blind20): the planted "Backport #9663 for v4.3.x: ..." (for #9662) and "Backport
    # add-csv-dependency from #9523 ..." (for #9522) were supported: a backport was taken for one whose original's
    # number is lost, though its own pull request's subject names it
    k = Knowledge("v4.3.3..v4.3.4", None, [], [
        _commit(1, "Backport #9662 for v4.3.x: Relax version constraint on `wdm` in new Gemfile (#9683)",
                "This backports 3a8b282 to 4.3-stable", paths=("lib/jekyll/commands/new.rb",)),
        _commit(2, "Backport add-csv-dependency from #9522 to Jekyll 3 (#9616)", paths=("jekyll.gemspec",)),
        _commit(3, "Sync workflows with counterparts on `master` (#9681)", paths=(".github/workflows/ci.yml",))])
    first = "  * Backport #{n} for v4.3.x: Relax version constraint on `wdm` in new Gemfile (#9683)\n"
    second = "  * Backport add-csv-dependency from #{n} to Jekyll 3 (#9616)\n"
    assert _unsupported(k, first.format(n=9662), "History.markdown") == set()
    assert _unsupported(k, first.format(n=9663), "History.markdown") == {"#9663"}
    assert _unsupported(k, second.format(n=9522), "History.markdown") == set()
    assert _unsupported(k, second.format(n=9523), "History.markdown") == {"#9523"}


def _landed(numbered: bool) -> Knowledge:
    """A maintainer committing other people's commits himself: numberless (echo's rebases) or each with its
    pull request's number (a maintainer squashing locally)."""
    me = ("Martti T.", "martti@example.org")
    others = [("Jihun Kim", "jk@example.org"), ("Tamish Mhatre", "tm@example.org"), ("Milo", "milo@example.org")]
    return Knowledge("v5.3.0..v5.3.1", None, [], [
        _commit(1, "Implicitly registered group routes should be allowed overwritten in default routes. "
                "fix issue #3047", author=("toim", "martti@example.org"), committer=me, parents=(2,)),
        _commit(2, "feat: add support for HTTP QUERY method (#3036)", author=("Ethan Lee", "el@example.org"),
                committer=me, parents=(3,)),
        *[_commit(3 + i, f"docs: {what}" + (f" (#{3040 + i})" if numbered else ""), author=who, committer=me,
                  parents=(4 + i,))
          for i, (who, what) in enumerate(zip(others, ["fix proxy panic when balancer has no target",
                                                       "add llms.txt for assisted development",
                                                       "update badge URLs to HTTPS"], strict=True))],
        _commit(6, "perf(json): pooled-buffer JSON deserialize (#3023)", author=("Vishal Rana", "vr@example.org"),
                parents=(7,))])


def test_a_pull_request_the_maintainer_rebased_himself_is_numbered_by_no_commit() -> None:
    # echo 5.3.0 and 5.3.1 (blind20): the maintainer commits contributors' pull requests himself, without their
    # numbers; "... by @aldas in .../pull/3049" was "git says #3047" (the issue its commit fixes), "feat: add
    # support for HTTP QUERY method by @thdxg in .../pull/3038" was "git says #3036" (its author's own number)
    first = ("* fix(group): Implicitly registered group routes should be allowed overwritten in default routes "
             "by @aldas in https://github.com/labstack/echo/pull/{n}\n")
    second = "* feat: add support for HTTP QUERY method by @thdxg in https://github.com/labstack/echo/pull/{n}\n"
    third = "* perf(json): pooled-buffer JSON deserialize by @vishr in https://github.com/labstack/echo/pull/{n}\n"
    k = _landed(numbered=False)
    assert _unsupported(k, first.format(n=3049)) == set()
    assert _unsupported(k, second.format(n=3038)) == set()
    # a pull request opened before the issue its commit fixes, or before its author's own, cannot be it; a
    # commit GitHub squashed keeps its number
    assert _unsupported(k, first.format(n=3046)) == {"/pull/3046"}
    assert _unsupported(k, second.format(n=3035)) == {"/pull/3035"}
    assert _unsupported(k, third.format(n=3023)) == set()
    assert _unsupported(k, third.format(n=3024)) == {"/pull/3024"}
    # a maintainer who squashes locally keeps each pull request's number: no habit, the number is the commit's
    assert _unsupported(_landed(numbered=True), second.format(n=3038)) == {"/pull/3038"}


def test_an_issue_met_only_by_words_of_any_code_is_credited_with_something_else() -> None:
    # spotless 8.10.0 (blind20): the planted "Add a `--dry-run` flag that prints the planned changes without writing
    # them #2945" for "Add shortenFullyQualifiedTypes step (fixes #2945)" was supported: the body says "designed to run
    # before importOrder()", and the diff, a Java formatter step, says `run` and `write`; words of any code
    from signoff.notes.pulls import diff_words
    step = _commit(1, "Add shortenFullyQualifiedTypes step (fixes #2945)",
                   "Adds a new Java formatter step, designed to run before importOrder().",
                   paths=("lib/src/main/java/com/diffplug/spotless/java/ShortenFullyQualifiedTypesStep.java",))
    k = Knowledge("gradle/8.9.0..gradle/8.10.0", None, [], [step])
    k.diff_of = lambda commit: diff_words("@@ -1 +1 @@\n+  public String apply(String rawUnix) {\n"
                                          "+    CompilationUnit unit = parser.parse(rawUnix).getResult();\n"
                                          "+    run(unit); return writeImports(unit, shortenQualifiedNames(unit));\n")
    item = "- {text} ([#2945](https://github.com/diffplug/spotless/issues/2945))\n"
    invented = "Add a `--dry-run` flag that prints the planned changes without writing them"
    assert _unsupported(k, item.format(text=invented), "CHANGES.md") == {"#2945", "/issues/2945"}
    # the maintainer's item, tied by the words of its own change, stays supported
    told = "New `shortenFullyQualifiedTypes()` step for Java, which replaces qualified names and adds imports"
    assert _unsupported(k, item.format(text=told), "CHANGES.md") == set()
    # and so does an issue's symptom the diff meets by one word of its own beside words of any code (lombok
    # 1.18.42's "Javadoc parsing was broken in Netbeans and ErrorProne for JDK25 #3940", sharing `parse`)
    symptom = "Parsing of qualified names was broken in Netbeans and ErrorProne for JDK25"
    assert _unsupported(k, item.format(text=symptom), "CHANGES.md") == set()
