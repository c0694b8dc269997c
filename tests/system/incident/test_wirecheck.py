"""wirecheck: positions over the raw bytes, against Python's json and Node's JSON.stringify."""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signoff.incident.wirecheck import PathPart, WireError, render_path, scan

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20,
)
DUMPS = [
    {"separators": (",", ":")},
    {},
    {"indent": 2},
    {"indent": "\t", "separators": (" ,", " : ")},
    {"ensure_ascii": False},
    {"ensure_ascii": False, "indent": 1},
]


def leaves(value: Any, parts: tuple[PathPart, ...] = ()) -> Iterator[tuple[tuple[PathPart, ...], Any]]:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from leaves(v, (*parts, k))
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            yield from leaves(v, (*parts, i))
    else:
        yield parts, value


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool) \
            and not isinstance(b, bool) and (float(a) == float(b) or (math.isnan(a) and math.isnan(b)))
    return type(a) is type(b) and a == b


def test_paths_offsets_and_flags() -> None:
    raw = '{"data": {"customer": {"name": "Jos\\u00e9"}}, "items": [{"sku": "A"}, {"sku": "é"}], "n": -1.5e3}'.encode()
    got = {leaf.path: leaf for leaf in scan(raw)}
    name = got["data.customer.name"]
    assert raw[name.offset:name.offset + name.length] == b'"Jos\\u00e9"' and name.length == 11
    assert name.escaped and not name.non_ascii and name.value == "José"
    sku = got["items[1].sku"]
    assert raw[sku.offset:sku.offset + sku.length] == '"é"'.encode() and sku.non_ascii and not sku.escaped
    assert got["n"].value == -1500.0 and got["n"].type == "number"


def test_surrogate_pairs_escapes_and_empty_containers() -> None:
    raw = b'{"e": "\\ud83d\\ude00", "lone": "\\ud800x", "esc": "\\"\\\\\\/\\b\\f\\n\\r\\t", "o": {}, "a": []}'
    got = {leaf.path: leaf for leaf in scan(raw)}
    assert got["e"].value == "😀" and got["e"].length == 14
    assert got["lone"].value == "\ud800x"
    assert got["esc"].value == '"\\/\b\f\n\r\t'
    assert got["o"].type == "object" and got["a"].type == "array"
    assert json.loads(raw) == {k: v.value for k, v in got.items()}


def test_duplicate_keys_are_kept_and_flagged() -> None:
    out = scan(b'{"a": 1, "b": {"c": 2}, "a": 3, "b": {"c": 4}}')
    assert [(leaf.path, leaf.value, leaf.duplicate) for leaf in out] == [
        ("a", 1, False), ("b.c", 2, False), ("a", 3, True), ("b.c", 4, True)]


def test_odd_keys_are_quoted_in_paths() -> None:
    assert render_path(("data", "first name", 0, "x")) == 'data["first name"][0].x'
    assert render_path(()) == "$"


@pytest.mark.parametrize(("raw", "offset"), [
    (b"", 0), (b"   ", 3), (b'{"a": tru}', 6), (b'{"a" 1}', 5), (b'{"a": 1,}', 8), (b"[1, 2", 5),
    (b'"abc', 0), (b'"a\\x"', 2), (b'"\\u12g4"', 1), (b'"a\nb"', 2), (b"[01]", 2), (b"NaN", 0),
    (b'{"a": 1} x', 9), (b'"\xff"', 1), (b"\xef\xbb\xbf{}", 0), (b"[1.]", 2), (b"-", 0),
])
def test_malformed_input_names_the_byte_offset(raw: bytes, offset: int) -> None:
    with pytest.raises(WireError) as err:
        scan(raw)
    assert err.value.offset == offset
    assert f"byte {offset}" in err.value.message


def test_deep_nesting_is_refused_not_crashed() -> None:
    with pytest.raises(WireError):
        scan(b"[" * 5000 + b"]" * 5000)


