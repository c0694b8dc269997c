"""CODEOWNERS as GitHub reads it: gitignore-style patterns (signoff.kernel.pathglob), the last
matching line names a path's owners, a line with no owners leaves its paths unowned, and a line
GitHub would skip as invalid (negation, ranges, escapes) is skipped."""

from __future__ import annotations

from signoff.kernel import pathglob


def parse(text: str) -> list[tuple[str, list[str]]]:
    rules = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if not pathglob.valid(parts[0]):
            continue
        # Logins (`@name`) and teams (`@org/team`) are kept; an e-mail owner names no login here.
        owners = [o.lstrip("@").lower() for o in parts[1:] if o.startswith("@")]
        rules.append((parts[0], owners))
    return rules


def owners_of(rules: list[tuple[str, list[str]]], path: str) -> list[str]:
    """The owners of the last rule that matches `path` (none when no rule does)."""
    found: list[str] = []
    for pattern, owners in rules:
        if pathglob.match(pattern, path):
            found = owners
    return found
