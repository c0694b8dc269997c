from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from signoff.kernel import UsageError
from signoff.trust import KeyStore
from signoff.trust.keys import _ed25519_from_pkcs8_pem


def _seed(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes_raw()


def test_the_key_signoff_writes_loads_without_the_pem_parser_and_is_the_same_key(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys")
    made = store.ensure("verifier")
    data = (tmp_path / "keys" / "verifier.key").read_bytes()
    fast = _ed25519_from_pkcs8_pem(data)
    assert fast is not None
    assert _seed(fast) == _seed(made.private)
    loaded = store.load("verifier")
    assert loaded.keyid == made.keyid
    assert loaded.public.verify(made.sign(b"m"), b"m")


def _write(tmp_path: Path, pem: bytes) -> KeyStore:
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "k.key").write_bytes(pem)
    return KeyStore(tmp_path / "keys")


def test_an_ed25519_key_in_another_pem_shape_still_loads_through_cryptography(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).replace(b"\n", b"\r\n")  # CRLF: not the exact shape
    assert _ed25519_from_pkcs8_pem(pem) is None
    assert _seed(_write(tmp_path, pem).load("k").private) == _seed(key)


_PRIVATE = (b"-----BEGIN PRIVATE KEY-----\n", b"\n-----END PRIVATE KEY-----\n")


@pytest.mark.parametrize("pem", [
    b"MC4CAQAwBQYDK2VwBCIEIMpxmfq3jOYhxae0Ax/dVEyIKF5hn75BmRhzuCbUIi7!".join(_PRIVATE),
    b"MC4CAQAwBQYDK2VxBCIEIMpxmfq3jOYhxae0Ax/dVEyIKF5hn75BmRhzuCbUIi7p".join(_PRIVATE),
    b"MC4CAQAwBQYDK2VwBCIEIMpxmfq3jOYhxae0Ax/dVEyIKF5hn75BmRhzuCbUIg==".join(_PRIVATE),
    b"-----BEGIN PUBLIC KEY-----\nMC4CAQAwBQYDK2VwBCIEIMpxmfq3jOYhxae0Ax/dVEyIKF5hn75BmRhzuCbUIi7p\n"
    b"-----END PUBLIC KEY-----\n",
], ids=["bad base64", "another algorithm id", "short", "other label"])
def test_anything_but_the_exact_shape_is_left_to_cryptography(pem: bytes) -> None:
    assert _ed25519_from_pkcs8_pem(pem) is None


def test_a_key_of_another_type_is_still_refused(tmp_path: Path) -> None:
    pem = generate_private_key(SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    with pytest.raises(UsageError, match="not an Ed25519 key"):
        _write(tmp_path, pem).load("k")
