"""The pytest configuration a run gets, and a harness given as one test file with its neighbours.

A real test file is written for its project's pytest configuration (markers, filterwarnings,
asyncio_mode, ...) and its `conftest.py` files. Both come from the *base* revision, never from the
candidate (which the agent controls): the configuration applies where the harness brings none of its
own, and a harness named as a single file is frozen together with the conftest.py and __init__.py
files of its folder and every folder above it, the helper modules it reaches by relative imports
inside its test folder, and the data files of that folder, so the digest a person approves covers them.
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
import shlex
import shutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from signoff import git
from signoff.kernel.errors import UsageError
from signoff.repair import harness_paths

# pytest's own order: the first file that holds a pytest section wins (pytest.ini even when empty; the
# hidden `.pytest.ini` of pytest 8.1 and later, as parse keeps it).
CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
# Options that point at places relative to the project, or change where pytest looks: they mean
# something else inside the sandbox (`pythonpath` is turned into the run's import folders instead).
_DROPPED = ("pythonpath", "testpaths", "rootdir", "confcutdir", "cache_dir", "norecursedirs")


# `addopts` that run tests in other processes, which the guard does not watch (pytest-xdist's workers,
# pytest-forked's children), or measure coverage (a trace function of its own, and `--cov-fail-under`
# fails a run whatever the tests say), or add a linter's items for every file collected (pytest-mypy's
# `--mypy`, whose items cannot even name a harness file outside the folder pytest started in): a run
# that judges one revision needs none of them; nor the options of pytest's cache, which the run leaves
# out (`-p no:cacheprovider`: nothing carries over from another run), such as coverage.py's `--failed-first`;
# nor a traceback style (alembic's `--tb native`, `--tb=no`): the report's failures are read in pytest's own
# (the exception's name on the last line), and a native traceback ends with the assertion's explanation instead.
# Option -> whether it takes the next word as its value when written without `=`.
_PROCESS_AND_COVERAGE = {"-n": True, "--numprocesses": True, "--maxprocesses": True, "--dist": True, "--tx": True,
                         "--forked": False, "--looponfail": False, "-f": False, "--cov": None, "--cov-report": True,
                         "--cov-config": True, "--cov-context": True, "--cov-fail-under": True, "--cov-branch": False,
                         "--cov-append": False, "--no-cov": False, "--no-cov-on-fail": False,
                         **dict.fromkeys(("--mypy", "--ruff", "--ruff-format", "--black", "--flake8", "--pylint",
                                          "--isort", "--pycodestyle", "--pydocstyle"), False),
                         **dict.fromkeys(("--lf", "--last-failed", "--ff", "--failed-first", "--nf", "--new-first",
                                          "--sw", "--stepwise", "--sw-skip", "--stepwise-skip", "--sw-reset",
                                          "--stepwise-reset", "--cache-clear"), False),
                         "--lfnf": True, "--last-failed-no-failures": True, "--cache-show": None, "--tb": True}
_PROCESS_AND_COVERAGE_PLUGINS = {"xdist", "xdist.plugin", "pytest_cov", "pytest_cov.plugin", "pytest_forked"}


def split_addopts(value: Any, own_plugins: frozenset[str] | set[str] = frozenset()) -> tuple[str, list[str]]:
    """(the project's `addopts` without the options above, the options left out). `-p NAME` of the
    project's own plugins is left out too: the guard loads them once the checkout is on the path."""
    # A TOML list's item may hold an option and its value (trio's "-p trio._tests.pytest_plugin"): pytest reads it
    # as both, so it is split as a line would be.
    words = [w for item in value for w in shlex.split(str(item))] if isinstance(value, list) else \
        shlex.split(str(value), comments=True)
    kept: list[str] = []
    dropped: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        following = words[i + 1] if i + 1 < len(words) else None
        name = "-n" if re.fullmatch(r"-n=?\w+", word) else word.split("=", 1)[0]
        if name in _PROCESS_AND_COVERAGE:
            takes = _PROCESS_AND_COVERAGE[name]
            own_value = word != name  # `--dist=load`, `-n4`
            with_next = not own_value and following is not None and (
                takes is True or (takes is None and not following.startswith("-")))
            dropped += [word, following] if with_next and following is not None else [word]
            i += 2 if with_next else 1
        elif word == "-p" and following is not None and (following in _PROCESS_AND_COVERAGE_PLUGINS
                                                          or following in own_plugins):
            dropped += [word, following]
            i += 2
        elif word.startswith("-p") and word[2:] in own_plugins:  # `-panyio`
            dropped.append(word)
            i += 1
        else:
            kept.append(word)
            i += 1
    return shlex.join(kept), dropped


@dataclass(frozen=True)
class Config:
    text: str  # an ini file for `-c`
    source: str  # where it came from, e.g. "pyproject.toml [tool.pytest.ini_options] (base revision)"
    pythonpath: tuple[str, ...] = ()  # the project's `pythonpath` option, as folders of the checkout
    dropped: tuple[str, ...] = ()  # addopts left out (other processes, coverage)

    def as_json(self) -> dict[str, Any]:
        return {"source": self.source, "text": self.text, "pythonpath": list(self.pythonpath),
                **({"addopts_left_out": list(self.dropped)} if self.dropped else {})}


def _value(v: Any) -> str:
    if isinstance(v, list):
        return "\n" + "\n".join(f"    {x}" for x in v)
    if isinstance(v, bool):
        return "true" if v else "false"
    lines = [ln.strip() for ln in str(v).splitlines() if ln.strip()]
    # An ini value read over several lines (yarl's addopts, markers, filterwarnings) loses its
    # indentation and keeps its blank lines: written back indented, or pytest reads "unexpected line".
    return "\n" + "\n".join(f"    {ln}" for ln in lines) if len(lines) > 1 else (lines[0] if lines else "")


def read(reader: Callable[[str], bytes | None], where: str,
         own_plugins: frozenset[str] | set[str] = frozenset()) -> Config | None:
    """The pytest configuration found through `reader` (a name -> bytes), as an ini text."""
    for name in CONFIG_FILES:
        data = reader(name)
        if data is None:
            continue
        text = data.decode("utf-8", errors="replace")
        options: dict[str, Any] | None = None
        section = ""
        if name == "pyproject.toml":
            try:
                table = (tomllib.loads(text).get("tool") or {}).get("pytest") or {}
            except tomllib.TOMLDecodeError:
                continue
            if isinstance(table.get("ini_options"), dict):
                options, section = dict(table["ini_options"]), "[tool.pytest.ini_options]"
            elif isinstance(table, dict) and table:
                # pytest 9's native table (bidict's): the same options, as TOML values.
                options, section = dict(table), "[tool.pytest]"
        else:
            cp = configparser.ConfigParser(interpolation=None)
            # pytest reads ini keys as written: pytest-django's `DJANGO_SETTINGS_MODULE` lowercased is no option of its.
            cp.optionxform = str  # type: ignore[assignment,method-assign]
            try:
                cp.read_string(text)
            except configparser.Error:
                continue
            section = "[tool:pytest]" if name == "setup.cfg" else "[pytest]"
            if cp.has_section(section[1:-1]):
                options = dict(cp.items(section[1:-1]))
            elif name.endswith("pytest.ini"):
                options = {}
        if options is None:
            continue
        paths = options.get("pythonpath") or ""
        folders = paths.split() if isinstance(paths, str) else [str(p) for p in paths]
        kept = {k: v for k, v in options.items() if k not in _DROPPED}
        dropped: list[str] = []
        if "addopts" in kept:
            kept["addopts"], dropped = split_addopts(kept["addopts"], own_plugins)
        ini = "[pytest]\n" + "".join(f"{k} = {_value(v)}\n" for k, v in kept.items())
        return Config(ini, f"{name} {section} ({where})".replace("  ", " "),
                      tuple(f for f in folders if f not in (".", "") and ".." not in PurePosixPath(f).parts
                            and not f.startswith("/")), tuple(dropped))
    return None


def effective(harness: Path, repo: Path, base: str,
              own_plugins: frozenset[str] | set[str] = frozenset()) -> Config | None:
    """The harness's own configuration when it brings one (its pytest.ini is used as it is: None),
    else the base revision's, else none (an empty one)."""
    if (harness / "pytest.ini").is_file():
        return None
    own = read(lambda n: (harness / n).read_bytes() if (harness / n).is_file() else None, "harness", own_plugins)
    if own is not None:
        return own
    return read(lambda n: git.read_file_at(repo, base, n), "base revision", own_plugins)


def _in_held_package(dest: Path, name: str) -> bool:
    """A module of a package the harness holds only to name tests inside it (`pkg/__init__.py` above
    `pkg/tests/`): in the run that package is the checkout's, and a frozen copy would stand for its code."""
    if not name.endswith(".py") or test_folder_of(name) is not None:
        return False
    return any((dest / d / "__init__.py").is_file() for d in PurePosixPath(name).parents if str(d) != ".")


def stage_test_file(path: Path, repo: Path, base: str, dest: Path) -> tuple[Path, str]:
    """A harness folder for one test file: the file where it sits in the repository, with the
    conftest.py and __init__.py files of its folder and each folder above it from the base revision,
    its helpers and its test folder's data files. Returns the folder and the file's path inside it."""
    path = path.resolve()
    try:
        rel = path.relative_to(repo.resolve()).as_posix()
    except ValueError:
        # Outside the repository: the file and what sits beside it on this machine.
        rel = path.name
        for neighbour in ("conftest.py", "__init__.py"):
            if (path.parent / neighbour).is_file():
                shutil.copyfile(path.parent / neighbour, dest / neighbour)
        shutil.copyfile(path, dest / rel)
        return dest, rel
    target = dest / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, target)
    wanted: list[str] = []

    def take(file_: str) -> None:
        folder = PurePosixPath(file_).parent
        for d in [folder, *folder.parents]:
            wanted.extend(n if str(d) == "." else f"{d}/{n}" for n in ("conftest.py", "__init__.py"))
        wanted.append(file_)

    helpers = _relative_imports(repo, base, rel, path.read_bytes())
    for file_ in [rel, *helpers]:
        take(file_)
    for file_ in _configured_helpers(repo, base, rel):
        take(file_)
        blob = git.read_file_at(repo, base, file_)
        for helper in _relative_imports(repo, base, file_, blob) if blob is not None else []:
            take(helper)
    # The conftest files' own helpers, found the same way (unearth's tests/conftest.py imports its
    # app from `tests.fixtures.app`): without them pytest cannot even start. So are those of the test folder's
    # own __init__.py files (xarray's xarray/tests/__init__.py imports `xarray.tests.arrays`), never of a package
    # above the test folder (the project's own code).
    inits: set[str] | None = None  # the base's __init__.py files, listed once when needed
    for conftest in [n for n in dict.fromkeys(wanted) if PurePosixPath(n).name == "conftest.py" or
                     (PurePosixPath(n).name == "__init__.py" and test_folder_of(n) is not None)]:
        blob = git.read_file_at(repo, base, conftest)
        for file_ in _relative_imports(repo, base, conftest, blob) if blob is not None else []:
            # (outside a test folder, a module of a package is the project's code: sympy's own sympy/conftest.py
            # imports `sympy.core.cache` and 40 more of sympy's modules, which the run takes from the checkout)
            if test_folder_of(file_) is None:
                inits = _package_inits(repo, base) if inits is None else inits
                if f"{PurePosixPath(file_).parent}/__init__.py" in inits:
                    continue
            take(file_)
    work_tree = _WorkTree(repo)
    root = test_folder_of(rel)
    # A helper of the test folder the person changed for the contract (dataclasses-json #297's fix adds the test's
    # class to `tests/entities.py`, which the new test imports) is taken as left, as the test file and the test
    # folder's data files are; the others as the base commits them.
    edited = work_tree.edited(root) if root is not None else set()
    for name in dict.fromkeys(wanted):
        if name == rel or (dest / name).exists():
            continue
        left = repo / name
        data = left.read_bytes() if name in edited and left.is_file() and not left.is_symlink() else \
            git.read_file_at(repo, base, name)
        if data is not None:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            (dest / name).write_bytes(data)
    for name in _placed_helpers(repo, base, rel, path.read_bytes(), work_tree):
        if not (dest / name).exists():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(repo / name, dest / name)
    data_files = _data_files(repo, base, rel, work_tree, path.read_bytes())
    # (never over a data file of the test folder: one the person changed is taken as left, above)
    # (nor a module of a package the harness holds only to name tests inside it: that is the candidate's code)
    for name, data in _files_read_beside(repo, base, rel, path.read_bytes(), [n for n in wanted if n != rel]).items():
        if not _in_held_package(dest, name):
            data_files.setdefault(name, data)
    for package in support_packages([h for h in wanted if h.endswith(".py")], rel):
        data_files |= _data_files(repo, base, f"{package}/__init__.py", work_tree)
    for name, data in data_files.items():
        if not (dest / name).exists():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            (dest / name).write_bytes(data)
    return dest, rel


