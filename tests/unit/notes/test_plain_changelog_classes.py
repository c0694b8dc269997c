"""Claims the grader checks against commits in hand (no git): the classes found on the blind15 sets of
2026-12-07 (blind15: jackson-databind's plain-text release notes, a `2.18.2 (27-Nov-2024)` heading over items
opening `#N:` at the margin, credits to who reported the issue, Java annotations listed in prose, commits that
only write the release notes, psycopg's `:ticket:` role; blind15b: a release prepared in a pull request of its
own; blind15c: compare links from another branch's release, pushed commits labelled with an issue, merges of the
main line; blind15d: backports, words in angle brackets)."""

from __future__ import annotations

from signoff.notes.grade import plain_text, units_of
from signoff.notes.knowledge import Knowledge
from signoff.notes.meaning import read_claims
from signoff.notes.pulls import diff_words

from .test_knowledge_classes import _commit, _dated, _hash, _unsupported

NOTES = "release-notes/VERSION-2.x"
SECTION = ("2.18.2 (27-Nov-2024)\n"
           "\n"
           "#4733: Wrong serialization of Type Ids for certain types of Enum values\n"
           " (reported by @nlisker)\n"
           "#4783 Possibly wrong behavior of @JsonMerge\n"
           " (reported by @nlisker)\n"
           " (fix by Joo-Hyuk K)\n")


def test_a_plain_text_section_has_a_heading_and_items_numbered_at_the_margin() -> None:
    # jackson-databind 2.18.1-2.18.3 (blind15): no list markers and no blank lines, so the whole section was
    # one paragraph: the heading's version and date were mentions (the planted `2.18.10` passed), and every
    # credit and number was read with every item's commits
    assert units_of(SECTION) == [
        ("2.18.2 (27-Nov-2024)", True),
        ("#4733: Wrong serialization of Type Ids for certain types of Enum values (reported by @nlisker)", False),
        ("#4783 Possibly wrong behavior of @JsonMerge (reported by @nlisker) (fix by Joo-Hyuk K)", False)]
    # a wrapped line of prose opening with a number in lower case continues its paragraph
    assert len(units_of("Fixed in the branch that closed\n#4733 and #4783 together.\n")) == 1
    tag = [{"name": "jackson-databind-2.18.2", "commit": "c" * 40, "date": "2024-11-27T19:00:00-08:00"}]
    k = Knowledge("jackson-databind-2.18.1..jackson-databind-2.18.2", "c" * 40, tag, [
        _dated(_commit(1, "Fix #4733: handle Enum type ids (#4736)", paths=("src/main/java/Ser.java",)), "2024-11-20")])
    assert _unsupported(k, SECTION, NOTES) == set()
    assert _unsupported(k, SECTION.replace("2.18.2", "2.18.9"), NOTES) == {"2.18.9"}
    assert _unsupported(k, SECTION.replace("27-Nov-2024", "30-Nov-2024"), NOTES) == {"30-Nov-2024"}


def test_a_day_month_and_year_joined_by_hyphens_is_a_date() -> None:
    assert [(c.kind, c.value) for c in read_claims("2.18.3 (28-Feb-2025)", release=True)] == [
        ("version", "2.18.3"), ("date", "2025-02-28")]
    assert "date" not in {c.kind for c in read_claims("a code like 28-FOO-2025 or x-28-Feb-2025")}


def test_who_reported_an_issue_is_named_but_git_cannot_say_who_opens_issues() -> None:
    # jackson-databind 2.18.1 (blind15): "(reported by @ragnhov)" was checked as the author of the fix
    claims = read_claims("#4741: Empty values are not included (reported by @ragnhov) (fix by @wrongwrong)")
    assert [(c.token, c.kind, c.checkable) for c in claims if c.kind == "author"] == [
        ("@ragnhov", "author", False), ("@wrongwrong", "author", True)]
    assert not read_claims("#3737 issue by @mheiges, @x")[1].checkable
    assert not read_claims("#3737 issue by @mheiges, @x")[2].checkable  # listed with the reporter
    kim = ("Kim, Joo Hyuk", "5285133+JooHyukKim@users.noreply.github.com")
    k = Knowledge("v1..v2", None, [], [_commit(1, "Fix #4741: include empty values (#4750)", author=kim)])
    item = "#4741: When `Include.NON_DEFAULT` is used on POJO, empty values are not included\n (reported by @{})\n"
    assert _unsupported(k, item.format("ragnhov"), NOTES) == set()
    assert _unsupported(k, item.replace("reported", "fix").format("ragnhov"), NOTES) == {"@ragnhov"}


