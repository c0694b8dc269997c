"""Claims the grader checks against commits in hand (no git): the classes found on the sets of
2026-12-06 (an issue number substituted beside the right pull request number, a `Fixes #N` commit
cited as a lower number, dates written with dots, credited users)."""

from __future__ import annotations

from typing import Any

import pytest

from signoff.notes.grade import grade_with
from signoff.notes.knowledge import Knowledge
from signoff.notes.meaning import read_claims
from signoff.notes.pulls import diff_words


def _commit(n: int, subject: str, body: str = "", author: tuple[str, str] = ("Ann Lee", "ann@example.org"),
            committer: tuple[str, str] = ("GitHub", "noreply@github.com"), paths: tuple[str, ...] = ("src/a.py",),
            parents: tuple[int, ...] = ()) -> dict[str, Any]:
    return {"hash": _hash(n), "parents": [_hash(p) for p in parents] or ["b" * 40],
            "author": {"name": author[0], "email": author[1], "date": "2025-04-01T10:00:00+00:00"},
            "committer": {"name": committer[0], "email": committer[1], "date": "2025-04-01T10:00:00+00:00"},
            "subject": subject, "body": body,
            "files": [{"path": p, "added": 1, "deleted": 0, "binary": False} for p in paths]}


def _hash(n: int) -> str:
    return f"{n:040x}".replace("0", "a", 1)


def _verdicts(k: Knowledge, item: str, heading: bool = False) -> dict[str, str]:
    claims = read_claims(item, release=heading)
    refs = {c.value for c in claims if c.kind == "ref"}
    return {c.token: k.check(c, item, refs).status for c in claims}


TAG = [{"name": "v7.37.5", "commit": "c" * 40, "date": "2025-04-03T12:00:00+00:00"}]


def test_an_issue_number_substituted_beside_the_right_pull_request_number_is_flagged() -> None:
    # axios 1.7.9: `Revert "fix(types): ... (#6218)" (#6729)` with #6218 written as #6219
    k = Knowledge("v1..v2", None, [], [_commit(1, 'Revert "fix(types): export CJS types from ESM (#6218)" (#6729)')])
    true = ('Revert "fix(types): export CJS types from ESM ([#6218](https://github.com/o/r/issues/6218))" '
            '([#6729](https://github.com/o/r/issues/6729))')
    assert set(_verdicts(k, true).values()) == {"supported"}
    wrong = _verdicts(k, true.replace("6218", "6219"))
    assert wrong["/issues/6219"] == "unsupported" and wrong["#6219"] == "unsupported"


def test_a_number_below_the_issue_the_commit_fixes_is_neither_that_issue_nor_its_pull_request() -> None:
    subject = "[Fix] `no-unknown-property`: allow shadow root attrs on `<template>`"
    k = Knowledge("v1..v2", None, [], [_commit(1, subject, "Fixes #3912")])
    item = "[`no-unknown-property`]: allow shadow root attrs on `<template>` ([#{}][] @ann)"
    assert _verdicts(k, item.format(3912))["#3912"] == "supported"
    assert _verdicts(k, item.format(3911))["#3911"] == "unsupported"
    # a higher number may be the pull request that fixed #3912, whose number a rebase merge lost
    assert _verdicts(k, item.format(3913))["#3913"] != "unsupported"


def test_a_date_written_with_dots_is_a_date() -> None:
    k = Knowledge("v7.37.4..v7.37.5", "c" * 40, TAG, [_commit(1, "Update CHANGELOG and bump version")])
    assert _verdicts(k, "[7.37.5] - 2025.04.03", heading=True) == {"7.37.5": "supported", "2025.04.03": "supported"}
    assert _verdicts(k, "[7.37.5] - 2025.04.09", heading=True)["2025.04.09"] == "unsupported"


def test_a_date_written_day_first_with_dots_is_a_date() -> None:
    # michalmuskala/jason (Elixir): `## 1.4.3 (29.06.2024)`, day.month.year
    k = Knowledge("v7.37.4..v7.37.5", "c" * 40, TAG, [_commit(1, "Release 7.37.5")])
    assert _verdicts(k, "7.37.5 (03.04.2025)", heading=True) == {"7.37.5": "supported", "03.04.2025": "supported"}
    for moved in ("06.04.2025", "04.03.2025", "03.04.2026"):  # three days on, month and day swapped, a year on
        assert _verdicts(k, f"7.37.5 ({moved})", heading=True)[moved] == "unsupported"


def test_a_credited_user_is_checked_against_who_made_the_change() -> None:
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Fix the parser on empty input (#12)", author=("Sebastián Ramírez", "tiangolo@gmail.com")),
        _commit(2, "Add a flag to the CLI (#13)", author=("Sofie V", "123+svlandeg@users.noreply.github.com")),
        _commit(3, "Update the docs (#14)", author=("Copilot", "198982749+Copilot@users.noreply.github.com"))])
    assert _verdicts(k, "Fix the parser on empty input. PR #12 by @tiangolo.")["@tiangolo"] == "supported"
    assert _verdicts(k, "Add a flag to the CLI. PR #13 by @svlandeg.")["@svlandeg"] == "supported"
    # credited to someone git ties to another change of the range
    assert _verdicts(k, "Fix the parser on empty input. PR #12 by @svlandeg.")["@svlandeg"] == "unsupported"
    # a handle git ties to nobody, and a change an agent wrote for the person credited: not checkable
    assert _verdicts(k, "Fix the parser on empty input. PR #12 by @someone-else.")["@someone-else"] == "not_checkable"
    # unless git states the author's account (a GitHub no-reply address): then another handle is wrong
    assert _verdicts(k, "Add a flag to the CLI. PR #13 by @someone-else.")["@someone-else"] == "unsupported"
    assert _verdicts(k, "Update the docs. PR #14 by @tiangolo with @Copilot.")["@tiangolo"] == "not_checkable"
    # a decorator in prose is not a credit
    assert [c.kind for c in read_claims("The @property getter now caches.")] == []


def test_a_change_credited_to_a_bots_pull_request_that_did_something_else_is_flagged() -> None:
    bot = ("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com")
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "⬆ Bump ty from 0.0.34 to 0.0.35 (#1904)", author=bot),
        _commit(2, "✨ Add a skill for agents (#2017)")])
    assert _verdicts(k, "Add a `retry_forever` option that keeps failed uploads in a queue (#1904).")["#1904"] \
        == "unsupported"
    # what the bot did, in the maintainers' words, or as a dependency update: supported
    assert _verdicts(k, "Bump ty to 0.0.35 (#1904).")["#1904"] == "supported"
    assert _verdicts(k, "Update the development dependencies (#1904).")["#1904"] == "supported"
    assert _verdicts(k, "Add a skill for agents (#2017).")["#2017"] == "supported"


def test_an_invented_change_credited_to_a_persons_real_pull_request_is_flagged() -> None:
    k = Knowledge("v1..v2", None, [], [
        # a merged pull request: its title, its branch, and the commits of the branch it merged
        _commit(1, "Merge pull request #31 from ann/colour-tags", "Fix strike and hide ANSI codes", parents=(9, 2)),
        _commit(2, "Handle the two escape codes", paths=("loguru/_colorizer.py",), parents=(9,)),
        _commit(3, "Fix typo in README (#32)", paths=("README.md",), parents=(1,)),
        _commit(4, "Support reading the config from pyproject (#33)", paths=("src/config.py",), parents=(3,)),
        _commit(5, "Run the tests on Python 3.14 (#34)", paths=(".github/workflows/ci.yml",), parents=(4,)),
        _commit(6, "Add a --quiet flag (#35)", paths=("src/cli.py", "src/config.py"), parents=(5,)),
        _commit(7, "Drop the old config loader (#36)", paths=("src/config.py",), parents=(6,))])
    invented = "Add a `retry_forever` option that keeps every failed upload in a local queue (#32)."
    assert k.check(read_claims(invented)[0], invented, {"32"}).reason == "git says #32 is 'Fix typo in README (#32)'"
    # one word many commits of the range share (`config`) does not make a long item about the change
    assert _verdicts(k, "Support reading settings from a YAML file in the config directory (#35).")["#35"] \
        == "unsupported"
    # true items in the maintainers' words: the branch's commits and paths, the title, versions it names
    assert _verdicts(k, "Fix inverted color tags (#31).")["#31"] == "supported"
    assert _verdicts(k, "Python 3.14 is now supported and tested (#34).")["#34"] == "supported"
    assert _verdicts(k, "Read `tool.app` settings from `pyproject.toml` (#33).")["#33"] == "supported"
    # too short to judge, or a summary of many pull requests: the number is all that is checked
    assert _verdicts(k, "Small fixes (#32).")["#32"] == "supported"
    assert set(_verdicts(k, "Many small improvements to the queue and uploads (#32, #33, #35).").values()) \
        == {"supported"}


def test_an_item_continued_under_a_nested_list_is_judged_whole() -> None:
    k = Knowledge("v1..v2", None, [], [_commit(1, "Added task handle support to start() and start_soon() (#53)")])
    section = ("- Changed the return value of:\n\n  - ``TaskGroup.start_soon()``\n  - ``TaskGroup.start()``\n\n"
               "  This reverts an earlier change which was made in error. (#53)\n")
    assert grade_with(section, "CHANGES.rst", k)["unsupported"] == []
    assert grade_with("- This reverts an earlier change which was made in error. (#53)\n", "CHANGES.rst",
                      k)["unsupported"] != []


def test_a_handle_the_changelog_credits_for_someone_elses_change_is_flagged() -> None:
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Handle undefined errors in getAllInfo (#2208)", author=("eivindrs", "eivind@example.org")),
        _commit(2, "fix: allow passing a non-array transport (#2256)", author=("Tanuel", "tanuel@example.org")),
        _commit(3, "Fix the HTTP transport options (#2272)", author=("Moritz L", "moritz@example.org"))])
    url = "https://github.com/o/r/pull/"
    true = (f"- Handle undefined errors in getAllInfo in {url}2208; thanks to new contributor @eivindrs\n"
            f"- fix: allow passing a non-array transport in {url}2256; thanks to new contributor @Tanuel\n"
            f"- Fix the HTTP transport options in {url}2272; thanks to new contributor @MoritzLoewenstein\n")
    assert grade_with(true, "CHANGELOG.md", k)["unsupported"] == []
    # @Tanuel is credited for #2256 too, made by someone else than who made #2208
    swapped = grade_with(true.replace("@eivindrs", "@Tanuel"), "CHANGELOG.md", k)["unsupported"]
    assert [(u["token"], u["reason"]) for u in swapped] == [
        ("@Tanuel", "git says eivindrs; the changelog credits @tanuel for a change by someone else")]
    # a bot credited for a person's change
    assert _verdicts(k, f"Fix the HTTP transport options in {url}2272; thanks to @dependabot")["@dependabot"] \
        == "unsupported"
    # a handle known by no name, credited once: not checkable, never a false alarm
    assert _verdicts(k, f"Fix the HTTP transport options in {url}2272; thanks to @someone")["@someone"] \
        == "not_checkable"


