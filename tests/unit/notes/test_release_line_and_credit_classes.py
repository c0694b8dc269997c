"""Claims the grader checks against commits in hand (no git): the classes found on the blind17 sets of
2026-12-07 (libuv's plain-text `ChangeLog`, whose release lines date a named version; fmt's "Thanks @a, @b and
@c" after an item naming several pull requests, some of whose authors' accounts git never states, and one of
whose numbers no commit of the range carries)."""

from __future__ import annotations

from signoff.notes.grade import units_of
from signoff.notes.knowledge import Knowledge
from signoff.notes.pulls import item_words, shared_words, words

from .test_knowledge_classes import _commit, _dated, _unsupported

LIBUV = ("2026.03.06, Version 1.52.1 (Stable), {hash}\n"
         "\n"
         "Changes since version 1.52.0:\n"
         "\n"
         "* unix: fix discard const (Rudi Heitbaum)\n")


def test_a_line_alone_dating_a_named_version_is_a_release_heading() -> None:
    # libuv 1.50.0-1.52.1 (blind17): the release line was a paragraph, its version a mention any tag supports,
    # so the planted `1.52.8` passed in all four sections
    tip = "1cfa32ff59c076ffb6ed735bbc8c18361558661f"
    section = LIBUV.format(hash=tip)
    assert units_of(section)[0] == (section.splitlines()[0], True)
    tags = [{"name": "v1.52.1", "commit": tip, "date": "2026-03-06T21:29:19+01:00"},
            {"name": "v1.52.8", "commit": "d" * 40, "date": "2026-09-01T10:00:00+00:00"}]
    fix = _dated(_commit(1, "unix: fix discard const (#5041)", author=("Rudi Heitbaum", "rudi@example.org")),
                 "2026-03-01")
    k = Knowledge("v1.52.0..v1.52.1", tip, tags, [fix, {**_dated(_commit(2, "2026.03.06, Version 1.52.1 (Stable)"),
                                                                "2026-03-06"), "hash": tip}])
    assert _unsupported(k, section, "ChangeLog") == set()
    assert _unsupported(k, section.replace("1.52.1", "1.52.8", 1), "ChangeLog") == {"1.52.8"}
    # a sentence of prose naming a version and a date is no heading, nor is a line inside a paragraph
    assert units_of("Version 1.2.3 was released on 2024-01-01 and\nfixed the build.\n") == [
        ("Version 1.2.3 was released on 2024-01-01 and fixed the build.", False)]
    assert not units_of("Some prose.\n2024-01-01, Version 1.2.3 (Stable)\n")[0][1]


ITEM = ("- Made various code improvements (https://github.com/o/fmt/pull/11, https://github.com/o/fmt/pull/12,\n"
        "  https://github.com/o/fmt/pull/13). Thanks @{a}, @{b} and @{c}.\n")


def test_a_handle_among_several_may_be_an_author_whose_account_git_does_not_state() -> None:
    # fmt 12.0.0 (blind17): "Thanks @arBmind, @tkhyn, @Mishura4, @anonymouspc and @autoantwort" over five pull
    # requests, two of them from no-reply addresses: @arBmind (Andreas Reischuck, whose account git never
    # states) was "git says ... (@autoantwort) (@mishura4)"
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Fix the module build (#11)", author=("Andreas Reischuck", "andreas@example.org")),
        _commit(2, "Use a constexpr (#12)", author=("autoantwort", "41973254+autoantwort@users.noreply.github.com")),
        _commit(3, "Drop a cast (#13)", author=("Miuna", "809642+Mishura4@users.noreply.github.com"))])
    assert _unsupported(k, ITEM.format(a="arBmind", b="autoantwort", c="Mishura4"), "ChangeLog.md") == set()
    # where git states every author's account, a handle none of them is still wrong
    stated = Knowledge("v1..v2", None, [], [
        _commit(1, "Fix the module build (#11)", author=("Andreas R", "7+arBmind@users.noreply.github.com")),
        _commit(2, "Use a constexpr (#12)", author=("autoantwort", "41973254+autoantwort@users.noreply.github.com")),
        _commit(3, "Drop a cast (#13)", author=("Miuna", "809642+Mishura4@users.noreply.github.com"))])
    assert _unsupported(stated, ITEM.format(a="arBmind", b="autoantwort", c="Mishura4"), "ChangeLog.md") == set()
    assert _unsupported(stated, ITEM.format(a="someone", b="autoantwort", c="Mishura4"), "ChangeLog.md") == {
        "@someone"}