def _package_inits(repo: Path, base: str) -> set[str]:
    """The __init__.py files the base revision commits: the folders that are packages."""
    return {n for n in git.tracked_paths(repo, base) if n.endswith("/__init__.py")}


def _files_read_beside(repo: Path, base: str, rel: str, source: bytes, others: list[str]) -> dict[str, bytes]:
    """Committed files the test file, its conftest files or helpers read by a path relative to their own file
    (harness_paths: alembic's conftest exec()s `../alembic/testing/plugin/bootstrap.py`), from the base revision;
    never a pytest configuration file, a conftest.py or an __init__.py."""
    out: dict[str, bytes] = {}
    for name in [rel, *others]:
        blob = source if name == rel else git.read_file_at(repo, base, name)
        for target in harness_paths.named_beside(name, blob) if blob is not None else []:
            if _CONFIG.fullmatch(target) or PurePosixPath(target).name in ("conftest.py", "__init__.py"):
                continue
            data = git.read_file_at(repo, base, target)
            if data is not None:
                out[target] = data
            elif target not in {str(d) for d in PurePosixPath(rel).parents} and \
                    test_folder_of(f"{target}/x") is not None:
                # (a folder inside a test folder: never one above the test file, its tests, nor the project's code,
                # as alembic's conftest's `os.path.join(os.path.dirname(__file__), '..', 'pkg')`)
                out |= _named_folder(repo, base, target)
    return out