def test_a_pull_requests_diff_decides_an_item_its_messages_leave_uncertain() -> None:
    commits = [_commit(1, "Separate out a more detailed release policy document (#62)", paths=("docs/policy.md",)),
               _commit(2, "Fix typo in README (#63)", paths=("README.md",), parents=(1,)),
               _commit(3, "Speed up option parsing (#64)", paths=("lib/option.js",), parents=(2,))]
    diff = ("+++ b/docs/policy.md\n@@ -0,0 +1,2 @@\n+Old major versions are supported for 12 months after the next\n"
            "+major version, so users can plan their upgrades (`EOL_MONTHS`).\n")
    true = "Old major versions are now supported for 12 months instead of only the previous major version (#62)."
    invented = "Add a `retry_forever` option that keeps every failed upload in a local queue (#62)."
    without = Knowledge("v1..v2", None, [], commits)
    assert _verdicts(without, true)["#62"] == "unsupported"  # its words are only in the diff
    k = Knowledge("v1..v2", None, [], commits)
    read: list[str] = []
    k.diff_of = lambda commit: read.append(commit) or diff_words(diff)
    assert _verdicts(k, true)["#62"] == "supported"
    assert k.check(read_claims(invented)[0], invented, {"62"}).reason.startswith("git says #62 is 'Separate out")
    # a diff is read only for a pull request whose messages leave the item uncertain, once
    assert _verdicts(k, "Speed up the parsing of long option lists (#64).")["#64"] == "supported"
    assert read == [_hash(1)]


# The classes found on the sixth blind set (tox, pydantic, eslint-plugin-import, scrapy, httpie).


def test_a_restructuredtext_title_underlined_with_tildes_is_no_code_fence() -> None:
    # scrapy's news.rst: everything between two `~~~` underlines was dropped as fenced code
    k = Knowledge("v1..v2", None, [], [_commit(1, "Deprecate FormRequest in favor of form2request (#6438)")])
    section = ("Deprecations\n~~~~~~~~~~~~\n\n-   ``scrapy.FormRequest`` is deprecated in favor of form2request.\n"
               "    (:gh:`{}`)\n\nBug fixes\n~~~~~~~~~\n\n- Nothing.\n\nExample:\n~~~\n(#99)\n~~~\n")
    assert grade_with(section.format(6438), "news.rst", k)["claims"]["total"] == 1  # a fence still hides (#99)
    assert [u["token"] for u in grade_with(section.format(6439), "news.rst", k)["unsupported"]] == [":gh:`6439`"]


def test_a_backport_that_names_its_pull_request_keeps_the_number() -> None:
    k = Knowledge("v1..v2", None, [], [_commit(1, "Fix `ValidationInfo.data` missing with `model_validate_json()`",
                                               "Backport of: #13079")])
    item = "Fix `ValidationInfo.data` missing with `model_validate_json()` by @ann in [#{0}](https://x/pull/{0})"
    assert set(_verdicts(k, item.format(13079)).values()) == {"supported"}
    assert _verdicts(k, item.format(13080))["/pull/13080"] == "unsupported"
    # a cherry-pick that keeps its number in its subject lost nothing either
    picked = Knowledge("v1..v2", None, [], [_commit(1, "Replaced the NoCurrentAsyncBackend exception (#1049)",
                                                    "Fixes #1048.\n\n(cherry picked from commit 1730f5a)")])
    link = "Replaced the NoCurrentAsyncBackend exception (`#{0} <https://x/issues/{0}>`_)"
    assert _verdicts(picked, link.format(1048))["#1048"] == "supported"
    assert _verdicts(picked, link.format(1050))["#1050"] == "unsupported"


def test_credits_name_the_author_in_any_markup_and_spelling() -> None:
    landed = ("Jordan Harband", "ljharb@gmail.com")
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "[New] support eslint v9", author=("Gareth Jones", "jones258@gmail.com"), committer=landed),
        _commit(2, "[New] `order`: allow validating named imports", author=("Manuel Thalmann", "m@nuth.ch")),
        _commit(3, "Allow setting build constraints (#963)", author=("Bernát Gábor", "gabor@example.org")),
        _commit(4, "[Tests] node v21.3 has a broken `fs.writeFile`", author=landed, committer=landed)])
    # Sphinx's `:user:` is a credit, and an accent does not hide a name
    assert _verdicts(k, "Allow setting build constraints - by :user:`gaborbernat` (:issue:`963`)") \
        == {":user:`gaborbernat`": "supported", ":issue:`963`": "supported"}
    # the maintainer who rebased a contributor's commit (and wrote others) landed it, and made nothing
    assert _verdicts(k, "support eslint v9 ([#2996], thanks [@ljharb])")["@ljharb"] == "unsupported"
    # `[New]` is the commit's kind, not its words: the item restates its commit, so a handle this
    # changelog credits for Manuel Thalmann's change is wrong for Gareth Jones's (and git cannot
    # tell which of the two credits is the wrong one)
    true = "- [`order`]: allow validating named imports ([#3043], thanks [@manuth])\n"
    assert grade_with(true, "CHANGELOG.md", k)["unsupported"] == []
    wrong = grade_with("- support eslint v9 ([#2996], thanks [@manuth])\n" + true, "CHANGELOG.md", k)["unsupported"]
    assert wrong[0]["reason"] == "git says Gareth Jones; the changelog credits @manuth for a change by someone else"


def test_a_number_below_the_pull_request_is_an_issue_where_the_changelog_cites_issues() -> None:
    k = Knowledge("v1..v2", None, [], [_commit(1, "Remove tox (#944)"),
                                       _commit(2, "Refactor the plugin registry to avoid circular imports",
                                               "Fix #925")])
    cites = "* Fixed plugin registry circular imports (`#925`_).\n"
    assert grade_with(cites + "* Removed tox (`#943`_).\n", "CHANGELOG.rst", k)["unsupported"] == []
    # above the pull request, or in a changelog citing pull requests only, the number is wrong
    assert [u["token"] for u in grade_with(cites + "* Removed tox (`#945`_).\n", "CHANGELOG.rst", k)["unsupported"]] \
        == ["#945"]
    assert [u["token"] for u in grade_with("* Removed tox (#943).\n", "CHANGELOG.md", k)["unsupported"]] == ["#943"]


def test_an_item_naming_only_an_issue_a_commit_fixes_shows_the_changelog_cites_issues() -> None:
    # Sphinx 9.1.0 (blind11): `* #N: Text` names the issue; "fix #3099 (#14213)" says #3099 is one
    k = Knowledge("v1..v2", None, [], [_commit(1, "autodoc: Fix duplicate ``:no-index-entry:`` for modules (#14190)"),
                                       _commit(2, "fix #3099 (#14213)", "LaTeX: PDF build crashes on long code")])
    cites = "* #3099: LaTeX: PDF build crashes if a code-block contains more than circa 1350 codelines.\n"
    item = "* #{}: autodoc: Fix duplicate ``:no-index-entry:`` for modules.\n"
    assert grade_with(cites + item.format(14189), "CHANGES.rst", k)["unsupported"] == []
    # a number above the pull request, or the same item where nothing shows issues cited, is wrong
    assert [u["token"] for u in grade_with(cites + item.format(14191), "CHANGES.rst", k)["unsupported"]] == ["#14191"]
    # where nothing else shows issues cited, a number labelling the item (`#N: ...`) may still be its issue;
    # the same number closing the item, as pull requests are cited, is wrong
    assert grade_with(item.format(14189), "CHANGES.rst", k)["unsupported"] == []
    at_end = "* autodoc: Fix duplicate ``:no-index-entry:`` for modules (#{}).\n"
    assert [u["token"] for u in grade_with(at_end.format(14189), "CHANGES.rst", k)["unsupported"]] == ["#14189"]
    assert [u["token"] for u in grade_with(item.format(14191), "CHANGES.rst", k)["unsupported"]] == ["#14191"]


def test_an_item_may_name_a_second_pull_request_it_is_about() -> None:
    k = Knowledge("v1..v2", None, [], [_commit(1, "Report exceptions from Spider.start() (#7884)"),
                                       _commit(2, "Support CloseSpider during spider startup (#7905)"),
                                       _commit(3, "Drop support for Python 3.9 (#1766)"),
                                       _commit(4, "Add script to remove Python 3.9 files, migrate to Python 3.10 "
                                                  "(#1767)")])
    item = ("CloseSpider exceptions can now also be raised while the spider is starting, from a "
            "spider_opened handler, to close the spider before it starts crawling. (:gh:`3435`, :gh:`7905`)")
    assert _verdicts(k, item)[":gh:`7905`"] == "supported" and _verdicts(k, item)[":gh:`3435`"] != "unsupported"
    k2 = Knowledge("v1..v2", None, [], [_commit(1, "Refactor HTTP download handlers (#7238)"),
                                        _commit(2, "Dynamic loading for S3 HTTPS handler (#7370)")])
    s3 = ("S3DownloadHandler now uses the download handler configured for the https scheme instead of always "
          "using HTTP11DownloadHandler. (:gh:`7369`, :gh:`7370`)")
    assert "unsupported" not in _verdicts(k2, s3).values()
    # a neighbouring pull request on the same subject is no second one of an item that restates its own
    assert _verdicts(k, "Drop support for Python 3.9. PR #1767 by @ann.")["PR #1767"] == "unsupported"


def test_a_summary_item_names_the_kind_of_change_its_pull_request_made() -> None:
    k = Knowledge("v1..v2", None, [], [_commit(1, "Disable mypy allow_any_generics (#7532)", paths=("pyproject.toml",)),
                                       _commit(2, "Fix the README's install section (#7533)", paths=("README.rst",))])
    assert _verdicts(k, "Type hints improvements and fixes. (#7532)")["#7532"] == "supported"
    assert _verdicts(k, "Documentation improvements and fixes. (#7533)")["#7533"] == "supported"
    assert _verdicts(k, "Performance improvements for large feeds. (#7533)")["#7533"] == "unsupported"