def test_a_mention_listed_after_another_is_what_that_one_is() -> None:
    # jackson-databind 2.18.3 (blind15): "with @JsonCreator and @ConstructorProperties" read the second Java
    # annotation as a credit ("and @x"), checked against the author of the fix
    text = "#4908: Deserialization behavior change with @JsonCreator and @ConstructorProperties between 2.17 and 2.18"
    assert [c for c in read_claims(text) if c.kind == "author"] == []
    assert [c.value for c in read_claims("Fixed by @ann and @bo, @cy & @dee.") if c.kind == "author"] == [
        "ann", "bo", "cy", "dee"]
    assert [c.value for c in read_claims("Thanks to Ann Lee and @bo.") if c.kind == "author"] == ["bo"]


def test_commits_only_writing_the_release_notes_and_saying_nothing_else_say_nothing_of_the_change() -> None:
    # jackson-databind 2.18.2 (blind15), rspec-core 3.12.3 (blind15c): the only commits naming #4787 and #3045
    # are "Update release notes wrt #4787 fix" (`release-notes/VERSION-2.x`) and "Changelog for #3045"; from the
    # snapshot alone their words were taken for the change's, so the items were called invented changes
    item = "#4787: Wrong `String.format()` in `StdDelegatingDeserializer` hides actual error in the log\n"
    for subject, path in (("Update release notes wrt #4787 fix", NOTES), ("Changelog for #4787", "Changelog.md")):
        assert _unsupported(Knowledge("v1..v2", None, [], [_commit(2, subject, paths=(path,))]), item, NOTES) == set()
    # one saying what the change was tells it (lombok's "[changelog][#4019] Fixed: JDK26 is now supported.")
    told = _commit(2, "[changelog][#4787] Fixed: sorting the keys of maps is now supported.", paths=(NOTES,))
    assert _unsupported(Knowledge("v1..v2", None, [], [told]), item, NOTES) == {"#4787"}
    # and so does a commit changing code that carries the number
    code = _commit(1, "Add a switch sorting the keys of maps #4787", paths=("src/main/java/Fmt.java",))
    k = Knowledge("v1..v2", None, [], [_commit(2, "Update release notes wrt #4787 fix", paths=(NOTES,)), code])
    k.diff_of = lambda commit: diff_words("+    boolean sortKeys = options.isEnabled(SORT_PROPERTIES);\n")
    assert _unsupported(k, item, NOTES) == {"#4787"}


def test_a_role_a_project_defines_for_its_tickets_cites_an_issue() -> None:
    # psycopg 3.2.13 (blind15): every item cites `:ticket:`#N``, a role of its own Sphinx configuration, which
    # was read as no claim at all: a planted `:ticket:`#1211`` passed for the `#1210` git carries
    assert [(c.kind, c.value, c.role) for c in read_claims("lock (:ticket:`#1210`).")] == [("ref", "1210", "issue")]
    assert [(c.kind, c.value, c.role) for c in read_claims("see :gh-pr:`#77` and :sql:`DISCARD ALL`")] == [
        ("ref", "77", "any")]
    k = Knowledge("3.2.12..3.2.13", None, [], [
        _commit(2, "Merge branch 'copy-lock' into maint-3.2", parents=(9, 1)),
        _commit(1, "fix; keep the lock for the entire duration of copy", "Avoid errors in concurrent operations.\n\n"
                "Close #1210", paths=("psycopg/psycopg/cursor.py",))])
    item = ("- Fix `Cursor.copy()` to keep the connection lock for the entire duration of copy\n"
            "  (:ticket:`#{}`).\n")
    assert _unsupported(k, item.format(1210), "docs/news.rst") == set()
    assert _unsupported(k, item.format(1211), "docs/news.rst") == {":ticket:`#1211`"}


