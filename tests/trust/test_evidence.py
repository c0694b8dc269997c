from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import pytest

from signoff.kernel import IntegrityError, UsageError, canonical_bytes, sha256_bytes
from signoff.trust import (
    KeyStore,
    pae,
    sign_envelope,
    statement,
    subject,
    verify_envelope,
    verify_file,
    write_evidence,
)
from signoff.trust.evidence import envelope_bytes


def test_pae_matches_the_dsse_spec_vector() -> None:
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_private_keys_are_private_and_public_keys_exportable(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys")
    key = store.ensure("verifier")
    assert stat.S_IMODE((tmp_path / "keys" / "verifier.key").stat().st_mode) == 0o600
    assert store.ensure("verifier").keyid == key.keyid  # loaded, not regenerated
    assert key.keyid in store.trusted()
    with pytest.raises(UsageError):
        store.ensure("../escape")


def _evidence(tmp_path: Path) -> tuple[Path, KeyStore]:
    store = KeyStore(tmp_path / "keys")
    key = store.ensure("verifier")
    artifact = tmp_path / "ev" / "artifact.txt"
    artifact.parent.mkdir()
    artifact.write_text("the thing")
    st = statement([subject("artifact.txt", sha256=sha256_bytes(b"the thing"))], "https://signoff.dev/test/v1",
                   {"kind": "measured", "result": "ok"})
    return write_evidence(st, key, tmp_path / "ev", stem="t"), store


def test_round_trip_and_subject_digest_recheck(tmp_path: Path) -> None:
    path, store = _evidence(tmp_path)
    report = verify_file(path, store.trusted())
    assert report.ok, report.problem
    assert report.kind == "measured" and report.signers == ("verifier",)
    (tmp_path / "ev" / "artifact.txt").write_text("changed after signing")
    report = verify_file(path, store.trusted())
    assert not report.ok and "does not match the signed" in (report.problem or "")


def test_every_flipped_byte_is_detected(tmp_path: Path) -> None:
    path, store = _evidence(tmp_path)
    original = path.read_bytes()
    trusted = store.trusted()
    for i in range(len(original)):
        data = bytearray(original)
        data[i] ^= 0x01
        path.write_bytes(bytes(data))
        assert not verify_file(path, trusted).ok, f"flip at byte {i} ({chr(original[i])!r}) went unnoticed"
    path.write_bytes(original)
    assert verify_file(path, trusted).ok


def _rewrite(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    env = json.loads(path.read_bytes())
    change(env)
    path.write_bytes(envelope_bytes(env))


def test_each_failure_has_its_own_message(tmp_path: Path) -> None:
    path, store = _evidence(tmp_path)
    trusted = store.trusted()
    messages = {}

    other = KeyStore(tmp_path / "other").ensure("stranger")
    st = json.loads(base64.b64decode(json.loads(path.read_bytes())["payload"]))
    unknown = tmp_path / "unknown.json"
    unknown.write_bytes(envelope_bytes(sign_envelope(canonical_bytes(st), other)))
    messages["unknown key"] = verify_file(unknown, trusted).problem

    bad_sig = tmp_path / "badsig.json"
    bad_sig.write_bytes(path.read_bytes())
    _rewrite(bad_sig, lambda e: e["signatures"][0].update(sig=base64.b64encode(b"x" * 64).decode()))
    messages["bad signature"] = verify_file(bad_sig, trusted).problem

    altered = tmp_path / "altered.json"
    altered.write_bytes(path.read_bytes())
    st["predicate"]["result"] = "forged"
    _rewrite(altered, lambda e: e.update(payload=base64.b64encode(json.dumps(st).encode()).decode()))
    messages["altered payload"] = verify_file(altered, trusted).problem

    wrong_type = tmp_path / "type.json"
    wrong_type.write_bytes(path.read_bytes())
    _rewrite(wrong_type, lambda e: e.update(payloadType="text/plain"))
    messages["wrong type"] = verify_file(wrong_type, trusted).problem

    missing = tmp_path / "missing.json"
    missing.write_bytes(path.read_bytes())
    _rewrite(missing, lambda e: e.pop("signatures"))
    messages["missing field"] = verify_file(missing, trusted).problem

    assert "unknown key" in (messages["unknown key"] or "")
    assert "bad signature" in (messages["bad signature"] or "")
    assert "altered payload" in (messages["altered payload"] or "")
    assert "wrong payload type" in (messages["wrong type"] or "")
    assert "missing the field 'signatures'" in (messages["missing field"] or "")
    assert len(set(messages.values())) == len(messages)


def test_statement_shape_is_checked(tmp_path: Path) -> None:
    key = KeyStore(tmp_path).ensure("k")
    with pytest.raises(UsageError, match="kind"):
        statement([subject("x", sha256="0" * 64)], "t", {"kind": "vibes"})
    env = sign_envelope(json.dumps({"_type": "https://in-toto.io/Statement/v1", "subject": []}).encode(), key)
    verified = verify_envelope(env, {key.keyid: key.public})
    from signoff.trust import check_statement

    with pytest.raises(IntegrityError, match="no subject"):
        check_statement(json.loads(verified.payload))