def test_one_word_an_invented_item_shares_with_the_pull_request_and_its_diff_is_chance() -> None:
    k = Knowledge("v1..v2", None, [], [_commit(1, "👷 ci: run the test matrix against Python 3.15 (#4001)",
                                               paths=(".github/workflows/check.yaml",))])
    k.diff_of = lambda commit: diff_words("+        run: tox run -e 3.15\n+  python-version: '3.15'\n")
    item = "Add a `--dry-run` flag that prints the planned changes without writing them :issue:`4001`"
    assert _verdicts(k, item)[":issue:`4001`"] == "unsupported"
    assert _verdicts(k, "Run the test matrix against Python 3.15 :issue:`4001`")[":issue:`4001`"] == "supported"


def test_a_number_put_in_place_of_one_of_the_issues_the_commit_fixes_is_flagged() -> None:
    k = Knowledge("v1..v2", None, [], [_commit(1, "Allow setting the log level of spider exceptions (#7567)",
                                               "Fixes #5297, fixes #4622")])
    item = "The log level of spider exceptions can now be set. (:gh:`{}`, :gh:`5297`, :gh:`7567`)"
    assert set(_verdicts(k, item.format(4622)).values()) == {"supported"}
    assert _verdicts(k, item.format(4623))[":gh:`4623`"] == "unsupported"


def test_a_maintainers_push_lost_no_pull_request_number() -> None:
    jakub = ("Jakub Roztocil", "jakub@example.org")
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Add --format-options to allow disabling sorting, etc.", "#128", author=jakub, committer=jakub),
        _commit(2, "Add a netrc test", author=("Nicolas Beltran", "nb@example.org"), committer=jakub),
        _commit(3, "[Fix] `no-danger`: avoid a crash on a nested component name", "Fixes #3833",
                author=("Ann Lee", "ann@example.org"), committer=("Ann Lee", "ann@example.org"))])
    item = "Added ``--format-options`` to allow disabling sorting, etc. (`#{}`_)"
    assert _verdicts(k, item.format(128))["#128"] == "supported"
    assert _verdicts(k, item.format(129))["#129"] == "unsupported"
    # an item naming several numbers, none of them the one the push carries (js-yaml's "#471, #557" for #470)
    assert _verdicts(k, item.replace("`_", "`_, `#557`_").format(128))["#557"] != "unsupported"
    assert _verdicts(k, item.replace("`_", "`_, `#557`_").format(129))["#129"] == "unsupported"
    # a contributor's own commit, fast-forwarded from the pull request's branch: #3834 may be that pull request
    assert _verdicts(k, "[`no-danger`]: avoid a crash on a nested component name ([#3834][] @ann)")["#3834"] \
        != "unsupported"


def test_an_invented_change_credited_to_an_issue_a_commit_fixes_is_flagged() -> None:
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Add --format-options to allow disabling sorting, etc.", "#128", paths=("httpie/cli.py",)),
        _commit(2, "Add a test to reproduce #1006", paths=("tests/test_regressions.py",))])
    invented = "Deprecate the `legacy_mode` argument of `connect()` in favour of `strict` (#128)."
    assert _verdicts(k, invented)["#128"] == "unsupported"
    assert _verdicts(k, "Added ``--format-options`` to allow disabling sorting (#128).")["#128"] == "supported"
    # an issue is written as its symptom; a test reproducing it says nothing of the cure
    assert _verdicts(k, "Fixed a missing blank line between request and response (#1006).")["#1006"] \
        == "supported"


def test_a_handle_git_ties_to_a_name_is_that_persons() -> None:
    nick = ("J. Nick Koston", "nick@koston.org")
    k = Knowledge("v1..v2", None, [], [  # newest first, as a snapshot lists them
        # a pull request merged from an organisation's fork: the merge's author only merged it
        _commit(4, "Merge pull request #1692 from openculinary/py313", "Test and declare Python 3.13 support",
                author=("Sviatoslav Sydorenko", "wk@example.org"), parents=(2, 3)),
        _commit(3, "Test and declare Python 3.13 support", author=("James Addison", "jay@example.org"), parents=(2,)),
        _commit(2, "Bump coverage from 7.1 to 7.2 (#1691)", "Co-authored-by: J. Nick Koston <bdraco@gmail.com>",
                author=("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com"), parents=(1,)),
        _commit(1, "Add an AGENTS.md orientation file (#1690)", author=nick)])
    assert _verdicts(k, "Added an AGENTS.md orientation file (#1690) -- by :user:`bdraco`.")[":user:`bdraco`"] \
        == "supported"
    assert _verdicts(k, "Declare Python 3.13 support (#1692) -- by {user}`jayaddison`.")["{user}`jayaddison`"] \
        == "supported"
    assert _verdicts(k, "Declare Python 3.13 support (#1692) -- by :user:`bdraco`.")[":user:`bdraco`"] \
        == "unsupported"


def test_a_squashed_pull_request_is_the_number_github_appended() -> None:
    k = Knowledge("v1..v2", None, [], [_commit(1, "Don't double-close the child pty fd (fixes parallel Bad file "
                                                  "descriptor) (#3975) (#3976)", "Fixes #3975")])
    assert k.carriers[0].own == "3976"
    invented = "Add a `retry_forever` option that keeps every failed upload in a local queue (#3975)."
    assert _verdicts(k, invented)["#3975"] == "unsupported"
    assert _verdicts(k, "Don't double-close the child pty fd in parallel runs (#3975)")["#3975"] == "supported"


def test_a_handle_is_wrong_where_git_states_the_authors_account_before_the_range() -> None:
    commits = [_commit(1, "ci: run the test matrix against Python 3.15 (#4001)",
                       author=("Bernát Gábor", "gaborjbernat@gmail.com"))]
    before = {"emails": ["gaborbernat@users.noreply.github.com", "alexandreabrioux@users.noreply.github.com"],
              "names": []}
    k = Knowledge("v1..v2", None, [], commits, before)
    item = "Test against Python 3.15 in CI - by :user:`{}`. (:issue:`4001`)"
    assert _verdicts(k, item.format("gaborbernat"))[":user:`gaborbernat`"] == "supported"
    wrong = _verdicts(k, item.format("morgan-delacroix"))
    assert wrong[":user:`morgan-delacroix`"] == "unsupported"
    # one word of a name is no account: "Alex" is not @alexandreabrioux
    alex = Knowledge("v1..v2", None, [], [_commit(1, "ci: harden the workflows (#2252)", author=("Alex", "a@x.org"))],
                     before)
    assert _verdicts(alex, "Harden the workflows (#2252), thanks @sashashura")["@sashashura"] == "not_checkable"
    # without the account, a handle git ties to nobody stays not checkable
    assert _verdicts(Knowledge("v1..v2", None, [], commits), item.format("morgan-delacroix"))[
        ":user:`morgan-delacroix`"] == "not_checkable"


def test_an_item_that_names_its_commit_by_hash_is_held_to_that_commits_numbers() -> None:
    # sinon's CHANGES.md: each item is a commit's hash, its subject and its body quoted
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Migration to ECMAScript modules (ESM) (#2683)", "This allowed us to consume ESM-only packages"),
        _commit(2, "fix(#2692): Remove ESM-only supports-color as it breaks CJS exports (#2693)",
                "- fix(#2692): Remove ESM-only supports-color as it breaks CJS exports"),
        _commit(3, "build: generate cjs lib from esm source entries")])  # a commit of the branch, quoted below
    first, second = _hash(1), _hash(2)
    body = (" > This allowed us to consume ESM-only packages. > - test: add distribution harness > - build: generate "
            "cjs lib from esm source entries > - refactor: port root api surface > - fix: make mocha watch use polling")
    assert _verdicts(k, f"{first} Migration to ECMAScript modules (ESM) (#2683) (Carl){body}")["#2683"] == "supported"
    assert _verdicts(k, f"{first} Migration to ECMAScript modules (ESM) (#2684) (Carl){body}")["#2684"] \
        == "unsupported"
    # the subject quoted word for word with one of its numbers changed, the right one still in the quoted body
    item = f"{second} fix(#{{}}): Remove ESM-only supports-color as it breaks CJS exports (#2693) (Carl) " \
        "> - fix(#2692): Remove ESM-only supports-color as it breaks CJS exports"
    assert set(_verdicts(k, item.format(2692)).values()) == {"supported"}
    assert _verdicts(k, item.format(2694))["#2694"] == "unsupported"
    # a hash inside an item may name another commit than the item's (the one it reverts)
    assert _verdicts(k, f"Revert {first} as it broke the bundle (#2701)")["#2701"] == "not_checkable"


def test_a_link_into_another_repository_is_not_checked_against_this_range() -> None:
    k = Knowledge("v19.0.2..v19.0.3", "c" * 40, [{"name": "v19.0.3", "commit": "c" * 40,
                                                  "date": "2025-04-03T12:00:00+00:00"}],
                  [_commit(1, "Bump rexml from 3.3.7 to 3.3.9 (#2626)"), _commit(2, "Fix a link (#2627)")])
    section = ("## 19.0.3\n\n- Bump rexml from 3.3.7 to 3.3.9 ([#2626](https://github.com/o/r/pull/2626))\n"
               "  > [Commits](https://github.com/ruby/rexml/compare/v3.3.7...v3.3.9)\n"
               "- Fix a link ([#2627](https://github.com/o/r/pull/2627))\n\n"
               "[compare](https://github.com/o/r/compare/v19.0.{}...v19.0.3)\n")
    graded = grade_with(section.format(2), "CHANGES.md", k)
    assert graded["unsupported"] == []
    assert {u["token"] for u in graded["not_checkable"] if "another repository" in u["why"]} == {"v3.3.7", "v3.3.9"}
    # the changelog's own compare link is still the range's
    assert [u["token"] for u in grade_with(section.format(1), "CHANGES.md", k)["unsupported"]] == ["v19.0.1"]


def test_a_word_negated_is_the_same_subject() -> None:
    # jsonschema 4.21.0: "enum" is a word many commits of the range say; "unequal" is what `equal` does
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Wrong behaviour for enum keyword: use equal for the enum validator (#1208)"),
        *(_commit(n, f"Test the enum keyword with case {n} of the suite") for n in range(2, 6))])
    k.diff_of = lambda commit: diff_words("-        unbooled = unbool(instance)\n"
                                          "+    if all(not equal(each, instance) for each in enums):\n")
    item = "Fix the behavior of enum in the presence of 0 or 1 to properly consider True and False unequal (#1208)."
    assert _verdicts(k, item)["#1208"] == "supported"
    assert _verdicts(k, "Speed up start-up by caching the parsed enum manifest on disk (#1208).")["#1208"] \
        == "unsupported"