@SETTINGS
@given(values, st.sampled_from(DUMPS))
def test_agrees_with_python_json(value: Any, style: dict[str, Any]) -> None:
    raw = json.dumps(value, **style).encode("utf-8")
    scanned = scan(raw)
    expected = list(leaves(json.loads(raw)))
    assert [leaf.parts for leaf in scanned] == [p for p, _ in expected]
    ascii_only = style.get("ensure_ascii", True)
    last_end = 0
    for leaf, (_, want) in zip(scanned, expected, strict=True):
        assert same(leaf.value, want)
        assert leaf.offset >= last_end
        last_end = leaf.offset + leaf.length
        assert same(json.loads(raw[leaf.offset:last_end]), want)  # the slice is exactly the value
        if isinstance(want, str):
            assert leaf.non_ascii == (not ascii_only and not want.isascii())
            if ascii_only and not want.isascii():
                assert leaf.escaped


@SETTINGS
@given(values, st.data())
def test_mutated_bytes_are_rejected_or_agree(value: Any, data: st.DataObject) -> None:
    raw = bytearray(json.dumps(value).encode("utf-8"))
    pos = data.draw(st.integers(0, len(raw) - 1))
    raw[pos] = data.draw(st.sampled_from(list(b'{}[]",:\\ 0x-e.u\x01\xc3')))
    try:
        reference: Any = json.loads(bytes(raw).decode("utf-8"), parse_constant=lambda c: 1 / 0)
    except (ValueError, UnicodeDecodeError, ZeroDivisionError, RecursionError):
        with pytest.raises(WireError) as err:
            scan(bytes(raw))
        assert 0 <= err.value.offset <= len(raw)
        return
    got = [(leaf.parts, leaf.value) for leaf in scan(bytes(raw)) if not leaf.duplicate]
    ref = dict(leaves(reference))
    assert all(same(v, ref[p]) for p, v in got if p in ref)


NODE_ECHO = """
const rl = require('readline').createInterface({ input: process.stdin });
rl.on('line', (line) => { process.stdout.write(JSON.stringify(JSON.parse(line)) + '\\n'); });
"""


@pytest.fixture(scope="module")
def node_echo(node: str) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([node, "-e", NODE_ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=10)


def _via_node(proc: subprocess.Popen[bytes], value: Any) -> bytes:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(value).encode() + b"\n")
    proc.stdin.flush()
    return proc.stdout.readline().rstrip(b"\n")


def _utf8_len(c: str) -> int:
    return len(c.encode("utf-8"))


@SETTINGS
@given(value=values)
def test_agrees_with_node_serialisation(node_echo: subprocess.Popen[bytes], value: Any) -> None:
    raw = _via_node(node_echo, value)
    scanned = {leaf.parts: leaf for leaf in scan(raw)}
    expected = dict(leaves(value))
    assert set(scanned) == set(expected)  # JavaScript may reorder integer-like keys, never drop one
    python_leaves = {leaf.parts: leaf for leaf in scan(json.dumps(value).encode())}
    for parts, want in expected.items():
        leaf = scanned[parts]
        assert same(leaf.value, want)
        if isinstance(want, str):
            # The bug's mechanism, for every string: JS writes UTF-8, Python (ensure_ascii) writes \\u escapes.
            controls = any(ord(c) < 0x20 and c not in "\b\f\n\r\t" for c in want)
            assert leaf.non_ascii == (not want.isascii())
            assert leaf.escaped == controls
            py = python_leaves[parts]
            # Python escapes everything outside space..tilde, DEL (0x7f) included.
            extra = sum((12 if ord(c) > 0xFFFF else 6) - _utf8_len(c) for c in want if ord(c) >= 0x7F)
            assert py.length - leaf.length == extra


def test_node_and_python_differ_by_four_bytes_per_accented_character(node_echo: subprocess.Popen[bytes]) -> None:
    event = {"data": {"customer": {"name": "José Álvarez"}}}
    js = {leaf.path: leaf for leaf in scan(_via_node(node_echo, event))}
    py = {leaf.path: leaf for leaf in scan(json.dumps(event, separators=(",", ":")).encode())}
    assert (py["data.customer.name"].length, js["data.customer.name"].length) == (24, 16)