MAX_NAMED_FOLDER_FILES = 5000


def _named_folder(repo: Path, base: str, folder: str) -> dict[str, bytes]:
    """The files of a folder a harness file names through its own place (pylint's test_functional.py lints every
    file of `Path(__file__).parent.resolve() / "functional"`, 1,850 of them), within the data limits: committed
    ones from the base, those a person changed for the contract (the fix's `nan_comparison_check.txt`) as left."""
    names = git.tracked_paths(repo, base, folder) if folder != "." and not folder.startswith(".") else []
    if not names or len(names) > MAX_NAMED_FOLDER_FILES:
        return {}
    edited = set(git.run(repo, "diff", "-z", "--name-only", "HEAD", "--", f"{folder}/", check=False)
                 .stdout.decode("utf-8", "surrogateescape").split("\0"))
    out: dict[str, bytes] = {}
    total = 0
    for name in names:
        here = repo / name
        data = here.read_bytes() if name in edited and here.is_file() and not here.is_symlink() else \
            git.read_file_at(repo, base, name)
        if data is None or PurePosixPath(name).name == "conftest.py" or _CONFIG.fullmatch(name):
            continue
        total += len(data)
        if total > MAX_DATA_BYTES:
            return {}
        out[name] = data
    return out


def _configured_helpers(repo: Path, base: str, rel: str) -> list[str]:
    """Modules of the test folder the project's root configuration names by their dotted name, for a plugin to
    import (alembic's setup.cfg: `[sqla_testing] requirement_cls = tests.requirements:DefaultRequirements`,
    which SQLAlchemy's testing plugin imports at start-up): helpers of the test file, as its imports are."""
    root = test_folder_of(rel)
    if root is None:
        return []
    files = set(git.tracked_paths(repo, base, root))
    # By its path from the root, or by its import name where the package sits in a folder of the path (trio's
    # `-p trio._tests.pytest_plugin` for src/trio/_tests/pytest_plugin.py).
    folder = _basedir(repo, base, f"{root}/x.py")
    names = dict.fromkeys([root, root.removeprefix(f"{folder}/") if folder else root])
    dotted = "|".join(re.escape(n.replace("/", ".")) for n in names)
    found: list[str] = []
    for name in ROOT_CONFIGURATION:
        text = (git.read_file_at(repo, base, name) or b"").decode("utf-8", "replace")
        for match in re.finditer(rf"(?<![\w.])(?:{dotted})((?:\.\w+)+)", text):
            parts = match.group(1).strip(".").split(".")
            for k in range(len(parts), 0, -1):  # the longest module the name reaches (then an attribute)
                stem = "/".join([root, *parts[:k]])
                module = next((m for m in (f"{stem}.py", f"{stem}/__init__.py") if m in files), None)
                if module is not None:
                    if module not in found:
                        found.append(module)
                    break
    return found