def test_an_item_sharing_words_only_with_a_pull_requests_body_is_judged_by_its_diff() -> None:
    # markdown-it-py 4.1.0: "parsers" and "plugins" are in #388's long body, none of its title's words
    def knowing(diff: str) -> Knowledge:
        body = "Task lists are detected in the block parsers rather than by plugins, at start of the item."
        k = Knowledge("v1..v2", None, [], [
            _commit(1, "Add `gfm-like2` preset with task lists, alerts and strikethrough (#388)", body)])
        k.diff_of = lambda commit: diff_words(diff)
        return k

    invented = "Speed up start-up by caching the parsed plugin manifest on disk (#388)."
    tasks = knowing("+    md.enable(['tasklists', 'alerts', 'strikethrough'])\n+    if line.startswith('[!NOTE]'):\n")
    assert _verdicts(tasks, invented)["#388"] == "unsupported"
    # one naming several pull requests tells their joint change
    assert _verdicts(tasks, invented.replace("(#388)", "(#388, #389)"))["#388"] == "supported"
    # a maintainer's item in other words than the title, which the diff changed, stays supported
    cache = knowing("+    cache = load_manifest(disk)  # parsed plugin start speed\n")
    assert _verdicts(cache, invented)["#388"] == "supported"


def test_a_credit_in_a_summary_of_several_changes_with_no_number_is_not_checked_against_the_restated_one() -> None:
    # markdown-it-py 3.0.0: the paragraph restates Chris Sewell's typing commit; the credit is the fuzzing's
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Make type checking strict across the whole code base",
                author=("Chris Sewell", "chrisj_sewell@hotmail.com")),
        _commit(2, "Add OSS-Fuzz set up (#255)", author=("David Korczynski", "david@adalogics.com"))])
    summary = ("Strict type checking has been applied to the whole code base, ruff is now used for linting, and "
               "fuzzing tests have been added to the CI, thanks to @DavidKorczynski.")
    assert _verdicts(k, summary)["@DavidKorczynski"] == "not_checkable"


def test_an_invented_breaking_change_naming_code_neither_the_messages_nor_the_diff_hold_is_flagged() -> None:
    # filelock 3.32.0: a lock library's diff holds `timeout`, `deadline`, `accept`, `pass`, not `Session.request()`
    k = Knowledge("v1..v2", None, [], [_commit(1, "fix(packaging): let an unpacked sdist run the test suite (#685)",
                                               "Ship the capability probes the tests import.")])
    k.diff_of = lambda commit: diff_words("+    def acquire(self, timeout: float, deadline: float) -> None:\n"
                                          "+        # no longer accept a blocking call; pass\n")
    invented = ("- **Breaking:** `Session.request()` no longer accepts a `timeout` argument; pass `deadline=` "
                "instead :pr:`685`")
    assert [u["token"] for u in grade_with(invented, "CHANGES.rst", k)["unsupported"]] == [":pr:`685`"]
    # naming code the diff changed, it is about the change
    true = "- **Breaking:** `acquire()` no longer accepts a blocking call; pass a `timeout` and `deadline=` :pr:`685`"
    assert grade_with(true, "CHANGES.rst", k)["unsupported"] == []


# The classes found on the blind7 set (pre-commit, coverage.py, nox, prettier, date-fns).


@pytest.mark.parametrize(("path", "carried"), [
    ("changelog_unreleased/less/19574.md", True),  # prettier: the folder's name joins two changelog words
    ("changes/19574.bugfix.rst", True),  # towncrier, as before
    ("tests/test_changes/19574_cases.py", False),  # a test module is no fragment
])
def test_a_changelog_fragment_carries_its_number(path: str, carried: bool) -> None:
    # prettier 3.9.5: the pull request #19573 adds the entry numbered #19574 its changelog prints
    k = Knowledge("v1..v2", None, [], [_commit(1, "Fix adjacent block comments corrupted in less (#19573)",
                                               paths=(path, "src/language-css/loc.js"))])
    item = "Less: Fix adjacent block comments being corrupted (#19574 by @kovsu)"
    assert _verdicts(k, item)["#19574"] == ("supported" if carried else "unsupported")


def test_an_identifier_and_its_part_are_one_shared_word() -> None:
    # nox 2026.08.17: `legacy_mode` met "Support legacy encodings" twice (as itself and as `legacy`)
    k = Knowledge("v1..v2", None, [], [_commit(1, "Support legacy encodings in the parallel reporter (#1160)")])
    k.diff_of = lambda commit: diff_words("+        symbols = ASCII_SYMBOLS if legacy else UNICODE_SYMBOLS\n"
                                          "+    spinner = encoding_of(stream)\n")
    invented = "Deprecate the `legacy_mode` argument of `connect()` in favour of `strict` (#1160)"
    assert _verdicts(k, invented)["#1160"] == "unsupported"
    assert _verdicts(k, "Support legacy encodings in the parallel spinner (#1160)")["#1160"] == "supported"


def test_an_item_sharing_one_chance_word_and_naming_code_nobody_touched_is_invented() -> None:
    # date-fns 3.4.0: "no longer" met the `formatLong` folder of the Kurdish locale's paths
    k = Knowledge("v1..v2", None, [], [_commit(1, "Add Central Kurdish locale (#3421)",
                                               paths=("src/locale/ckb/_lib/formatLong/index.ts",))])
    k.diff_of = lambda commit: diff_words("+  full: \"EEEE, MMMM do, y\", argumentCallback: (value) => value,\n"
                                          "+  dateFormats: buildFormatLongFn({ formats, defaultWidth: 'full' }),\n")
    invented = ("- **Breaking:** `Session.request()` no longer accepts a `timeout` argument; pass `deadline=` "
                "instead (#3421)")
    assert [u["token"] for u in grade_with(invented, "CHANGELOG.md", k)["unsupported"]] == ["#3421"]
    true = "- The long date formats of a locale no longer drop the `argumentCallback` of `buildFormatLongFn()` (#3421)"
    assert grade_with(true, "CHANGELOG.md", k)["unsupported"] == []


@pytest.mark.parametrize(("lands_others_work", "flagged"), [(False, True), (True, False)])
def test_a_made_up_handle_for_an_author_the_changelog_credits_under_another_is_flagged(
        lands_others_work: bool, flagged: bool) -> None:
    # nox 2025.11.12: "by @morgan-delacroix" on one of Henry Schreiner's pull requests, "by @henryiii" on the others
    henry = ("Henry Schreiner", "henry@example.org")
    commits = [_commit(1, "Avoid warnings when running in script mode (#1025)", author=henry),
               _commit(2, "Support Path for the report file (#1026)", author=henry, parents=(1,))]
    if lands_others_work:  # a maintainer who commits contributors' work may have rewritten this pull request
        commits.append(_commit(3, "Fix a typo in the docs", author=("Ann Lee", "ann@example.org"), committer=henry,
                               parents=(2,)))
    k = Knowledge("v1..v2", None, [], commits)
    notes = ("* Avoid warnings when running in script mode by @morgan-delacroix in https://github.com/o/r/pull/1025\n"
             "* Support `Path` for the report file by @henryiii in https://github.com/o/r/pull/1026\n")
    assert [u["token"] for u in grade_with(notes, "CHANGELOG.md", k)["unsupported"]] == (
        ["@morgan-delacroix"] if flagged else [])
    assert grade_with(notes.replace("morgan-delacroix", "henryiii"), "CHANGELOG.md", k)["unsupported"] == []


@pytest.mark.parametrize(("name", "flagged"), [("fisker", True), ("Fisker", False)])
def test_a_name_written_as_a_login_is_the_account_of_its_email(name: str, flagged: bool) -> None:
    # prettier 3.9.4: fisker commits as "fisker"; GitHub squashed his pull request as "fisker Cheung"
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Bump Prettier dependency to 3.9.3", author=(name, "lionkay@example.org")),
        _commit(2, "Angular: Format `@content(name)` -> `@content (name)` (#19499)",
                author=("fisker Cheung", "lionkay@example.org"), parents=(1,))])
    item = "Angular: Format `@content(name)` -> `@content (name)` (#19499 by @morgan-delacroix)"
    assert _verdicts(k, item)["@morgan-delacroix"] == ("unsupported" if flagged else "not_checkable")
    assert _verdicts(k, item.replace("morgan-delacroix", "fisker"))["@fisker"] == "supported"
    # anyio 4.14.0: "PR by @rasmusfaber, @x42005e1f and @agronholm": the others helped without a commit
    helped = item.replace("by @morgan-delacroix", "by @fisker and @morgan-delacroix")
    assert _verdicts(k, helped)["@morgan-delacroix"] == "not_checkable"


def _graded(k: Knowledge, text: str, token: str) -> str:
    """The status of the claim `token` of a changelog text, graded as `notes grade` reads it."""
    graded = grade_with(text, "CHANGES.md", k)
    if any(u["token"] == token for u in graded["unsupported"]):
        return "unsupported"
    return "not_checkable" if any(u["token"] == token for u in graded["not_checkable"]) else "supported"


