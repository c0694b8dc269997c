"""Compiled extension modules, built for each revision inside the sandbox (`--build-extensions`).

A fix in a C source (markupsafe's `_speedups.c`, simplejson's) changes nothing the tests import until
the extension is built, as `pip install -e .` would. The build runs the revision's own `setup.py`, which
is the candidate's code, so it runs where the tests run: in the sandbox, as the unprivileged user,
with no network and the verification's time limit, in a copy of the export inside the sandbox's
writable tmpfs. Only the compiled modules leave it (a tar of files with the interpreter's extension
suffixes; nothing else the build wrote, no bytecode, no links), and they are laid into that revision's
export before it is mounted read-only. The build environment holds what the base revision's
`[build-system] requires` names (wheels only), on the same interpreter as the tests, so the modules
fit it. What was built, with each module's SHA-256 and the build's log, goes into the evidence.

Opt-in, not automatic: a build costs time that grows with the project (seconds for markupsafe, many
minutes for a numeric library), it fails on a machine without a compiler or the interpreter's headers,
and many projects' extensions are optional speedups with a pure-Python twin their tests already run;
building every time would turn such verifications, right today, into waits or build failures. And
the candidate's native code runs in the test process, where the guard cannot watch it (docs/repair.md,
"What remains out of reach"): a person asks for that knowingly. When the candidate changes a compiled
source and the option is off, the verifier says so in a note.
"""

from __future__ import annotations

import io
import re
import tarfile
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from signoff import git
from signoff.kernel.digests import sha256_bytes

TARBALL = "extensions.tar"
BUILD_FOLDER = "/work/build"
MAX_MODULE_BYTES = 64 << 20
COMPILED_SOURCES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".pyx", ".pxd", ".pxi")
# The backends that compile through setuptools, which `setup.py build_ext --inplace` drives; others
# (meson-python, scikit-build-core, maturin) build out of tree and are named, not built.
SETUPTOOLS_BACKENDS = ("setuptools.build_meta", "setuptools.build_meta:__legacy__", "")
DEFAULT_BUILD_REQUIRES = ["setuptools", "wheel"]

# Run inside the sandbox by the build environment's interpreter: copy the export to the writable work
# area, build in place, and tar only the compiled modules the build wrote (regular files, extension
# suffixes of this interpreter). Its exit status is the build's.
BUILD_SCRIPT = r"""
import importlib.machinery, os, shutil, subprocess, sys, tarfile
src, work, out = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.copytree(src, work, symlinks=True)
os.chdir(work)
if os.path.isfile("setup.py"):
    argv = [sys.executable, "setup.py", "build_ext", "--inplace"]
else:
    argv = [sys.executable, "-c", "from setuptools import setup; setup()", "build_ext", "--inplace"]
code = subprocess.call(argv, stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT)
suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
with tarfile.open(out, "w") as tar:
    for folder, dirs, files in os.walk("."):
        dirs[:] = [d for d in dirs if d != "build" or folder != "."]
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(suffixes) and not os.path.islink(path) and not os.path.exists(os.path.join(src, path)):
                tar.add(path, arcname=os.path.normpath(path), recursive=False)
sys.exit(code)
"""


def declared(repo: Path, base: str) -> str | None:
    """What in the base revision declares extension modules signoff can build, or None."""
    return declared_by((git.read_file_at(repo, base, "setup.py") or b"").decode(errors="replace"),
                       _pyproject(repo, base))


def declared_by(setup_py: str, pyproject: dict[str, Any]) -> str | None:
    """`setup.py ext_modules` (`ext_modules`, `Extension(...)`, `cythonize(...)` in its text) or
    `pyproject.toml [tool.setuptools] ext-modules`, or None."""
    if re.search(r"\bext_modules\b|\bExtension\s*\(|\bcythonize\s*\(", setup_py):
        return "setup.py ext_modules"
    if ((pyproject.get("tool") or {}).get("setuptools") or {}).get("ext-modules"):
        return "pyproject.toml [tool.setuptools] ext-modules"
    return None