def test_a_handle_among_several_may_be_for_the_change_git_does_not_number() -> None:
    # fmt 12.0.0 (blind17): "(#4445, #4448, #4473, #4522). Thanks @localspook, @tchaikov and @way4sahil": no
    # commit of the range names #4473, and Sahil Sinha's "Add double and float support to scan test" names no
    # number; @way4sahil, tied by git to that commit, was "git says Kefu Chai, Victor Chernyakin"
    people = [("Victor Chernyakin", "victor@example.org"), ("Kefu Chai", "kefu@example.org")]
    commits = [_commit(1, "Remove some redundant consts (#11)", author=people[0]),
               _commit(2, "Fix some typos in comments (#12)", author=people[1]),
               _commit(4, "Add double and float support to scan test", author=("Sahil Sinha", "sahil@example.org"))]
    item = ITEM.format(a="localspook", b="tchaikov", c="way4sahil")
    assert _unsupported(Knowledge("v1..v2", None, [], commits), item, "ChangeLog.md") == set()
    # with every number carried, a handle git ties to another change of the range is still wrong
    numbered = [*commits, _commit(3, "Drop a cast (#13)", author=people[0])]
    assert _unsupported(Knowledge("v1..v2", None, [], numbered), item, "ChangeLog.md") == {"@way4sahil"}


def test_a_commit_cutting_a_pre_release_did_not_prepare_the_final_release() -> None:
    # prometheus/client_golang 1.22.0 (blind17's bench): `## 1.22.0 / 2025-04-07`, "Cut 1.22.0 (#1793)" and the tag
    # on 04-08; "Cut 1.22.0-rc.0 (#1768)" of 03-07 was read as the day 1.22.0 was prepared, which dropped the day
    # before the tag ("git says 2025-03-06 or 2025-03-07 or 2025-03-08 or 2025-04-08")
    tag = [{"name": "v1.22.0", "commit": "c" * 40, "date": "2025-04-08T10:06:46+02:00"}]
    commits = [_dated(_commit(1, "Cut 1.22.0-rc.0 (#1768)"), "2025-03-07"), _dated(_commit(2, "Fix a race (#1770)"),
                                                                                   "2025-03-10"),
               _dated(_commit(3, "Cut 1.22.0 (#1793)"), "2025-04-08")]
    k = Knowledge("v1.21.1..v1.22.0", "c" * 40, tag, commits)
    assert _unsupported(k, "## 1.22.0 / 2025-04-07\n\n* [BUGFIX] Fix a race. #1770\n", "CHANGELOG.md") == set()
    for day in ("2025-03-07", "2025-04-10"):  # the pre-release's day, and a date moved three days
        assert _unsupported(k, f"## 1.22.0 / {day}\n\n* [BUGFIX] Fix a race. #1770\n", "CHANGELOG.md") == {day}


def test_an_item_naming_two_issues_is_tied_to_both_by_the_words_it_shares_with_one() -> None:
    # kotlinx.coroutines 1.11.0 (blind17b): "Improved the published jar files (#3842, #4599)": the commit fixing
    # #3842 names an Automatic-Module-Name (its diff holds `jar` alone of the item's three words), the one
    # closing #4599 fills "Jar's manifests"; #3842 was "git says #3842 is 'Specify Automatic-Module-Name ...'"
    k = Knowledge("1.10.2..1.11.0", None, [], [
        _commit(1, "Specify Automatic-Module-Name for kotlinx-coroutines-core (#4320)", "Fixes #3842"),
        _commit(2, "Fill Implementation-* attributes in Jar's manifests (#4649)", "Closes #4599")])
    k.diff_of = lambda commit: {"jar", "manifest", "attribut"}
    item = "* Improved the published jar files (#3842, #4599).\n"
    assert _unsupported(k, item, "CHANGES.md") == set()
    # an issue credited alone with a change none of its commits' words or diff holds is still flagged
    assert _unsupported(k, "* Improved the published jar files (#3842).\n", "CHANGES.md") == {"#3842"}