# The project's root configuration files a plugin may read its own sections from, at pytest's rootdir.
ROOT_CONFIGURATION = ("setup.cfg", "tox.ini", "pyproject.toml")


def lay_root_configuration(mounted: Path, repo: Path, base: str) -> list[str]:
    """The base revision's root configuration files, written at the root of the harness copy a run mounts (after
    its digest was checked) where the harness has none: the run's rootdir is the harness, and a plugin may read
    its own sections from the rootdir's files (SQLAlchemy's testing plugin reads `[sqla_testing]` and `[db]`
    from setup.cfg there; alembic's conftest starts it). Returns the names written."""
    written = []
    for name in ROOT_CONFIGURATION:
        data = git.read_file_at(repo, base, name)
        if data is not None and not (mounted / name).exists():
            (mounted / name).write_bytes(data)
            written.append(name)
    return written


def package_place(folder: Path, repo: Path) -> str | None:
    """Where a harness folder sits in the repository, when its modules import it by its own package
    name (mistune's tests do `from tests import BaseTestCase`, tornado's `from tornado.test.util import
    ...`): laid out at the harness's root, that name would resolve to the checkout's copy of the tests,
    the candidate's. None for a folder outside the repository, not a package, or never imported so."""
    try:
        rel = folder.resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        return None
    if rel in ("", ".") or not (folder / "__init__.py").is_file():
        return None
    dotted = re.escape(rel.replace("/", "."))
    own = re.compile(rf"^[ \t]*(from[ \t]+{dotted}(\.[\w.]+)?[ \t]+import|import[ \t]+{dotted}([ \t.,]|$))", re.M)
    for module in sorted(folder.rglob("*.py")):
        if own.search(module.read_text(encoding="utf-8", errors="replace")):
            return rel
    return None


def stage_test_package(folder: Path, rel: str, repo: Path, base: str, dest: Path) -> Path:
    """A harness folder laid out at its place in the repository (`package_place`), with the
    conftest.py and __init__.py files of each folder above it from the base revision, as a test file
    is staged: its own package name then resolves to the frozen harness, never to the checkout."""
    shutil.copytree(folder, dest / rel, symlinks=True)
    for d in PurePosixPath(rel).parents:
        for n in ("conftest.py", "__init__.py"):
            name = n if str(d) == "." else f"{d}/{n}"
            data = git.read_file_at(repo, base, name)
            if data is not None and not (dest / name).exists():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                (dest / name).write_bytes(data)
    return dest


