"""Compiled extension modules (`--build-extensions`, repair/extensions.py), without a sandbox or a compiler:
what declares them in the base revision, which of a build's files reach the export, and the one line that
names why a build failed. The build itself is measured on markupsafe and simplejson (docs/repair.md)."""

from __future__ import annotations

import importlib.machinery
import io
import tarfile
from pathlib import Path

from signoff.repair import extensions

SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def _tar(entries: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return out.getvalue()


def test_only_compiled_modules_at_folders_the_export_has_are_laid(tmp_path: Path) -> None:
    tree = tmp_path / "export"
    (tree / "src" / "pkg").mkdir(parents=True)
    (tree / "src" / "pkg" / "__init__.py").write_text("")
    (tree / "src" / "pkg" / "old.py").write_text("x = 1\n")
    tarball = _tar({
        f"src/pkg/_speedups{SUFFIX}": b"\x7fELF module",
        "src/pkg/__pycache__/old.cpython-311.pyc": b"bytecode the build wrote",  # never: Python would load it
        "src/pkg/sitecustomize.py": b"import evil",  # nor anything else the build wrote
        f"../outside{SUFFIX}": b"escape",
        f"/abs{SUFFIX}": b"absolute",
        f"newfolder/mod{SUFFIX}": b"a folder the export lacks",
    }, links={f"src/pkg/_link{SUFFIX}": "/etc/passwd"})
    laid = extensions.lay_modules(tree, tarball)
    assert [m["path"] for m in laid] == [f"src/pkg/_speedups{SUFFIX}"]
    assert laid[0]["sha256"] and laid[0]["bytes"] == len(b"\x7fELF module")
    assert (tree / "src" / "pkg" / f"_speedups{SUFFIX}").read_bytes() == b"\x7fELF module"
    assert sorted(p.name for p in (tree / "src" / "pkg").iterdir()) == ["__init__.py", f"_speedups{SUFFIX}",
                                                                        "old.py"]
    assert not (tmp_path / f"outside{SUFFIX}").exists() and not (tree / "newfolder").exists()
    # A module the export already commits is never replaced.
    assert extensions.lay_modules(tree, _tar({f"src/pkg/_speedups{SUFFIX}": b"other"})) == []
    assert extensions.lay_modules(tree, None) == []


def test_a_failed_build_is_named_by_the_compilers_own_line() -> None:
    headers = ("building 'markupsafe._speedups' extension\nsrc/markupsafe/_speedups.c:1:10: fatal error: Python.h: "
               "No such file or directory\ncompilation terminated.\nWARNING: The C extension could not be compiled\n")
    detail, fix = extensions.failure(headers, "candidate", False, 120)
    assert detail == "candidate: the extension modules could not be built: fatal error: Python.h: No such file or " \
                     "directory"
    assert "python3-dev" in fix
    detail, fix = extensions.failure("error: command 'gcc' failed: No such file or directory\n", "base", False, 120)
    assert "gcc" in detail and "C compiler" in fix
    detail, fix = extensions.failure("x.c:3:10: fatal error: yaml.h: No such file or directory\n", "base", False, 9)
    assert "yaml.h" in detail and "development package" in fix
    detail, fix = extensions.failure("src/markupsafe/_speedups.c: In function 'escape_unicode':\nsrc/markupsafe/"
                                     "_speedups.c:156:14: error: expected ';' before 'inp'\nerror: command '/usr/bin/"
                                     "gcc' failed with exit code 1\n", "candidate", False, 9)
    assert detail == ("candidate: the extension modules could not be built: src/markupsafe/_speedups.c:156:14: error: "
                      "expected ';' before 'inp'") and "compiled source" in fix
    detail, fix = extensions.failure("", "base", True, 9)
    assert detail == "base: building the extension modules took longer than 9s" and "--timeout" in fix
    detail, _ = extensions.failure("running build_ext\nPlain-Python build succeeded.\n", "base", False, 9)
    assert detail.endswith("(the build wrote none): Plain-Python build succeeded.")


def test_what_declares_extension_modules_in_the_base() -> None:
    setup_py = ('from setuptools import Extension, setup\n'
                'setup(ext_modules=[Extension("pkg._speedups", ["src/pkg/_speedups.c"])])\n')
    assert extensions.declared_by(setup_py, {}) == "setup.py ext_modules"
    assert extensions.declared_by("from Cython.Build import cythonize\nsetup(ext_modules=cythonize('a.pyx'))", {})
    assert extensions.declared_by("from setuptools import setup\nsetup(name='x')\n", {}) is None
    table = {"tool": {"setuptools": {"ext-modules": [{"name": "m", "sources": ["m.c"]}]}}}
    assert extensions.declared_by("", table) == "pyproject.toml [tool.setuptools] ext-modules"
    assert extensions.build_requires_of({"build-system": {"requires": ["setuptools>=70", "cython"]}}) == [
        "setuptools>=70", "cython"]
    assert extensions.build_requires_of({}) == ["setuptools", "wheel"]
    meson = {"build-system": {"build-backend": "mesonpy"}}
    assert extensions.other_backend_of(meson, ["src/m.c"]) == "mesonpy"
    assert extensions.other_backend_of(meson, ["src/m.py"]) is None  # compiles nothing
    assert extensions.other_backend_of({"build-system": {"build-backend": "setuptools.build_meta"}}, ["m.c"]) is None


def test_the_changed_paths_that_are_compiled_sources() -> None:
    assert extensions.compiled_changes(["src/markupsafe/_speedups.c", "CHANGES.rst", "tests/test_escape.py",
                                        "pkg/_x.pyx", "pkg/x.h"]) == ["src/markupsafe/_speedups.c", "pkg/_x.pyx",
                                                                      "pkg/x.h"]


def test_building_extensions_for_a_runner_that_runs_no_python_is_bad_usage() -> None:
    import pytest

    from signoff.kernel.errors import UsageError
    from signoff.repair.verifier import VerifyRequest, _validate

    with pytest.raises(UsageError, match="--build-extensions builds Python extension modules"):
        _validate(VerifyRequest(Path("."), "a", "b", Path("h"), "t.test.js", runner="node", build_extensions=True))
    _validate(VerifyRequest(Path("."), "a", "b", Path("h"), "t.py::t", build_extensions=True))


def test_a_base_without_the_defect_is_told_first_to_build_the_changed_compiled_sources() -> None:
    # ijson #123 (blind19): the fix is in a C backend the runs never built; the generic `fix:` pointed elsewhere.
    from signoff.repair.verdict import reason

    reasons = [reason("base_not_reproduced", "base: it passed"), reason("environment_unprepared", "pip failed")]
    out = extensions.unbuilt_fix(reasons, ["src/pkg/_speedups.c"])
    assert out[0]["fix"].startswith("the candidate changes compiled sources (src/pkg/_speedups.c) that were not "
                                    "built")
    assert "--build-extensions" in out[0]["fix"]
    assert out[0]["fix"].endswith(reasons[0]["fix"][1:])  # the generic advice kept after it
    assert out[1] == reasons[1]
    assert extensions.unbuilt_fix(reasons, []) == reasons
