"""The writer without a model, round 20: what the project's own changelog says its maintainers publish
(refactors, upgrades of named dependencies), and a tag naming one package leaving its siblings' merged
pull requests out (a merge's paths are its merged branch's)."""

from __future__ import annotations

from typing import Any

from signoff.notes.changes import DEPENDENCIES, REFACTORS, changelog_lines
from signoff.notes.paths import paths_by_commit
from signoff.notes.practice import Practice, read_practice
from signoff.notes.writer import _supported


def _commit(n: int, subject: str, areas: tuple[str, ...] = ("code",), **extra: Any) -> dict[str, Any]:
    pr = subject.rsplit("(#", 1)[1].rstrip(")") if subject.endswith(")") and "(#" in subject else None
    return {"kind": "commit", "hash": f"ab{n:038x}", "subject": subject, "title": subject, "author": "Kim",
            "email": "kim@example.org", "date": "2026-05-01T10:00:00+00:00", "merge": False, "pr": pr,
            "breaking": False, "areas": list(areas), **extra}


def _renovate(n: int, subject: str) -> dict[str, Any]:
    return _commit(n, subject, ("deps",), author="renovate[bot]",
                   email="29139614+renovate[bot]@users.noreply.github.com")


# gin-gonic/gin's CHANGELOG.md at v1.10.0 (its newest section), and uuidjs/uuid's at v11.1.0: a fix whose
# text starts with the word, its `fix:` type left out by release-please
GIN = """# Gin ChangeLog

## Gin v1.9.1

### BUG FIXES

* fix lint error on context.go [#3636](https://github.com/gin-gonic/gin/pull/3636)

### ENHANCEMENTS

* refactor: use bytes.ReplaceAll directly [#3455](https://github.com/gin-gonic/gin/pull/3455)
* chore: upgrade golang.org/x/net to v0.10.0 [#3621](https://github.com/gin-gonic/gin/pull/3621)
"""
UUID = """## [11.0.0](https://github.com/uuidjs/uuid/compare/v9.0.0...v11.0.0) (2024-10-26)

### Bug Fixes

- refactor v1 internal state and options logic ([#780](https://github.com/uuidjs/uuid/issues/780))
- seq_hi shift for byte 6 ([#775](https://github.com/uuidjs/uuid/issues/775))
"""
# square/okhttp's CHANGELOG.md at parent-5.3.0
OKHTTP = """## Version 5.3.0

 *  Fix: Don't crash when a response body is read after the call is canceled.
 *  Upgrade: [Okio 3.16.0][okio_3_16_0].
 *  Upgrade: [kotlinx.coroutines 1.10.2][coroutines_1_10_2]. This is used by the optional `okhttp-coroutines`.
 *  Upgrade: [AndroidX Annotation 1.9.1][androidx_annotation].
 *  Fix: Support Python 3.12 in the test harness.
"""


def test_a_project_whose_changelog_lists_refactors_gets_its_refactors_listed() -> None:
    # gin-gonic/gin v1.10.0..v1.11.0: the maintainers list ten `refactor:` pull requests; the writer left them
    # all out as housekeeping
    assert read_practice(GIN).refactors and not read_practice(UUID).refactors
    assert read_practice("### ♻️ Code Refactoring\n\n* simplify the parser\n").refactors
    commits = [_commit(1, "refactor(context): simplify \"GetType()\" functions (#4080)"),
               _commit(2, "refactor(binding): use strings.Cut to replace strings.Index (#3522)", ("code", "tests")),
               _commit(3, "refactor(context): tidy the test helpers (#4100)", ("tests",)),
               _commit(4, "feat(binding): add BindPlain (#3904)"),
               _commit(5, "fix(context): guard nil URL in initQueryCache (#3969)")]
    listed = changelog_lines(commits, practice=read_practice(GIN))
    assert [(line.group, line.text) for line in listed if line.group == REFACTORS] == [
        (REFACTORS, "Context: simplify \"GetType()\" functions (#4080)."),
        (REFACTORS, "Binding: use strings.Cut to replace strings.Index (#3522).")]
    assert [line.text for line in listed].index("Binding: add BindPlain (#3904).") == 0  # features still first
    # elsewhere refactors stay out, and so does one of tests alone
    assert not [line for line in changelog_lines(commits, practice=read_practice(UUID)) if line.group == REFACTORS]
    assert not [line for line in changelog_lines(commits) if line.group == REFACTORS]


