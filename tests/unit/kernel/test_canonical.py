import json
import os
from pathlib import Path

import pytest
import rfc8785
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


# Wider than JSON needs, on purpose: lone surrogates, every control character, integers just past
# the I-JSON limit, ASCII and non-ASCII keys, tuples. Whatever rfc8785 writes or refuses,
# canonical_bytes must write or refuse the same (its fast path may only be faster).
_any_text = st.text(st.characters(codec=None, categories=None), max_size=12)
_edges = st.sampled_from([2**53 - 1, -(2**53) + 1, 2**53, -(2**53), "\x00\x1f\x7f\u2028\\\"", "\ud800", 1.0, 1e21])
_wide_scalars = st.none() | st.booleans() | st.integers(-(2**54), 2**54) | _any_text | st.floats() | _edges
_wide_values = st.recursive(
    _wide_scalars,
    lambda children: (st.lists(children, max_size=4) | st.lists(children, max_size=3).map(tuple)
                      | st.dictionaries(st.text(max_size=4) | _any_text, children, max_size=4)),
    max_leaves=25,
)


@settings(max_examples=400)
@given(_wide_values)
def test_every_value_is_written_or_refused_exactly_as_rfc8785_does(value: object) -> None:
    try:
        expected = rfc8785.dumps(value)  # type: ignore[arg-type]
    except (rfc8785.CanonicalizationError, TypeError, ValueError):
        with pytest.raises(UsageError):
            canonical_bytes(value)
        return
    assert canonical_bytes(value) == expected


@pytest.mark.parametrize("value", [
    {"\ue000": 1, "\U0001f600": 2},  # UTF-16 puts the emoji (a surrogate pair) first; code points do not
    {"b": "tab\tquote\"back\\slash\x01\x1f\x7f\u2028", "a": [None, True, False, 2**53 - 1, -(2**53) + 1]},
    {"a": 1.5, "b": 1e21, "c": 1e-7, "d": -0.0},
    ("tuple", ["list"]),
])
def test_values_either_path_takes_are_rfc8785s_bytes(value: object) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [{"lone": "\ud800"}, [2**53], {"k": True, 1: 2}])
def test_what_the_fast_path_would_write_anyway_is_still_refused(bad: object) -> None:
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
