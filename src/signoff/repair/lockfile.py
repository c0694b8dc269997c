"""A project's lock file, read as data: the exact version of every package it names, with hashes.

A lock **constrains** the test environment; it does not choose what goes in. What is installed stays
what the project declares and the requirement files name (`testenv.plan`); every package the lock
names is held to its locked version (pip constraints), and the archive pip installed must match one
of the lock's hashes for it (`check_hashes`, after installing). One rule for every format, so a lock
that lists every platform's packages (uv, poetry, pdm) never installs a Windows-only one here.

Read, never run: `requirements*.txt` with `--hash` options (pip-compile), `Pipfile.lock` (JSON),
`poetry.lock`, `pdm.lock`, `uv.lock` and `pylock.toml` (PEP 751), all parsed as data. Packages from
git, a path or a URL cannot be pinned by version: they are listed as `unpinned`, and the project
itself (uv's and pdm's entry for `.`) is left out.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import UsageError

_HASH = re.compile(r"--hash[=\s]+(\w+):([0-9a-fA-F]+)")
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*===?\s*([^\s;\\]+)\s*(?:;\s*([^\\]*?))?\s*$")


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    hashes: tuple[str, ...] = ()  # "sha256:<hex>", as the lock gives them
    marker: str | None = None

    def constraint(self) -> str:
        return f"{self.name}=={self.version}" + (f" ; {self.marker}" if self.marker else "")


@dataclass
class Lock:
    path: str
    format: str
    sha256: str
    pins: list[Pin] = field(default_factory=list)
    unpinned: list[str] = field(default_factory=list)  # git/path/url sources: not held to a version

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "format": self.format, "sha256": self.sha256, "pins": len(self.pins),
                "hashed": sum(1 for p in self.pins if p.hashes), "unpinned": self.unpinned}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def kind(path: str) -> str:
    """The lock format a file name says (UsageError for a name that is no lock this reads)."""
    name = PurePosixPath(path).name
    if name == "Pipfile.lock":
        return "pipfile"
    if name in ("poetry.lock", "pdm.lock", "uv.lock"):
        return name.split(".", 1)[0]
    if re.fullmatch(r"pylock(\.[\w-]+)?\.toml", name):
        return "pylock"
    if name.endswith((".txt", ".in")):
        return "requirements"
    raise UsageError(f"{path!r} is not a lock file signoff reads",
                     "pass requirements*.txt with hashes, Pipfile.lock, poetry.lock, pdm.lock, uv.lock or pylock.toml")


def parse(path: str, data: bytes, project: str | None = None) -> Lock:
    """The pins of a lock file's bytes (UsageError when it cannot be read as its format)."""
    fmt = kind(path)
    lock = Lock(path, fmt, sha256_bytes(data))
    text = data.decode("utf-8", errors="replace")
    try:
        if fmt == "requirements":
            _requirements(text, lock)
        elif fmt == "pipfile":
            _pipfile(json.loads(text), lock)
        else:
            _toml(fmt, tomllib.loads(text), lock)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise UsageError(f"the lock file {path} cannot be read as {fmt}: {exc}",
                         "pass the lock file as the project's tool wrote it") from exc
    own = normalise(project) if project else None
    lock.pins = [p for p in lock.pins if normalise(p.name) != own]
    return lock


def logical_lines(text: str) -> list[str]:
    """A requirements file's lines with `\\` continuations joined and comments removed."""
    out: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = "" if raw.lstrip().startswith("#") else raw.split(" #", 1)[0].rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if line:
            out.append(line)
    if pending.strip():
        out.append(pending.strip())
    return out


def split_hashes(line: str) -> tuple[str, tuple[str, ...]]:
    """(the requirement without its `--hash` options, the hashes as "algo:hex")."""
    hashes = tuple(f"{a.lower()}:{h.lower()}" for a, h in _HASH.findall(line))
    return _HASH.sub("", line).strip(), hashes


def pin_of(line: str) -> Pin | None:
    """The pin a requirement line makes (`name==1.2 ; marker --hash=...`), or None when it pins nothing."""
    req, hashes = split_hashes(line)
    m = None if req.startswith("-") else _PIN.match(req)
    return Pin(m.group(1), m.group(2), hashes, (m.group(3) or "").strip() or None) if m else None


