"""The writer's lines and its configured group map (`[notes.groups]`): a change the map takes is listed under its
heading, by path, folder, glob or subject label; breaking changes, deprecations and removals stay
first whatever the map says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.notes.changes import (
    BREAKING,
    DEPRECATED,
    FEATURES,
    FIXES,
    changelog_lines,
    configured_group,
    major_release,
    tag_package,
)
from signoff.notes.facts import area_of
from signoff.notes.run import configured_groups


def _commit(n: int, subject: str, areas: tuple[str, ...] = ("code",)) -> dict[str, Any]:
    return {"kind": "commit", "hash": f"{n:040x}", "subject": subject, "title": subject, "author": "Kim",
            "email": "kim@example.org", "merge": False, "pr": None, "breaking": False, "areas": list(areas)}


GROUPS = {"Command line": ["src/cli/", "label:cli"], "Parser": ["src/*/parse*.py"]}
COMMITS = [
    _commit(1, "Add a --json option to the export command"),
    _commit(2, "Fix the parser on tabs in headers"),
    _commit(3, "[cli] Fix colours on Windows terminals"),
    _commit(4, "Deprecate the old command names in favour of the new"),
    _commit(5, "Add a retry budget to the client"),
    _commit(6, "Remove the Python 3.8 code paths everywhere"),
]
PATHS = {f"{1:040x}": ["src/cli/export.py", "tests/test_export.py"], f"{2:040x}": ["src/pkg/parser.py"],
         f"{4:040x}": ["src/cli/names.py"], f"{5:040x}": ["src/client.py"], f"{6:040x}": ["src/cli/compat.py"]}


def test_a_configured_map_groups_by_folder_glob_and_label_after_the_leading_groups() -> None:
    lines = [(line.group, line.text) for line in changelog_lines(COMMITS, GROUPS, PATHS)]
    assert lines == [
        (DEPRECATED, "Deprecate the old command names in favour of the new."),
        ("Removals", "Remove the Python 3.8 code paths everywhere."),
        ("Command line", "Add a --json option to the export command."),
        ("Command line", "Fix colours on Windows terminals."),
        ("Parser", "Fix the parser on tabs in headers."),
        (FEATURES, "Add a retry budget to the client."),
    ]


def test_without_a_map_the_kind_of_change_groups() -> None:
    groups = {line.text: line.group for line in changelog_lines(COMMITS)}
    assert groups["Add a --json option to the export command."] == FEATURES
    assert groups["Fix the parser on tabs in headers."] == FIXES


def test_a_breaking_change_stays_first_whatever_the_map_says() -> None:
    breaking = {**_commit(7, "feat(cli)!: drop the -q flag (#9)"), "pr": "9"}
    feature = {**_commit(8, "feat(cli): add a --quiet flag (#10)"), "pr": "10"}
    fix = {**_commit(9, "fix(core): keep the last line (#11)"), "pr": "11"}
    lines = [(line.group, line.text) for line in changelog_lines([feature, breaking, fix], GROUPS)]
    assert lines == [(BREAKING, "Cli: drop the -q flag (#9)."), ("Command line", "Cli: add a --quiet flag (#10)."),
                     (FIXES, "Core: keep the last line (#11).")]


def test_patterns_match_whole_folders_and_labels_only() -> None:
    assert configured_group(GROUPS, "Tidy", ["src/cli/x.py"]) == "Command line"
    assert configured_group(GROUPS, "Tidy", ["src/client.py"]) is None  # src/cli is not a prefix of src/client
    assert configured_group(GROUPS, "CLI: tidy", []) == "Command line"
    assert configured_group(GROUPS, "fix(cli): tidy", []) == "Command line"
    assert configured_group(GROUPS, "Tidy the cli", []) is None


def test_a_breaking_change_pushed_beside_pull_requests_is_listed_first_with_its_commit() -> None:
    # yargs v17.7.2..v18.0.0: `feat!: yargs is now ESM first` has no pull request number, and
    # `feat: commandDir now works with ESM files (#2461)` changed only documentation and tests.
    prs = [{**_commit(20 + i, f"fix: keep line {i} when no newline ends the file (#{30 + i})"), "pr": str(30 + i)}
           for i in range(3)]
    esm = {**_commit(0xd90af45f18, "feat!: yargs is now ESM first"), "hash": "d90af45f18" + "0" * 30}
    documented = {**_commit(24, "feat: commandDir now works with ESM files (#2461)", ("docs", "tests")), "pr": "2461"}
    tidy = _commit(25, "Tidy the release script a little")  # the release machinery: left out
    lines = [(line.group, line.text) for line in changelog_lines([*prs, esm, documented, tidy])]
    assert lines[0] == (BREAKING, "Yargs is now ESM first (d90af45f18).")
    assert (FEATURES, "commandDir now works with ESM files (#2461).") in lines  # the option as spelled
    assert not any("release script" in text for _, text in lines)


def test_merged_pull_requests_about_branches_changelogs_tests_or_docs_are_told_by_their_title() -> None:
    # pallets/click 8.2.2..8.3.0: a merge commit lists no files, so its title is all there is.
    titles = {"Merge stable into main": None, 'Revert "Revert "Merge Stable into master""': None,
              "Add missing changes entries": None, "Add more tests on `Enum` rendering": None,
              "This is a small refactor to regroup all sentinels": None,
              "Move Prompts doc from reST to MyST": "Documentation",
              "Fix completions for quoted/escaped parameters in Fish": FIXES,
              # sharkdp/fd v10.1.0..v10.2.0: a release prepared in its own pull request, lints fixed
              "Prepare for 10.2.0 release": None, "Fix up some lints on Windows": None,
              "Fix clippy warnings": None, "Fix the DeprecationWarning raised on import": FIXES,
              "Fix linting of YAML anchors in the config checker": FIXES}
    merges = [{**_commit(40 + i, title, ()), "merge": True, "pr": str(3000 + i)} for i, title in enumerate(titles)]
    listed = {line.text.rsplit(" (#", 1)[0]: line.group for line in changelog_lines(merges)}
    assert listed == {title: group for title, group in titles.items() if group is not None}


def test_the_map_is_read_from_the_notes_section_and_a_malformed_one_is_refused() -> None:
    def settings(groups: object) -> Settings:
        return Settings(home=Path("home"), db_url="sqlite:///unused", raw={"notes": {"groups": groups}})

    assert configured_groups(settings(GROUPS)) == GROUPS
    assert configured_groups(Settings(home=Path("home"), db_url="sqlite:///unused")) == {}
    for bad in (["src/"], {"Parser": "src/parse.py"}, {"Parser": []}, {"": ["src/"]}, {"Parser": [3]}):
        with pytest.raises(UsageError) as refused:
            configured_groups(settings(bad))
        assert refused.value.fix and "[notes.groups]" in refused.value.fix


def test_gitmoji_subjects_are_read_as_the_kinds_they_stand_for() -> None:
    # fastapi/sqlmodel 0.0.39: every subject starts with a gitmoji; CI, bumps and refactors stay out
    commits = [_commit(1, "✨ Add SQLModel Agent Library Skill (#2017)"),
               _commit(2, "🐛 Fix type of `__sqlmodel_relationships__` (#1996)"),
               _commit(3, "📝 Update admonitions, simplify and use defaults (#1915)", ("docs",)),
               _commit(4, "👷 Automate release preparation (#1988)", ("ci",)),
               _commit(5, "⬆️ Bump Pydantic to 2.13.4 (#1985)"),
               _commit(6, "♻️ Migrate docs to Zensical (#1913)"),
               _commit(7, "💥 Drop support for Python 3.8 (#1999)"),
               _commit(8, ":bug: Fix a crash on empty input (#2001)")]
    for c in commits:
        c["pr"] = c["subject"].rsplit("#", 1)[1].rstrip(")")
    lines = [(line.group, line.text) for line in changelog_lines(commits)]
    assert lines == [(BREAKING, "Drop support for Python 3.8 (#1999)."),
                     (FEATURES, "Add SQLModel Agent Library Skill (#2017)."),
                     (FIXES, "Fix type of `__sqlmodel_relationships__` (#1996)."),
                     (FIXES, "Fix a crash on empty input (#2001)."),
                     ("Documentation", "Update admonitions, simplify and use defaults (#1915).")]


def test_a_conventional_docs_commit_about_the_changelog_is_housekeeping() -> None:
    # uuidjs/uuid 12.0.0: "docs: fix CHANGELOG links. fixes #871 (#896)"
    commits = [_commit(1, "docs: fix CHANGELOG links. fixes #871", ("docs",)),
               _commit(2, "docs: add motivation for dropping CJS support", ("docs",)),
               _commit(3, "fix: restore node: prefix")]
    assert [line.text for line in changelog_lines(commits)] == ["Restore node: prefix.",
                                                                 "Add motivation for dropping CJS support."]


def _pr(n: int, subject: str, areas: tuple[str, ...] = ("code",)) -> dict[str, Any]:
    return {**_commit(n, subject, areas), "pr": subject.rsplit("(#", 1)[1].rstrip(")")}


def test_an_area_before_the_colon_is_no_conventional_type_and_stays_in_the_line() -> None:
    # tokio-rs/tokio tokio-1.52.4..tokio-1.53.0 (checked as a user on 2026-12-07): `sync:`, `io:` are areas, so
    # every line went under Other changes without its area; the maintainers keep the area and file
    # doc comments under Documented, "remove unnecessary ..." under Changed
    commits = [_pr(1, "sync: wake mpsc receiver when a queued `reserve[_many]` returns permits (#8260)"),
               _pr(2, "io: do not treat zero-length reads as EOF in `Chain` (#8251)"),
               _pr(3, "fs: add safe impl From<OwnedFd> for File (#8266)"),
               _pr(4, "sync: document memory ordering guarantees for Semaphore (#8119)"),
               _pr(5, "task: explain why `yield_now` defers its waker (#8254)"),
               _pr(6, "time: fix reversed poll order in timeout doc (#8214)"),
               _pr(7, "tracing: remove unnecessary span clone (#8126)"),
               _pr(8, "net: enable Miri tests for TCP socket (#8156)"),
               _pr(9, "chore: prepare Tokio v1.53.0 (#8294)"),
               _pr(10, "taskdump: remove crate disambiguators from output (#8264)"),
               _pr(11, "signal: merge windows statics (#8231)"),
               _pr(12, "Merge 'tokio-1.52.4' into 'master' (#8290)")]
    lines = [(line.group, line.text) for line in changelog_lines(commits)]
    # #8264 removes nothing users had (tokio 1.52.4 lists it under "Fixed (unstable)"): no Removal
    assert lines == [(FEATURES, "Fs: add safe impl From<OwnedFd> for File (#8266)."),
                     (FIXES, "Io: do not treat zero-length reads as EOF in `Chain` (#8251)."),
                     ("Other changes",
                      "Sync: wake mpsc receiver when a queued `reserve[_many]` returns permits (#8260)."),
                     ("Other changes", "Tracing: remove unnecessary span clone (#8126)."),
                     ("Other changes", "Taskdump: remove crate disambiguators from output (#8264)."),
                     ("Other changes", "Signal: merge windows statics (#8231)."),
                     ("Documentation", "Sync: document memory ordering guarantees for Semaphore (#8119)."),
                     ("Documentation", "Task: explain why `yield_now` defers its waker (#8254)."),
                     ("Documentation", "Time: fix reversed poll order in timeout doc (#8214).")]


def test_a_message_made_clearer_is_a_change_not_documentation() -> None:
    # pytest-dev/pytest-xdist v3.6.1..v3.7.0: the maintainers list it as a change
    commit = _pr(1, "Clarify error message to indicate that users should refer to the documentation of pytest-xdist "
                    "(#1092)", ("code", "tests"))
    assert [line.group for line in changelog_lines([commit])] == ["Other changes"]


def test_a_change_reverted_within_the_range_is_left_out_with_its_revert() -> None:
    # gin-gonic/gin v1.10.0..v1.11.0 listed both #4103 and its revert #4245
    commits = [_pr(1, 'Revert "fix(time): binding time with empty value (#4103)" (#4245)'),
               _pr(2, "fix(time): binding time with empty value (#4103)"),
               _pr(3, "fix(binding): prevent duplicate decoding and add validation in decodeToml (#4193)"),
               _pr(4, 'Revert "feat: drop the old router" (#4250)')]  # reverts a change of an earlier release: stays
    assert [line.text for line in changelog_lines(commits)] == [
        "Binding: prevent duplicate decoding and add validation in decodeToml (#4193).",
        'Revert "feat: drop the old router" (#4250).']


def test_a_list_marker_kept_in_a_merged_title_and_a_gitmoji_before_a_type_are_dropped() -> None:
    # pytest-dev/pytest-xdist v3.6.1..v3.7.0: the merge of #1162 is titled "* Drop EOL Python 3.8 support";
    # tox-dev/filelock 3.31.2..3.32.0: "🐛 fix(packaging): ..." was listed as "Fix(packaging): ..."
    merged = [{**_commit(1, "* Drop EOL Python 3.8 support", ()), "merge": True, "pr": "1162"},
              {**_commit(2, "Make 'steal' command atomic", ()), "merge": True, "pr": "1144"},
              {**_commit(3, "Use SPDX license identifier", ()), "merge": True, "pr": "1190"}]
    assert next((line.group, line.text) for line in changelog_lines(merged)) == (
        "Removals", "Drop EOL Python 3.8 support (#1162).")
    both = [_pr(1, "🐛 fix(packaging): let an unpacked sdist run the test suite (#685)", ("code", "docs", "tests")),
            _pr(2, "👷 ci: add Python 3.15 to the test matrix (#683)", ("ci", "code"))]
    assert [(line.group, line.text) for line in changelog_lines(both)] == [
        (FIXES, "Packaging: let an unpacked sdist run the test suite (#685).")]


def test_work_on_tests_builds_and_headers_is_told_by_its_title() -> None:
    # square/okhttp parent-5.3.0..parent-5.4.0: 44 lines where the maintainers wrote 4 entries
    titles = {"Avoid FakeDns flakes (#9305)": None, "Run all the tests in CI (#9178)": None,
              "Fix some failing tests that CI hasn't been running (#9179)": None,
              "Add copyright headers to some files that don't have 'em (#9363)": None,
              "Clear a bunch of lint warnings (#9242)": None,
              "Impose limits on HTTP/2 headers sizes (#9364)": "Other changes",
              "Fix a crash in the test client on empty bodies (#9400)": FIXES,
              "Allow OkHttpClient overrides in Interceptor (#9108)": FEATURES,
              "Adopt a full modern gradle build (#9292)": None,
              "Fix the Gradle plugin's task ordering (#9500)": FIXES,  # a project that ships a Gradle plugin
              "Update doc links from 4.x to 5.x (#9341)": "Documentation",
              # tokio-rs/tokio tokio-1.52.4..tokio-1.53.0: examples ship with no crate
              "examples: connect proxy upstream per client (#8217)": None}
    listed = {line.text[:-1]: line.group for line in changelog_lines([_pr(i, t) for i, t in enumerate(titles)])}
    assert listed == {t: g for t, g in titles.items() if g is not None}


@pytest.mark.parametrize(("path", "area"), [
    ("okhttp/src/jvmTest/kotlin/okhttp3/CacheTest.kt", "tests"), ("okhttp/src/androidDeviceTest/A.kt", "tests"),
    ("src/test/java/com/x/FooTest.java", "tests"), ("context_test.go", "tests"), ("spec/puma/client_spec.rb", "tests"),
    ("okhttp-testing-support/src/main/kotlin/okhttp3/RecordingEventListener.kt", "tests"),
    ("gradle/libs.versions.toml", "deps"), ("go.mod", "deps"), ("okhttp/build.gradle.kts", "ci"),
    ("build-logic/src/main/kotlin/Conventions.kt", "ci"), (".golangci.yml", "ci"),
    # near misses: code whose name only looks like a test's
    ("src/latest/versions.py", "code"), ("lib/contest.rb", "code"), ("okhttp/src/main/kotlin/okhttp3/Cache.kt", "code"),
    ("src/attest.go", "code")])
def test_tests_and_builds_of_other_ecosystems_are_told_by_their_paths(path: str, area: str) -> None:
    assert area_of(path) == area


def test_a_merge_written_merge_number_colon_title_is_its_pull_request() -> None:
    # sinonjs/sinon v21.1.2..v22.0.0: "Merge #2703: isolate walk state from Object prototype" was left out
    prs = [_pr(1, "Fix sinon.restore() cascade-restoring sub-sandboxes (#2704)"),
           _pr(2, "fix: exclude __proto__ from walk() (#2699)"),
           _pr(3, "Perform additional cleanup when calling callThrough() (#2670)")]
    merge = {**_commit(4, "Merge #2703: isolate walk state from Object prototype", ()), "merge": True}
    branch = {**_commit(5, "Merge branch 'main' into walk-state", ()), "merge": True}  # no number: stays out
    texts = [line.text for line in changelog_lines([*prs, merge, branch])]
    assert "Isolate walk state from Object prototype (#2703)." in texts
    assert len(texts) == 4


def test_a_tag_naming_one_package_leaves_its_siblings_changes_out() -> None:
    # tokio-rs/tokio tokio-1.52.4..tokio-1.53.0: tokio-stream's and tokio-util's changes have their own
    # changelogs; 18 of the draft's 56 lines were theirs
    commits = [_pr(1, "sync: wake mpsc receiver when a queued `reserve[_many]` returns permits (#8260)"),
               _pr(2, "stream: honor `StreamMap::next_many` limit (#8215)"),
               _pr(3, "sync: implement `PartialEq` and `Eq` for `CancellationToken` (#8110)"),
               _pr(4, "io: add `#[inline]` to IO trait impls for in-memory types (#8242)"),
               _pr(5, "ci: preserve QEMU exit status in uring kernel tests (#8271)")]
    paths = {commits[0]["hash"]: ["tokio/src/sync/mpsc/chan.rs", "tokio/tests/sync_mpsc.rs"],
             commits[1]["hash"]: ["tokio-stream/src/stream_map.rs", "Cargo.toml"],
             commits[2]["hash"]: ["tokio-util/src/sync/cancellation_token.rs", "tokio-util/tests/sync.rs"],
             commits[3]["hash"]: ["tokio/src/io/util/mem.rs", "tokio-util/src/io/sink.rs"],  # both: stays
             commits[4]["hash"]: [".github/workflows/ci.yml"]}
    assert tag_package("tokio-1.52.4..tokio-1.53.0") == "tokio"
    assert tag_package("v1.10.0..v1.11.0") is None and tag_package("1.57.0..1.58.0") is None
    texts = [line.text for line in changelog_lines(commits, paths=paths, package="tokio")]
    assert texts == ["Io: add `#[inline]` to IO trait impls for in-memory types (#8242).",
                     "Sync: wake mpsc receiver when a queued `reserve[_many]` returns permits (#8260)."]
    # a package folder the range never touches (okhttp's `parent-5.4.0` tags): nothing is left out
    assert len(changelog_lines(commits[:2], paths=paths, package="parent")) == 2


def test_a_changed_default_is_breaking_in_a_new_major_version_only() -> None:
    # puma/puma v7.2.0..v8.0.0: the maintainers list #3847 under Breaking changes; the draft had it under Other
    commits = [_pr(1, "Use IPv6 (`::`) default for production (#3847)"),
               _pr(2, "Fix IPv4-mapped IPv6 addresses in `REMOTE_ADDR` and request logs (#3916)"),
               _pr(3, "Add `on_force` option to `shutdown_debug` (#3671)"),
               _pr(4, "Fix the default of `persistent_timeout` (#3912)")]  # a fix of a default stays a fix
    assert major_release("v7.2.0..v8.0.0") and not major_release("v1.10.0..v1.11.0")
    assert not major_release("tokio-1.52.4..tokio-1.53.0") and not major_release("HEAD")
    major = [(line.group, line.text) for line in changelog_lines(commits, major=True)]
    assert major[0] == (BREAKING, "Use IPv6 (`::`) default for production (#3847).")
    assert [g for g, _ in major].count(BREAKING) == 1
    assert BREAKING not in {line.group for line in changelog_lines(commits)}


def test_a_pull_request_on_the_documentation_alone_is_documentation_and_the_projects_own_pages_are_not() -> None:
    # puma/puma v7.2.0..v8.0.0: the maintainers list #3885 and #3900 under Docs; the draft left every
    # documentation-only pull request out. SECURITY.md, the release process and badges are the project's own pages.
    titles = {"Add gRPC guide (#3885)": "Documentation",
              "Move 5.0/6.0 upgrade guides to docs and add 7.0 guide (#3900)": "Documentation",
              "Update SECURITY.md, native Github vuln reports [ci skip] (#3913)": None,
              "Update Release.md for major releases [ci skip] (#3902)": None,
              "Add SVG brand assets and switch README logo [ci skip] (#3901)": None,
              "Rm stackoverflow badge (rip) [ci skip] (#3899)": None}
    commits = [_pr(i, t, ("docs",)) for i, t in enumerate(titles)]
    listed = {line.text[:-1]: line.group for line in changelog_lines(commits)}
    assert listed == {t: g for t, g in titles.items() if g is not None}
    # a project without pull requests: documentation pushed alone stays out, as before
    pushed = [_commit(9, "Document the new hooks in the guide", ("docs",)), _commit(10, "Fix the parser on tabs")]
    assert [line.text for line in changelog_lines(pushed)] == ["Fix the parser on tabs."]


def test_numpys_kinds_are_kinds_not_areas() -> None:
    # pypa/build 1.3.0..1.4.0: "MNT: remove workaround for 3.14b1 (#960)" read as an area kept "MNT:" in the line
    commits = [_pr(1, "MNT: remove workaround for 3.14b1 (#960)"), _pr(2, "ENH: add `--quiet` flag (#947)"),
               _pr(3, "TST: split up typing and mypy (#944)"), _pr(4, "Support UV environment variable (#971)")]
    assert [(line.group, line.text) for line in changelog_lines(commits)] == [
        (FEATURES, "Add `--quiet` flag (#947)."), (FEATURES, "Support UV environment variable (#971)."),
        ("Other changes", "Remove workaround for 3.14b1 (#960).")]