def test_a_release_prepared_in_a_pull_request_of_its_own_is_dated_about_when_it_was_opened() -> None:
    # puma 8.0.0 (blind15b): `## 8.0.0 / 2026-03-27`, written in "Release v8.0.0 (#3914)", squashed and tagged on
    # 2026-04-09; #3913 was written on 2026-03-27 and #3915 on 2026-04-01
    tag = [{"name": "v8.0.0", "commit": "c" * 40, "date": "2026-04-09T08:45:48+00:00"}]
    commits = [_dated(_commit(3, "Release v8.0.0 (#3914)", paths=("History.md",)), "2026-04-09"),
               _dated(_commit(2, "Bump actions/checkout from 4 to 6 (#3915)"), "2026-04-01"),
               _dated(_commit(1, "Update SECURITY.md (#3913)"), "2026-03-27")]
    k = Knowledge("v7.2.0..v8.0.0", "c" * 40, tag, commits)
    for day in ("2026-03-27", "2026-04-01", "2026-04-08", "2026-04-09", "2026-04-10"):
        assert _unsupported(k, f"## 8.0.0 / {day}\n", "History.md") == set()
    for day in ("2026-03-30", "2026-04-04", "2026-04-12"):  # a date moved three days
        assert _unsupported(k, f"## 8.0.0 / {day}\n", "History.md") == {day}
    # a release commit of no pull request of its own says nothing of its neighbours' days
    pushed = Knowledge("v7.2.0..v8.0.0", "c" * 40, tag, [_dated(_commit(3, "Release v8.0.0", paths=("History.md",)),
                                                                "2026-04-09"), *commits[1:]])
    assert _unsupported(pushed, "## 8.0.0 / 2026-03-27\n", "History.md") == {"2026-03-27"}


def test_a_version_written_in_full_names_the_release_its_tag_names_short() -> None:
    # `8.0.0` of "Prepare 8.0.0" is the version of the tag `v8.0.0`, which reads as 8.0: the commit names it
    tag = [{"name": "v8.0.0", "commit": "c" * 40, "date": "2026-04-09T10:00:00+00:00"}]
    k = Knowledge("v7.2.0..v8.0.0", "c" * 40, tag, [_dated(_commit(1, "Prepare 8.0.0", paths=("History.md",)),
                                                             "2026-04-05")])
    assert _unsupported(k, "## 8.0.0 / 2026-04-05\n", "History.md") == set()
    assert _unsupported(k, "## 8.0.0 / 2026-04-02\n", "History.md") == {"2026-04-02"}


def test_a_compare_link_may_start_at_a_release_made_on_another_branch() -> None:
    # rspec-core 3.13.0 (blind15c): "[Full Changelog](.../compare/v3.12.3...v3.13.0)", 3.12.3 released from
    # 3-12-maintenance, so no ancestor of v3.13.0, whose range starts at v3.8.0
    tags = [{"name": "v3.13.0", "commit": "c" * 40, "date": "2024-02-04T10:00:00+00:00"},
            {"name": "v3.12.3", "commit": "d" * 40, "date": "2024-02-04T09:00:00+00:00"},
            {"name": "v3.8.0", "commit": "e" * 40, "date": "2018-08-04T10:00:00+00:00"}]
    k = Knowledge("v3.8.0..v3.13.0", "c" * 40, tags, [_commit(1, "Support the --backtrace flag (#2980)")])
    link = "[Full Changelog](http://github.com/rspec/rspec-core/compare/{}...{})\n"
    assert _unsupported(k, link.format("v3.12.3", "v3.13.0"), "Changelog.md") == set()
    assert _unsupported(k, link.format("v3.12.9", "v3.13.0"), "Changelog.md") == {"v3.12.9"}  # no such release
    assert _unsupported(k, link.format("v3.12.3", "v3.12.3"), "Changelog.md") == {"v3.12.3"}  # not this release


def test_a_commit_labelled_with_one_number_and_no_pull_request_is_that_issues() -> None:
    # lombok 1.18.44 (blind15c): pushed "[FEATURE] Support Jackson3 in @Jacksonized #3950"; the planted `#3951` for
    # `#3950` passed, as an issue may be fixed by a pull request of another number
    k = Knowledge("v1..v2", None, [], [_commit(1, "[FEATURE] Support Jackson3 in @Jacksonized #3950")])
    item = ("* FEATURE: `@Jacksonized` now supports both Jackson2 and Jackson3 "
            "[#{0}](https://github.com/projectlombok/lombok/issues/{0}).\n")
    assert _unsupported(k, item.format(3950), "doc/changelog.markdown") == set()
    assert _unsupported(k, item.format(3951), "doc/changelog.markdown") == {"#3951", "/issues/3951"}
    # a pull request's own commit says nothing of which issue it fixed
    pr = Knowledge("v1..v2", None, [], [_commit(1, "[FEATURE] Support Jackson3 in @Jacksonized (#3950)")])
    assert _unsupported(pr, item.format(3949), "doc/changelog.markdown") == set()