_LINK = "[#{n}](https://github.com/o/yaml-kit/pull/{n})"
# Each class missed at the last stop: a planted false claim and its true twin, against one range.
# (commits, words of each pull request's diff, planted item, true twin, the token both name)
_CLASSES = {
    # code the item names that neither the messages nor the diff hold, whatever chance words they share
    "named code chance words": (
        [_commit(1, "Fix test failures on NetBSD (#689) (#693)", "Closes #689. Tests assumed a local clock.",
                 paths=("tests/test_filelock.py",))],
        "+    if sys.platform.startswith('netbsd'):\n+        pytest.skip('no process start token')\n",
        "- Add a `retry_forever` option that keeps every failed upload in a local queue (#693).",
        "- Skip the process start token check on NetBSD, where `sys.platform` says so (#693).", "#693"),
    # `read` is not a form of `readme` (a file the pull request touched), `reader` is
    "a prefix that is another word": (
        [_commit(1, "Add support for groups of options and commands in the help (#2328)",
                 paths=("Readme.md", "lib/help.js")),
         _commit(2, "Add a streaming reader for large inputs (#2330)", paths=("lib/stream.js",))],
        "+  helpGroup(heading) {\n+    this._helpGroupHeading = heading;\n+    return this.file;\n",
        "- Support reading settings from a YAML file in the user's config directory (#2328).",
        "- Read large inputs as a stream, chunk by chunk, without buffering them (#2330).", "#2328"),
    # a word of the project's name does not tie a long item to the issue a commit addresses
    "the project's name in an issue item": (
        [_commit(1, "Add noArrayIndent option", "Addresses issue #432", paths=("lib/yaml/dumper.js", "README.md"))],
        "+  this.noArrayIndent = options['noArrayIndent'] || false;\n+  // yaml sequences not indented\n",
        "- Support settings from a YAML file in the user's config directory " + _LINK.format(n=432),
        "- Added `noArrayIndent` option to dump YAML sequences without indentation " + _LINK.format(n=432),
        "#432"),
    # the function a hunk is in holds the code a true item names; an invented one names code nowhere
    "code named by the hunk it is in": (
        [_commit(1, "perf: dual replace (#1064)", paths=("src/packaging/utils.py",))],
        "@@ -51,2 +47,2 @@ def canonicalize_name(name: str) -> str:\n"
        "-    value = _canonicalize_regex.sub('-', name).lower()\n+    value = name.replace('_', '-').lower()\n",
        "- Much faster parse_requirement_marker: replace the compiled grammar with a name lookup (#1064)",
        "- Much faster canonicalize_name by avoiding a regex (#1064)", "#1064"),
    # a conventional commit's kind (`feat:`) is no word of its change ("New features" is not "feat")
    "a conventional commit's kind": (
        [_commit(1, "feat: implement response.has (#1397)", paths=("lib/response.js",))],
        "+  has(field) {\n+    print(field);\n+    return this.res.hasHeader(field);\n",
        "- New features: print planned database migrations before they are written (#1397)",
        "- New features: implement `response.has` to tell whether a header field is set (#1397)", "#1397"),
    # a pull request changing the documentation only, credited with a change to it in other words (pyjwt 2.9.0)
    "a documentation change told in other words": (
        [_commit(1, "Update usage.rst (#958)", paths=("docs/usage.rst",))],
        "@@ -284,7 +284,6 @@ Retrieve RSA signing keys from a JWKS endpoint\n"
        "-    >>> kid = 'NEE1QURBOTM4MzI5RkFDNTYx'\n     >>> url = 'https://dev.example.org/.well-known/jwks.json'\n",
        "- Support reading settings from a YAML file in the user's config directory (#958)",
        "- Fix: Remove an unused variable from example code block by @kenkoooo in #958", "#958"),
    # one word met in a path only, not the title, and a diff holding fewer than half the item (uvicorn #2598)
    "one word outside the title": (
        [_commit(1, "Don't include `cwd()` when non-empty `--reload-dirs` is passed (#2598)",
                 paths=("uvicorn/config.py", "tests/supervisors/test_reload.py"))],
        "@@ -120,3 +120,4 @@ class Config:\n+        if not self.reload_dirs:\n"
        "+            self.reload_dirs = [os.getcwd()]  # the working directory, as a file path\n",
        "- Support reading settings from a YAML file in the user's config directory (#2598)",
        "- Don't include `cwd()` when non-empty `--reload-dirs` is passed (#2598)", "#2598"),
    # a class's method whose class the pull request never names (node-semver #855: its body says "pull request")
    "a method of a class nobody touched": (
        [_commit(1, "feat: Add `truncate` function (#855)",
                 "Pass the argument through. Split out of the pull request for ranges",
                 paths=("functions/truncate.js", "index.js"))],
        "+const truncate = (version, type) => {\n+  // keep the argument as passed\n"
        "+  return parse(version).truncate(type)\n",
        "- **Breaking:** `Session.request()` no longer accepts a `timeout` argument; pass `deadline=` instead (#855)",
        "- Add `truncate` function, which keeps a version up to the part named (#855)", "#855"),
    # a flag nobody touched, in an item whose other words the diff holds no more than half of (changesets 2.31.0)
    "unseen code and half the words": (
        [_commit(1, "Error on unsupported flags for individual CLI commands (#1889)",
                 "* fix(cli): warn when unknown flags are passed\n* validate init too",
                 paths=("packages/cli/src/run.ts",))],
        "+  if (unknown.length) {\n+    print(`unknown flag ${flag}`);\n+    return run;\n",
        "- Add a `--dry-run` flag that prints the planned changes without writing them (#1889)",
        "- Error on unsupported flags for individual CLI commands (#1889)", "#1889"),
}


@pytest.mark.parametrize("name", sorted(_CLASSES))
def test_an_invented_item_is_judged_by_what_its_one_pull_request_says_and_changed(name: str) -> None:
    commits, diff, planted, twin, token = _CLASSES[name]
    k = Knowledge("v1..v2", None, [], commits)
    k.diff_of = lambda commit: diff_words(diff)
    assert _graded(k, planted, token) == "unsupported"
    assert _graded(k, twin, token) == "supported"


@pytest.mark.parametrize("trailer", ["Signed-off-by", "merged from"])
def test_the_authors_account_git_states_in_a_trailer_or_a_merge_makes_a_handle_git_ties_to_nobody_wrong(
        trailer: str) -> None:
    # tox 4.57.1: Andrew Chen writes as chuenchen309@gmail.com; the squashed body's sign-off states his account
    quinn = ("Quinn Xu", "quinn@example.org")
    commits = [_commit(3, "Run sequentially for run-parallel -p 0 instead of at CPU count (#3989)",
                       "Signed-off-by: Quinn Xu <48723787+qx1@users.noreply.github.com>" if trailer == "Signed-off-by"
                       else "", author=quinn, parents=(2,))]
    if trailer == "merged from":  # a pull request of Quinn's merged from the account's fork
        commits += [_commit(2, "Merge pull request #3990 from qx1/marker", "Keep the marker", parents=(9, 1),
                            author=("Maintainer", "m@example.org")),
                    _commit(1, "Do not let a lone quote swallow the marker", author=quinn, parents=(9,))]
    k = Knowledge("v1..v2", None, [], commits)
    item = "Run sequentially for ``run-parallel -p 0`` instead of at the CPU count - by :user:`{}`. (:pr:`3989`)"
    assert _graded(k, item.format("morgan-delacroix"), ":user:`morgan-delacroix`") == "unsupported"
    assert _graded(k, item.format("qx1"), ":user:`qx1`") == "supported"


def test_an_item_tied_to_its_pull_request_by_a_rare_word_may_name_code_of_another_project() -> None:
    # requests 2.34.0: "bpo-39057" ties the item to the port; `proxy_bypass` is CPython's function, not the diff's
    k = Knowledge("v1..v2", None, [], [_commit(1, "Port bpo-39057 to Requests (#7427)",
                                               paths=("src/requests/utils.py", "tests/test_utils.py"))])
    k.diff_of = lambda commit: diff_words("+                host = host.lstrip('.')\n"
                                          "+                if hostname == host or host_with_port == host:\n"
                                          "+    \"\"\"Ensure no_proxy matching respects domain boundaries, not\n"
                                          "+    greedily match domains that merely endswith the no_proxy entry.\n"
                                          "+    See CPython bpo-39057.\n"
                                          "+    assert should_bypass_proxies(url, no_proxy=no_proxy) == expected\n")
    item = ("- Requests no longer performs greedy matching on no_proxy domains. The proxy_bypass implementation "
            "has been updated with CPython's fix from bpo-39057. (#7427)")
    assert grade_with(item, "HISTORY.md", k)["unsupported"] == []


def _flags(k: Knowledge, item: str, path: str, right: int, wrong: int) -> set[str]:
    """The tokens flagged in `item` written with the number `wrong`, once it grades clean with `right`."""
    assert grade_with(item.format(n=right), path, k)["unsupported"] == []
    return {u["token"] for u in grade_with(item.format(n=wrong), path, k)["unsupported"]}


# The classes the eleventh blind set (blind9: gin, ripgrep, changesets, psutil, pyparsing) showed.

def test_a_name_in_lower_case_is_no_login_without_a_fuller_name_of_the_same_email() -> None:
    # gin 1.10.0: "qingmu <gxylong@126.com>" made #3873, credited to @kingcanfish (his login)
    k = Knowledge("v1..v2", None, [], [_commit(1, "fix: protect Context.Keys map when call Copy method (#3873)",
                                               author=("qingmu", "gxylong@example.org"))])
    item = "fix: protect Context.Keys map when call Copy method (#3873) (@kingcanfish)"
    assert _verdicts(k, item)["@kingcanfish"] == "not_checkable"


def test_a_handle_git_states_as_the_authors_account_is_supported_however_short() -> None:
    # gin 1.10.0: Andy Brody <ab@users.noreply.github.com>, credited "(@ab)" after a sentence of its own
    k = Knowledge("v1..v2", None, [], [_commit(1, "chore(IP): add TrustedPlatform constant for Fly.io. (#3839)",
                                               author=("Andy Brody", "ab@users.noreply.github.com"))])
    graded = grade_with("- chore(IP): add TrustedPlatform constant for Fly.io. (#3839) (@ab)\n", "CHANGELOG.md", k)
    assert graded["unsupported"] == []
    assert [u["token"] for u in grade_with("- chore(IP): add TrustedPlatform constant for Fly.io. (#3839) (@cd)\n",
                                           "CHANGELOG.md", k)["unsupported"]] == ["@cd"]


def test_a_name_a_trailer_gives_the_authors_email_is_that_persons_handle() -> None:
    # changesets 3.0.1: dependabot's bump says "Co-authored-by: bluwy <bjornlu.dev@gmail.com>"; Bjorn Lu is @bluwy
    k = Knowledge("v1..v2", None, [], [
        _commit(2, "Update default generated readme (#2239)", author=("Bjorn Lu", "bjornlu.dev@example.org"),
                parents=(1,)),
        _commit(1, "Bump vitepress from 2.0.0-alpha.18 to 2.0.0-alpha.19",
                "Co-authored-by: bluwy <bjornlu.dev@example.org>",
                author=("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com"))])
    assert _verdicts(k, "#2239 Thanks @bluwy! - Update links in default generated README.md file")["@bluwy"] == \
        "supported"


