"""CODEOWNERS and the desk's path policies read with GitHub's semantics (`*` never crosses `/`,
the last matching line wins), and people bound across faces by [desk.people]."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.desk import codeowners
from signoff.desk.config import DeskConfig
from signoff.desk.people import People
from signoff.kernel import pathglob
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings

# The example file of GitHub's documentation ("About code owners"), owners shortened to logins.
GITHUB_EXAMPLE = """
# These owners will be the default owners for everything in the repo.
*       @global-owner1 @global-owner2
*.js    @js-owner #This is an inline comment.
*.go docs@example.com
*.txt @octo-org/octocats
/build/logs/ @doctocat
docs/*  docs@example.com
apps/ @octocat
/docs/ @doctocat
/scripts/ @doctocat @octocat
**/logs @octocat
/apps/ @octocat
/apps/github
"""


@pytest.mark.parametrize(("path", "owners"), [
    ("README.md", ["global-owner1", "global-owner2"]),
    ("src/app.js", ["js-owner"]),  # *.js at any depth
    ("main.go", []),  # an e-mail owner names no login here
    ("notes.txt", ["octo-org/octocats"]),
    ("build/logs/today/run.log", ["octocat"]),  # **/logs (later) wins over /build/logs/
    ("docs/getting-started.md", ["doctocat"]),  # /docs/ is later than docs/*
    ("docs/build-app/troubleshooting.md", ["doctocat"]),
    ("deep/apps/x.py", ["octocat"]),  # apps/ anywhere
    ("scripts/deploy.sh", ["doctocat", "octocat"]),
    ("deeply/nested/logs/x", ["octocat"]),
    ("apps/github/index.py", []),  # the last rule names nobody
    ("apps/other.py", ["octocat"]),
])
def test_githubs_documented_example(path: str, owners: list[str]) -> None:
    assert codeowners.owners_of(codeowners.parse(GITHUB_EXAMPLE), path) == owners


def test_a_star_never_crosses_a_slash() -> None:
    """The attack: `src/*.py @anyone` after `/src/payments/ @payments` must not hand the payment
    code to `anyone` (fnmatch's `*` crossed `/`)."""
    rules = codeowners.parse("/src/payments/ @payments\nsrc/*.py @anyone\n")
    assert codeowners.owners_of(rules, "src/payments/charge.py") == ["payments"]
    assert codeowners.owners_of(rules, "src/main.py") == ["anyone"]
    assert codeowners.owners_of(codeowners.parse("docs/* @docs\n"), "docs/build-app/troubleshooting.md") == []
    assert codeowners.owners_of(codeowners.parse("docs/* @docs\n"), "docs/getting-started.md") == ["docs"]


def test_lines_github_would_skip_are_skipped() -> None:
    rules = codeowners.parse("* @all\n!secret.py @nobody\nfile[12].py @ranges\n\\#x @escaped\n")
    assert rules == [("*", ["all"])]


@pytest.mark.parametrize(("pattern", "path", "ok"), [
    ("shoplite/*.py", "shoplite/cart.py", True),
    ("shoplite/*.py", "shoplite/payments/charge.py", False),  # an allowlist never widens across /
    ("shoplite/*.py", "other/shoplite/cart.py", False),  # a slash anchors at the root
    ("*.md", "docs/deep/a.md", True),
    ("**/auth/**", "auth/login.py", True),
    ("**/auth/**", "a/b/auth/login.py", True),
    ("payments/**", "payments/x/y.py", True),
    ("CODEOWNERS", ".github/CODEOWNERS", True),
])
def test_path_patterns(pattern: str, path: str, ok: bool) -> None:
    assert pathglob.match(pattern, path) is ok


def test_the_desk_refuses_patterns_it_cannot_read() -> None:
    with pytest.raises(UsageError, match="fix_paths"):
        DeskConfig(fix_paths=("shoplite/[ab].py",)).validate()
    assert DeskConfig().validate() is None


def test_people_are_read_from_desk_people() -> None:
    settings = Settings(home=Path("."), db_url="sqlite://",
                        raw={"desk": {"people": {"alice": {"forge": ["Alice-Work"], "rooms": ["@alice:hs"]}}}})
    people = DeskConfig.load(settings).people
    owners = {"alice", "bob"}
    assert people.person("forge", "alice-work", owners, local_forge=False) == "alice"
    assert people.person("desk", "alice", owners, local_forge=False) == "alice"
    assert people.person("rooms", "@ALICE:hs", owners, local_forge=False) == "alice"
    assert people.person("desk", "bob", owners, local_forge=False) == "bob"  # an owner credential is a person
    assert people.person("forge", "bob", owners, local_forge=False) is None  # GitHub's "bob" may be anyone
    assert people.person("forge", "bob", owners, local_forge=True) == "bob"  # the local forge is the desk's own
    assert people.person("forge", "mallory", owners, local_forge=True) is None
    assert people.forge_logins("alice", local_forge=False) == {"alice-work"}


@pytest.mark.parametrize("raw", [
    {"alice": {"forge": ["x"]}, "bob": {"forge": ["X"]}},  # one login, two people
    {"alice": {"email": ["a@example.com"]}},
    {"alice": {"forge": "alice-gh"}},
    ["alice"],
])
def test_bad_people_records_are_refused(raw: object) -> None:
    with pytest.raises(UsageError):
        People.parse(raw)
