"""Desk settings: `[desk]` in signoff.toml, with defaults that fit the ShopLite fixture."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from signoff.desk.people import People
from signoff.kernel import pathglob
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings

DEFAULT_SENSITIVE = ("**/auth/**", "auth/**", "**/payments/**", "payments/**", "**/billing/**", "billing/**",
                     "**/migrations/**", "migrations/**", ".github/**", "**/security/**", "security/**",
                     "CODEOWNERS")
STACKS = ("python", "node")


@dataclass(frozen=True)
class DeskConfig:
    prefix: str = "BUG"
    repo: str = "shoplite"  # the forge repository the desk fixes
    repos_allowed: tuple[str, ...] = ("shoplite",)  # webhooks from other repositories are refused
    service: str = "shoplite"  # what the health endpoint must name
    fix_paths: tuple[str, ...] = ("shoplite/*.py",)  # files the fixer may change
    module: str = "shoplite.checkout"  # the module a reproduction test is asked to exercise (a hint)
    # python (pytest, ruff, mypy) or node (Vitest, and Prettier, ESLint and tsc as package.json declares them)
    stack: str = "python"
    test_suffix: str = ".test.ts"  # node: the regression test's name ends so (the project's include must collect it)
    test_dir: str = "tests"  # the repository's tests (the baseline suite) and where regression tests go
    docs_paths: tuple[str, ...] = ("docs/**", "*.md", "**/*.md")  # tier 0
    sensitive_paths: tuple[str, ...] = DEFAULT_SENSITIVE  # tier 2
    max_fix_files: int = 2
    max_file_bytes: int = 24_000
    fix_attempts: int = 2
    reports_per_hour: int = 20  # per client address
    answers_per_report: int = 6  # answers one report may give on its bug, over all rounds
    disputes_per_bug: int = 10  # answers from reporters not entitled to the question, kept for the owner
    timeout: float = 120.0
    checks: bool = True  # run the repository's configured formatter / linter / type checker
    production_environment: str = "production"
    owner: str = "alice"  # the human a draft change request is assigned to
    forge: str = "local"  # local (bare repositories on this machine) or github (repo = "owner/name")
    # Names the crew's agents, group and rooms on their rooms server (`<crew_prefix>-manager`,
    # `<crew_prefix>-engineering`): two desks sharing one server each need their own.
    crew_prefix: str = "desk"
    assets: tuple[str, ...] = ()  # paths every deployment endpoint must serve byte for byte alike
    # Who is who across faces ([desk.people.NAME] desk/forge/rooms logins): approvals count people.
    people: People = field(default_factory=People)
    # Where a genuine security report goes (an e-mail address or an https:// page): the reporter's
    # pages offer it, since the intake holds text that reads as instructions, a working injection too.
    security_contact: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, settings: Settings) -> DeskConfig:
        s = settings.section("desk")
        known = {f for f in cls.__dataclass_fields__ if f != "extra"}
        unknown = sorted(set(s) - known)
        if unknown:
            raise UsageError(f"unknown [desk] setting(s): {', '.join(unknown)}",
                             f"use only: {', '.join(sorted(known))}")
        kwargs: dict[str, Any] = {}
        for k, v in s.items():
            default = getattr(cls, k, None)
            if isinstance(default, tuple):
                if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                    raise UsageError(f"[desk] {k} must be a list of strings", f'e.g. {k} = ["..."]')
                v = tuple(v)
            if k == "people":
                v = People.parse(v)
            kwargs[k] = v
        cfg = cls(**kwargs)
        cfg.validate()
        return cfg

    def validate(self) -> None:
        if not re.fullmatch(r"[A-Z][A-Z0-9]{1,9}", self.prefix):
            raise UsageError(f"[desk] prefix {self.prefix!r} must be 2-10 capital letters or digits",
                             'e.g. prefix = "BUG"')
        if not re.fullmatch(r"[a-z][a-z0-9-]{0,23}", self.crew_prefix):
            raise UsageError(f"[desk] crew_prefix {self.crew_prefix!r} must be 1-24 lowercase letters, digits "
                             "or dashes, starting with a letter", 'e.g. crew_prefix = "shop-desk"')
        if not 1 <= self.max_fix_files <= 2:
            raise UsageError("[desk] max_fix_files must be 1 or 2", "the fixer returns at most two files")
        if self.security_contact and not re.fullmatch(r"https://[^\s\"<>]+|[^\s@\"<>/:]+@[^\s@\"<>/:]+\.[a-z]{2,}",
                                                      self.security_contact, re.IGNORECASE):
            raise UsageError("[desk] security_contact must be an e-mail address or an https:// address",
                             'e.g. security_contact = "security@example.org"')
        if self.forge not in ("local", "github"):
            raise UsageError(f"[desk] forge {self.forge!r} is not known", 'use "local" or "github"')
        if self.forge == "github" and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}",
                                                        self.repo):
            raise UsageError(f"[desk] repo {self.repo!r} is not a GitHub repository's full name",
                             'with forge = "github", set repo = "owner/name"')
        if any(not a.startswith("/") or "//" in a for a in self.assets):
            raise UsageError("[desk] assets must be paths starting with /", 'e.g. assets = ["/static/app.js"]')
        for name in ("fix_paths", "docs_paths", "sensitive_paths"):
            bad = [p for p in getattr(self, name) if not pathglob.valid(p)]
            if bad:
                raise UsageError(f"[desk] {name} has patterns that cannot be used: {', '.join(bad)}",
                                 "use CODEOWNERS / gitignore patterns without '!', '[...]' or '\\'")
        if self.stack not in STACKS:
            raise UsageError(f"[desk] stack {self.stack!r} is not known", 'use "python" or "node"')
        if not re.fullmatch(r"\.(test|spec)\.[cm]?[jt]sx?", self.test_suffix):
            raise UsageError(f"[desk] test_suffix {self.test_suffix!r} is not a test file suffix",
                             'e.g. test_suffix = ".spec.ts" (or ".test.js")')
        if not 1 <= self.fix_attempts <= 5:
            raise UsageError("[desk] fix_attempts must be 1 to 5", "the default is 2")

    def test_path(self, bug_id: str) -> str:
        name = bug_id.lower().replace("-", "_")
        if self.stack == "node":
            return f"{self.test_dir}/{name}{self.test_suffix}"
        return f"{self.test_dir}/test_{name}.py"