def test_a_merge_of_the_main_line_into_an_issues_branch_brings_no_words_of_the_issue() -> None:
    # lombok 1.18.44 (blind15c): "Merge branch 'master' into cachescrubber-gh-3950" carries #3950 by its branch's
    # name and brought master's commits ("Remove tests for deprecated `@Logger`"), whose words excused an
    # invented "Deprecate the `legacy_mode` argument ..." credited to #3950
    k = Knowledge("v1..v2", _hash(4), [], [
        _commit(4, "[version] pre-release version bump", parents=(3,)),
        _commit(3, "Merge branch 'master' into cachescrubber-gh-3950", parents=(1, 2)),
        _commit(2, "[test] Remove tests for deprecated `@Logger(access = MODULE)`, deprecated in favour of strict",
                parents=(9,)),
        _commit(1, "[FEATURE] Support Jackson3 in @Jacksonized #3950", parents=(9,),
                paths=("src/core/lombok/jackson/Jacksonized.java",))])
    k.diff_of = lambda commit: diff_words("+    JACKSON3(\"tools.jackson.databind\"),\n")
    invented = ("* Deprecate the `legacy_mode` argument of `connect()` in favour of `strict` "
                "[#3950](https://github.com/projectlombok/lombok/issues/3950).\n")
    assert _unsupported(k, invented, "doc/changelog.markdown") == {"#3950", "/issues/3950"}


def test_who_backported_a_change_need_not_have_made_it() -> None:
    # jackson-core 2.17.3 (blind15d): "#1331: Update to FastDoubleParser v1.0.1 ... (contributed by @pjfanning)"; the
    # range holds the maintainer's "Backport #1331 library upgrade", and PJ Fanning's own commits elsewhere
    tatu = ("Tatu Saloranta", "tatu.saloranta@iki.fi")
    pj = ("PJ Fanning", "pjfanning@users.noreply.github.com")
    loop = _commit(1, "Fix infinite loop when reading large strings (#1352)", author=pj)
    k = Knowledge("v1..v2", None, [], [_commit(2, "Backport #1331 FastDoubleParser upgrade", author=tatu), loop])
    text = ("#1331: Update to FastDoubleParser v1.0.1 to fix `BigDecimal` decoding\n (contributed by @pjfanning)\n"
            "#1352: Fix infinite loop when reading large strings\n (contributed by @pjfanning)\n")
    assert _unsupported(k, text, NOTES) == set()
    # the commit that made the change is still checked against the credit
    made = Knowledge("v1..v2", None, [], [_commit(2, "Update FastDoubleParser to 1.0.1 #1331", author=tatu), loop])
    assert _unsupported(made, text, NOTES) == {"@pjfanning"}
    # and so is a backport with a pull request of its own, its author's (aiohttp's "[PR #N/hash backport][3.14]")
    ported = _commit(2, "[PR #1330/ab12cd34 backport][2.17] Backport #1331 FastDoubleParser upgrade (#1333)",
                     author=tatu)
    own = Knowledge("v1..v2", None, [], [ported, loop])
    assert _unsupported(own, text, NOTES) == {"@pjfanning"}


def test_words_in_angle_brackets_are_words_not_html_tags() -> None:
    # factory_bot 6.5.5 (blind15d): "conflict between '<attribute>' and '<attribute_id>`" lost both words as if
    # they were HTML tags, so the item no longer restated "BugFix: '<attribute>' and '<attribute>_id' conflict.
    # (#1709)" and the planted "issue #1710" passed
    k = Knowledge("v1..v2", None, [], [_commit(1, "BugFix: '<attribute>' and '<attribute>_id' conflict. (#1709)")])
    item = "* Fix: Addresses issue #{} with resolution of conflict between '<attribute>' and '<attribute_id>`\n"
    assert _unsupported(k, item.format(1709), "NEWS.md") == set()
    assert _unsupported(k, item.format(1710), "NEWS.md") == {"issue #1710"}
    assert plain_text("Fixed <sup>1</sup> and <a href='x'>the link</a>, <br/> kept `<T>`") == \
        "Fixed 1 and the link, kept <T>"