def test_an_item_crediting_who_made_the_pull_request_it_names_is_about_that_one() -> None:
    # fmt 12.2.0 (blind17): "Optimized formatting into back-insert iterators ... (#4679). Thanks @user202729.":
    # its words restate "std.h: Allow formatting std::unexpected type. (#4675)" (std, formatting, type), so #4679
    # was "git says #4675"; user202729 made "Speed up iterator_buffer (#4679)"
    k = Knowledge("12.1.0..12.2.0", None, [], [
        _commit(1, "std.h: Allow formatting std::unexpected type. (#4675)",
                author=("Steen", "43650869+17steen@users.noreply.github.com")),
        _commit(2, "Speed up iterator_buffer (#4679)",
                author=("user202729", "25191436+user202729@users.noreply.github.com"))])
    item = ("- Optimized formatting into back-insert iterators by using bulk container append/insert methods (e.g. on\n"
            "  `std::vector<char>` and custom string types) (https://github.com/o/fmt/pull/{n}). Thanks @{who}.\n")
    assert _unsupported(k, item.format(n=4679, who="user202729"), "ChangeLog.md") == set()
    # the number alone, or credited to who made the restated commit, is still contradicted by that commit
    assert _unsupported(k, item.format(n=4679, who="17steen").replace(" Thanks @17steen.", ""), "ChangeLog.md") == {
        "/pull/4679"}
    assert _unsupported(k, item.format(n=4679, who="17steen"), "ChangeLog.md") == {"/pull/4679"}


def test_a_number_the_same_change_carries_on_another_branch_is_supported_with_the_repository() -> None:
    # composer 2.10.2 (blind17): "Security: Only follow HTTP redirects from HTTP responses (#12948)" and "Security:
    # Prevent phar metadata unserialization on unsafe PHP versions (#12946)": the range holds the main line's
    # pull requests #12947 and #12945, the 2.2 branch the same changes as #12948 and #12946, made the same minute
    k = Knowledge("2.10.1..2.10.2", None, [], [
        _commit(1, "Only follow http(s) redirects in HTTP transports (#12947)"),
        _commit(2, "Prevent phar metadata unserialization on unsafe php versions (#12945)")])
    items = ("- Security: Only follow HTTP redirects from HTTP responses (#{a})\n"
             "- Security: Prevent phar metadata unserialization on unsafe PHP versions (#{b})\n")
    assert _unsupported(k, items.format(a=12948, b=12946), "CHANGELOG.md") == {"#12948", "#12946"}  # no repository
    branches = {"12948": ["Only follow http(s) redirects in HTTP transports (#12948)"],
                "12946": ["Prevent phar metadata unserialization on unsafe php versions (#12946)"],
                "12949": ["Bump actions/checkout from 6.0.3 to 7.0.0 (#12949)"]}
    k.subjects_elsewhere = lambda number: branches.get(number, [])
    assert _unsupported(k, items.format(a=12948, b=12946), "CHANGELOG.md") == set()
    # a number whose pull request elsewhere is another change, or that no subject names, is still wrong
    assert _unsupported(k, items.format(a=12949, b=12944), "CHANGELOG.md") == {"#12949", "#12944"}


def test_a_word_ending_in_y_meets_its_other_forms() -> None:
    # composer 2.10.2 (blind17): "Fixed security advisory blocking causing issues with xdebug enabled (#12935)" for
    # "Avoid deeply nested multi constraints when matching security advisories (#12935)": `advisory` met nothing
    # (stemmed `advisori` in the title), and `security`, in many commits of the range, alone tied nothing
    assert len(shared_words(item_words("security advisory dependency"), words("security advisories dependencies"))) == 3
    assert sorted(shared_words({"advisory", "apply"}, {"advisori", "appli"})) == ["advisory", "apply"]
    assert shared_words({"copy"}, {"cop", "cope"}) == []


def test_an_item_naming_an_issue_and_the_pull_request_closing_it_names_the_pair_git_links() -> None:
    # fmt 12.1.0 (blind17): "Fixed a dynamic linking issue with clang-cl (.../issues/4576, .../pull/4584)" for "Move
    # FMT_API from ostream class to members (#4584)", whose message says "Fixes .../issues/4576": the symptom and
    # the cure share no word, so both numbers were "git says #4584 is 'Move FMT_API ...'"
    k = Knowledge("12.0.0..12.1.0", None, [], [
        _commit(1, "Move FMT_API from ostream class to members (#4584)", "Fixes https://github.com/o/fmt/issues/4576"),
        _commit(2, "Speed up the integer writer (#4590)")])
    k.diff_of = lambda commit: {"fmt_api", "fmt", "api", "ostream", "class", "member", "buffer"}
    item = "- Fixed a dynamic linking issue with clang-cl (https://github.com/o/fmt/issues/{i}, https://github.com/o/fmt/pull/{n}).\n"
    assert _unsupported(k, item.format(i=4576, n=4584), "ChangeLog.md") == set()
    # the pull request alone, or with an issue it does not close, is still judged by its words
    assert _unsupported(k, "- Fixed a dynamic linking issue with clang-cl (https://github.com/o/fmt/pull/4584).\n",
                        "ChangeLog.md") == {"/pull/4584"}
    assert "/pull/4584" in _unsupported(k, item.format(i=4577, n=4584), "ChangeLog.md")