def map_package_test_id(test_id: str, rel: str) -> str:
    """A test id written relative to the harness folder (`test_x.py::t`) as one relative to its place."""
    return f"{rel}/{test_id}"


MAX_DATA_FILES, MAX_DATA_BYTES = 1000, 20_000_000
# Files in a test folder that run as code or are caches, never data.
_NOT_DATA = re.compile(r"(.*/)?(conftest\.py|.*\.py[cod]|test_.*\.py|.*_test\.py)|"
                       r"(.*/)?(__pycache__|\.pytest_cache)/.*")
_CONFIG = re.compile(r"(.*/)?(\.?pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml)")


def _is_data(name: str, root: str, packages: set[str], config_folders: set[str]) -> bool:
    """Not code, caches or test modules, nor a pytest configuration file where one could configure the
    test file (its folder or one above it); a configuration file's name further down is data (tomlkit's
    `tests/examples/pyproject.toml`). A Python file only in a folder below the test folder that is no
    package (black's `tests/data/*.py`, parso's `normalizer_issue_files/`: code read as text)."""
    folder = str(PurePosixPath(name).parent)
    if _NOT_DATA.fullmatch(name) or (_CONFIG.fullmatch(name) and folder in config_folders):
        return False
    return not name.endswith(".py") or (folder != root and not _packages_down_to(folder, root, packages))


def _packages_down_to(folder: str, root: str, packages: set[str]) -> bool:
    """Whether every folder from below the test folder down to `folder` is a package: code the tests can
    import (`tests/helpers/`). A package inside a plain folder is data, a project the tests build (Sphinx's
    `roots/test-ext-viewcode/spam/`, put on the path by that project's own conf.py)."""
    path = PurePosixPath(folder)
    chain = [path, *[p for p in path.parents if PurePosixPath(root) in p.parents]]
    return all(str(p) in packages for p in chain)


def _named_after(name: str, root: str, names: set[str]) -> bool:
    """A data file named after the test module or one of its classes, below the test folder: in a folder
    by that name, `-` read as `_`, or by that name and more after a `_` (a cassette folder per module;
    Sphinx's `roots/test-ext-viewcode-find-package/` for test_ext_viewcode.py), or a file whose name starts
    with it and a dot (PyGithub's `ReplayData/PaginatedList.setUp.txt` for the class PaginatedList)."""
    parts = PurePosixPath(name).relative_to(root).parts
    folders = [p.replace("-", "_") for p in parts[:-1]]
    return any(f == n or f.startswith(f"{n}_") for f in folders for n in names) or any(
        parts[-1].startswith(f"{n}.") for n in names)


def _test_names(rel: str, source: bytes | None) -> set[str]:
    """The test module's name (with and without its `test_`) and the classes it defines at its top level."""
    stem = PurePosixPath(rel).stem
    names = {stem, stem.removeprefix("test_").removesuffix("_test")}
    try:
        tree = ast.parse(source or b"")
    except (SyntaxError, ValueError):
        return names
    return names | {node.name for node in tree.body if isinstance(node, ast.ClassDef)}


class _WorkTree:
    """The work tree's files below a folder, listed once for one staging (`git ls-files`, `git ls-tree
    HEAD`): the search for placed helpers and the one for data files ask about the same test folder."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.listed: dict[str, tuple[list[str], set[str]]] = {}
        self.changed: dict[str, set[str]] = {}

    def placed(self, root: str, committed: set[str]) -> list[str]:
        """The files a person put in the folder `root` of the work tree (as `git checkout FIX -- FILE`
        leaves them): in no commit of the base (`committed`) or of the checked-out branch (an agent's
        branch checked out here brings nothing), not ignored."""
        if root not in self.listed:
            found = git.run(self.repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                            f"{root}/", check=False)
            head = git.run(self.repo, "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", f"{root}/", check=False)
            names = found.stdout.decode("utf-8", "surrogateescape").split("\0") if found.returncode == 0 else []
            self.listed[root] = (names, set(head.stdout.decode("utf-8", "surrogateescape").split("\0")))
        names, at_head = self.listed[root]
        return [n for n in names if n and n not in committed and n not in at_head]

    def edited(self, root: str) -> set[str]:
        """Uncommitted edits (staged or not) of files the branch commits below `root`: the person's, never a
        commit's (`git checkout FIX -- FILE` of a file the base has too)."""
        if root not in self.changed:
            found = git.run(self.repo, "diff", "-z", "--name-only", "HEAD", "--", f"{root}/", check=False)
            self.changed[root] = set(found.stdout.decode("utf-8", "surrogateescape").split("\0")) - {""}
        return self.changed[root]