def test_an_items_conventional_kind_is_no_word_of_the_title_it_restates() -> None:
    # gin 1.11.0: "docs:" made "docs: fix comment and link issues" restate "docs: added comment in doc.go (#4274)"
    k = Knowledge("v1..v2", None, [], [
        _commit(3, "docs: added comment in doc.go (#4274)", parents=(2,)),
        _commit(2, "docs: fix comment (#4205)", parents=(1,)),
        _commit(1, "docs(gin): update link to dont-trust-all-proxies section (#3938) (#3945)")])
    item = ("- docs: fix comment and link issues ([#4205](https://github.com/o/r/pull/4205), "
            "[#3938](https://github.com/o/r/pull/3938))\n")
    assert grade_with(item, "CHANGELOG.md", k)["unsupported"] == []


def test_an_issue_a_commit_changing_tests_only_closes_is_no_entry_of_a_fix() -> None:
    # ripgrep 15.0.0: the regression test for a fixed gitignore bug "Closes #3067"; the fix closed #2750
    k = Knowledge("v1..v2", None, [], [_commit(1, "test: add regression test for fixed gitignore bug",
                                               "I believe this was actually fixed by #2933.\n\nCloses #3067",
                                               paths=("CHANGELOG.md", "tests/regression.rs"))])
    item = ("* [BUG #2750](https://github.com/o/r/issues/2750):\n"
            "  Fix memory usage regression for some truly large gitignore files.\n")
    assert grade_with(item, "CHANGELOG.md", k)["unsupported"] == []


def test_a_hash_among_the_numbers_an_item_opens_with_names_its_commit() -> None:
    # changesets 3.0.0: "[#1482](...) [`df424a4`](.../commit/...) Thanks @Andarist! - Bumped supported Node versions"
    esm = _commit(2, "Switch all packages to being ESM-only (#1482)", "Also bumps the supported Node versions.",
                  author=("Mateusz B", "mb@example.org"),
                  parents=(1,)) | {"hash": "df424a4" + "1" * 33}
    k = Knowledge("v1..v2", None, [], [esm, _commit(1, "Bump supported node version to `^22 || ^24 || >=26` (#1980)",
                                                    author=("Bjorn Lu", "bjornlu.dev@example.org"))])
    item = ("- [#{n}](https://github.com/o/r/pull/{n}) [`df424a4`](https://github.com/o/r/commit/df424a4) Thanks "
            "[@Andarist](https://github.com/Andarist)! - Bumped supported Node versions to `^22.11 || ^24 || >=26`\n")
    assert _flags(k, item, "CHANGELOG.md", 1482, 1483) == {"#1483", "/pull/1483"}


def test_a_version_that_opens_or_closes_a_range_of_versions_is_no_release() -> None:
    # pyparsing 3.3.0: "... compatible with pyparsing versions 3.0.0 and later." underlined, read as a heading
    claims = read_claims("The new names are compatible with pyparsing versions 3.0.0 and later.", release=True)
    assert [(c.token, c.checkable) for c in claims] == [("3.0.0", False)]
    assert next((c.kind, c.checkable) for c in read_claims("Version 3.3.0 - December, 2025", release=True)) == \
        ("version", True)


def test_the_pull_request_a_rebased_commit_names_on_its_last_line_is_its_own() -> None:
    # ripgrep 14.1.0: "complete/fish: improve shell completions for fish ... PR #2684", rebased by the maintainer
    k = Knowledge("v1..v2", None, [], [_commit(1, "complete/fish: improve shell completions for fish",
                                               "Stop using `-n __fish_use_subcommand`.\n\nPR #2684",
                                               author=("Jan V", "jan@example.org"),
                                               committer=("Andrew G", "ag@example.org"))])
    item = "* [FEATURE #{n}](https://github.com/o/r/issues/{n}):\n  Improve completions for the fish shell.\n"
    assert _flags(k, item, "CHANGELOG.md", 2684, 2685) == {"#2685", "/issues/2685"}


def test_an_issue_a_commits_subject_names_is_the_entry_of_an_item_naming_one() -> None:
    # pyparsing 3.2.4: "Fix type annotations for replace_with (Issue #602)", pushed by the maintainer
    k = Knowledge("v1..v2", None, [], [_commit(1, "Fix type annotations for replace_with (Issue #602)",
                                               author=("ptmcg", "ptmcg@example.org"),
                                               committer=("ptmcg", "ptmcg@example.org"))])
    item = "- Fixed type annotation for `replace_with`, to accept `Any` type. Fixes Issue #{n}, reported by esquonk.\n"
    assert _flags(k, item, "CHANGES", 602, 603) == {"Issue #603"}


def test_the_maintainer_who_pushed_the_release_pushed_his_other_commits_too() -> None:
    # eslint-plugin-react 7.37.4: ljharb pushed "[types] fix types of flat configs" (Fixes #3874) and the
    # release; the contributor's own commit was fast-forwarded, so no commit of another was landed by him
    ljharb = ("Jordan H", "jh@example.org")
    k = Knowledge("v1..v2", _hash(3), [], [
        _commit(3, "Update CHANGELOG and bump version", author=ljharb, committer=ljharb, parents=(2,)),
        _commit(2, "[types] fix types of flat configs", "Fixes #3874.", author=ljharb, committer=ljharb, parents=(1,)),
        _commit(1, "[Fix] `no-unknown-property`: support `onBeforeToggle`", author=("Andrew P", "ap@example.org"),
                committer=("Andrew P", "ap@example.org"))])
    item = "* [types] fix types of flat configs ([#{n}][] @ljharb)\n"
    assert _flags(k, item, "CHANGELOG.md", 3874, 3875) == {"#3875"}


def test_an_identifier_in_an_item_restates_the_words_of_its_commits_title() -> None:
    # cattrs 25.1.0: "raise `StructureHandlerNotFoundError` more eagerly" is "Raise errors for missing structure
    # handlers more eagerly (#577)", committed by its author
    tin = ("Tin T", "tin@example.org")
    k = Knowledge("v1..v2", None, [], [_commit(1, "Raise errors for missing structure handlers more eagerly (#577)",
                                               author=tin, committer=tin)])
    item = ("- **Potentially breaking**: The converters raise {{class}}`StructureHandlerNotFoundError` more eagerly "
            "(on hook creation, instead of on hook use). ([#{n}](https://github.com/o/r/pull/{n}))\n")
    assert _flags(k, item, "HISTORY.md", 577, 578) == {"#578", "/pull/578"}


def test_the_pull_requests_that_merged_an_item_stand_in_place_of_none_of_its_commits_numbers() -> None:
    # click 8.4.2: the fix says "Fix regression introduced in 8.4.0 by #3126 and properly fix #3043 and #3502";
    # the item names it with the pull requests that merged it, #3504 and its backport #3508
    kevin = ("Kevin D", "kd@example.org")
    k = Knowledge("v1..v2", None, [], [
        _commit(2, "Backport #3504 from `main` to `stable` branch (#3508)", parents=(9, 1), author=kevin),
        _commit(1, "Fix broken fish completion and multiline help string",
                "Fix regression introduced in 8.4.0 by #3126 and properly fix #3043 and #3502",
                author=("Sitiyou", "s@example.org"), committer=kevin)])
    item = ("- Fix Fish shell completion broken in `8.4.0` by {{pr}}`{n}`. Newlines and tabs in option help text are "
            "now escaped. {{issue}}`3502` {{issue}}`3043` {{pr}}`3504` {{pr}}`3508`\n")
    assert _flags(k, item, "CHANGES.md", 3126, 3127) == {"{pr}`3127`"}


def _unsupported(k: Knowledge, text: str, name: str = "CHANGES") -> set[str]:
    return {u["token"] for u in grade_with(text, name, k)["unsupported"]}


LEXERS = [_commit(10, "Fix catastrophic backtracking in archetype GUID patterns (#10)",
                  paths=("pygments/lexers/archetype.py",)),
          _commit(11, "Haskell: handle escape sequences in character literals (#11)",
                  paths=("pygments/lexers/haskell.py",)),
          _commit(12, "Fix ASN.1 lexer: recognize minus sign and fix range operator (#3060)", "Fixes #3014",
                  paths=("pygments/lexers/asn1.py",)),
          _commit(13, "Fix GetElem in Lean 4 (#2946)", paths=("pygments/lexers/lean.py",))]


def test_a_nested_item_is_read_with_its_parents_not_its_siblings() -> None:
    # pygments 2.20.0 (blind12): "* Lean4: Add operators" was read with the thirty lexers listed before it,
    # a long item sharing one word (`lexer`) with "Fix GetElem in Lean 4", so called invented
    k = Knowledge("v1..v2", None, [], LEXERS)
    k.diff_of = lambda commit: diff_words("@@ -1 +1 @@ class Lean4Lexer(RegexLexer):\n-x\n+y\n")
    section = ("- Updated lexers:\n\n"
               "  * archetype: Fix catastrophic backtracking in GUID patterns (#10)\n"
               "  * Haskell: Handle escape sequences in character literals (#11)\n"
               "  * Lean4: Add operators ``]'``, ``]?``, ``]!``  (#2946)\n")
    assert _unsupported(k, section) == set()
    # a parent that only labels the group ("Updated lexers:") ties no invented item to an issue
    invented = "  * Deprecate the `legacy_mode` argument of `connect()` in favour of `strict` #3014\n"
    assert _unsupported(k, section + invented) == {"#3014"}
    assert _unsupported(k, section + "  * ASN.1: Recognize minus sign and fix range operator (#3014, #3060)\n") \
        == set()


def test_a_topic_an_item_opens_with_is_no_conventional_kind() -> None:
    # pygments 2.19.0 (blind12): "BQN: Various improvements (#2789)" restates the merge's title "Various
    # improvements to the BQN lexer"; `BQN:` was dropped as if it were `docs:`, and a wrong number passed
    k = Knowledge("v1..v2", None, [], [
        _commit(2, "Merge pull request #2789 from tz/bqn/inter-word-chars", "Various improvements to the BQN lexer",
                parents=(9, 1)),
        _commit(1, "Fix BQN lexer treating special characters as word chars", paths=("pygments/lexers/bqn.py",))])
    assert _unsupported(k, "  * BQN: Various improvements (#2789)\n") == set()
    assert _unsupported(k, "  * BQN: Various improvements (#2790)\n") == {"#2790"}


def test_words_that_judge_a_change_say_nothing_of_which_it_is() -> None:
    # pygments 2.19.0 (blind12): "Improve test robustness (#2812)" for a fix to the script checking the sources
    k = Knowledge("v1..v2", None, [], [
        _commit(2, "Merge pull request #2812 from jm/issue-2811-decoding-error-in-check_sources", parents=(9, 1)),
        _commit(1, "fixes #2811: exit from bad utf-8 in check_sources", paths=("scripts/check_sources.py",))])
    k.diff_of = lambda commit: diff_words("+            except UnicodeDecodeError as err:\n")
    assert _unsupported(k, "* Improve test robustness (#2812)\n") == set()
    assert _unsupported(k, "* Add prebuilt wheels and binaries for Windows on ARM64 (#2812)\n") == {"#2812"}


