"""Duplicate clustering: reports about the same component whose normalised titles overlap.

Titles are normalised (the airlock's folding, punctuation dropped, filler words dropped, a small
synonym table, plural "s" stripped) into word sets; two reports join one cluster when they name the
same component and the Jaccard overlap of their word sets is at least `THRESHOLD`. A new report
joins the cluster holding its best-scoring match (earliest cluster on a tie). Each member keeps
its own report id, reporter and link: a cluster shares evidence, not identities."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from signoff.airlock.normalise import normalise

THRESHOLD = 0.55

FILLER = frozenset(
    "a an the is are was were be been being am i my me we our you your it its this that these those "
    "when while on in at of to for from with by and or but so if then than as into onto after before "
    "does do did doesnt dont didnt cant cannot can could should would will just really very please "
    "bug issue problem report reported there here some any all get gets got getting still also again "
    "not no".split()
)
SYNONYMS: dict[str, str] = {
    "crashes": "crash", "crashed": "crash", "crashing": "crash", "freezes": "crash", "freeze": "crash",
    "hangs": "crash", "broken": "fail", "fails": "fail", "failing": "fail", "failed": "fail",
    "failure": "fail", "error": "fail", "errors": "fail", "exception": "fail", "wrong": "incorrect",
    "bad": "incorrect", "invalid": "incorrect", "nonsense": "incorrect", "garbage": "incorrect",
    "sum": "total", "amount": "total", "totals": "total", "login": "signin", "log": "signin",
    "logon": "signin", "sign": "signin", "signin": "signin", "basket": "cart", "bag": "cart",
    "remove": "delete", "removing": "delete", "deleting": "delete", "screen": "page", "view": "page",
    "picture": "image", "photo": "image", "img": "image", "slow": "slow", "laggy": "slow",
    "sluggish": "slow", "lag": "slow", "btn": "button", "huge": "large", "big": "large",
    "massive": "large", "enormous": "large", "price": "price", "cost": "price", "pay": "payment",
    "paying": "payment", "purchase": "checkout", "buy": "checkout", "blank": "empty", "missing": "empty",
    "doesn't": "not", "won't": "not", "wont": "not", "shows": "show", "showing": "show",
    "displays": "show", "display": "show", "displayed": "show", "loads": "load", "loading": "load",
    "loaded": "load",
}  # fmt: skip


@dataclass(frozen=True)
class Report:
    report_id: str
    component: str
    title: str
    reporter: str = ""
    link: str = ""


@dataclass
class Cluster:
    cluster_id: str
    component: str
    members: list[Report] = field(default_factory=list)
    _words: list[frozenset[str]] = field(default_factory=list, repr=False)

    @property
    def primary(self) -> Report:
        return self.members[0]

    @property
    def reporters(self) -> list[str]:
        return [member.reporter for member in self.members]


def title_words(title: str) -> frozenset[str]:
    folded = normalise(title).folded
    cleaned = "".join(ch if ch.isalnum() or ch in "'" else " " for ch in folded)
    words: set[str] = set()
    for raw in cleaned.split():
        word = raw.replace("'", "")
        word = SYNONYMS.get(raw, SYNONYMS.get(word, word))
        if word in FILLER or not word:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(SYNONYMS.get(word, word))
    return frozenset(words)


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    if not left and not right:
        return 0.0
    return len(left & right) / len(left | right)


def _component_key(component: str) -> str:
    return " ".join(normalise(component).folded.split())


class Clusterer:
    """Incremental clustering; `add` returns the cluster the report joined (or opened)."""

    def __init__(self, threshold: float = THRESHOLD, id_prefix: str = "CL") -> None:
        self.threshold = threshold
        self.id_prefix = id_prefix
        self.clusters: list[Cluster] = []

    def score(self, report: Report, cluster: Cluster) -> float:
        if _component_key(report.component) != _component_key(cluster.component):
            return 0.0
        words = title_words(report.title)
        return max((jaccard(words, other) for other in cluster._words), default=0.0)

    def add(self, report: Report) -> Cluster:
        words = title_words(report.title)
        best: Cluster | None = None
        best_score = 0.0
        for cluster in self.clusters:
            score = self.score(report, cluster)
            if score >= self.threshold and score > best_score:
                best, best_score = cluster, score
        if best is None:
            best = Cluster(f"{self.id_prefix}-{len(self.clusters) + 1:04d}", report.component)
            self.clusters.append(best)
        best.members.append(report)
        best._words.append(words)
        return best


def cluster(reports: Iterable[Report], threshold: float = THRESHOLD) -> list[Cluster]:
    clusterer = Clusterer(threshold)
    for report in reports:
        clusterer.add(report)
    return clusterer.clusters