def other_backend(repo: Path, base: str) -> str | None:
    """A build backend of the base that compiles outside setuptools (named, never built), or None."""
    return other_backend_of(_pyproject(repo, base), git.tracked_paths(repo, base))


def other_backend_of(pyproject: dict[str, Any], paths: list[str]) -> str | None:
    backend = str((pyproject.get("build-system") or {}).get("build-backend") or "")
    if backend in SETUPTOOLS_BACKENDS or not re.search(r"meson|scikit_build|maturin|cmake|enscons", backend):
        return None
    return backend if any(p.endswith(COMPILED_SOURCES) for p in paths) else None


def build_requires(repo: Path, base: str) -> list[str]:
    """The base revision's `[build-system] requires` (default: setuptools and wheel)."""
    return build_requires_of(_pyproject(repo, base))


def build_requires_of(pyproject: dict[str, Any]) -> list[str]:
    requires = (pyproject.get("build-system") or {}).get("requires")
    if isinstance(requires, list) and all(isinstance(r, str) for r in requires) and requires:
        return list(requires)
    return list(DEFAULT_BUILD_REQUIRES)


def compiled_changes(changed: list[str]) -> list[str]:
    """The changed paths that are compiled sources."""
    return [p for p in changed if p.endswith(COMPILED_SOURCES)]


def unbuilt_fix(reasons: list[dict[str, str]], compiled: list[str]) -> list[dict[str, str]]:
    """`reasons` with the `fix:` of `base_not_reproduced` naming first the changed compiled sources that were not
    built: when the base does not show the defect and the candidate changes C code the runs never loaded, building it
    is what a person tries first (ijson #123, blind19: the fix in its C backend, the generic `fix:` pointing at the
    base and the test). Other reasons are returned as they are."""
    if not compiled:
        return reasons
    first = (f"the candidate changes compiled sources ({', '.join(compiled[:3])}) that were not built, so the "
             "runs judged the code without them: pass --build-extensions to build each revision's extension modules "
             "in the sandbox; if the defect is not in them, ")
    return [{**r, "fix": first + r["fix"][:1].lower() + r["fix"][1:]} if r["code"] == "base_not_reproduced"
            and r.get("fix") else r for r in reasons]


def command(python: str, src: str) -> list[str]:
    return [python, "-I", "-c", BUILD_SCRIPT, src, BUILD_FOLDER, f"/work/{TARBALL}"]


def lay_modules(tree: Path, tarball: bytes | None) -> list[dict[str, Any]]:
    """Write the compiled modules of a build's tar into the export `tree`; return each one's path,
    size and SHA-256. Only regular files with an extension suffix, at a relative path inside a folder the
    export already has, are taken; anything else in the tar is ignored."""
    import importlib.machinery

    if not tarball:
        return []
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    laid = []
    with tarfile.open(fileobj=io.BytesIO(tarball)) as tar:
        for member in tar.getmembers():
            rel = PurePosixPath(member.name)
            if (not member.isfile() or rel.is_absolute() or ".." in rel.parts or not rel.name.endswith(suffixes)
                    or member.size > MAX_MODULE_BYTES):
                continue
            folder = tree.joinpath(*rel.parts[:-1])
            if not folder.is_dir() or any(p.is_symlink() for p in (folder, *folder.parents) if tree in p.parents):
                continue
            target = folder / rel.name
            if target.exists() or target.is_symlink():
                continue
            data = tar.extractfile(member)
            if data is None:
                continue
            content = data.read()
            target.write_bytes(content)
            target.chmod(0o644)
            laid.append({"path": str(rel), "bytes": len(content), "sha256": sha256_bytes(content)})
    return sorted(laid, key=lambda m: m["path"])


