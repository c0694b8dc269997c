"""Evidence and the ledger's chain in the browser: every evidence file with its kind badge and its
`evidence verify` result (signers, problem, notes) and the raw envelope to download; the chain's
`ledger verify` status with its signed checkpoints."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, Response

# Predicate checks live with their workflows; importing them registers the checks, as
# `signoff evidence verify` does.
import signoff.incident  # the incident evidence check (registered by the package)
import signoff.notes  # the notes evidence check (registered by the facade)
import signoff.repair.evidence  # noqa: F401
from signoff.kernel.errors import NotFoundError, UnavailableError
from signoff.kernel.settings import Settings
from signoff.ledger.checkpoints import stored
from signoff.trust import KeyStore, TrustPolicy, verify_file
from signoff.web.render import PageRoute, page
from signoff.web.state import signed_in, web_state

router = APIRouter(route_class=PageRoute)
SUFFIX = ".intoto.json"
TIMELINE = 200  # files the evidence page verifies and shows, newest first


def home_settings(request: Request) -> Settings:
    """The settings of the home this server serves (503 without one)."""
    settings = web_state(request).settings
    if settings is None:
        raise UnavailableError("this server has no signoff home", "run `signoff serve` on a home")
    return settings


def confined(root: Path, name: str) -> Path | None:
    """The evidence file `name` names under `root`, or None when it would lead outside (an absolute
    name, `..`, a link out) or is not an evidence file."""
    if not name.endswith(SUFFIX) or "\\" in name:
        return None
    base = root.resolve()
    found = (base / name).resolve()
    if not found.is_relative_to(base) or not found.is_file():
        return None
    return found


def verified(settings: Settings, paths: list[Path]) -> list[dict[str, Any]]:
    """`evidence verify` of each file, as the page shows it (names relative to the evidence folder)."""
    if not paths:
        return []  # no keys to read from disk (a bug page without evidence yet)
    trusted = KeyStore(settings.keys_dir).trusted()
    policy = TrustPolicy.from_config(settings.section("trust", "signers"))
    root = settings.evidence_dir.resolve()
    out = []
    for path in paths:
        name = str(path.resolve().relative_to(root)) if path.resolve().is_relative_to(root) else None
        if name is None or confined(root, name) is None:
            out.append({"name": str(path), "ok": False, "problem": "not a file in the evidence folder, not read",
                        "kind": None, "signers": [], "predicate_type": None, "notes": [], "download": False})
            continue
        report = verify_file(path, trusted, policy).as_json()
        out.append({**report, "name": name, "download": True})
    return out


def evidence_files(settings: Settings) -> list[Path]:
    root = settings.evidence_dir
    if not root.is_dir():
        return []
    files = [p for p in root.rglob(f"*{SUFFIX}") if p.is_file()]
    return sorted(files, key=lambda p: (p.stat().st_mtime, str(p)), reverse=True)[:TIMELINE]


@router.get("/evidence")
def evidence(request: Request) -> Response:
    signed_in(request)
    settings = home_settings(request)
    return page(request, "evidence.html", files=verified(settings, evidence_files(settings)), limit=TIMELINE)


@router.get("/evidence/raw/{name:path}")
def raw(request: Request, name: str) -> Response:
    signed_in(request)
    found = confined(home_settings(request).evidence_dir, name)
    if found is None:
        raise NotFoundError(f"no evidence file {name!r}", "download files from the evidence page")
    return evidence_download(found)


def evidence_download(found: Path) -> Response:
    """An evidence file as a download (a file `confined` found: never a name from the request)."""
    return Response(found.read_bytes(), media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{found.name}"'})


@router.get("/ledger")
def ledger(request: Request) -> Response:
    signed_in(request)
    settings = home_settings(request)
    web = web_state(request)
    report = web.chain.verify(KeyStore(settings.keys_dir).trusted())
    reread = web.chain.reread()
    age = None if reread.at is None else max(0, round(time.time() - reread.at))
    return page(request, "ledger.html", report=report, reread=reread, reread_age=age,
                checkpoints=list(reversed(stored(web.rooms.ledger.engine)))[:50])
