"""Duplicate clustering: same component and a title overlap of at least 0.55 (Jaccard)."""

from __future__ import annotations

from signoff.airlock import Clusterer, Report, cluster
from signoff.airlock.cluster import jaccard, title_words


def test_title_normalisation_drops_filler_and_folds_synonyms() -> None:
    expected = {"checkout", "total", "incorrect", "large", "price"}
    assert title_words("The checkout total is wrong for huge prices") == expected
    assert title_words("Checkout sum incorrect with big price") == expected


def test_threshold_is_inclusive_at_0_55() -> None:
    # 11 shared words out of 20 distinct: exactly 0.55
    shared = [f"w{i}" for i in range(11)]
    left = " ".join([*shared, *(f"l{i}" for i in range(5))])
    right = " ".join([*shared, *(f"r{i}" for i in range(4))])
    assert jaccard(title_words(left), title_words(right)) == 0.55
    joined = cluster([Report("R1", "cart", left, "alice", "/r/1"), Report("R2", "cart", right, "bob", "/r/2")])
    assert len(joined) == 1
    right_one_more = right + " r9"  # 11 / 21 < 0.55
    apart = cluster([Report("R1", "cart", left), Report("R2", "cart", right_one_more)])
    assert len(apart) == 2


def test_same_title_other_component_stays_apart() -> None:
    clusters = cluster([Report("R1", "checkout", "Total wrong"), Report("R2", "cart", "Total wrong")])
    assert len(clusters) == 2


def test_each_reporter_keeps_identity_and_link() -> None:
    clusterer = Clusterer()
    first = clusterer.add(Report("R-1", "Checkout", "Checkout total wrong for huge price", "alice", "/t/a#k1"))
    second = clusterer.add(Report("R-2", "checkout", "checkout: total incorrect, huge prices!", "bob", "/t/b#k2"))
    assert first is second
    assert [(m.report_id, m.reporter, m.link) for m in second.members] == [
        ("R-1", "alice", "/t/a#k1"),
        ("R-2", "bob", "/t/b#k2"),
    ]
    third = clusterer.add(Report("R-3", "checkout", "Coupon field accepts emoji", "carol", "/t/c"))
    assert third is not first and len(clusterer.clusters) == 2


def test_homoglyph_title_still_clusters() -> None:
    clusters = cluster([Report("R1", "cart", "Cart empty after login"), Report("R2", "cart", "Cаrt empty аfter login")])
    assert len(clusters) == 1