# A compiler's or setuptools' own words for what stopped the build, first match wins; each with its fix.
_CAUSES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"fatal error: (Python\.h): No such file or directory"),
     "install the interpreter's C headers (Debian/Ubuntu: apt-get install -y python3-dev, or python3.X-dev for "
     "--python 3.X)"),
    (re.compile(r"error: command '([^']+)' failed: No such file or directory|unable to execute '([^']+)': No such "
                r"file|[Cc]ompiler .* not found|error: Microsoft Visual C\+\+"),
     "install a C compiler on this machine (Debian/Ubuntu: apt-get install -y build-essential); the sandbox "
     "runs the host's /usr/bin"),
    (re.compile(r"fatal error: ([\w./+-]+\.h): No such file or directory"),
     "install the development package of the library that header belongs to on this machine"),
    (re.compile(r"ModuleNotFoundError: No module named '(\w+)'"),
     "add the module the build imports to the base revision's [build-system] requires (it is read from there)"),
    (re.compile(r"[\w./+-]+:\d+(?::\d+)?: (?:fatal )?error: .+"), "fix the revision's compiled source the compiler "
     "names (the build's whole log is in the evidence, environment.extensions)"),
    (re.compile(r"\berror: .+"), "read the build's log in the evidence (environment.extensions); fix the "
                                 "revision's sources, or leave out --build-extensions to test the pure-Python code"),
)


def failure(log: str, revision: str, timed_out: bool, timeout: float) -> tuple[str, str]:
    """(one line naming why `revision`'s extensions were not built, the fix)."""
    if timed_out:
        return (f"{revision}: building the extension modules took longer than {timeout:g}s",
                "raise --timeout (it bounds the build too), or leave out --build-extensions")
    for pattern, fix in _CAUSES:
        m = pattern.search(log)
        if m:
            return f"{revision}: the extension modules could not be built: {m.group(0).strip()[:300]}", fix
    tail = next((line.strip() for line in reversed(log.splitlines()) if line.strip()), "no output")
    return (f"{revision}: the extension modules could not be built (the build wrote none): {tail[:300]}",
            "read the build's log in the evidence (environment.extensions); leave out --build-extensions to "
            "test the pure-Python code")


def _pyproject(repo: Path, base: str) -> dict[str, Any]:
    try:
        return tomllib.loads((git.read_file_at(repo, base, "pyproject.toml") or b"").decode(errors="replace"))
    except tomllib.TOMLDecodeError:
        return {}


def build(trees: dict[str, Path], build_python: str, mounts: list[Any], variables: dict[str, str], timeout: float,
          backend: str | None) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """Build each revision's extension modules in the sandbox (`trees`: revision name -> its export) and
    lay them into its export. Returns what the evidence records per revision (the modules with their
    SHA-256, the exit status, the seconds, the log's tail) and the first failure as (detail, fix), or None."""
    from signoff import sandbox

    builds: dict[str, Any] = {}
    for name, tree in trees.items():
        ex = sandbox.run(command(build_python, "/src"), [sandbox.Mount(tree, "/src"), *mounts], limits=_limits(),
                         env={**variables, "PATH": f"{build_python.rsplit('/', 1)[0]}:/usr/local/bin:/usr/bin:/bin",
                              "HOME": "/work", "PYTHONDONTWRITEBYTECODE": "1"},
                         timeout=timeout, workdir="/work", network=False, backend=backend, collect=[TARBALL])
        log = (ex.stdout or "") + (ex.stderr or "")
        modules = lay_modules(tree, ex.files.get(TARBALL)) if not ex.timed_out else []
        builds[name] = {"modules": modules, "exit_code": ex.exit_code, "seconds": round(ex.duration, 2),
                        "log": log[-20000:]}
        if ex.timed_out or ex.exit_code != 0 or not modules:
            return builds, failure(log, name, ex.timed_out, timeout)
    return builds, None


def _limits() -> Any:
    from signoff.sandbox import Limits

    # A copy of the checkout and the compiler's objects live in the work area: more room than a test run's.
    return Limits(cpus=1.0, memory_mb=1024, tmpfs_mb=512)
