from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import pytest

from signoff.kernel import IntegrityError, UsageError, canonical_bytes, sha256_bytes
from signoff.trust import (
    KeyStore,
    TrustPolicy,
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
    st = statement([subject("artifact.txt", sha256=sha256_bytes(b"the thing"))], "https://signoff.dev/ledger-demo/v1",
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


def _signed(tmp_path: Path, store: KeyStore, key_name: str, ptype: str, subjects: list[dict[str, object]]) -> Path:
    st = statement(subjects, ptype, {"kind": "measured"})
    return write_evidence(st, store.ensure(key_name), tmp_path / "ev", stem=key_name)


def test_subjects_outside_the_subjects_folder_are_never_read(tmp_path: Path) -> None:
    """An attacker's statement names host files so that verification hashes them and prints a digest
    prefix (an oracle for their contents). None of these may be opened."""
    store = KeyStore(tmp_path / "keys")
    secret = tmp_path / "host-secret.txt"
    secret.write_text("root:hunter2\n")
    (tmp_path / "ev").mkdir()
    (tmp_path / "ev" / "link").symlink_to(secret)
    (tmp_path / "ev" / "dirlink").symlink_to(tmp_path)
    hostile = [str(secret), "../host-secret.txt", "link", "dirlink/host-secret.txt", "a/../../host-secret.txt",
               "/etc/hostname"]
    for name in hostile:
        path = _signed(tmp_path, store, "verifier", "https://signoff.dev/ledger-demo/v1",
                       [subject(name, sha256="0" * 64)])
        report = verify_file(path, store.trusted())
        # Had the file been read, the wrong digest would fail the report with the real digest's prefix.
        assert report.ok, (name, report.problem)
        assert any("outside the subjects folder" in n for n in report.notes), (name, report.notes)
        assert sha256_bytes(secret.read_bytes())[:12] not in json.dumps(report.as_json())


def test_subjects_folder_is_the_one_named(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys")
    elsewhere = tmp_path / "artifacts"
    elsewhere.mkdir()
    (elsewhere / "a.txt").write_text("built")
    path = _signed(tmp_path, store, "verifier", "https://signoff.dev/ledger-demo/v1",
                   [subject("a.txt", sha256=sha256_bytes(b"built"))])
    beside = verify_file(path, store.trusted())
    assert beside.ok and any("not present here" in n for n in beside.notes)
    assert verify_file(path, store.trusted(), subjects=elsewhere).ok
    (elsewhere / "a.txt").write_text("swapped")
    assert "does not match the signed" in (verify_file(path, store.trusted(), subjects=elsewhere).problem or "")


def test_a_key_may_sign_only_what_the_policy_allows(tmp_path: Path) -> None:
    """A repair verdict signed with the agents' key is trusted as a key, and still a lie."""
    store = KeyStore(tmp_path / "keys")
    repair = "https://signoff.dev/repair-verification/v1"
    path = _signed(tmp_path, store, "agents", repair, [subject("git:base", gitCommit="0" * 40)])
    report = verify_file(path, store.trusted())
    assert not report.ok
    assert "agents, which may not sign" in (report.problem or "") and "allowed: verifier" in (report.problem or "")

    unknown = _signed(tmp_path, store, "verifier", "https://attacker.example/verdict/v1",
                      [subject("git:base", gitCommit="0" * 40)])
    problem = verify_file(unknown, store.trusted()).problem or ""
    assert "no trust policy names a signer" in problem
    assert problem != report.problem

    policy = TrustPolicy.from_config({"https://attacker.example/verdict/v1": ["verifier"]})
    assert verify_file(unknown, store.trusted(), policy).ok
    with pytest.raises(UsageError, match="list of key names"):
        TrustPolicy.from_config({repair: 3})


def test_cli_reads_the_policy_and_the_subjects_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from signoff.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SIGNOFF_HOME", raising=False)
    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)
    store = KeyStore(tmp_path / ".signoff" / "keys")
    path = _signed(tmp_path, store, "release-bot", "https://example.org/release/v1",
                   [subject("a.txt", sha256="0" * 64)])
    assert main(["evidence", "verify", str(path)]) == 1
    assert "no trust policy names a signer" in capsys.readouterr().out
    (tmp_path / "signoff.toml").write_text('[trust.signers]\n"https://example.org/release/v1" = ["release-*"]\n')
    assert main(["evidence", "verify", str(path)]) == 0
    capsys.readouterr()
    assert main(["evidence", "verify", str(path), "--subjects", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "not a folder" in err