def _placed_helpers(repo: Path, base: str, rel: str, source: bytes, work_tree: _WorkTree) -> list[str]:
    """Helper modules the fix adds that a person checked out in the test folder beside the test file
    (cleo's `tests/fixtures/exceptions/raiser_with_suppressed_context.py`, imported by the new test): those
    of the person's new Python files (_WorkTree.placed) whose module name the test file imports."""
    root = test_folder_of(rel)
    if root is None:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {p for a in node.names for p in a.name.split(".")}
        elif isinstance(node, ast.ImportFrom):
            imported |= {*(node.module or "").split("."), *(a.name for a in node.names)}
    return [n for n in work_tree.placed(root, set(git.tracked_paths(repo, base, root)))
            if n.endswith(".py") and n != rel and PurePosixPath(n).stem in imported
            and (repo / n).is_file() and not (repo / n).is_symlink()]


def _data_files(repo: Path, base: str, rel: str, work_tree: _WorkTree, source: bytes | None = None) -> dict[str, bytes]:
    """The data files of the test folder a test file sits in (sqlparse's conftest reads
    `tests/files/*.sql` beside itself): those the base revision commits there, and new ones a person
    put there for the contract (in no commit of the base or of the work tree's branch, not ignored:
    the fix's new data file, as `git checkout FIX -- FILE` leaves it). A committed one the person
    changed for the contract (uncommitted, against the work tree's branch: markdown-it-py's fix adds
    its cases to `fixtures/linkify.md`) is taken as the person left it, like the test file itself.
    In a corpus (more than a test folder's data: PyGithub's 1,100 replay files), only those named after
    the test module or its classes (_named_after); none when those are a corpus too: freeze the folder
    as the harness then."""
    root = test_folder_of(rel)
    if root is None:
        return {}
    tracked = git.tracked_paths(repo, base, root)
    packages = {str(PurePosixPath(n).parent) for n in tracked if n.endswith("/__init__.py")}
    above = {str(d) for d in PurePosixPath(rel).parents}
    names = [n for n in tracked if _is_data(n, root, packages, above)]
    edited = work_tree.edited(root)
    new = [n for n in work_tree.placed(root, set(names)) if _is_data(n, root, packages, above)]
    if len(names) + len(new) > MAX_DATA_FILES:
        own = _test_names(rel, source)
        names, new = [n for n in names if _named_after(n, root, own)], [n for n in new if _named_after(n, root, own)]
        if len(names) + len(new) > MAX_DATA_FILES:
            return {}
    links = _committed_links(repo, base, root)
    out: dict[str, bytes] = {}
    total = 0
    for name in names + new:
        path = repo / name
        placed_here = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        data = placed_here if name not in names or (name in edited and placed_here is not None) else \
            git.read_file_at(repo, base, name) if name not in links else _linked_file(repo, base, name, links[name])
        if data is None:
            continue
        total += len(data)
        if total > MAX_DATA_BYTES:
            return {}
        out[name] = data
    return out


def _committed_links(repo: Path, base: str, root: str) -> dict[str, str]:
    """The symbolic links the base commits under `root`, each with its target as committed (pydantic's
    `tests/pydantic_core` -> `../pydantic-core/tests`): git's blob of a link is its target's path, never data."""
    return {name: (git.read_file_at(repo, base, name) or b"").decode("utf-8", "surrogateescape")
            for name in git.links_at(repo, base, root)}


def _linked_file(repo: Path, base: str, name: str, target: str) -> bytes | None:
    """What a checkout shows through a committed link in the test folder: the file it names inside the
    repository, at the base revision; None for a link to a folder, out of the tree, or to another link (a
    harness holds no links, and the link's own blob, a path, is no data file)."""
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if target.startswith("/") or resolved == ".." or resolved.startswith("../") or \
            git.mode_at(repo, base, resolved) not in ("100644", "100755"):
        return None
    return git.read_file_at(repo, base, resolved)


MAX_HELPERS = 200


def _basedir(repo: Path, base: str, rel: str) -> str:
    """The folder pytest puts first on the import path for a test file (its `prepend` import mode):
    the first folder upwards without an `__init__.py`; "" for the repository's root."""
    folder = PurePosixPath(rel).parent
    while str(folder) != "." and git.read_file_at(repo, base, f"{folder}/__init__.py") is not None:
        folder = folder.parent
    return "" if str(folder) == "." else str(folder)


# Folders that hold tests rather than the project's code; the guard's runner file has the same pattern.
TEST_FOLDER = re.compile(r"(tests?|testing)([_-]\w*)?|\w*[_-]tests?")


def test_folder_of(rel: str) -> str | None:
    """The outermost test folder holding a test file (`h11/tests` for `h11/tests/test_io.py`), None
    when no folder above it is named as one."""
    parts = PurePosixPath(rel).parent.parts
    at = next((i for i, p in enumerate(parts) if TEST_FOLDER.fullmatch(p)), None)
    return None if at is None else "/".join(parts[:at + 1])