def test_a_refactor_without_a_conventional_type_is_told_by_its_verb_or_label() -> None:
    practice = Practice(refactors=True)
    commits = [_commit(1, "Refactor the redirect request in gin.go (#1970)"),
               _commit(2, "[refactor] Split the router tree (#1971)"),
               _commit(3, "router: refactor the static child lookup (#1972)"),
               _commit(4, "Add a retry budget to the client (#1973)"),
               _commit(5, "Fix a crash on empty headers (#1974)")]
    texts = [line.text for line in changelog_lines(commits, practice=practice) if line.group == REFACTORS]
    assert texts == ["Refactor the redirect request in gin.go (#1970).", "Split the router tree (#1971).",
                     "Router: refactor the static child lookup (#1972)."]
    assert not [line for line in changelog_lines(commits) if line.group == REFACTORS]


def test_upgrades_of_the_dependencies_the_changelog_names_are_listed_and_other_bumps_stay_out() -> None:
    # square/okhttp parent-5.3.0..parent-5.4.0: "Upgrade: [Okio 3.17.0]" and kotlinx.coroutines 1.11.0 in the
    # maintainers' section, both made by renovate; 40 other renovate updates (checkstyle, spotless, junit) are not
    practice = read_practice(OKHTTP)
    assert practice.dependencies["okio"] == "Okio"
    assert practice.dependencies["kotlinxcoroutines"] == "kotlinx.coroutines"
    assert practice.dependencies["androidxannotation"] == "AndroidX Annotation"
    assert "python" not in practice.dependencies  # a version in a line that upgrades nothing
    # square/kotlinpoet's changelog lists its toolchain as an item of a name and a version alone
    assert read_practice(" * New: Kotlin 2.1.21.\n * New: KSP 2.1.21-2.0.1.\n * Fix: Python 3.12 now works.\n"
                         " * Version 2.0.0\n").dependencies == {"kotlin": "Kotlin", "ksp": "KSP"}
    commits = [_renovate(1, "Update dependency com.puppycrawl.tools:checkstyle to v13.5.0 (#9468)"),
               _renovate(2, "Update kotlinx-coroutines monorepo to v1.11.0 (#9450)"),
               _renovate(3, "Update square.okio to v3.17.0 (#9367)"),
               _commit(4, "Limit each HTTP/2 response to 256 KiB of total headers (#9377)"),
               _renovate(5, "Update com.squareup.okio to v3.16.4 (#9199)"),
               _renovate(6, "Update spotless.plugin to v8.6.0 (#9464)"),
               _commit(7, "chore(deps): bump okio from 3.16.0 to 3.16.3 (#9190)", ("deps",))]
    listed = changelog_lines(commits, practice=practice)
    upgrades = [line for line in listed if line.group == DEPENDENCIES]
    assert [line.text for line in upgrades] == ["Upgrade kotlinx.coroutines to v1.11.0 (#9450).",
                                                "Upgrade Okio to v3.17.0 (#9367)."]  # the newest of three, once
    assert all(_supported(line.text, line.facts) for line in upgrades)  # each a sentence the verifier passes
    assert [line.text for line in listed if line.group != DEPENDENCIES] == [
        "Limit each HTTP/2 response to 256 KiB of total headers (#9377)."]
    assert not [line for line in changelog_lines(commits) if line.group == DEPENDENCIES]  # no changelog, no names


def test_a_merge_has_the_paths_of_the_branch_it_merged() -> None:
    # main: m3 (merge of b2 <- b1) <- m1; the merge lists no files of its own
    graph = {"m3": (["m1", "b2"], []), "b2": (["b1"], ["tracing-core/src/field.rs"]),
             "b1": (["m1"], ["tracing-core/src/lib.rs", "Cargo.toml"]), "m1": (["m0"], ["tracing-subscriber/src/a.rs"])}
    assert paths_by_commit(graph, "m3", {"m3", "b1"}) == {
        "m3": ["Cargo.toml", "tracing-core/src/field.rs", "tracing-core/src/lib.rs"],
        "b1": ["tracing-core/src/lib.rs", "Cargo.toml"]}