def test_a_commit_writing_the_changelog_entry_did_not_make_the_change() -> None:
    # go-task 3.51.1 (blind12): "docs(changelog): add entry for #2820" by the maintainer, whose account git
    # states, was taken for one of the commits that made #2820, so the contributor's credit was called wrong
    andrey = ("Andrey Nering", "7011819+andreynering@users.noreply.github.com")
    k = Knowledge("v1..v2", None, [], [
        _commit(3, "Update the shell interpreter (#2832)", author=andrey),
        _commit(2, "docs(changelog): add entry for #2820", author=andrey, committer=andrey, paths=("CHANGELOG.md",)),
        _commit(1, "perf(templater): skip template engine for strings without `{{` (#2820)",
                author=("Roman Dahm", "roman.dahm@gmx.de"), paths=("internal/templater/templater.go",))])
    item = ("- A significant performance boost was achieved for large Taskfiles (monorepos)\n"
            "  by skipping templating altogether when the string is static (#2820 by @{}).\n")
    assert _unsupported(k, item.format("romnn"), "CHANGELOG.md") == set()
    assert _unsupported(k, item.format("andreynering"), "CHANGELOG.md") == {"@andreynering"}


def test_a_person_credited_by_name_is_checked_against_who_made_the_change() -> None:
    # Sphinx (blind11): every item ends "Patch by Full Name", a credit git can check by the author's name
    assert [(c.token, c.role) for c in read_claims("Patch by Ann Lee in #12, and Contributed by Bo Chen & Cy Ng.")
            if c.kind == "author"] == [("Ann Lee", "name"), ("Bo Chen", "names"), ("Cy Ng", "names")]
    assert [c for c in read_claims("Patch by the team.") if c.kind == "author"] == []
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "autodoc: Fix duplicate ``:no-index-entry:`` for modules (#14190)",
                author=("Adam Turner", "9087854+AA-Turner@users.noreply.github.com")),
        _commit(2, "latex tables: Fix rendering for grid filled merged vertical cells (#14024)",
                author=("Tim Nordell", "tim@example.org"))])
    item = "* #14190: autodoc: Fix duplicate ``:no-index-entry:`` for modules.\n  Patch by {}\n"
    assert _unsupported(k, item.format("Adam Turner"), "CHANGES.rst") == set()
    # git names the person credited as the author of another change of the range, and not of this one
    assert _unsupported(k, item.format("Tim Nordell"), "CHANGES.rst") == {"Tim Nordell"}
    # a name git ties to no commit, or one of several credited together, says nothing git can check
    assert _unsupported(k, item.format("Jean-François B."), "CHANGES.rst") == set()
    assert _unsupported(k, item.format("Adam Turner and Tim Nordell"), "CHANGES.rst") == set()
    # a commit the item's words restate, with no number of the item, decides nothing against a name
    # (Sphinx 7.3.0: an issue's item restating the maintainer's own follow-up commit)
    words_only = "* #14189: autodoc: Fix duplicate ``:no-index-entry:`` for modules.\n  Patch by {}\n"
    for name in ("Adam Turner", "Tim Nordell"):
        assert name not in _unsupported(k, words_only.format(name), "CHANGES.rst")


def test_a_release_emptying_the_changelog_fragments_carries_none_of_their_numbers() -> None:
    # aiohttp 3.14.0 (blind11, graded without the repository): "Release v3.14.0 (#12757)" deletes the 76
    # fragments it collects into CHANGES.rst, and five long items were called the release's change
    release = _commit(2, "Release v3.14.0 (#12757)", paths=("CHANGES.rst",))
    release["files"] += [{"path": f"CHANGES/{n}.feature.rst", "added": 0, "deleted": 1, "binary": False}
                         for n in (12571, 12592)]
    k = Knowledge("v1..v2", None, [], [release, _commit(1, "Add the socket factory (#12592)",
                                                        paths=("CHANGES/12592.feature.rst", "aiohttp/connector.py"))])
    item = ("- Added support for reading the proxy settings of every platform from its own configuration "
            "registry on start -- by :user:`ann`.\n\n\n  *Related issues and pull requests on GitHub:*\n"
            "  :issue:`12571`.\n")
    assert _unsupported(k, item, "CHANGES.rst") == set()
    assert k.by_ref.get("12571") is None
    assert [c.subject for c in k.by_ref["12592"]] == ["Add the socket factory (#12592)"]


def test_a_restructuredtext_target_names_a_link_not_the_release() -> None:
    # Sphinx 7.3.0 (stress check): `.. _Docutils 0.21: URL` was read as the release's version
    k = Knowledge("v7.37.4..v7.37.5", "c" * 40, TAG, [_commit(1, "Update CHANGELOG and bump version")])
    target = ".. _Docutils 0.21.2: https://docutils.sourceforge.io/RELEASE-NOTES.html#release-0-21-2024-04\n"
    assert _unsupported(k, "Release 7.37.5\n==============\n\n" + target, "CHANGES.rst") == set()
    # a Markdown link definition of a version still names a release
    assert _unsupported(k, "## [7.37.5]\n\n[7.37.9]: https://github.com/o/r/compare/v7.37.4...v7.37.9\n",
                        "CHANGELOG.md") >= {"7.37.9"}


def _dated(c: dict[str, Any], day: str) -> dict[str, Any]:
    for who in ("author", "committer"):
        c[who]["date"] = f"{day}T10:00:00+00:00"
    return c


def test_a_release_is_dated_the_day_a_commit_prepared_it() -> None:
    # rust-lang/log 0.4.30 (blind13): "## [0.4.30] - 2026-05-21", the day of "prepare for 0.4.30 release",
    # tagged four days later on 2026-05-25
    tag = [{"name": "0.4.30", "commit": "c" * 40, "date": "2025-04-05T12:00:00+00:00"}]
    prep = _dated(_commit(1, "prepare for 0.4.30 release"), "2025-04-01")
    prepared = Knowledge("0.4.29..0.4.30", "c" * 40, tag, [prep])
    for day in ("2025-04-01", "2025-04-05"):
        assert _verdicts(prepared, f"## [0.4.30] - {day}", heading=True)[day] == "supported"
    # once a commit says which day the release was prepared, neither the day before the tag nor the day
    # after it is assumed (rust-lang/log 0.4.28's plant: 2025-09-05, prepared on 09-02, tagged on 09-04)
    for day in ("2025-04-03", "2025-04-04", "2025-04-06"):
        assert _verdicts(prepared, f"## [0.4.30] - {day}", heading=True)[day] == "unsupported"
    # a commit naming another version (0.4.300) prepared another release
    other_prep = _dated(_commit(1, "prepare for 0.4.300 release"), "2025-04-01")
    other = Knowledge("0.4.29..0.4.30", "c" * 40, tag, [other_prep])
    assert _verdicts(other, "## [0.4.30] - 2025-04-01", heading=True)["2025-04-01"] == "unsupported"
    assert _verdicts(other, "## [0.4.30] - 2025-04-04", heading=True)["2025-04-04"] == "supported"


def test_a_release_bumped_on_its_tag_day_may_be_dated_the_day_before() -> None:
    # michalmuskala/jason 1.4.1 (blind14): `## 1.4.1 (06.07.2023)`, its change written on 2023-07-06,
    # "Bump 1.4.1" and the tag on 2023-07-07: a commit of the tag's own day says nothing of the day before
    tag = [{"name": "v1.4.1", "commit": "c" * 40, "date": "2025-04-05T10:27:00+01:00"}]
    bump = _dated(_commit(1, "Bump 1.4.1"), "2025-04-05")
    k = Knowledge("v1.4.0..v1.4.1", "c" * 40, tag, [bump])
    for day in ("2025-04-04", "2025-04-05", "2025-04-06"):
        assert _verdicts(k, f"## 1.4.1 ({day})", heading=True)[day] == "supported"
    for day in ("2025-04-02", "2025-04-08"):  # a date moved three days either way
        assert _verdicts(k, f"## 1.4.1 ({day})", heading=True)[day] == "unsupported"


def test_an_item_retelling_the_pull_request_description_is_about_it() -> None:
    # mkdocs 1.6.0 (blind13): hand-written prose sharing no word with the title "Improve editing experience
    # when using `--livereload`" but seven with its description was called invented
    k = Knowledge("v1..v2", None, [], [_commit(
        1, "Improve editing experience when using `--livereload` (#3391)",
        "The livereload server connection is cancelled when the tab becomes inactive.\n"
        "Once a tab becomes active, the livereload connection is immediately established again.",
        paths=("mkdocs/livereload/__init__.py",))])
    k.diff_of = lambda commit: diff_words("+    if (document.visibilityState === 'hidden') { stop(); }\n"
                                          "+    window.addEventListener('visibilitychange', resume);\n")
    item = ("* `mkdocs serve` no longer locks up the browser when more than 5 tabs are open. This is achieved by "
            "closing the polling connection whenever a tab becomes inactive. Background tabs will no longer "
            "auto-reload either - that will instead happen as soon the tab is opened again. Context: #3391\n")
    assert _unsupported(k, item, "release-notes.md") == set()
    invented = "* Add a `retry_forever` option that keeps every failed upload in a local queue. Context: #3391\n"
    assert _unsupported(k, invented, "release-notes.md") == {"#3391"}


def test_a_number_in_place_of_the_items_own_is_not_excused_by_another_it_cites() -> None:
    # mkdocs 1.5.3 (blind13's missed plant): "(#3367, #3381)" written "(#3368, #3381)"; #3368 is another
    # pull request of the range, saying none of the item's words
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Allow plugins to provide their own `Page` (#3367)"),
        _commit(2, "Keep the prior behavior of overwriting File.page (#3381)",
                "unless the page value is a *strict* subclass of Page"),
        _commit(3, 'Switch to "ruff" linter, enable many of its rules (#3368)')])
    # the linter's pull request rewrote lines across the code base: its diff holds every word of the item
    k.diff_of = lambda commit: diff_words("+    # plugins can set File.page to their own subclass of Page; there is\n"
                                          "+    # also a warning if it is set to anything other than a strict one\n"
                                          if commit == _hash(3) else "")
    item = ("* Plugins can now set `File.page` to their own subclass of `Page`. There is also now a warning if "
            "`File.page` is set to anything other than a strict subclass of `Page`. ({}, #3381)\n")
    assert _unsupported(k, item.format("#3367"), "release-notes.md") == set()
    assert _unsupported(k, item.format("#3368"), "release-notes.md") == {"#3368"}


