"""The paths each commit of a snapshot touched, for grouping a changelog by where its changes are.

A merged pull request's merge commit lists no files (git shows no diff for a merge), so its paths
are those of the commits it merged: the ones reachable from its other parents and not on the main
line (the first parents from the range's head). Without them the configured group map could take a
merge by its label only, and a tag naming one package (`tracing-subscriber-0.3.21`) could not leave
a sibling package's merged pull requests out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from signoff.notes.snapshot import Snapshot

# hash -> (parents, paths it touched)
Graph = Mapping[str, tuple[Sequence[str], Sequence[str]]]


def main_line(graph: Graph, head: str | None) -> set[str]:
    """The commits on the first-parent chain from `head`, within the snapshot."""
    line: set[str] = set()
    while head is not None and head in graph and head not in line:
        line.add(head)
        parents = graph[head][0]
        head = parents[0] if parents else None
    return line


def merged_paths(graph: Graph, parents: Iterable[str], main: set[str]) -> list[str]:
    """The paths touched by the commits a merge brought in: reachable from its other `parents`,
    stopping at the main line and at the range's edge. Sorted, each once."""
    seen: set[str] = set()
    out: set[str] = set()
    todo = list(parents)
    while todo:
        h = todo.pop()
        if h in seen or h in main or h not in graph:
            continue
        seen.add(h)
        ps, paths = graph[h]
        out.update(paths)
        todo.extend(ps)
    return sorted(out)


def paths_by_commit(graph: Graph, head: str | None, hashes: set[str]) -> dict[str, list[str]]:
    """The paths of each of `hashes`: its own files, or for a merge its merged branch's."""
    main = main_line(graph, head)
    out: dict[str, list[str]] = {}
    for h in sorted(hashes & graph.keys()):
        parents, paths = graph[h]
        out[h] = merged_paths(graph, parents[1:], main) if len(parents) > 1 else list(paths)
    return out


def commit_paths(snapshot: Path, hashes: set[str]) -> dict[str, list[str]]:
    """The paths each of the given commits touched (see `paths_by_commit`), read from the snapshot."""
    if not hashes or not snapshot.is_file():
        return {}
    snap = Snapshot(snapshot)
    graph: dict[str, tuple[list[str], list[str]]] = {}
    first: str | None = None
    for c in snap.commits():
        first = first or c["hash"]
        graph[c["hash"]] = (list(c["parents"]), [f["path"] for f in c["files"]])
    return paths_by_commit(graph, snap.head or first, hashes)
