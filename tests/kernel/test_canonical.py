import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from signoff.kernel import UsageError, canonical_bytes, canonical_digest, tree_digest, tree_manifest

json_scalars = st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text() | st.floats(
    min_value=-1e15, max_value=1e15, allow_nan=False, allow_infinity=False
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


@given(json_values)
def test_canonical_round_trips_and_is_stable(value: object) -> None:
    first = canonical_bytes(value)
    again = canonical_bytes(json.loads(first))
    assert first == again


@given(st.dictionaries(st.text(max_size=6), st.integers(-(2**53) + 1, 2**53 - 1), min_size=2, max_size=8))
def test_key_order_does_not_change_the_digest(d: dict[str, int]) -> None:
    reversed_d = dict(reversed(list(d.items())))
    assert canonical_digest(d) == canonical_digest(reversed_d)


@given(json_values, json_values)
def test_different_values_give_different_bytes(a: object, b: object) -> None:
    if canonical_bytes(a) == canonical_bytes(b):
        # Equal bytes only for values JSON cannot tell apart (e.g. 1 and 1.0).
        assert json.loads(canonical_bytes(a)) == json.loads(canonical_bytes(b))


def test_known_vector_from_rfc8785_ordering() -> None:
    assert canonical_bytes({"b": 1, "a": [True, None, "é"], "€": 2}) == '{"a":[true,null,"é"],"b":1,"€":2}'.encode()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 2**60, {1: "x"}, {"a": object()}])
def test_values_json_cannot_hold_exactly_are_refused(bad: object) -> None:
    with pytest.raises(UsageError):
        canonical_bytes(bad)


def _make_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6})?", fullmatch=True), st.binary(max_size=50),
                       min_size=1, max_size=6))
def test_tree_digest_is_independent_of_creation_order(tmp_path_factory: pytest.TempPathFactory,
                                                      files: dict[str, bytes]) -> None:
    # a path may not be both a file and a folder
    names = sorted(files)
    if any(b.startswith(a + "/") for a in names for b in names):
        return
    one, two = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    _make_tree(one, files)
    _make_tree(two, dict(reversed(list(files.items()))))
    assert tree_digest(one) == tree_digest(two)


def test_tree_digest_covers_content_names_and_modes(tmp_path: Path) -> None:
    _make_tree(tmp_path, {"a.py": b"x", "sub/b.py": b"y"})
    base = tree_digest(tmp_path)
    (tmp_path / "a.py").write_bytes(b"z")
    assert tree_digest(tmp_path) != base
    (tmp_path / "a.py").write_bytes(b"x")
    assert tree_digest(tmp_path) == base
    os.chmod(tmp_path / "a.py", 0o755)
    assert tree_digest(tmp_path) != base
    os.chmod(tmp_path / "a.py", 0o644)
    (tmp_path / "sub" / "b.py").rename(tmp_path / "sub" / "c.py")
    assert tree_digest(tmp_path) != base


def test_symlinks_are_recorded_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s3cret")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link").symlink_to(outside / "secret")
    (tree / "dirlink").symlink_to(outside)
    manifest = tree_manifest(tree)
    assert {e["path"]: e["type"] for e in manifest} == {"dirlink": "symlink", "link": "symlink"}
    before = tree_digest(tree)
    (outside / "secret").write_text("changed")
    assert tree_digest(tree) == before