def test_a_tag_naming_one_package_leaves_its_siblings_changes_out_merged_or_named_from_its_stem() -> None:
    # tokio-rs/tracing tracing-subscriber-0.3.20..tracing-subscriber-0.3.21: tracing's, tracing-core's and
    # tracing-appender's changes (16 of the draft's 22 lines) have their own changelogs
    merge = {**_commit(1, "Merge pull request #3382 from someone/sanitary"), "merge": True, "pr": "3382",
             "title": "tracing: make `valueset` macro sanitary"}
    commits = [merge,
               _commit(2, "appender: fix `max_files` integer underflow when set to zero (#3348)"),
               _commit(3, "subscriber: change registry exit to decrement local span ref only (#3331)"),
               _commit(4, "core: switch to unconditional no_std (#3300)")]
    graph = {merge["hash"]: ([commits[3]["hash"], "b1"], []), "b1": ([commits[3]["hash"]], ["tracing/src/macros.rs"]),
             commits[1]["hash"]: ([merge["hash"]], ["tracing-appender/src/rolling.rs"]),
             commits[2]["hash"]: ([commits[1]["hash"]], ["tracing-subscriber/src/registry/sharded.rs"]),
             commits[3]["hash"]: ([], ["tracing-core/src/lib.rs"])}
    paths = paths_by_commit(graph, commits[2]["hash"], {c["hash"] for c in commits})
    texts = [line.text for line in changelog_lines(commits, paths=paths, package="tracing-subscriber")]
    assert texts == ["Subscriber: change registry exit to decrement local span ref only (#3331)."]
    # the package's own folder is the one a change touches too: it stays
    both = {**paths, commits[1]["hash"]: ["tracing-appender/src/rolling.rs", "tracing-subscriber/src/fmt/mod.rs"]}
    assert len(changelog_lines(commits, paths=both, package="tracing-subscriber")) == 2


def test_where_no_merge_joins_a_branch_a_commit_without_a_number_is_listed_by_its_kind() -> None:
    # square/kotlinpoet 2.2.0..2.3.0 and labstack/echo v5.2.1..v5.3.0: pull requests rebased or pushed without
    # their numbers, which the maintainers list ("Handle recursively bound generics in KType.asTypeName",
    # echo's "Revert back to v4 behavior ...", "docs(cors): ..."); the writer left every one out as part of a
    # pull request
    commits = [_commit(1, "Add TypeName.annotated API (#2281)"),
               _commit(2, "Handle recursively bound generics in KType.asTypeName"),
               _commit(3, "Revert back to v4 behavior for group registering implicit 404 handlers"),
               _commit(4, "Update the contributing guide"), _commit(5, "Docs", ("docs",)),
               _commit(6, "Update current latest JDK for test tasks to 24", ("ci",)),
               _commit(7, "docs(cors): note reverse-proxy header duplication", ("code",)),
               _commit(8, "Re-fmt with latest standard"),
               _commit(9, "Fix annotation array args with annotation elements (#2142)"),
               _commit(10, "Escape /* and */ when emitting Kdoc (#2258)")]
    texts = [line.text for line in changelog_lines(commits)]
    assert texts == ["Add TypeName.annotated API (#2281).",
                     f"Handle recursively bound generics in KType.asTypeName ({commits[1]['hash'][:10]}).",
                     "Fix annotation array args with annotation elements (#2142).",
                     "Revert back to v4 behavior for group registering implicit 404 handlers "
                     f"({commits[2]['hash'][:10]}).",
                     "Escape /* and */ when emitting Kdoc (#2258).",
                     f"Note reverse-proxy header duplication ({commits[6]['hash'][:10]})."]
    # a merge in the range: commits without a number are its branches' parts, left out as before
    merge = {**_commit(11, "Merge pull request #2300 from kim/x"), "merge": True, "pr": "2300",
             "title": "Speed up the header parser"}
    assert [line.text for line in changelog_lines([merge, *commits])] == [
        "Add TypeName.annotated API (#2281).", "Fix annotation array args with annotation elements (#2142).",
        "Speed up the header parser (#2300).",
        "Escape /* and */ when emitting Kdoc (#2258)."]


def test_changelog_entries_work_on_tests_or_ci_and_fixed_deprecation_warnings_are_no_changes() -> None:
    # pytest-dev/pytest-asyncio v1.3.0..v1.4.0 (no pull request numbers): "docs: add newsfragment", "Update new
    # fragment" (towncrier's changelog.d/ alone), "fix: make linters happy" and "feat(workflows): add gh release
    # ..." (a workflow alone) were listed; kotlinpoet's "Fix kotlin-metadata deprecation warnings" was a Deprecation
    commits = [_commit(1, "docs: add newsfragment"), _commit(2, "Update new fragment"),
               _commit(3, "fix: make linters happy", ("ci",)),
               _commit(4, "feat(workflows): add gh release instead of ncipollo/release-action", ("ci",)),
               _commit(5, "Fix loop factory lifecycle", ("code", "tests")),
               _commit(6, "Fix kotlin-metadata deprecation warnings"),
               _commit(7, "Deprecate event_loop_policy hook"),
               _commit(8, "Build(deps): Bump pytest from 9.0.2 to 9.0.3", ("docs",))]  # constraints.txt for tests
    paths = {commits[0]["hash"]: ["changelog.d/1392.changed.rst"], commits[1]["hash"]: ["changelog.d/1164.added.rst"],
             commits[4]["hash"]: ["changelog.d/1373.fixed.rst", "pytest_asyncio/plugin.py"]}
    listed = changelog_lines(commits, paths=paths, practice=Practice(dependencies={"pytest": "pytest"}))
    assert [(line.group, line.text) for line in listed] == [
        ("Deprecations", "Deprecate event_loop_policy hook."), ("Bug fixes", "Fix loop factory lifecycle."),
        ("Bug fixes", "Fix kotlin-metadata deprecation warnings.")]