def test_the_projects_name_does_not_tie_an_item_to_a_commit() -> None:
    # mkdocs 1.5.0 (blind13): "`mkdocs --no-color build` disables color output ... Context: #3282" was taken
    # for "Add `mkdocs build --no-strict` ... (#3254)" by the words mkdocs, build and true
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Add `mkdocs build --no-strict` that overrides `strict: true` (#3254)",
                paths=("src/mkdocs/commands/build.py",)),
        _commit(2, "Make colorful/indented output optional, decrease indent (#3282)",
                paths=("src/mkdocs/__main__.py",)),
        _commit(3, "Fix the search plugin's index on Windows (#3283)", paths=("src/mkdocs/contrib/search.py",))])
    item = ("* `mkdocs --no-color build` disables color output and line wrapping. This option is also available "
            "through an environment variable `NO_COLOR=true`. Context: {}\n")
    assert _unsupported(k, item.format("#3282"), "release-notes.md") == set()
    strict = "* `mkdocs build --no-strict` overrides the `strict` config to `false`. Context: {}\n"
    assert _unsupported(k, strict.format("#3254"), "release-notes.md") == set()
    assert _unsupported(k, strict.format("#3283"), "release-notes.md") == {"#3283"}


# The plants the whole bench still missed after blind14 (2026-12-07), closed as classes.


def test_a_merge_and_the_commit_it_brought_in_are_one_change() -> None:
    # pluggy 1.4.0: the item restates "hooks: fix `call_extra` extra methods ..." (Fix #441) and the merge
    # that brought it in, titled "Fix `call_extra` call ordering regression ..."; two commits alike were no
    # commit at all, so #442 for #441 passed
    branch = _commit(2, "hooks: fix `call_extra` extra methods getting ordered before everything else",
                     "when there is at least one wrapper impl.\n\nFix #441.", parents=(1,))
    merge = _commit(3, "Merge pull request #472 from bluetech/call-extra-ordering-fix",
                    "Fix `call_extra` call ordering regression in pluggy 1.1.0", parents=(1, 2))
    k = Knowledge("v1..v2", _hash(3), [], [merge, branch, _commit(1, "Preparing release 1.3.0")])
    item = ("- `#{0} <https://github.com/o/r/issues/{0}>`_: Fix ``call_extra()`` extra methods getting ordered "
            "before everything else in some circumstances. Regressed in 1.1.0.\n")
    assert _unsupported(k, item.format(441), "CHANGELOG.rst") == set()
    assert _unsupported(k, item.format(472), "CHANGELOG.rst") == set()  # the pull request that merged it
    assert _unsupported(k, item.format(442), "CHANGELOG.rst") == {"#442", "/issues/442"}
    # two commits alike that are not one change still name no commit
    twin = _commit(4, "hooks: fix `call_extra` extra methods getting ordered before everything else (#473)")
    k2 = Knowledge("v1..v2", None, [], [branch, twin])
    assert _unsupported(k2, item.format(442), "CHANGELOG.rst") == set()
    # a pull request link is not held to the merge's number so: gunicorn cites the issues its merges fixed
    # as `/pull/3662` ("Merge pull request #3688 from benoitc/feat/reload-extra-file")
    pulled = item.replace("/issues/", "/pull/")
    assert _unsupported(k, pulled.format(440), "CHANGELOG.rst") == set()


def test_an_item_naming_a_version_restates_no_title_naming_others() -> None:
    # pluggy 1.6.0: "Python 3.8 is no longer supported" (#556) shares `python` and `support` with the whole
    # two-word title of "Add support for Python 3.12 and 3.13" and of the merge of #538 that brought it
    add = _commit(2, "Add support for Python 3.12 and 3.13", parents=(1,))
    merge = _commit(3, "Merge pull request #538 from hugovk/add-3.13", "Add support for Python 3.12 and 3.13",
                    parents=(1, 2))
    k = Knowledge("v1..v2", _hash(3), [], [merge, add, _commit(1, "Preparing release 1.5.0")])
    item = "- `#556 <https://github.com/o/r/issues/556>`_: Python 3.8 is no longer supported.\n"
    assert _unsupported(k, item, "CHANGELOG.rst") == set()
    # naming one of its versions, it restates that title
    assert _unsupported(k, item.replace("Python 3.8 is no longer", "Python 3.13 is now"), "CHANGELOG.rst") == \
        {"#556", "/issues/556"}


def test_what_an_item_quotes_is_code_however_plain_its_word() -> None:
    # pip-tools 7.6.0 and sqlmodel 0.0.35: an invented `Session.request()` item credited to a pull request whose
    # messages say "session" and "request" (a proxied repository's session); the item's quoted `timeout` and
    # `deadline=` were plain words once the markup was gone, and nothing else named code git does not hold
    k = Knowledge("v1..v2", None, [], [_commit(1, "refactor(local): accept any BaseRepository as the proxied repo "
                                                  "(#2387)", "The session's request cache is kept.",
                                               paths=("piptools/repositories/local.py",))])
    k.diff_of = lambda commit: diff_words("+    def __init__(self, proxied: BaseRepository, session: Session):\n"
                                          "+        # accept any repository; its request cache is kept\n")
    invented = ("- **Breaking:** `Session.request()` no longer accepts a `timeout` argument; pass `deadline=` "
                "instead (#2387)\n")
    assert _unsupported(k, invented, "CHANGELOG.md") == {"#2387"}
    # the same words unquoted are prose, and code the diff holds is the change's
    assert _unsupported(k, invented.replace("`timeout`", "timeout").replace("`deadline=`", "a deadline"),
                        "CHANGELOG.md") == set()
    true = "- **Breaking:** `LocalRequirementsRepository` now accepts any `BaseRepository` as `proxied` (#2387)\n"
    assert _unsupported(k, true, "CHANGELOG.md") == set()
    # a role's quotes mark no code: a credit (`:user:`), a reference (`` `#2387 <url>`_ ``)
    rst = ("- Accept any repository as the proxied one, keeping the session's request cache -- by :user:`webknjaz` "
           "`#2387 <https://github.com/o/r/pull/2387>`_\n")
    assert _unsupported(k, rst, "CHANGES.rst") == set()
    # nor do a quoted commit's or version's (`[`c76b232`](.../commit/...)`); and one quoted word git holds
    # nothing of may be a name misspelt (pygments' "Update ``rtt`` style ..." for "rrt style: ...")
    linked = "- [`a000000`](https://github.com/o/r/commit/a000000) Accept any proxied repository `2.0` (#2387)\n"
    assert _unsupported(k, linked, "CHANGELOG.md") == set()
    assert _unsupported(k, invented.replace("`deadline=`", "a deadline"), "CHANGELOG.md") == set()


def test_a_diff_so_large_it_holds_most_words_of_any_item_ties_no_long_item_to_its_pull_request() -> None:
    # packaging 24.2: "Support reading settings from a YAML file in the user's config directory" credited to
    # "PEP 639: Implement License-Expression and License-File (#828)": one word (`file`) met in the title, and the
    # 1,004-word diff holds `config`, `directory` and `read` as it holds most words of any item
    k = Knowledge("v1..v2", None, [], [_commit(1, "PEP 639: Implement License-Expression and License-File (#828)",
                                               paths=("src/packaging/licenses/__init__.py",))])
    filler = " ".join(f"word{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676)}" for i in range(1100))
    large = diff_words(f"+    {filler}\n+    config = read(directory)\n")
    small = diff_words("+    config = read(directory)\n+    license_expression = canonicalize(value)\n")
    invented = "- Support reading settings from a YAML file in the user's config directory (#828)\n"
    k.diff_of = lambda commit: large
    assert _unsupported(k, invented, "CHANGELOG.md") == {"#828"}
    # a diff of a few lines holding three of its words still ties it (a third of the item, not chance)
    small_k = Knowledge("v1..v2", None, [], [_commit(1, "PEP 639: Implement License-Expression and License-File "
                                                        "(#828)", paths=("src/packaging/licenses/__init__.py",))])
    small_k.diff_of = lambda commit: small
    assert _unsupported(small_k, invented, "CHANGELOG.md") == set()
    # the change's own item shares more than one word with the messages, however large the diff
    true = "- Add support for PEP 639 license expressions and license files (#828)\n"
    assert _unsupported(k, true, "CHANGELOG.md") == set()


# The class found on the blind16 set (vite, tokio, zap, clap).


def test_a_change_a_pull_request_merging_branches_carried_over_keeps_its_original_number() -> None:
    # tokio 1.52.4 (blind16): "taskdump: remove crate disambiguators from output ([#8264])" for the cherry-pick
    # "taskdump: ... (#8288)", which the pull request "Merge 'tokio-1.51.4' into 'tokio-1.52.x' (#8288)" brought
    picked = _commit(2, "taskdump: remove crate disambiguators from output (#8288)", parents=(1,))
    fix = _commit(3, "runtime: don't skip the driver when `before_park` schedules work (#8222)", parents=(1,))
    merge = _commit(4, "Merge 'tokio-1.51.4' into 'tokio-1.52.x' (#8288)", parents=(2, 3))
    k = Knowledge("v1..v2", _hash(4), [], [merge, fix, picked])
    item = "- taskdump: remove crate disambiguators from output ([#{0}])\n\n[#{0}]: https://github.com/o/r/pull/{0}\n"
    assert _unsupported(k, item.format(8264), "CHANGELOG.md") == set()
    assert _unsupported(k, item.format(8288), "CHANGELOG.md") == set()
    # the original was opened before the pull request that carried it over: a higher number is none
    assert _unsupported(k, item.format(8289), "CHANGELOG.md") == {"#8289"}
    # a change of its own pull request is still held to its number
    assert _unsupported(k, "- runtime: don't skip the driver when `before_park` schedules work (#8223)\n",
                        "CHANGELOG.md") == {"#8223"}
    # and a commit naming the number of a merge of a pull request's branch is no change carried over
    github = _commit(4, "Merge pull request #8288 from alice/taskdump", parents=(2, 3))
    k2 = Knowledge("v1..v2", _hash(4), [], [github, fix, picked])
    assert _unsupported(k2, item.format(8264), "CHANGELOG.md") == {"#8264"}
