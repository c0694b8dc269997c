"""signoff.airlock: untrusted text is normalised, scanned, and then quarantined or redacted before
any agent or workflow reads it.

    from signoff.airlock import scan
    verdict = scan(report_text)            # str or UTF-8 bytes; UsageError if oversize or binary
    if verdict.quarantined:
        store(verdict.families, verdict.raw_sha256)   # never the text
    else:
        store(verdict.dossier.to_dict())              # redacted fields + counts by kind
"""

from __future__ import annotations

from signoff.airlock.cluster import Cluster, Clusterer, Report, cluster
from signoff.airlock.dossier import HEADER, Dossier
from signoff.airlock.families import DESCRIPTIONS, FAMILIES
from signoff.airlock.limits import MAX_BYTES
from signoff.airlock.normalise import Normalised
from signoff.airlock.normalise import normalise as _normalise
from signoff.airlock.redact import KINDS as REDACTION_KINDS
from signoff.airlock.redact import Redacted, redact_text
from signoff.airlock.scan import Hit, Verdict, detect, scan, scan_fields


def normalise(text: str) -> Normalised:
    """NFKC, invisible characters removed, whitespace collapsed, plus the folded scanning views."""
    from signoff.airlock.limits import check_text

    return _normalise(check_text(text))


def redact(text: str, *, region: str = "US") -> Redacted:
    """Normalise `text` and redact personal data, secrets, links and mentions; counts by kind."""
    return redact_text(normalise(text).text, region=region)


__all__ = [
    "DESCRIPTIONS",
    "FAMILIES",
    "HEADER",
    "MAX_BYTES",
    "REDACTION_KINDS",
    "Cluster",
    "Clusterer",
    "Dossier",
    "Hit",
    "Normalised",
    "Redacted",
    "Report",
    "Verdict",
    "cluster",
    "detect",
    "normalise",
    "redact",
    "scan",
    "scan_fields",
]
