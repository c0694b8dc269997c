"""A Python virtual environment the sandbox's unprivileged uid can read, built once and cached.

Our machines' default Python lives under /root (mode 0700), which uid 10001 cannot traverse, so the
environment is based on an interpreter the sandbox can reach: the distribution's /usr/bin/python3.X
(inside the sandbox /usr is mounted anyway); failing that, a copy of the running interpreter's
installation made world-readable in the cache. Packages are installed on the host from wheels only
(`--only-binary :all:`), so no package code runs at install time; the files are then made readable.

The cache key is the digest of the base interpreter's identity and the requirements; a finished
environment carries a `.complete` marker, and the fast path is one stat.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import UsageError
from signoff.kernel.filelock import exclusive
from signoff.kernel.ids import new_id
from signoff.sandbox.access import blocker
from signoff.sandbox.bwrap import SANDBOX_GID, SANDBOX_UID
from signoff.sandbox.model import Mount, PythonEnv, SandboxUnavailable

VENV_DST = "/opt/signoff-venv"
SYSTEM_CACHE = Path("/var/cache/signoff/sandbox-python")
_FORMAT = 3  # 3: what pip installed is kept with the environment
_BOOTSTRAP = 2  # 2: what ensurepip brought stays when a requirement or an installed distribution names it


@dataclass(frozen=True)
class _Base:
    executable: str  # host path of the interpreter the venv points at
    version: str
    identity: str  # what the cache key depends on
    mount: Mount | None  # where a copied installation appears inside the sandbox


def prepare_python_env(requirements: list[str] | Path | None, cache_dir: Path, network: bool = True,
                       allow_builds: bool = False, base_python: str | None = None,
                       label: str | None = None) -> PythonEnv:
    """A cached venv with pytest and `requirements` (a list of requirement strings or a
    requirements file), readable by the sandbox's uid. `network=False` installs only from local
    sources (`--no-index`, plus PIP_FIND_LINKS). `allow_builds` permits source distributions, whose
    build code then runs on the host; off by default. `base_python` picks the interpreter (default:
    /usr/bin/python3.X, else a readable copy of the running one). `label` names the requirements
    in an error (the user's file, not a temporary copy). What pip installed (names, versions and
    the archives' hashes, from pip's installation report) is kept with the environment and returned."""
    reqs, req_file = _requirements(requirements)
    uid, gid = (SANDBOX_UID, SANDBOX_GID) if os.geteuid() == 0 else (os.geteuid(), os.getegid())
    root = cache_root(Path(cache_dir), uid, gid)
    base = _base_python(root, uid, gid, base_python)
    key = env_key(base.identity, base.version, reqs, req_file.read_text() if req_file else None, allow_builds)
    digest = canonical_digest(key)
    env_dir = root / f"venv-{digest[:24]}"
    if not (env_dir / ".complete").exists():
        with exclusive(root / f".lock-{digest[:24]}"):
            if not (env_dir / ".complete").exists():
                _build(env_dir, base, reqs, req_file, network, allow_builds, label)
    mounts = [Mount(env_dir, VENV_DST)] + ([base.mount] if base.mount else [])
    try:
        installed = json.loads((env_dir / ".complete").read_text()).get("installed") or []
    except (OSError, ValueError, AttributeError):
        installed = []
    return PythonEnv(digest=digest, host_path=env_dir, python=f"{VENV_DST}/bin/python", mounts=mounts,
                     python_version=base.version, requirements=reqs + ([f"-r {req_file.name}"] if req_file else []),
                     installed=installed)


def env_key(identity: str, version: str, reqs: list[str], req_text: str | None, allow_builds: bool) -> dict[str, Any]:
    """What a cached environment is found by. An interpreter given its own pip also carries how that pip's
    leftovers are removed (`_BOOTSTRAP`): an environment an older rule built keeps its name otherwise, and is used
    again as it is (pydicom's, without the setuptools it asked for, until removed by hand; blind17)."""
    key: dict[str, Any] = {"format": _FORMAT, "base": identity, "requirements": reqs, "requirements_file": req_text,
                           "allow_builds": allow_builds}
    if not _pip_supports(version):
        key["bootstrap"] = _BOOTSTRAP
    return key


def find_python(version: str) -> str:
    """The interpreter of this machine for `version` (3.11, or 3.11.7 exactly): on PATH, under /usr,
    /usr/local or /opt, or installed by pyenv or uv. A clear error lists what exists otherwise."""
    m = re.fullmatch(r"(3)\.(\d+)(?:\.(\d+))?", version.strip())
    if not m:
        raise UsageError(f"--python {version!r} is not a Python version", "pass e.g. --python 3.11")
    minor = f"{m.group(1)}.{m.group(2)}"
    found: dict[str, str] = {}
    for exe in _interpreters():
        v = _version_of(exe)
        if v:
            found.setdefault(exe, v)
    for exe, v in found.items():
        if v == version or v.rsplit(".", 1)[0] == version or (m.group(3) is None and v.startswith(minor + ".")):
            return exe
    def order(item: tuple[str, str]) -> list[int]:
        return [int(x) for x in re.findall(r"\d+", item[1])[:3]]

    listed = ", ".join(f"{v} ({exe})" for exe, v in sorted(found.items(), key=order)) or "none"
    raise UsageError(f"no Python {version} on this machine; found: {listed}",
                     f"install Python {version} (e.g. apt-get install python{minor}, or pyenv install {minor}), "
                     "or pick one of those listed")


def _interpreters() -> list[str]:
    import glob

    seen: list[str] = []
    patterns = [f"{d}/python3.*" for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    patterns += ["/usr/bin/python3.*", "/usr/local/bin/python3.*", "/opt/*/bin/python3.*",
                 os.path.expanduser("~/.pyenv/versions/*/bin/python3.*"),
                 os.path.expanduser("~/.local/share/uv/python/*/bin/python3.*")]
    for pattern in patterns:
        for exe in sorted(glob.glob(pattern)):
            if re.fullmatch(r"python3\.\d+", os.path.basename(exe)) and os.access(exe, os.X_OK) and "shims" not in exe:
                real = str(Path(exe).resolve())
                if real not in seen:
                    seen.append(real)
    return seen


def version_of(exe: str) -> str | None:
    """The full version (3.11.7) of the interpreter at `exe`, or None when it does not run."""
    return _version_of(exe)


@functools.lru_cache(maxsize=64)
def _version_of(exe: str) -> str | None:
    try:
        out = subprocess.run([exe, "-I", "-c", "import platform; print(platform.python_version())"],
                             capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    v = out.stdout.strip()
    return v if out.returncode == 0 and re.fullmatch(r"\d+\.\d+\.\d+\S*", v) else None


def _requirements(requirements: list[str] | Path | None) -> tuple[list[str], Path | None]:
    if requirements is None:
        return ["pytest"], None
    if isinstance(requirements, Path):
        if not requirements.is_file():
            raise UsageError(f"requirements file {requirements} does not exist", "pass an existing requirements.txt")
        return ["pytest"], requirements
    if isinstance(requirements, str) or not all(isinstance(r, str) and r.strip() for r in requirements):
        raise UsageError("requirements must be a list of requirement strings or a Path",
                         'e.g. ["hypothesis>=6", "requests==2.32.3"]')
    reqs = [r.strip() for r in requirements]
    for r in reqs:
        if r.startswith("-"):
            raise UsageError(f"requirement {r!r} looks like a pip option", "pass only requirement specifiers")
    if not any(re.match(r"^pytest\b(?![-_.\w])", r, re.IGNORECASE) for r in reqs):
        reqs = ["pytest", *reqs]
    return sorted(dict.fromkeys(reqs)), None


def cache_root(cache_dir: Path, uid: int, gid: int) -> Path:
    """`cache_dir` when the sandbox uid can traverse to it; otherwise (as root) a system cache."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    found = blocker(cache_dir, uid, gid)
    if found is None:
        return cache_dir
    if os.geteuid() == 0:
        SYSTEM_CACHE.mkdir(parents=True, exist_ok=True)
        for p in (SYSTEM_CACHE, *SYSTEM_CACHE.parents):
            if p == Path("/"):
                break
            if blocker(p, uid, gid) is not None and p.stat().st_uid == 0:
                os.chmod(p, p.stat().st_mode | 0o755)  # noqa: S103 - a shared read-only cache by design
        if blocker(SYSTEM_CACHE, uid, gid) is None:
            return SYSTEM_CACHE
    path, why = found
    raise SandboxUnavailable(
        f"the Python environment cache {cache_dir} is not reachable by the sandbox uid {uid}: {path} ({why})",
        "pass a cache_dir under a world-readable directory (e.g. /var/cache/signoff), or chmod o+x the parents",
    )


@functools.lru_cache(maxsize=8)
def _base_python(cache_root: Path, uid: int, gid: int, requested: str | None = None) -> _Base:
    if requested is not None:
        real = Path(requested).resolve()
        if not real.is_file():
            raise UsageError(f"base interpreter {requested} does not exist", "pass the path of a python3 binary")
        version = _usr_version(real)
        if version and blocker(real, uid, gid) is None:
            st = real.stat()
            return _Base(requested, version, f"{real}:{st.st_size}:{int(st.st_mtime)}", None)
        return _copied_interpreter(cache_root, real)
    minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    for exe in (f"/usr/bin/python{minor}", "/usr/bin/python3", "/usr/local/bin/python3"):
        if not Path(exe).exists():
            continue
        candidate = Path(exe).resolve()
        version = _usr_version(candidate)
        if version and blocker(candidate, uid, gid) is None:
            st = candidate.stat()
            return _Base(exe, version, f"{candidate}:{st.st_size}:{int(st.st_mtime)}", None)
    return _copied_interpreter(cache_root, (Path(sys.base_prefix) / "bin" / f"python{minor}").resolve())


def _usr_version(real: Path) -> str | None:
    """The X.Y of an interpreter under /usr whose standard library sits in /usr/lib or /usr/local/lib."""
    m = re.fullmatch(r"python(3\.\d+)", real.name)
    if not m or not str(real).startswith("/usr/"):
        return None
    prefix = real.parent.parent
    return m.group(1) if (prefix / "lib" / f"python{m.group(1)}" / "os.py").exists() else None


_SKIP = shutil.ignore_patterns("site-packages", "dist-packages", "test", "tests", "idlelib", "tkinter",
                               "turtledemo", "ensurepip")


def _copied_interpreter(cache_root: Path, exe: Path) -> _Base:
    """Copy an interpreter the sandbox uid cannot read (e.g. pyenv's under /root) into the cache,
    readable by all: the binary, its standard library and libpython. Inside the sandbox the copy is
    mounted at the original prefix, so the binary's RUNPATH and the venv's `home` stay valid."""
    m = re.fullmatch(r"python(3\.\d+)", exe.name)
    prefix = exe.parent.parent
    if not m or not (prefix / "lib" / exe.name / "os.py").exists():
        raise SandboxUnavailable(
            f"no Python interpreter the sandbox can read was found, and {exe} is not a copyable installation",
            "apt-get install -y python3 (the sandbox then uses /usr/bin/python3)",
        )
    minor = m.group(1)
    st = exe.stat()
    identity = f"copy:{exe}:{st.st_size}:{int(st.st_mtime)}"
    dest = cache_root / f"python-{canonical_digest(identity)[:16]}"
    if not (dest / ".complete").exists():
        with exclusive(cache_root / f".lock-{dest.name}"):
            if not (dest / ".complete").exists():
                tmp = cache_root / f".tmp-{new_id()}"
                try:
                    (tmp / "bin").mkdir(parents=True)
                    shutil.copy2(exe, tmp / "bin" / exe.name)
                    shutil.copytree(prefix / "lib" / exe.name, tmp / "lib" / exe.name, symlinks=True, ignore=_SKIP)
                    (tmp / "lib" / exe.name / "site-packages").mkdir(exist_ok=True)
                    for lib in (prefix / "lib").glob(f"libpython{minor}*.so*"):
                        shutil.copy2(lib, tmp / "lib" / lib.name, follow_symlinks=True)
                    make_readable(tmp)
                    (tmp / ".complete").write_text(identity)
                    os.rename(tmp, dest)
                except OSError as exc:
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise SandboxUnavailable(f"could not copy the interpreter at {prefix}: {exc}",
                                             "apt-get install -y python3 (the sandbox uses /usr/bin/python3)") from exc
    _copy_headers(cache_root, dest, prefix / "include" / exe.name)
    return _Base(str(exe), minor, identity, Mount(dest, str(prefix)))


def _copy_headers(cache_root: Path, dest: Path, headers: Path) -> None:
    """The interpreter's C headers beside its copy (`include/python3.X`), for extension modules built in the sandbox
    (repair's --build-extensions): without them a pyenv interpreter's build ends `Python.h: No such file`. Added to a
    copy made before too; they change nothing the identity (and so the environments' cache keys) covers."""
    target = dest / "include" / headers.name
    if not headers.is_dir() or target.is_dir():
        return
    with exclusive(cache_root / f".lock-{dest.name}"):
        if target.is_dir() or (dest / "include").exists():
            return
        tmp = dest / f".include-{new_id()}"
        try:
            shutil.copytree(headers, tmp / headers.name, symlinks=True)
            make_readable(tmp)
            os.rename(tmp, dest / "include")
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # a build then names the missing header, with its fix


def make_readable(top: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [*dirnames, *filenames]:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                continue
            extra = stat.S_IROTH | stat.S_IRGRP
            if stat.S_ISDIR(st.st_mode) or st.st_mode & stat.S_IXUSR:
                extra |= stat.S_IXOTH | stat.S_IXGRP
            if st.st_mode & extra != extra:
                os.chmod(p, stat.S_IMODE(st.st_mode) | extra)
    os.chmod(top, stat.S_IMODE(os.stat(top).st_mode) | 0o755)  # noqa: S103 - read by the sandbox uid


def publish(tmp: Path, env_dir: Path, complete: dict[str, Any]) -> None:
    """Make the environment built in `tmp` the cached `env_dir`, readable by the sandbox's uid, with
    its `.complete` marker (what went into it). A rename publishes it whole; a half-built folder
    left at `env_dir` by a crash (no marker) is replaced, a complete one built meanwhile is kept."""
    make_readable(tmp)
    (tmp / ".complete").write_text(json.dumps(complete))
    try:
        os.rename(tmp, env_dir)
    except OSError:
        if not (env_dir / ".complete").exists():
            shutil.rmtree(env_dir, ignore_errors=True)
            os.rename(tmp, env_dir)


def _pip(args: list[str], python: str | None = None) -> subprocess.CompletedProcess[str]:
    """pip, run by signoff's own interpreter (`--python` in `args` names the target), or by `python`
    (an environment's own pip, for interpreters the running pip no longer supports)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return subprocess.run([python or sys.executable, "-m", "pip", *args], capture_output=True, text=True,
                          timeout=900, check=False, env=env)


def _pip_supports(version: str) -> bool:
    """Whether the running pip can install into an interpreter of `version` (X.Y) with `--python`."""
    try:
        from importlib.metadata import metadata

        needs = metadata("pip")["Requires-Python"] or ""
    except Exception:  # no metadata: assume it can; pip's own error then says otherwise
        return True
    m = re.search(r">=\s*(\d+)\.(\d+)", needs)
    have = tuple(int(x) for x in version.split(".")[:2])
    return m is None or have >= (int(m.group(1)), int(m.group(2)))


_OWN_PIP = ("pip", "setuptools", "wheel", "distribute")
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _named(lines: list[str]) -> set[str]:
    """The distributions requirement lines name (`setuptools<71`, `wheel ; python_version < "3.12"`), as PEP 503
    compares them; options and includes name none."""
    return {re.sub(r"[-_.]+", "-", m.group(1)).lower() for line in lines if (m := _REQUIREMENT_NAME.match(line))}


def bootstrap_leftovers(report: dict[str, Any], lines: list[str]) -> list[str]:
    """What an interpreter's own ensurepip put in the environment (pip, setuptools, wheel) that nobody asked for:
    removed after the install, so that the environment holds what was asked for, as under the running pip. Asked
    for is what the requirement lines name and what an installed distribution requires: a requirement the
    bootstrap's copy already satisfied is in pip's report nowhere (pydicom's `setuptools<71` on Python 3.8, whose
    ensurepip brings setuptools 49: removed, its `import pkg_resources` failed every test, blind17)."""
    asked = _named(lines)
    for item in report.get("install") or []:
        meta = item.get("metadata") or {}
        asked |= _named([str(meta.get("name") or ""), *(str(r) for r in meta.get("requires_dist") or [])])
    return [n for n in _OWN_PIP if n not in asked]


def _own_pip(venv: Path, network: bool) -> tuple[str | None, str]:
    """For an interpreter the running pip does not support (3.9 and older under pip 25+): the venv's
    own pip, from the interpreter's ensurepip, upgraded to the newest pip that interpreter supports
    (pip's index says which; `--report` needs 22.2). Returns (its python, "") or (None, the error)."""
    python = str(venv / "bin" / "python")
    boot = subprocess.run([python, "-m", "ensurepip", "--default-pip"], capture_output=True, text=True,
                          timeout=300, check=False)
    if boot.returncode != 0:
        return None, (boot.stderr or boot.stdout).strip()[-2000:]
    if not network:
        return python, ""
    up = _pip(["install", "--quiet", "--no-input", "--disable-pip-version-check", "--upgrade", "pip"], python)
    if up.returncode != 0:
        return None, (up.stderr or up.stdout).strip()[-2000:]
    return python, ""


class PipError(SandboxUnavailable):
    """pip could not install the environment: `message` carries pip's own error in one line, `log`
    everything pip said."""

    def __init__(self, message: str, fix: str | None, log: str) -> None:
        super().__init__(message, fix)
        self.log = log


_PIP_NOISE = re.compile(r"^(WARNING|DEPRECATION|\[notice\]|Looking in|Collecting|Downloading|Using cached)", re.I)


def pip_cause(output: str) -> str:
    """pip's real error in one line: its `ERROR:` lines and, for a conflict, what caused it (a first
    line of pip's output is often a harmless warning)."""
    lines = [ln.rstrip() for ln in output.splitlines()]
    errors = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("ERROR:")]
    # pip itself crashed (`ERROR: Exception:` and a traceback: a tox.toml read as a requirements file raised
    # InvalidRequirement): the exception the traceback ends with says what went wrong, "Exception:" nothing.
    crashed = next((ln.strip() for ln in reversed(lines) if re.match(r"^[\w.]+(Error|Exception|Requirement)\b.*:", ln)),
                   None) if "Exception:" in errors else None
    if crashed:
        errors = [crashed if e == "Exception:" else e for e in errors]
    # pip's notes on versions it skipped (yanked, another Python's) are ERROR lines too, before the error.
    errors = [e for e in errors if (e and not e.startswith(("Could not find a version", "Ignored the following")))
              or len(errors) == 1]
    caused: list[str] = []
    if "The conflict is caused by:" in lines:
        for ln in lines[lines.index("The conflict is caused by:") + 1:]:
            if not ln.startswith(" "):
                break
            # Every release pip tried says the same (anyio's blockbuster 1.5.23-1.5.29 each depend on
            # forbiddenfruit): once, without the version.
            caused.append(re.sub(r"^(\S+) \S+ depends on ", r"\1 depends on ", ln.strip()))
        caused = list(dict.fromkeys(caused))
    text = "; ".join([*errors[:3], *(["conflict: " + ", ".join(caused[:4])] if caused else [])])
    unavailable = _unavailable_in_conflict(lines)
    if unavailable:
        # python-multipart's uv.lock pins atomicwrites 1.4.1, published as source only: pip calls a requirement and
        # its own constraint a conflict and names the cause after it, which is what a person acts on.
        more = f" (nor for {', '.join(unavailable[1:])})" if len(unavailable) > 1 else ""
        text = f"No matching distribution found for {unavailable[0]}{more}, as pip's conflict says: {text}"
    text += _python_of_pin(lines) + _backtracked(lines)
    if not text:
        meaningful = [ln.strip() for ln in lines if ln.strip() and not _PIP_NOISE.match(ln.strip())]
        text = meaningful[-1] if meaningful else "pip failed without a message"
    return text[:400]


_UNAVAILABLE = ("Additionally, some packages in these conflicts have no matching distributions available for your "
                "environment:")


def _unavailable_in_conflict(lines: list[str]) -> list[str]:
    """The packages pip names, after a conflict, as having no distribution for this environment (no wheel when
    builds are not allowed, or none for this Python)."""
    if _UNAVAILABLE not in lines:
        return []
    names: list[str] = []
    for ln in lines[lines.index(_UNAVAILABLE) + 1:]:
        if not ln.startswith(" ") or not ln.strip():
            break
        names += [n.strip() for n in ln.split(",") if n.strip()]
    return names


_PIN_NOT_FOUND = re.compile(r"^ERROR: No matching distribution found for \S+?===?([\w.!+-]+)\s*$")


def _python_of_pin(lines: list[str]) -> str:
    """" (release X requires Python SPEC)" when the exact release pip could not find is one it ignored as made for
    another Python (a requirements file compiled under another Python: aiohttp's, under 3.10, pins
    backports-asyncio-runner 1.2.0, which requires <3.11); pip says so only in a note before its error."""
    pinned = next((m.group(1) for ln in lines if (m := _PIN_NOT_FOUND.match(ln))), None)
    note = next((ln for ln in lines if ln.startswith("ERROR: Ignored the following versions that require a "
                                                     "different python version:")), None)
    if pinned is None or note is None:
        return ""
    for item in note.split(":", 2)[2].split(";"):
        version, _, spec = item.strip().partition(" Requires-Python ")
        if version == pinned and spec:
            return f" (release {pinned} requires Python {spec.strip()})"
    return ""


_GAVE_UP = re.compile(r"^ERROR: Could not find a version that satisfies the requirement \S+ \(from ([^)]+)\) "
                      r"\(from versions: ([^)]*)\)")
_BACKTRACKING = re.compile(r"^INFO: pip is (?:still )?looking at multiple versions of ([^<\s]\S*) ")


def _backtracked(lines: list[str]) -> str:
    """What pip's last error hides when pip gave up backtracking: the requirement it names is only what the last
    release it tried asks for, of a package this Python has other releases of (dacite's 2021 `dev` extra under
    Python 3.8: `coverage>=7.10.6`, asked by pytest-cov 7, where coveralls' dependency docopt, published as source
    only, had stopped every older combination; pip never named docopt)."""
    gave_up = next((m for ln in lines if (m := _GAVE_UP.match(ln))), None)
    over = list(dict.fromkeys(m.group(1) for ln in lines if (m := _BACKTRACKING.match(ln))))
    versions = [v.strip() for v in gave_up.group(2).split(",") if v.strip()] if gave_up else []
    if gave_up is None or not over or not versions or versions == ["none"]:
        return ""
    asker = gave_up.group(1).split("->", 1)[0].strip()
    return (f" (asked by the release of {asker} pip tried last; this Python has releases up to {versions[-1]}): pip "
            f"gave up after backtracking over {', '.join(over)}, so one of them, or a package it needs, has no release "
            "installable here")


def requirement_named(cause: str, path: str, lines: list[str]) -> str:
    """pip's `-r /tmp/.../requirements.txt (line 5)` as the requirement on that line: never a temporary
    copy's path, which names nothing a person can find."""
    def line(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return repr(lines[n - 1].strip()) if 0 < n <= len(lines) else "a requirement"
    return re.sub(rf"-r {re.escape(path)} \(line (\d+)\)", line, cause)


def _report(report: Path) -> dict[str, Any]:
    """pip's `--report` of the install; empty when pip wrote none."""
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _installed(data: dict[str, Any]) -> list[dict[str, object]]:
    """Name, version, where from and the archive's hashes of everything pip installed (its
    `--report`); nothing when pip wrote no report."""
    out: list[dict[str, object]] = []
    for item in data.get("install") or []:
        meta = item.get("metadata") or {}
        info = item.get("download_info") or {}
        archive = info.get("archive_info") or {}
        out.append({"name": meta.get("name"), "version": meta.get("version"), "requested": bool(item.get("requested")),
                    "url": info.get("url"), "hashes": archive.get("hashes") or (
                        dict([archive["hash"].split("=", 1)]) if "=" in str(archive.get("hash", "")) else {})})
    return sorted(out, key=lambda d: str(d["name"]).lower())


def _build(env_dir: Path, base: _Base, reqs: list[str], req_file: Path | None, network: bool,
           allow_builds: bool, label: str | None = None) -> None:
    tmp = env_dir.parent / f".tmp-{new_id()}"
    try:
        made = subprocess.run([base.executable, "-m", "venv", "--without-pip", str(tmp)], capture_output=True,
                              text=True, timeout=300, check=False)
        if made.returncode != 0:
            raise SandboxUnavailable(f"could not create a virtual environment with {base.executable}: "
                                     f"{(made.stderr or made.stdout).strip()[-400:]}",
                                     "apt-get install -y python3-venv")
        report = tmp.parent / f"{tmp.name}.report.json"
        own_pip: str | None = None
        if not _pip_supports(base.version):
            own_pip, why = _own_pip(tmp, network)
            if own_pip is None:
                raise PipError(f"could not set up pip for Python {base.version}: {pip_cause(why)}",
                               "pick a newer --python, or check that this interpreter has ensurepip", why)
        target = [] if own_pip else ["--python", str(tmp / "bin" / "python")]
        # Not --quiet: it hides what caused a conflict ("blockbuster ... depends on forbiddenfruit"),
        # which pip_cause names; the output is kept only when pip fails.
        args = [*target, "install", "--no-input",
                "--disable-pip-version-check", "--report", str(report)]  # compiled: the sandbox cannot write .pyc
        if not allow_builds:
            args += ["--only-binary", ":all:"]
        if not network:
            args.append("--no-index")
        # The user's file first: pip names the first requirement it cannot find, and that should be
        # theirs, not the pytest added here.
        args += (["-r", str(req_file)] if req_file else []) + reqs
        out = _pip(args, own_pip)
        data = _report(report)
        installed = _installed(data)
        report.unlink(missing_ok=True)
        if own_pip and out.returncode == 0:
            # The environment holds what was asked for, as under the running pip: not the pip used.
            lines = [*reqs, *(req_file.read_text().splitlines() if req_file else [])]
            if extra := bootstrap_leftovers(data, lines):
                _pip(["uninstall", "--quiet", "--yes", *extra], own_pip)
        if out.returncode != 0:
            log = "\n".join(part for part in (out.stdout.strip(), out.stderr.strip()) if part)
            cause = pip_cause(log)
            if req_file is not None:
                cause = requirement_named(cause, str(req_file), req_file.read_text().splitlines())
            what = label or (f"{' '.join(reqs)}" + (f" -r {req_file}" if req_file else ""))
            if not network:
                fix = "run once with network=True (or put wheels in a PIP_FIND_LINKS folder)"
            elif allow_builds:
                fix = "check the requirement names and versions against the package index"
            elif "(constraint)" in log:
                fix = ("a locked or constrained version may exist only as source for this Python (old locks "
                       "often pin such releases): allow source builds (they run its build code here), or "
                       "pick the Python the lock was made for")
            else:
                fix = ("check the requirement names and versions; only wheels are installed, so a package "
                       "published only as source needs source builds allowed (they run its build code here)")
            raise PipError(f"pip could not install {what}: {cause}", fix, log)
        publish(tmp, env_dir, {"base": base.identity, "requirements": reqs, "installed": installed})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