def test_a_line_starting_with_a_name_as_code_spells_it_keeps_its_case() -> None:
    # kotlinpoet's "emitNullable correctly when deferring type in CodeWriter" was drafted "EmitNullable ..."
    commits = [_commit(1, "fix: emitNullable correctly when deferring type in CodeWriter (#2217)"),
               _commit(2, "fix: os.path handling of drive letters (#2218)"),
               _commit(3, "fix: keep the last line (#2219)")]
    assert sorted(line.text for line in changelog_lines(commits)) == [
        "Keep the last line (#2219).", "emitNullable correctly when deferring type in CodeWriter (#2217).",
        "os.path handling of drive letters (#2218)."]


def test_a_removal_names_something_users_had() -> None:
    # tokio-rs/tracing tracing-subscriber-0.3.21: "Subscriber: remove clone_span on enter" was under Removals; its
    # maintainers list it under Performance
    commits = [_commit(1, "subscriber: remove clone_span on enter (#3289)"),
               _commit(2, "Drop EOL Python 3.8 support (#1162)"), _commit(3, "Delete interop-javapoet module (#2292)"),
               _commit(4, "Remove the deprecated `--foo` option (#12)"), _commit(5, "Remove an extra blank line (#13)")]
    groups = {line.text: line.group for line in changelog_lines(commits)}
    assert groups == {"Subscriber: remove clone_span on enter (#3289).": "Other changes",
                      "Drop EOL Python 3.8 support (#1162).": "Removals",
                      "Delete interop-javapoet module (#2292).": "Removals",
                      "Remove the deprecated `--foo` option (#12).": "Removals",
                      "Remove an extra blank line (#13).": "Other changes"}


def test_the_package_the_notes_are_for_is_no_area_in_its_own_notes() -> None:
    commits = [_commit(1, "tracing-subscriber: Switch to unconditional no_std (#3300)"),
               _commit(2, "subscriber: remove clone_span on enter (#3289)")]
    paths = {c["hash"]: ["tracing-subscriber/src/lib.rs"] for c in commits}
    assert [line.text for line in changelog_lines(commits, paths=paths, package="tracing-subscriber")] == [
        "Switch to unconditional no_std (#3300).", "Subscriber: remove clone_span on enter (#3289)."]
    assert changelog_lines(commits, paths=paths)[0].text.startswith("Tracing-subscriber: Switch")  # no package


def test_a_change_that_wrote_its_own_changelog_entry_is_listed_whatever_its_files() -> None:
    # square/kotlinpoet 2.2.0..2.3.0 (round 20): "Migrate to Sonatype Central Portal (#2135)" changes the release
    # workflow, `gradle.properties` and the docs, so was left out as build work; it added its own entry to
    # `docs/changelog.md` ("In-development snapshots are now published to the Central Portal Snapshots repository")
    portal = _commit(1, "Migrate to Sonatype Central Portal (#2135)", ("ci", "docs"))
    workflow = _commit(2, "Run the release workflow on tags only (#2136)", ("ci",))
    fixed = _commit(3, "fix(ci): cache the Gradle wrapper (#2137)", ("ci", "docs"))
    paths = {portal["hash"]: [".github/workflows/release.yml", "docs/changelog.md", "docs/index.md",
                              "gradle.properties"],
             workflow["hash"]: [".github/workflows/release.yml"],
             fixed["hash"]: [".github/workflows/build.yml", "CHANGELOG.md"]}
    listed = [line.text for line in changelog_lines([portal, workflow], paths=paths)]
    assert listed == ["Migrate to Sonatype Central Portal (#2135)."]
    assert [line.text for line in changelog_lines([portal, workflow])] == []  # without the paths, build work
    # a conventional project's CI fix writing its entry is listed too; its `ci:` kind, housekeeping, is not
    assert [line.text for line in changelog_lines([fixed], paths=paths)] == ["Ci: cache the Gradle wrapper (#2137)."]
    chore = _commit(4, "ci: cache the Gradle wrapper (#2138)", ("ci",))
    assert changelog_lines([chore], paths={chore["hash"]: [".github/workflows/build.yml", "CHANGELOG.md"]}) == []
