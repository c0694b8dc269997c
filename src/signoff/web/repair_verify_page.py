"""A `signoff repair verify` result opened as a page: an evidence file uploaded, or named in the
evidence folder, checked as `signoff evidence verify` checks it, then shown as what it proves (the
verdict and why, the commits, the harness, each stage) beside what this server could not
recompute (the check's own notes, said plainly)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.datastructures import UploadFile

from signoff.kernel.errors import NotFoundError, SignoffError, UsageError
from signoff.repair import PREDICATE_TYPE
from signoff.trust import KeyStore, TrustPolicy, verify_file
from signoff.trust.evidence import EvidenceReport, verify_bytes
from signoff.web.evidence_pages import confined, home_settings
from signoff.web.render import PageRoute, page
from signoff.web.state import checked_form, signed_in

router = APIRouter(route_class=PageRoute)
MAX_UPLOAD = 8 * 1024 * 1024  # a verification with every run recorded is well under this
NEVER_RECOMPUTED = ("The executions themselves are not run again here: the signature says who recorded them, "
                    "and `signoff repair verify` with the same inputs runs them again.")


def _proves(report: EvidenceReport) -> dict[str, Any] | None:
    """What a verified repair statement shows, for the page; None for another kind of statement."""
    st = report.statement
    if not report.ok or st is None or st["predicateType"] != PREDICATE_TYPE:
        return None
    p = st["predicate"]
    ident = p["identity"]
    stages = [{"name": name, "tests": p["stages"][name].get("tests", []), **p["stages"][name]["summary"]}
              for name in ("base", "candidate", "regression")]
    return {"verdict": p["verdict"], "reasons": p.get("reasons", []), "base": ident["base"],
            "candidate": ident["candidate"], "harness_digest": ident["harness_digest"],
            "fingerprint": p["fingerprint"], "purpose": p.get("purpose", "verification"), "stages": stages,
            "tamper": (p.get("policy") or {}).get("tamper", []), "signals": (p.get("policy") or {}).get("signals", [])}


def _show(request: Request, report: EvidenceReport | None, source: str = "", name: str = "") -> Response:
    status = 200 if report is None or report.ok else 422
    return page(request, "repair_verify.html", status, report=report.as_json() if report else None, source=source,
                proves=_proves(report) if report else None, never=NEVER_RECOMPUTED, repair_type=PREDICATE_TYPE,
                name=name)


@router.get("/repair/verify")
def verify_page(request: Request, name: str | None = None) -> Response:
    signed_in(request)
    if name is None:
        return _show(request, None)
    settings = home_settings(request)
    found = confined(settings.evidence_dir, name)
    if found is None:
        raise NotFoundError("no evidence file of that name in the evidence folder",  # the name is not echoed
                            "name a .intoto.json file listed on the evidence page, or upload the file")
    report = verify_file(found, KeyStore(settings.keys_dir).trusted(),
                         TrustPolicy.from_config(settings.section("trust", "signers")))
    return _show(request, report, f"the evidence folder: {name}", name)


@router.post("/repair/verify")
async def verify_upload(request: Request) -> Response:
    await checked_form(request)
    signed_in(request)
    upload = (await request.form()).get("file")
    if not isinstance(upload, UploadFile) or not upload.filename:
        raise UsageError("no evidence file was uploaded", "choose a .intoto.json file, then send the form")
    data = await upload.read(MAX_UPLOAD + 1)
    if len(data) > MAX_UPLOAD:
        raise UsageError(f"the file is over {MAX_UPLOAD // (1024 * 1024)} MiB", "upload one evidence file")
    settings = home_settings(request)
    # An uploaded file comes with no folder: its subjects are looked up in an empty one, so the page
    # says they were not rechecked rather than reading anything of this server's.
    with tempfile.TemporaryDirectory(prefix="signoff-upload-") as empty:
        try:
            report = verify_bytes(data, KeyStore(settings.keys_dir).trusted(), Path(empty),
                                  TrustPolicy.from_config(settings.section("trust", "signers")))
        except SignoffError as exc:
            report = EvidenceReport(upload.filename, False, exc.message)
    report.path = upload.filename
    return _show(request, report, f"an uploaded file: {upload.filename}")