def _requirements(text: str, lock: Lock) -> None:
    for line in logical_lines(text):
        found = pin_of(line)
        if found is not None:
            lock.pins.append(found)
        elif not line.startswith("-"):
            lock.unpinned.append(split_hashes(line)[0])


def _pipfile(data: dict[str, Any], lock: Lock) -> None:
    for section in ("default", "develop"):
        for name, entry in (data.get(section) or {}).items():
            version = str(entry.get("version") or "")
            if not version.startswith("=="):
                lock.unpinned.append(name)
                continue
            lock.pins.append(Pin(name, version[2:], tuple(str(h) for h in entry.get("hashes") or ()),
                                 entry.get("markers") or None))


def _toml(fmt: str, data: dict[str, Any], lock: Lock) -> None:
    packages = data.get("packages" if fmt == "pylock" else "package") or []
    legacy = ((data.get("metadata") or {}).get("files") or {}) if fmt == "poetry" else {}
    for pkg in packages:
        name, version = str(pkg.get("name") or ""), pkg.get("version")
        source = pkg.get("source") or {}
        if fmt == "uv" and isinstance(source, dict) and not source.get("registry"):
            # The project itself (editable/virtual "."), git, a path or a URL: nothing to pin.
            if not (source.get("editable") == "." or source.get("virtual") == "."):
                lock.unpinned.append(name)
            continue
        if fmt == "poetry" and isinstance(source, dict) and source.get("type") not in (None, "legacy"):
            lock.unpinned.append(name)
            continue
        if fmt == "pylock" and (pkg.get("vcs") or pkg.get("directory") or pkg.get("archive")):
            lock.unpinned.append(name)
            continue
        if not name or not version:
            lock.unpinned.append(name or "?")
            continue
        lock.pins.append(Pin(name, str(version), _hashes(fmt, pkg, legacy.get(name) or []),
                             (pkg.get("marker") if fmt in ("pylock", "pdm") else None) or None))


def _hashes(fmt: str, pkg: dict[str, Any], legacy: list[Any]) -> tuple[str, ...]:
    found: list[str] = []
    if fmt == "uv":
        files = [pkg.get("sdist") or {}, *(pkg.get("wheels") or [])]
        found = [str(f["hash"]) for f in files if isinstance(f, dict) and f.get("hash")]
    elif fmt == "pylock":
        files = [pkg.get("sdist") or {}, *(pkg.get("wheels") or [])]
        found = [f"{algo}:{h}" for f in files if isinstance(f, dict)
                 for algo, h in (f.get("hashes") or {}).items()]
    else:  # poetry and pdm: files = [{file|url, hash}], or poetry's older [metadata.files]
        files = pkg.get("files") or legacy
        found = [str(f["hash"]) for f in files if isinstance(f, dict) and f.get("hash")]
    return tuple(dict.fromkeys(h.lower() for h in found if ":" in h))


def _version(v: str) -> str:
    """A version as pip and the locks may spell it differently (`v1.0`, `1.0.0` for `1.0`)."""
    v = v.strip().lower().removeprefix("v")
    while v.endswith(".0") and v.count(".") > 1:
        v = v[:-2]
    return v


def check_hashes(lock_pins: list[Pin], installed: list[dict[str, Any]]) -> list[str]:
    """What pip installed that the lock pins with hashes, but from an archive none of them match:
    one line each (empty when everything matched)."""
    by_name = {normalise(p.name): p for p in lock_pins if p.hashes}
    bad: list[str] = []
    for item in installed:
        pin = by_name.get(normalise(str(item.get("name") or "")))
        if pin is None:
            continue
        got = {f"{a.lower()}:{str(h).lower()}" for a, h in (item.get("hashes") or {}).items()}
        if _version(str(item.get("version"))) != _version(pin.version):
            bad.append(f"{item.get('name')} {item.get('version')} installed, the lock pins {pin.version}")
        elif got and not got & set(pin.hashes):
            bad.append(f"{item.get('name')} {pin.version}: the archive's {sorted(got)[0][:19]}... "
                       "matches none of the lock's hashes")
    return bad
