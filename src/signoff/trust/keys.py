"""Ed25519 keys in a key store under `.signoff/keys/`.

Private keys are PKCS#8 PEM files with mode 0600; public keys are raw 32-byte keys written as hex in
`<name>.pub`. A key id is the SHA-256 of the raw public key, so anyone holding the public key can
compute it. Keys in `trusted/` (public only) are the keys `evidence verify` accepts besides the
store's own.
"""

from __future__ import annotations

import base64
import binascii
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

_NAME_OK = set("abcdefghijklmnopqrstuvwxyz0123456789-_.")


def load_cryptography() -> None:
    """Import what making, reading and checking a key needs. Importing this module does not (its
    Rust extension is about 8 ms of a command's start; `signoff repair verify` signs only once its
    runs are over, and imports it while they run: see repair.verifier)."""
    from cryptography.hazmat.primitives.asymmetric import ed25519  # noqa: F401

# The PKCS#8 PEM that `KeyStore.ensure` writes for an Ed25519 key: these lines around the base64 of a
# 48-byte DER structure, this fixed prefix (version 0, algorithm id 1.3.101.112, no parameters) and
# the 32-byte seed. Loading that exact shape needs no PEM parser: importing cryptography's
# serialization package (its SSH, PKCS#7 and PKCS#12 code) for one key cost about 30 M instructions,
# 4% of the `signoff repair verify` process. Any other content goes to cryptography's loader.
_PEM_BEGIN, _PEM_END = b"-----BEGIN PRIVATE KEY-----", b"-----END PRIVATE KEY-----"
_ED25519_PKCS8_PREFIX = bytes.fromhex("302e020100300506032b657004220420")


def key_id(public: Ed25519PublicKey) -> str:
    return sha256_bytes(public.public_bytes_raw())


def _ed25519_from_pkcs8_pem(data: bytes) -> Ed25519PrivateKey | None:
    """The key of an unencrypted Ed25519 PKCS#8 PEM file in exactly the shape signoff writes, else None."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    if len(lines) != 3 or lines[0] != _PEM_BEGIN or lines[2] != _PEM_END:
        return None
    try:
        der = base64.b64decode(lines[1], validate=True)
    except binascii.Error:
        return None
    if len(der) != len(_ED25519_PKCS8_PREFIX) + 32 or not der.startswith(_ED25519_PKCS8_PREFIX):
        return None
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(der[len(_ED25519_PKCS8_PREFIX):])


@dataclass(frozen=True)
class PublicKey:
    key: Ed25519PublicKey
    name: str

    @property
    def keyid(self) -> str:
        return key_id(self.key)

    def hex(self) -> str:
        return self.key.public_bytes_raw().hex()

    def verify(self, signature: bytes, message: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature

        try:
            self.key.verify(signature, message)
        except InvalidSignature:
            return False
        return True

    @classmethod
    def from_hex(cls, text: str, name: str = "") -> PublicKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        try:
            raw = bytes.fromhex(text.strip())
            return cls(Ed25519PublicKey.from_public_bytes(raw), name)
        except ValueError as exc:
            raise UsageError(f"not an Ed25519 public key in hex: {name or text[:20]}",
                             "export keys with `signoff evidence key export`") from exc


@dataclass(frozen=True)
class SigningKey:
    private: Ed25519PrivateKey
    name: str

    @property
    def public(self) -> PublicKey:
        return PublicKey(self.private.public_key(), self.name)

    @property
    def keyid(self) -> str:
        return self.public.keyid

    def sign(self, message: bytes) -> bytes:
        return self.private.sign(message)


class KeyStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def trusted_dir(self) -> Path:
        return self.root / "trusted"

    def _check_name(self, name: str) -> None:
        if not name or not set(name) <= _NAME_OK:
            raise UsageError(f"bad key name {name!r}", "use lower-case letters, digits, '-', '_' and '.'")

    def ensure(self, name: str) -> SigningKey:
        """Load the named signing key, creating it on first use."""
        self._check_name(name)
        path = self.root / f"{name}.key"
        if path.exists():
            return self.load(name)
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)
        from cryptography.hazmat.primitives import serialization  # only here and in `load`'s slow path
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        private = Ed25519PrivateKey.generate()
        pem = private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        # Written whole under a name of its own, then linked into place: a link fails when the key
        # exists, so of two processes (or threads) creating it at once one wins and the other loads
        # the winner's key, and nobody ever reads a key file that is still being written.
        fd, staged = tempfile.mkstemp(dir=self.root, prefix=f".{name}.", suffix=".staged")
        try:
            with os.fdopen(fd, "wb") as fh:  # mkstemp makes it 0600
                fh.write(pem)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(staged, path)
            except FileExistsError:
                return self.load(name)
        finally:
            os.unlink(staged)
        key = SigningKey(private, name)
        (self.root / f"{name}.pub").write_text(key.public.hex() + "\n")
        return key

    def load(self, name: str) -> SigningKey:
        self._check_name(name)
        path = self.root / f"{name}.key"
        try:
            data = path.read_bytes()
        except FileNotFoundError as exc:
            raise NotFoundError(f"no signing key named {name!r} in {self.root}", "create it with ensure()") from exc
        private = _ed25519_from_pkcs8_pem(data)
        if private is None:
            from cryptography.hazmat.primitives import serialization  # any other shape: cryptography's loader
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

            other = serialization.load_pem_private_key(data, password=None)
            if not isinstance(other, Ed25519PrivateKey):
                raise UsageError(f"{path} is not an Ed25519 key", "remove it; signoff makes its own keys")
            private = other
        return SigningKey(private, name)

    def trust(self, public: PublicKey, name: str) -> Path:
        """Add another party's public key to the trusted set."""
        self._check_name(name)
        self.trusted_dir.mkdir(parents=True, exist_ok=True)
        path = self.trusted_dir / f"{name}.pub"
        path.write_text(public.hex() + "\n")
        return path

    def trusted(self) -> dict[str, PublicKey]:
        """Key id -> public key, for the store's own keys and the trusted folder."""
        found: dict[str, PublicKey] = {}
        for folder in (self.root, self.trusted_dir):
            if not folder.is_dir():
                continue
            for pub in sorted(folder.glob("*.pub")):
                key = PublicKey.from_hex(pub.read_text(), pub.stem)
                found[key.keyid] = key
        return found