def _relative_imports(repo: Path, base: str, rel: str, source: bytes) -> list[str]:
    """The repository files a test module reaches by relative imports (`from .utils import x`,
    `from . import mini_toolbox`), or by absolute imports of modules beside it in the folder pytest
    puts on the import path (`from helpers import with_config` in luigi's test/, httpie's `from utils
    import http`), and theirs in turn, at the base revision: its helpers. Never the project's own
    code: absolute imports are followed only inside a test folder, not from the repository's root."""
    found: list[str] = []
    pending = [(rel, source)]
    tracked: dict[str, set[str]] = {}  # basedir -> the files under it (one git call per folder)
    # A test package imported from the repository's root (`from tests.base import x` in marshmallow's
    # tests/): absolute imports into the test folder, and only there, are its helpers too: the file's
    # own folder, or the outermost test folder above it (uvicorn's tests/protocols/test_http.py imports
    # `tests.response`).
    own = test_folder_of(rel) or str(PurePosixPath(rel).parent)
    own_files = set(git.tracked_paths(repo, base, own)) if own != "." and _basedir(repo, base, f"{own}/x.py") == "" \
        else set()
    # Tests inside the project's package reach its code relatively too (`from .._events import x` in
    # h11/tests/): only what lies inside the test folder is a helper.
    root = test_folder_of(rel)
    support: dict[str, set[str]] = {}  # a root-level test-support package's name -> its files
    while pending and len(found) < MAX_HELPERS:
        name, data = pending.pop()
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        package = PurePosixPath(name).parent
        basedir = _basedir(repo, base, name)
        if basedir and basedir not in tracked:
            tracked[basedir] = set(git.tracked_paths(repo, base, basedir))
        beside = tracked.get(basedir, set())
        for node in [*ast.walk(tree), *_plugin_imports(tree)]:
            stems: list[str] = []
            on_the_way: list[str] = []  # modules Python imports before the one named (`a/b.py` for `a.b.c`)
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                top = package
                for _ in range(node.level - 1):
                    top = top.parent
                if root is not None and not (top == PurePosixPath(root) or PurePosixPath(root) in top.parents):
                    continue
                stems = [f"{top}/{node.module.replace('.', '/')}"] if node.module else [
                    f"{top}/{a.name}" for a in node.names]
                on_the_way = [f"{top}/{m.replace('.', '/')}" for m in _modules_on_the_way(node.module or "")]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                if basedir:
                    modules = [node.module] if isinstance(node, ast.ImportFrom) and node.module else [
                        a.name for a in node.names] if isinstance(node, ast.Import) else []
                    # (inside a test folder, only its own modules: trio's src/trio/_tests/ sits in the package
                    # `src/trio`, beside which pytest's path holds the package itself, the code under test)
                    stems = [s for s in (f"{basedir}/{m.replace('.', '/')}" for m in modules)
                             if (f"{s}.py" in beside or f"{s}/__init__.py" in beside)
                             and (root is None or s == root or s.startswith(f"{root}/"))]
                if own_files:  # (a test folder without __init__.py inside the test package: both)
                    modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                        node.module, *(f"{node.module}.{a.name}" for a in node.names)] if node.module else []
                    stems += [s for s in (m.replace(".", "/") for m in modules) if s.startswith(own + "/")
                              and (f"{s}.py" in own_files or f"{s}/__init__.py" in own_files)]
                    on_the_way += [s for s in (m.replace(".", "/") for n in modules for m in _modules_on_the_way(n))
                                   if s.startswith(own + "/") and f"{s}.py" in own_files]
                if not (isinstance(node, ast.ImportFrom) and node.level):
                    stems += _support_stems(repo, base, node, own, support)
            for stem in stems:
                stem = stem.removeprefix("./")
                for candidate in (f"{stem}.py", *git.tracked_paths(repo, base, stem)):
                    if candidate in found or candidate == rel or not candidate.endswith(".py"):
                        continue
                    blob = git.read_file_at(repo, base, candidate)
                    if blob is not None:
                        found.append(candidate)
                        pending.append((candidate, blob))
            for stem in on_the_way:  # only a module file: a package's __init__.py comes with its folder
                candidate = f"{stem.removeprefix('./')}.py"
                if candidate not in found and candidate != rel and (blob := git.read_file_at(repo, base, candidate)):
                    found.append(candidate)
                    pending.append((candidate, blob))
    return found[:MAX_HELPERS]


def _modules_on_the_way(module: str) -> list[str]:
    """The modules Python imports before a dotted one, outermost last: `a.b` and `a` for `a.b.c`. One of them may be
    a module file that provides the rest itself (zipp's tests do `from .compat.py39.os_helper import FakePath`, and
    tests/compat/py39.py puts `os_helper` into sys.modules under its own name)."""
    parts = [p for p in module.split(".") if p]
    return [".".join(parts[:k]) for k in range(len(parts) - 1, 0, -1)]


