"""Which key may sign which kind of statement.

A signature proves who signed, not that the signer was entitled to say it: a repair verdict signed
with the agents' key is a well-formed lie. The policy maps each predicate type to the key names
allowed to sign it (shell-style patterns, matched against the names the key store gives keys).
Each of signoff's workflows has a default entry; `[trust.signers]` in signoff.toml adds or replaces
entries, e.g.::

    [trust.signers]
    "https://example.org/my-predicate/v1" = ["release-bot"]

A statement whose type the policy does not name is refused: an unknown kind of claim has no
entitled signer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from signoff.kernel.errors import IntegrityError, UsageError

# One entry per statement signoff writes; the key names are the ones its workflows sign with.
DEFAULT_SIGNERS: Mapping[str, tuple[str, ...]] = {
    "https://signoff.dev/repair-verification/v1": ("verifier",),
    "https://signoff.dev/notes/v1": ("verifier",),
    "https://signoff.dev/ledger-demo/v1": ("verifier",),
    "https://signoff.dev/agents/call/v1": ("agents",),
    "https://signoff.dev/desk/release/v1": ("desk-recorder",),
    "https://signoff.dev/incident/disclosure/v1": ("incident-approver-*",),
    "https://signoff.dev/incident/postmortem/v1": ("incident-approver-*",),
    "https://signoff.dev/gate/decision/v1": ("gate",),
}


@dataclass(frozen=True)
class TrustPolicy:
    signers: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_SIGNERS))

    @classmethod
    def from_config(cls, table: Mapping[str, object]) -> TrustPolicy:
        """The defaults, with `[trust.signers]` entries added or replacing them."""
        merged = dict(DEFAULT_SIGNERS)
        for ptype, names in table.items():
            if isinstance(names, str):
                names = [names]
            if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
                raise UsageError(f"[trust.signers] {ptype!r} must be a list of key names",
                                 f'write it as "{ptype}" = ["key-name"]')
            merged[ptype] = tuple(names)
        return cls(merged)

    def check(self, predicate_type: str, signer_names: Iterable[str]) -> None:
        """Raise unless at least one signer is entitled to sign this predicate type."""
        allowed = self.signers.get(predicate_type)
        names = list(signer_names)
        if allowed is None:
            raise IntegrityError(
                f"no trust policy names a signer for statements of type {predicate_type!r}",
                'if you trust them, add [trust.signers] "<type>" = ["key-name"] to signoff.toml',
            )
        if not any(fnmatchcase(name, pattern) for name in names for pattern in allowed):
            raise IntegrityError(
                f"signed by {', '.join(names)}, which may not sign {predicate_type!r} "
                f"(allowed: {', '.join(allowed)})",
                "do not trust this file: a key signed a kind of statement it is not entitled to",
            )
