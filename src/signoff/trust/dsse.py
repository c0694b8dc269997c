"""DSSE envelopes (Dead Simple Signing Envelope, v1.0).

The signature covers PAE(payloadType, payload), exactly as the spec defines it:
    "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
where LEN is the ASCII decimal byte length and SP a single space.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from signoff.kernel.errors import IntegrityError, UsageError
from signoff.trust.keys import PublicKey, SigningKey

INTOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, payload: bytes) -> bytes:
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def sign_envelope(payload: bytes, key: SigningKey, payload_type: str = INTOTO_PAYLOAD_TYPE) -> dict[str, Any]:
    signature = key.sign(pae(payload_type, payload))
    return {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [{"keyid": key.keyid, "sig": base64.b64encode(signature).decode("ascii")}],
    }


def add_signature(envelope: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    payload = _b64(envelope["payload"], "payload")
    signature = key.sign(pae(envelope["payloadType"], payload))
    out = dict(envelope)
    out["signatures"] = [*envelope.get("signatures", []),
                         {"keyid": key.keyid, "sig": base64.b64encode(signature).decode("ascii")}]
    return out


@dataclass(frozen=True)
class VerifiedEnvelope:
    payload_type: str
    payload: bytes
    signers: tuple[str, ...]  # names of the trusted keys whose signatures held


def _b64(text: Any, what: str) -> bytes:
    if not isinstance(text, str):
        raise IntegrityError(f"envelope {what} is not a base64 string", "the file is not a DSSE envelope")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise IntegrityError(f"envelope {what} is not valid base64", "the file was altered or truncated") from exc


def parse_envelope(data: bytes) -> dict[str, Any]:
    try:
        env = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IntegrityError(f"not JSON: {exc}", "the file was altered or is not an evidence file") from exc
    if not isinstance(env, dict):
        raise IntegrityError("envelope is not a JSON object", "the file is not a DSSE envelope")
    for field_name in ("payloadType", "payload", "signatures"):
        if field_name not in env:
            raise IntegrityError(f"envelope is missing the field {field_name!r}", "the file is not a DSSE envelope")
    if not isinstance(env["signatures"], list) or not env["signatures"]:
        raise IntegrityError("envelope has no signatures", "sign it, or it cannot be trusted")
    return env


def verify_envelope(
    env: dict[str, Any],
    trusted: dict[str, PublicKey],
    expected_type: str | None = INTOTO_PAYLOAD_TYPE,
) -> VerifiedEnvelope:
    """Check every signature; at least one must be by a trusted key and none may be bad."""
    payload_type = env.get("payloadType")
    if not isinstance(payload_type, str):
        raise IntegrityError("envelope payloadType is not a string", "the file is not a DSSE envelope")
    if expected_type is not None and payload_type != expected_type:
        raise IntegrityError(
            f"wrong payload type {payload_type!r}, expected {expected_type!r}",
            "this is not an in-toto statement envelope",
        )
    payload = _b64(env.get("payload"), "payload")
    message = pae(payload_type, payload)
    signers: list[str] = []
    unknown: list[str] = []
    for sig in env["signatures"]:
        if not isinstance(sig, dict):
            raise IntegrityError("a signature entry is not an object", "the file was altered")
        keyid = sig.get("keyid", "")
        raw = _b64(sig.get("sig"), "signature")
        key = trusted.get(keyid) if isinstance(keyid, str) else None
        if key is None:
            unknown.append(str(keyid)[:16])
            continue
        if not key.verify(raw, message):
            raise IntegrityError(
                f"bad signature by key {key.name or keyid[:16]}: it does not match the payload",
                "do not trust this file; obtain the original",
            )
        signers.append(key.name or keyid[:16])
    if not signers:
        raise IntegrityError(
            f"signed by unknown key(s) {', '.join(unknown)}: none is trusted here",
            "add the signer's public key with `signoff evidence key trust NAME FILE` if you trust it",
        )
    return VerifiedEnvelope(payload_type, payload, tuple(signers))


def ensure_json_object(payload: bytes) -> dict[str, Any]:
    try:
        value = json.loads(payload)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IntegrityError(f"payload is not JSON: {exc}", "the file was altered") from exc
    if not isinstance(value, dict):
        raise UsageError("payload is not a JSON object", "the statement must be an object")
    return value
