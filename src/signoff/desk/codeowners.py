"""CODEOWNERS (GitHub syntax, simplified): the last matching line names a path's owners."""

from __future__ import annotations

import fnmatch


def parse(text: str) -> list[tuple[str, list[str]]]:
    rules = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        owners = [o.lstrip("@").lower() for o in parts[1:] if o.startswith("@")]
        rules.append((parts[0], owners))
    return rules


def _matches(pattern: str, path: str) -> bool:
    anchored = pattern.startswith("/")
    pat = pattern.lstrip("/")
    if pat in ("*", "**"):
        return True
    if pat.endswith("/"):
        return path.startswith(pat) if anchored or "/" in pat[:-1] else (
            path.startswith(pat) or f"/{pat}" in f"/{path}")
    if fnmatch.fnmatchcase(path, pat):
        return True
    if "/" not in pat and fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pat):
        return True
    return path.startswith(pat.rstrip("/") + "/")


def owners_of(rules: list[tuple[str, list[str]]], path: str) -> list[str]:
    found: list[str] = []
    for pattern, owners in rules:
        if _matches(pattern, path):
            found = owners
    return found
