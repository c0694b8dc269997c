"""The one adapter for running git: a clean environment, one trusted repository, no config that runs code.

Every git process signoff starts goes through `command.run` (or `command.popen` for a stream).
Repository plumbing the workflows share sits beside it: resolving revisions, ancestry, changed
paths, reading a file at a revision, commits of whole files, and clean exports.
"""

from signoff.git.bundle import bundle, verify_bundle
from signoff.git.command import Config, Identity, Session, neutral_drivers, output, popen, run, session
from signoff.git.export import ExportError, export, read_soon
from signoff.git.repo import (
    Change,
    changed_paths,
    commit_files,
    compare_soon,
    diff_text,
    has_commit,
    is_ancestor,
    is_full_id,
    links_at,
    list_soon,
    mode_at,
    open_repo,
    read_file_at,
    resolve,
    tracked_paths,
)

__all__ = [
    "Change", "Config", "ExportError", "Identity", "Session", "bundle", "changed_paths", "commit_files", "compare_soon",
    "diff_text", "export", "has_commit", "is_ancestor", "is_full_id", "links_at", "list_soon", "mode_at",
    "neutral_drivers", "open_repo", "output", "popen", "read_file_at", "read_soon", "resolve", "run", "session",
    "tracked_paths", "verify_bundle",
]