def _support_stems(repo: Path, base: str, node: ast.Import | ast.ImportFrom, own: str,
                   support: dict[str, set[str]]) -> list[str]:
    """The modules an absolute import reaches in a test-support package at the repository's root beside the
    test folder, named as a test folder (pycodestyle's `testing/`: its tests do `from testing.support import
    errors_from_src`, and support.py finds the data files `testing/data/*.py` from its own place): test code
    and data, never the project's, so its modules are helpers as the test folder's are. `support` caches
    each package's files."""
    modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [
        node.module, *(f"{node.module}.{a.name}" for a in node.names)] if node.module else []
    stems = []
    for module in modules:
        top = module.split(".", 1)[0]
        if top == module or top == own or not TEST_FOLDER.fullmatch(top):
            continue  # (the package itself is its __init__.py, taken with any module of it)
        if top not in support:
            files = set(git.tracked_paths(repo, base, top))
            support[top] = files if f"{top}/__init__.py" in files else set()
        stem = module.replace(".", "/")
        if f"{stem}.py" in support[top] or f"{stem}/__init__.py" in support[top]:
            stems.append(stem)
    return stems


def support_packages(helpers: list[str], rel: str) -> list[str]:
    """The root-level test-support packages (`_support_stems`) among a test file's helpers: their data files
    come with the harness too (pycodestyle's `testing/data/python313.py`, the case its fix adds)."""
    own = test_folder_of(rel)
    return list(dict.fromkeys(h.split("/", 1)[0] for h in helpers
                              if "/" in h and h.split("/", 1)[0] != own and TEST_FOLDER.fullmatch(h.split("/", 1)[0])))


def checkout_plugins(harness: Path, repo: Path, base: str, folders: list[str]) -> dict[str, str]:
    """Modules of the project's own code that the harness's conftest files load as pytest plugins
    (Sphinx's tests/conftest.py: `pytest_plugins = ['sphinx.testing.fixtures']`), as module -> module:
    the person approved the conftest that names them, as the base declares its pytest11 entry points,
    and the guard loads them from each checkout on the same terms. Not a module the harness holds."""
    out: dict[str, str] = {}
    for conftest in sorted(harness.rglob("conftest.py")):
        try:
            tree = ast.parse(conftest.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        for node in _plugin_imports(tree):
            for alias in node.names:
                stem = alias.name.replace(".", "/")
                if (harness / f"{stem}.py").is_file() or (harness / stem / "__init__.py").is_file():
                    continue
                for folder in ["", *folders]:
                    prefix = f"{folder}/" if folder else ""
                    if any(git.read_file_at(repo, base, f"{prefix}{rel}") is not None
                           for rel in (f"{stem}.py", f"{stem}/__init__.py")):
                        out[alias.name] = alias.name
                        break
    return out


def addopts_plugins(harness: Path, repo: Path, base: str, folders: list[str]) -> dict[str, str]:
    """Modules of the project's own code its pytest configuration loads with `-p` in its addopts (trio's
    `-p trio._tests.pytest_plugin`, which runs its async tests), as module -> module: pytest would import them at
    start-up, before the checkout joins the path; the guard loads them from each checkout instead, as the
    pytest11 plugins the base declares, and their `-p` leaves the addopts. None where the harness brings its own
    pytest.ini (its options are used as they are)."""
    if (harness / "pytest.ini").is_file():
        return {}
    config = read(lambda n: git.read_file_at(repo, base, n), "base revision")
    if config is None:
        return {}
    addopts = next((ln.split("=", 1)[1] for ln in config.text.splitlines() if ln.startswith("addopts =")), "")
    try:
        words = shlex.split(addopts)
    except ValueError:
        return {}
    named = [w[2:] for w in words if w.startswith("-p") and len(w) > 2] + [
        words[i + 1] for i, w in enumerate(words[:-1]) if w == "-p"]
    out: dict[str, str] = {}
    for module in named:
        if module.startswith("no:") or not re.fullmatch(r"[A-Za-z_][\w.]*", module):
            continue
        stem = module.replace(".", "/")
        for folder in ["", *folders]:
            prefix = f"{folder}/" if folder else ""
            if any(git.read_file_at(repo, base, f"{prefix}{rel}") is not None
                   for rel in (f"{stem}.py", f"{stem}/__init__.py")):
                out[module] = module
                break
    return out


def _plugin_imports(tree: ast.Module) -> list[ast.Import]:
    """The modules a `pytest_plugins = [...]` names (coverage.py's tests/conftest.py loads
    `tests.select_plugin`), as the imports pytest makes of them."""
    out: list[ast.Import] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytest_plugins"
                                                for t in node.targets):
            items = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            names = [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if names:
                out.append(ast.Import(names=[ast.alias(name=n) for n in names]))
    return out


def map_test_id(test_id: str, rel: str) -> str:
    """A test id written relative to the harness file's own folder (`test_x.py::t`) as one relative to
    the staged harness (`tests/test_x.py::t`)."""
    file_, sep, rest = test_id.partition("::")
    if file_ == PurePosixPath(rel).name and file_ != rel:
        return rel + sep + rest
    if file_ not in (rel,) and not rel.startswith(file_.rstrip("/") + "/") and file_ not in ("", "."):
        raise UsageError(f"test id {test_id!r} is not in the harness file {rel}", f"write it like {rel}::test_name")
    return test_id
