"""What goes into a Python test environment, from the project's own declarations at the base revision.

Everything here is read from the *base* revision (never the candidate, which the agent controls),
or from a file on this machine that the caller named, and nothing of the project runs: pyproject.toml
and setup.cfg are parsed as data, a setup.py only as a syntax tree.

The project under test is never installed into its own test environment: requirement files often pin
it (`pip freeze` writes `project==1.2`, `-e .`), and an installed release would then be what the
tests import instead of the candidate. Such lines are dropped (and recorded); `-e .[test]` becomes
the project's declared dependencies with the extra `test`.
"""

from __future__ import annotations

import ast
import configparser
import copy
import functools
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from signoff import git
from signoff.git.command import TIMEOUT as GIT_TIMEOUT
from signoff.git.command import current as git_session
from signoff.kernel.errors import UnavailableError, UsageError
from signoff.repair import lockfile

_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_SELF = re.compile(r"^(?:-e\s+|--editable[=\s]+)?(?:file:)?\.(?:/)?(?:\[([^\]]*)\])?\s*$")
_EGG = re.compile(r"#egg=([A-Za-z0-9._-]+)")
# A folder pip installs from (`-e opentelemetry-api`, `./tools/util`, `-e ./pkg[test]`), read from the root as tox
# runs pip there; a bare name is a folder only after -e.
_LOCAL = re.compile(r"^(-e\s+|--editable[=\s]+)?(?:file:)?((?:\./)?[\w.-]+(?:/[\w.-]+)*?)/?(?:\[([^\]]*)\])?\s*$")
# pip reads `-r FILE`, `--requirement=FILE` and `-rFILE` alike (gunicorn's tox.ini: `-rrequirements_test.txt`).
_INCLUDE = re.compile(r"^(-r|-c|--requirement|--constraint)(?:[=\s]+|(?<=^-[rc])(?=[^\s=-]))(\S+)\s*$")
MAX_INCLUDES = 20


def normalise(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def may_provide(distribution: str, module: str) -> bool:
    """Whether a distribution is, by its name, the one that provides a top-level module: the same name,
    or one of the usual spellings around it (odfpy's `odf`, PyYAML's `yaml`, python-dateutil's
    `dateutil`). Only names: a package left out of the environment cannot be asked what it installs."""
    d, m = normalise(distribution), normalise(module)
    return d in (m, f"py{m}", f"{m}py", f"py-{m}", f"python-{m}", f"{m}-python")


def requirement_name(line: str) -> str | None:
    """The distribution a requirement line names (`name[extra]>=1 ; marker`, `name @ url`, an egg
    fragment), or None for options and paths."""
    text = line.strip()
    egg = _EGG.search(text)
    if egg:
        return egg.group(1)
    if text.startswith("-") or "/" in text.split("@", 1)[0] or text.startswith("."):
        return None
    m = _NAME.match(text)
    return m.group(1) if m else None


@dataclass
class Plan:
    """The requirement lines given to pip, and where they came from."""

    lines: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # e.g. "requirements-test.txt (base)", "pyproject.toml [test]"
    project: str | None = None  # the project's own distribution name, when it declares one
    dropped: list[str] = field(default_factory=list)  # lines naming the project itself, never installed
    constraints: list[str] = field(default_factory=list)  # from `-c` includes and the lock: limits, never installs
    pins: list[lockfile.Pin] = field(default_factory=list)  # hashed pins (lock, hashed requirement lines)
    lock: dict[str, Any] | None = None  # the lock file read (path, format, its sha256, counts)
    replaced: list[str] = field(default_factory=list)  # the project's pytest lines that --pytest replaced
    # Import folders of the repository's own projects the requirements install from their folders (a monorepo's
    # `-e opentelemetry-api`): taken from each revision, as the checkout itself is
    import_folders: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"sources": self.sources, "project": self.project, "dropped": self.dropped, "lines": self.lines,
                "constraints": self.constraints, "lock": self.lock, "hashed_pins": len(self.pins),
                "replaced": self.replaced, "import_folders": self.import_folders}


_NO_DISTRIBUTION = re.compile(r"No matching distribution found for (\S+)")
_WANTED_BY = re.compile(r"^ \(from ([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?(?:[<>=!~][^)]*)?\)")
_FAILED_BUILD = re.compile(r"Failed to build '([A-Za-z0-9._-]+)'")
_CANNOT_INSTALL = re.compile(r"Cannot install (.{1,300}?) because these package versions have conflicting dependencies")
_DIRECT_REFERENCE = re.compile(r"\s@\s|^(?:git|hg|svn|bzr)\+|^https?://")
_OFFLINE = re.compile(r"connected to the Internet|Failed to establish a new connection|NewConnectionError|"
                      r"Temporary failure in name resolution|Network is unreachable")


def wheel_less_line(message: str, plan: Plan) -> str | None:
    """The plan's own requirement line that pip's error says has no installable release here (published as
    source only, as httpx's docs tool mkautodoc and Pygments' wcag-contrast-ratio are, or none at all), or a
    direct reference pip failed to build (uvicorn's `h11 @ git+https://...@master`, a clone and a build: the
    clone fails without a network): a direct test dependency the run may go without. None for anything else
    (a transitive dependency, a pin of the lock or the constraints, the pytest the run needs)."""
    found = _NO_DISTRIBUTION.search(message)
    built = None if found else _FAILED_BUILD.search(message)
    match = found or built
    if match is None and _OFFLINE.search(message):
        # A direct reference pip could not even download (kombu's requirements/dev.txt names the main branches of
        # py-amqp and vine as GitHub zip archives; runs have no network): left out the same way.
        return next((line for line in plan.lines if _DIRECT_REFERENCE.search(line.strip())), None)
    name = requirement_name(match.group(1)) if match else None
    if name is None or normalise(name) == "pytest":
        return None
    own = _plan_line(plan, name, built is not None)
    if own is None and found:
        # A dependency of a direct test requirement (astroid's requirements_minimal.txt names its release tool
        # tbump, which needs docopt, published as source only): pip says which requirement wanted it, and that
        # direct one is what the run goes without, on the same terms.
        parent = _WANTED_BY.search(message[found.end():found.end() + 200])
        wanted = requirement_name(parent.group(1)) if parent else None
        if wanted and normalise(wanted) != "pytest":
            return _plan_line(plan, wanted, False)
        # Or in a conflict, by the direct requirements it could not install (websockets' tox.ini names mitmproxy,
        # whose pyperclip is published as source only: "Cannot install 'mitmproxy' because ...", no release left).
        conflict = _CANNOT_INSTALL.search(message)
        for named in re.split(r", | and ", conflict.group(1)) if conflict else []:
            wanted = requirement_name(named.strip("'\""))
            line = _plan_line(plan, wanted, False) if wanted and normalise(wanted) != "pytest" else None
            if line is not None:
                return line
    return own


def _plan_line(plan: Plan, name: str, direct_reference: bool) -> str | None:
    return next((line for line in plan.lines if (requirement_name(line) or "") and
                 normalise(requirement_name(line) or "") == normalise(name)
                 and (not direct_reference or _DIRECT_REFERENCE.search(line.strip()))), None)


def _read(repo: Path, base: str, rel: str) -> bytes | None:
    return git.read_file_at(repo, base, rel)


def project_name(repo: Path, base: str) -> str | None:
    """The project's distribution name from pyproject.toml, setup.cfg or a literal in setup.py."""
    meta = _metadata(repo, base)
    return meta.get("name")


def _in(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _metadata(repo: Path, base: str, folder: str = "") -> dict[str, Any]:
    """{"name", "dependencies", "extras", "where"} as far as the base revision declares them statically, with
    pyproject.toml's PEP 735 groups as extras whatever declares the rest (sentry-python's setup.py metadata beside
    a `[dependency-groups] test`): any tool reads them there; an extra of the same name wins."""
    out = _build_metadata(repo, base, folder)
    groups = _pyproject_groups(_pyproject(repo, base, folder))
    if groups:
        out["extras"] = {**groups, **out["extras"]}
        out["where"] = out["where"] or "pyproject.toml [dependency-groups]"
    return out


def _build_metadata(repo: Path, base: str, folder: str = "") -> dict[str, Any]:
    """What the build's own declarations say: pyproject.toml's `[project]` (with the groups beside it), a
    `[tool.poetry]` or `[tool.flit.metadata]` table where that tool builds, setup.cfg, a literal setup.py."""
    out: dict[str, Any] = {"name": None, "dependencies": [], "extras": {}, "where": None}
    data = _read(repo, base, _in(folder, "pyproject.toml"))
    if data is not None:
        try:
            document = tomllib.loads(data.decode("utf-8", errors="replace"))
        except tomllib.TOMLDecodeError:
            document = {}
        project = document.get("project") or {}
        if isinstance(project, dict) and project.get("name"):
            out.update(name=str(project["name"]), where="pyproject.toml",
                       dependencies=[str(d) for d in project.get("dependencies") or []],
                       extras={**_poetry_groups((document.get("tool") or {}).get("poetry")),
                               **_pdm_dev_groups(document), **_pyproject_groups(document),
                               **{str(k): [str(d) for d in v] for k, v in
                                  (project.get("optional-dependencies") or {}).items() if isinstance(v, list)}})
            dynamic = project.get("dynamic") or []
            if "dependencies" not in dynamic and "optional-dependencies" not in dynamic:
                return out
        # A [tool.poetry] or [tool.flit.metadata] table declares what pip installs only where that tool
        # builds the project: its build backend, or no setup.py/setup.cfg beside it (black in 2018 kept
        # a [tool.poetry] table while pip built it from setup.py, whose pins its lock file follows).
        backend = str((document.get("build-system") or {}).get("build-backend") or "")
        setup_py = any(_read(repo, base, _in(folder, f)) is not None for f in ("setup.py", "setup.cfg"))
        poetry = (document.get("tool") or {}).get("poetry") or {}
        if setup_py and "poetry" not in backend:
            poetry = {}
        if not out["name"] and isinstance(poetry, dict) and poetry.get("name"):
            out.update(name=str(poetry["name"]), where="pyproject.toml [tool.poetry]", **_poetry(poetry))
            return out
        flit = ((document.get("tool") or {}).get("flit") or {}).get("metadata") or {}
        if setup_py and "flit" not in backend:
            flit = {}
        if not out["name"] and isinstance(flit, dict) and (flit.get("dist-name") or flit.get("module")):
            out.update(name=str(flit.get("dist-name") or flit["module"]), where="pyproject.toml [tool.flit.metadata]",
                       **_flit(flit))
            return out
    data = _read(repo, base, _in(folder, "setup.cfg"))
    if data is not None:
        cp = configparser.ConfigParser(interpolation=None)
        try:
            cp.read_string(data.decode("utf-8", errors="replace"))
        except configparser.Error:
            cp = configparser.ConfigParser()
        name = cp.get("metadata", "name", fallback=None)
        deps = _lines(cp.get("options", "install_requires", fallback=""))
        extras = {k: _lines(v) for k, v in cp.items("options.extras_require")} if cp.has_section(
            "options.extras_require") else {}
        if name or deps or extras:
            out.update(name=out["name"] or name, where=out["where"] or "setup.cfg")
            out["dependencies"] = out["dependencies"] or deps
            out["extras"] = out["extras"] or extras
    data = _read(repo, base, _in(folder, "setup.py"))
    if data is not None:
        found = _setup_py(data.decode("utf-8", errors="replace"))
        found.pop("package_dir", None)  # where its code is, not what it declares (package_folders)
        found.pop("use_scm_version", None)  # how its version is made (version_files)
        for arg, names in found.pop("requirement_files", {}).items():
            # Read from the base revision as setup.py reads them (a file it names that is not there is
            # left out: setup.py would fail, and the tests then name what is missing).
            lines = [ln for name in names if _read(repo, base, _in(folder, name)) is not None
                     for ln in read_requirements(repo, base, _in(folder, name), "base")[0]]
            if arg == "tests_require":
                found.setdefault("extras_require", {}).setdefault("tests_require", lines)
            else:
                found.setdefault(arg, lines)
        out["name"] = out["name"] or found.get("name")
        out["dependencies"] = out["dependencies"] or found.get("install_requires", [])
        out["extras"] = out["extras"] or found.get("extras_require", {})
        out["where"] = out["where"] or ("setup.py" if found else None)
    return out


def poetry_spec(name: str, spec: Any) -> str | None:
    """A Poetry dependency as a PEP 508 line (`^1.2` is `>=1.2,<2.0`, `~1.2` is `>=1.2,<1.3`), or None
    for what pip cannot take from a version (git, a path, a URL) and for Python itself."""
    extras, markers = "", ""
    if isinstance(spec, dict):
        if "version" not in spec:
            return None
        extras = f"[{','.join(spec['extras'])}]" if spec.get("extras") else ""
        markers = f" ; {spec['markers']}" if spec.get("markers") else ""
        spec = spec["version"]
    if name.lower() == "python" or not isinstance(spec, str):
        return None
    parts = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        if item == "*":
            continue
        m = re.fullmatch(r"([\^~])\s*(\d+(?:\.\d+)*)", item)
        if m:
            nums = [int(x) for x in m.group(2).split(".")]
            if m.group(1) == "^":
                first = next((i for i, n in enumerate(nums) if n != 0), len(nums) - 1)
                upper = [*nums[:first], nums[first] + 1]
            else:
                upper = [nums[0] + 1] if len(nums) == 1 else [nums[0], nums[1] + 1]
            parts += [f">={m.group(2)}", f"<{'.'.join(map(str, upper))}"]
        else:
            parts.append(item if re.match(r"[<>=!~]", item) else f"=={item}")
    return f"{name}{extras}{','.join(parts)}{markers}"


def _poetry_groups(poetry: Any) -> dict[str, list[str]]:
    """Poetry's dependency groups (`[tool.poetry.group.test.dependencies]`, the older `dev-dependencies`
    as `dev`), as extras: Poetry 2 keeps them beside a `[project]` table too (cleo's `dev`)."""
    if not isinstance(poetry, dict):
        return {}
    groups = {str(g): (t or {}).get("dependencies") or {} for g, t in (poetry.get("group") or {}).items()
              if isinstance(t, dict)}
    if poetry.get("dev-dependencies"):
        groups.setdefault("dev", poetry["dev-dependencies"])
    return {group: [line for k, v in table.items() if (line := poetry_spec(str(k), v))]
            for group, table in groups.items() if isinstance(table, dict)}


def _poetry(poetry: dict[str, Any]) -> dict[str, Any]:
    """Dependencies and extras of a Poetry project (no `[project]` table: Poetry before 2.0); its
    groups count as extras (_poetry_groups)."""
    main = {str(k): v for k, v in (poetry.get("dependencies") or {}).items()}
    deps = [line for k, v in main.items() if not (isinstance(v, dict) and v.get("optional"))
            and (line := poetry_spec(k, v))]
    extras = _poetry_groups(poetry)
    for extra, names in (poetry.get("extras") or {}).items():
        extras[str(extra)] = [line for n in names if n in main and (line := poetry_spec(n, main[n]))]
    return {"dependencies": deps, "extras": extras}


def _flit(flit: dict[str, Any]) -> dict[str, Any]:
    """Dependencies and extras of a flit project before PEP 621 (fastapi, typer in 2019-2021):
    `requires`, `requires-extra` and the older `dev-requires` (the extra `dev`)."""
    extras = {str(k): [str(d) for d in v] for k, v in (flit.get("requires-extra") or {}).items() if isinstance(v, list)}
    if isinstance(flit.get("dev-requires"), list):
        extras.setdefault("dev", [str(d) for d in flit["dev-requires"]])
    return {"dependencies": [str(d) for d in flit.get("requires") or []], "extras": extras}


def _dependency_groups(table: Any) -> dict[str, list[str]]:
    """PEP 735 `[dependency-groups]` (where uv and pdm projects keep `test`/`dev`), each group's
    requirements with `{include-group = "x"}` expanded; an extra of the same name wins."""
    if not isinstance(table, dict):
        return {}

    def expand(name: str, seen: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        for item in table.get(name) or []:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and isinstance(item.get("include-group"), str) and \
                    item["include-group"] not in seen:
                out += expand(item["include-group"], (*seen, item["include-group"]))
        return out

    return {str(name): expand(str(name), (str(name),)) for name in table}


def _pyproject_groups(document: dict[str, Any]) -> dict[str, list[str]]:
    """The development groups pyproject.toml keeps whatever builds the project: PEP 735's
    `[dependency-groups]`, and uv's `[tool.uv] dev-dependencies` (before PEP 735; python-multipart's
    test dependencies, which `uv run` installs), which uv reads as the `dev` group, beside one of that name."""
    groups = _dependency_groups(document.get("dependency-groups"))
    legacy = ((document.get("tool") or {}).get("uv") or {}).get("dev-dependencies")
    if isinstance(legacy, list):
        lines = [str(d) for d in legacy if isinstance(d, str)]
        groups["dev"] = list(dict.fromkeys([*groups.get("dev", []), *lines]))
    return groups


def declared_in_group(detail: str, repo: Path, base: str, chosen: list[str]) -> str:
    """One line naming the project's group or extra (not among `chosen`) that declares the distribution a
    `No module named 'x'` asks for (python-multipart's `dev` group declares PyYAML, for `yaml`); "" when none
    does, or the module is the checkout's own (`unbuilt_module`)."""
    m = re.search(r"No module named '([\w.]+)'", detail)
    if not m:
        return ""
    top = m.group(1).split(".", 1)[0]
    meta = _metadata(repo, base)
    for group, lines in (meta.get("extras") or {}).items():
        if group in chosen:
            continue
        for line in lines:
            name = requirement_name(line)
            if name and may_provide(name, top):
                where = meta.get("where")
                return f"the project declares {name} in its `{group}` group or extra ({where}), not installed"
    return ""


# A warning as a collection error names it (`tests/test_others.py: DeprecationWarning: 'click.utils.get_binary_stream'
# is deprecated ...`): a warning stops collection only when the project's filters make it an error. pytest's own
# warnings (PytestRemovedIn9Warning) say the pytest is too new, which the collection fix already tells.
_WARNING_AS_ERROR = re.compile(r"(?:^|: )((?!Pytest)\w*Warning): (.+)")
WARNING_MADE_ERROR = "a warning the project's warning filters make an error"


def warning_made_error(detail: str, installed: list[dict[str, Any]]) -> str:
    """One line for a collection error that is a warning the project's filters (`filterwarnings = error`, `-W
    error`) made an error, naming the installed distribution the warning is about and its version when one is
    (typer of December 2025 with a click that deprecated `get_binary_stream` since: a dependency newer than the
    revision); "" for any other error."""
    m = _WARNING_AS_ERROR.search(detail)
    if not m:
        return ""
    message = m.group(2)
    # The module a deprecated name lives in ('click.utils.get_binary_stream'), then a quoted or capitalised name
    # ("removed in Click 9.0"); never a plain word ("deprecated" is a distribution too).
    tops = [d.split(".", 1)[0] for d in re.findall(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b", message)]
    tops += [q or c for q, c in re.findall(r"['\"`]([A-Za-z_][\w-]*)['\"`]|\b([A-Z][\w-]+)\b", message)]
    for top in tops:
        for item in installed:
            name, version = str(item.get("name") or ""), str(item.get("version") or "")
            if name and version and len(top) > 2 and may_provide(name, top):
                return f"{WARNING_MADE_ERROR}: {m.group(1)} of {name} {version}, installed here"
    return f"{WARNING_MADE_ERROR}: {m.group(1)}"


def _pdm_dev_groups(document: dict[str, Any]) -> dict[str, list[str]]:
    """pdm's own development groups, `[tool.pdm.dev-dependencies]` (before PEP 735: unearth keeps its
    `test` group there), each a list of requirements; pdm's editable and local-path lines (`-e ...`,
    `${PROJECT_ROOT}`) name the project's own folders, which pip cannot take from a requirement file."""
    table = ((document.get("tool") or {}).get("pdm") or {}).get("dev-dependencies")
    if not isinstance(table, dict):
        return {}
    return {str(name): [str(d) for d in items if isinstance(d, str) and not d.lstrip().startswith("-e")
                        and "${PROJECT_ROOT}" not in d]
            for name, items in table.items() if isinstance(items, list)}


def _lines(text: str) -> list[str]:
    return [ln.split("#", 1)[0].strip() for ln in text.splitlines() if ln.split("#", 1)[0].strip()]


def _static(node: ast.expr, names: dict[str, ast.expr], depth: int = 0) -> Any:
    """The value of an expression built from literals, module-level names bound to them, and `+`
    (sanic: `uvloop = "uvloop>=0.5.3" + env_dependency`, `dev_require = tests_require + [...]`),
    never running anything; ValueError for anything else."""
    if depth > 20:
        raise ValueError("too deep")
    if isinstance(node, ast.Name) and node.id in names:
        return _static(names[node.id], names, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_static(e, names, depth + 1) for e in node.elts]
    if isinstance(node, ast.Dict):
        # Entry by entry: one extra built by code does not hide the others.
        out = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                continue
            try:
                out[_static(k, names, depth + 1)] = _static(v, names, depth + 1)
            except (ValueError, TypeError, SyntaxError):
                continue
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _static(node.left, names, depth + 1), _static(node.right, names, depth + 1)
        if type(left) is not type(right) or not isinstance(left, (str, list)):
            raise ValueError("only strings and lists add up")
        return left + right
    return ast.literal_eval(node)


def _entry_groups(value: ast.expr, names: dict[str, ast.expr]) -> list[str]:
    """The group names setup.py's literal `entry_points={...}` declares."""
    while isinstance(value, ast.Name) and value.id in names:
        value = names[value.id]
    return [str(k.value) for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ] if isinstance(value, ast.Dict) else []


def _entry_lines(value: ast.expr, names: dict[str, ast.expr], group: str) -> list[str]:
    """setup.py's `entry_points={"console_scripts": [...], "pytest11": [...]}`: the entries of `group`
    written as literals (coverage.py computes two of its three names with `%`: those are left out, the
    literal one is kept)."""
    while isinstance(value, ast.Name) and value.id in names:
        value = names[value.id]
    if not isinstance(value, ast.Dict):
        return []
    for k, v in zip(value.keys, value.values, strict=True):
        if isinstance(k, ast.Constant) and k.value == group:
            while isinstance(v, ast.Name) and v.id in names:
                v = names[v.id]
            items = v.elts if isinstance(v, (ast.List, ast.Tuple)) else [v]
            return [line for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)
                    for line in e.value.splitlines() if line.strip()]
    return []


def _module_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """setup.py's module-level statements, with those inside `if`/`try`/`with` blocks in the order
    written (python-json-patch: `if has_setuptools: OPTIONS = {"install_requires": ...}`): the
    first binding of a name is the one a plain install with setuptools makes."""
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, ast.If):
            out += _module_statements(stmt.body) + _module_statements(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            out += _module_statements(stmt.body)
            for handler in stmt.handlers:
                out += _module_statements(handler.body)
            out += _module_statements(stmt.orelse) + _module_statements(stmt.finalbody)
        elif isinstance(stmt, ast.With):
            out += _module_statements(stmt.body)
    return out


def _parsed_once(parse: Callable[[str], dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
    """`parse` of one source text done once (a verification reads the base's setup.py for its
    dependencies, package folders, version file, version, entry points and plugins: seven parses of the
    same text); each caller gets its own copy, which it may change."""
    once = functools.lru_cache(maxsize=8)(parse)

    @functools.wraps(parse)
    def parsed(source: str) -> dict[str, Any]:
        return copy.deepcopy(once(source))
    return parsed


@_parsed_once
def _setup_py(source: str) -> dict[str, Any]:
    """Keyword arguments of a `setup(...)` call (name, install_requires, extras_require,
    tests_require) that are literals or built from module-level literals (the first binding of each
    name: what a plain install declares, before any environment-dependent edit)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, Any] = {}
    # Module-level names bound to literals (`install_requires = [...]` then `setup(install_requires=...)`).
    names: dict[str, ast.expr] = {}
    # `setup(**kwargs)` with `kwargs = {...}` and `kwargs["install_requires"] = requirements` (sanic).
    keyed: dict[str, list[tuple[ast.expr, ast.expr]]] = {}
    for stmt in _module_statements(tree.body):
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            names.setdefault(target.id, stmt.value)
            if isinstance(stmt.value, ast.Dict):
                keyed.setdefault(target.id, []).extend(
                    (k, v) for k, v in zip(stmt.value.keys, stmt.value.values, strict=True) if k is not None)
            elif isinstance(stmt.value, ast.Call) and getattr(stmt.value.func, "id", None) == "dict":
                # `setup_args = dict(name="coverage", extras_require={...})` then `setup(**setup_args)`
                keyed.setdefault(target.id, []).extend(
                    (ast.Constant(kw.arg), kw.value) for kw in stmt.value.keywords if kw.arg is not None)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            keyed.setdefault(target.value.id, []).append((target.slice, stmt.value))
    wanted = ("name", "version", "install_requires", "extras_require", "tests_require", "package_dir",
              "use_scm_version")
    files: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "setup":
            pairs = [(kw.arg, kw.value) for kw in node.keywords if kw.arg is not None]
            for kw in node.keywords:
                if kw.arg is None and isinstance(kw.value, ast.Name):
                    pairs += [(k.value, v) for k, v in keyed.get(kw.value.id, [])
                              if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            for arg, value in pairs:
                if arg == "entry_points":
                    found["entry_points"] = {g: _entry_lines(value, names, g) for g in _entry_groups(value, names)}
                if arg in wanted:
                    try:
                        found[arg] = _static(value, names)
                    except (ValueError, TypeError, SyntaxError):
                        if arg in ("install_requires", "tests_require"):
                            files[arg] = _files_named(value, tree)
                        continue
    if any(files.values()):
        found["requirement_files"] = {k: v for k, v in files.items() if v}
    if not isinstance(found.get("name", ""), str):
        found.pop("name")
    if not isinstance(found.get("install_requires", []), list):
        found.pop("install_requires")
    if not isinstance(found.get("extras_require", {}), dict):
        found.pop("extras_require")
    tests = found.pop("tests_require", None)
    if isinstance(tests, list) and "tests_require" not in found.get("extras_require", {}):
        # setup.py's own test dependencies (tqdm, httpie, sanic of their time): `--extras tests_require`.
        found["extras_require"] = {**found.get("extras_require", {}), "tests_require": tests}
    return found


_REQUIREMENTS_FILE = re.compile(r"^[\w./-]*req[\w./-]*\.(?:txt|in)$", re.I)


def _files_named(value: ast.expr, tree: ast.Module) -> list[str]:
    """Requirement files an expression reads (python-json-patch's `list(open('requirements.txt'))`,
    `f.read().splitlines()` bound under `with open(...)`, a helper `parse_requirements("requirements.txt")`):
    the string literals naming one, in the expression, in what its names are bound to anywhere in
    setup.py, and in the bodies of the module's functions it calls. Never run."""
    functions = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
    bound: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        context = [item.context_expr for item in node.items] if isinstance(node, ast.With) else []
        for stmt in node.body if isinstance(node, (ast.With, ast.Module)) else []:
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        # `with open("requirements.txt") as f: reqs = f.read().splitlines()`
                        bound.setdefault(target.id, []).extend([stmt.value, *context])
    out: list[str] = []
    pending: list[ast.AST] = [value]
    seen: set[int] = set()
    while pending and len(seen) < 200:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _REQUIREMENTS_FILE.match(sub.value):
                out.append(sub.value.removeprefix("./"))
            elif isinstance(sub, ast.Name):
                pending += bound.get(sub.id, [])
                if sub.id in functions:
                    pending.append(functions[sub.id])
    return list(dict.fromkeys(out))


def _declared(meta: dict[str, Any], extras: list[str]) -> list[str]:
    """The declared dependencies and those of `extras`; an extra that names the project itself
    (`all = ["proj[test,docs]"]`) is expanded, never installed."""
    own = normalise(meta["name"]) if meta.get("name") else None
    lines: list[str] = list(meta.get("dependencies") or [])
    pending, seen = list(extras), set()
    while pending:
        extra = pending.pop(0)
        if extra in seen:
            continue
        seen.add(extra)
        table = meta.get("extras") or {}
        if extra not in table:
            where = meta.get("where") or "the project"
            raise UsageError(f"the extra {extra!r} is not declared in {where} at the base revision",
                             f"declared extras: {', '.join(sorted(table)) or 'none'}")
        for dep in table[extra]:
            name = requirement_name(dep)
            if own and name and normalise(name) == own:
                m = re.search(r"\[([^\]]*)\]", dep)
                pending += [e.strip() for e in (m.group(1).split(",") if m else []) if e.strip()]
                continue
            lines.append(dep)
    return lines


def read_requirements(repo: Path, base: str, name: str, where: str | None = None,
                      depth: int = 0, *, python: tuple[int, int] | None = None) -> tuple[list[str], list[str], str]:
    """(requirement lines, constraint lines, where it was read) of a requirements file: from the
    base revision or, when the revision has no such file, from this machine; `-r`/`-c` includes are
    followed from the same place. A tox.ini's lines are those of the factors naming `python` (the
    tests' interpreter; None: the running one)."""
    data = _read(repo, base, name) if where in (None, "base") else None
    if data is not None:
        where = "base"
    elif where == "base":
        raise UsageError(f"requirements file {name!r} (included) is not in the base revision",
                         "commit the included file, or flatten the requirements")
    else:
        host = Path(name)
        if not host.is_file():
            raise UsageError(f"requirements file {name!r} is neither in the base revision nor a file here",
                             "pass a path inside the repository (read at the base revision) or an existing file")
        data, where = host.read_bytes(), "here"
    lines: list[str] = []
    constraints: list[str] = []
    text = data.decode("utf-8", errors="replace")
    if PurePosixPath(name).name == "tox.ini":
        text = "\n".join(tox_deps(text, python))
    elif PurePosixPath(name).name == "tox.toml":
        text = "\n".join(tox_toml_deps(text))
    for line in lockfile.logical_lines(text):
        inc = _INCLUDE.match(line)
        if inc is None:
            lines.append(line)
            continue
        if depth >= MAX_INCLUDES:
            raise UsageError(f"{name}: requirement files include each other too deeply", "flatten the includes")
        opt, rel = inc.groups()
        target = _normal(str(PurePosixPath(name).parent / rel)) if where == "base" else str(Path(name).parent / rel)
        more, more_constraints, _w = read_requirements(repo, base, target, where, depth + 1, python=python)
        if opt in ("-r", "--requirement"):
            lines += more
            constraints += more_constraints
        else:
            constraints += more + more_constraints
    return lines, constraints, where


_TOX_REF = re.compile(r"^\{\[([^\]]+)\]([\w-]+)\}$")
_TOX_FACTOR = re.compile(r"^([\w.,!-]+):\s+")
# How to install, not what: tox hands each deps line to `pip install` as its arguments, where `-U` upgrades; a
# requirements file has no such option (pip: "Invalid requirement: -U"). sqlfluff's tox.ini: `-Urrequirements.txt`.
_TOX_INSTALL_ONLY = re.compile(r"^(?:--upgrade|--force-reinstall|-U)(?:\s+|$)")
_TOX_UPGRADE_CLUSTER = re.compile(r"^-U(?=[a-zA-Z])")


def _tox_pip_line(line: str) -> str:
    """A tox deps line as a requirement line: `pip install`'s options that only say how to install (`-U`,
    `--upgrade`, `--force-reinstall`) dropped, and `-U` clustered with the option after it (`-Ur FILE`,
    `-Urrequirements.txt`, `-Ue .`) read as that option, as pip's command line reads it."""
    while True:
        line = _TOX_UPGRADE_CLUSTER.sub("-", line)
        stripped = _TOX_INSTALL_ONLY.sub("", line)
        if stripped == line:
            return line
        line = stripped


def _python_factors(version: tuple[int, int]) -> set[str]:
    """tox's factors that name a Python (`py311`, `3.11`, `py3`, `py`): those of the environments that run
    the unit tests on it."""
    major, minor = version
    return {"py", f"py{major}", f"py{major}{minor}", f"py{major}.{minor}", f"{major}.{minor}"}


def _factor_holds(factor: str, held: set[str]) -> bool:
    """tox's factor condition on the environment that runs the unit tests on this Python: `py311` when held,
    `!pypy` when not (pylint's `!pypy: -r requirements_test.txt`, the line every CPython environment takes)."""
    return factor[1:] not in held if factor.startswith("!") else factor in held


def tox_deps(text: str, python: tuple[int, int] | None = None) -> list[str]:
    """The `deps` of tox.ini's `[testenv]`, as requirement lines: `{[section]deps}` references
    followed, `{toxinidir}` read as the folder of tox.ini (kombu's `-r{toxinidir}/requirements/test.txt`),
    lines for factors that name this Python (`3.11: ...`, `py311: ...`; `python`, else the running one)
    kept and lines for other factors (`py27: mock`, `flake8,mypy: ...`) and other substitutions left out."""
    held = _python_factors(python or sys.version_info[:2])
    cp = configparser.ConfigParser(interpolation=None)
    try:
        cp.read_string(text)
    except configparser.Error as exc:
        raise UsageError(f"tox.ini cannot be read: {exc}", "pass a requirements file instead") from exc

    def deps(section: str, key: str, depth: int) -> list[str]:
        out: list[str] = []
        for raw in cp.get(section, key, fallback="").splitlines():
            line = raw.strip().replace("{toxinidir}/", "").replace("{toxinidir}", ".")
            factor = _TOX_FACTOR.match(line)
            if factor:  # `a,b-c: req`: one of the alternatives, each of factors all held, names this Python
                held_here = any(alt and all(_factor_holds(f, held) for f in alt.split("-"))
                                for alt in factor.group(1).split(","))
                line = line[factor.end():].strip() if held_here else ""
            ref = _TOX_REF.match(line)
            if ref and depth < MAX_INCLUDES:
                out += deps(ref.group(1), ref.group(2), depth + 1)
            elif line and not line.startswith("#") and "{" not in line and _tox_pip_line(line):
                out.append(_tox_pip_line(line))
        return out

    out = deps("testenv", "deps", 0)
    # `extras = testing` installs the project with those extras (Python-Markdown): as `.[testing]` does in
    # a requirements file; `skip_install = true` installs nothing of the project.
    extras = [e.strip() for e in re.split(r"[,\s]+", cp.get("testenv", "extras", fallback="")) if e.strip()
              and "{" not in e and ":" not in e]
    if extras and cp.get("testenv", "skip_install", fallback="false").strip().lower() != "true":
        out.insert(0, f".[{','.join(extras)}]")
    return out


def tox_toml_deps(text: str) -> list[str]:
    """The `deps` of tox 4's `tox.toml` `[env_run_base]` (what every environment runs with, the unit tests' among
    them), as requirement lines, read as data: pipdeptree's has none, and installs the project with `extras =
    ["graphviz", "rich", "test"]`, as `.[graphviz,rich,test]` does in a requirements file (`dependency_groups`
    the same way: signoff reads a PEP 735 group as an extra). Lines with substitutions (`{env:X}`) and tox's
    replacement tables (`{ replace = "ref", ... }`) are left out, as tox.ini's other substitutions are."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"tox.toml cannot be read: {exc}", "pass a requirements file instead") from exc
    base = document.get("env_run_base") or {}
    if not isinstance(base, dict):
        return []
    out = [str(d).strip() for d in base.get("deps") or [] if isinstance(d, str) and "{" not in d and d.strip()]
    wanted = [str(e).strip() for key in ("extras", "dependency_groups") for e in base.get(key) or []
              if isinstance(e, str) and e.strip() and "{" not in e]
    skipped = base.get("skip_install") is True or base.get("package") == "skip"
    if wanted and not skipped:
        out.insert(0, f".[{','.join(dict.fromkeys(wanted))}]")
    return out


def _normal(rel: str) -> str:
    parts: list[str] = []
    for p in PurePosixPath(rel).parts:
        if p == "..":
            if not parts:
                raise UsageError(f"requirement include {rel!r} leaves the repository", "include files inside it")
            parts.pop()
        elif p != ".":
            parts.append(p)
    return "/".join(parts)


def read_lock(repo: Path, base: str, name: str, project: str | None) -> lockfile.Lock:
    """A lock file from the base revision or, when the revision has none by that name, this machine."""
    data = _read(repo, base, name)
    where = "base revision"
    if data is None:
        host = Path(name)
        if not host.is_file():
            raise UsageError(f"lock file {name!r} is neither in the base revision nor a file here",
                             "pass the project's lock file as a path inside the repository (read at the base revision)")
        data, where, name = host.read_bytes(), "this machine", host.name  # never a host path in the evidence
    lock = lockfile.parse(name, data, project)
    lock.path = f"{name} ({where})"
    return lock


LOCK_FILES = ("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "pylock.toml")
_VERSIONED = re.compile(r"[<>=~!]=?|@")
_OLDEST_LOCKED_PYTEST = (4, 6)  # the guard's floor (verifier.MIN_PYTEST): an older lock's pytest is not taken


def locked_pytest(repo: Path, base: str, project: str | None) -> tuple[str, str] | None:
    """(`pytest==X`, the lock file) when the base revision's root holds a lock file that pins pytest; None when
    none does, or it cannot be read (it is only a default then, never a reason to stop)."""
    for name in LOCK_FILES:
        data = _read(repo, base, name)
        if data is None:
            continue
        try:
            pins = lockfile.parse(name, data, project).pins
        except (UsageError, ValueError, KeyError, TypeError):
            return None
        for pin in pins:
            if normalise(pin.name) == "pytest" and not pin.marker:
                release = tuple(int(x) for x in re.findall(r"\d+", pin.version)[:2])
                return (f"pytest=={pin.version}", name) if release >= _OLDEST_LOCKED_PYTEST else None
        return None
    return None


def local_project(repo: Path, base: str, line: str) -> tuple[str, list[str]] | None:
    """(folder, extras) when a requirement line installs a project from a folder of the base revision other than
    its root (a monorepo's `-e opentelemetry-api`); None for anything else."""
    m = _LOCAL.match(line.strip())
    if m is None or (not m.group(1) and "/" not in m.group(2) and not m.group(2).startswith(".")):
        return None
    folder = m.group(2).removeprefix("./")
    if folder in ("", ".") or ".." in folder.split("/") or not any(
            _read(repo, base, _in(folder, f)) is not None for f in ("pyproject.toml", "setup.py", "setup.cfg")):
        return None
    return folder, [e.strip() for e in (m.group(3) or "").split(",") if e.strip()]


def plan(repo: Path, base: str, requirements: list[str], project_deps: bool, extras: list[str],
         pytest_pin: str | None, lock: str | None = None, *, python: tuple[int, int] | None = None) -> Plan:
    """The requirement lines for the test environment, without the project itself; a lock file holds
    every package it names to its locked version (constraints) and its hashes are kept for checking.
    `python` is the tests' interpreter (major, minor), where tox.ini's factors choose lines by it."""
    meta = _metadata(repo, base)
    own = normalise(meta["name"]) if meta.get("name") else None
    result = Plan(project=meta.get("name"))
    wanted_extras: list[str] = list(extras)
    raw: list[str] = []
    neighbours: set[str] = set()  # the names of the repository's other projects the requirements install
    for name in requirements:
        lines, constraints, where = read_requirements(repo, base, name, python=python)
        result.constraints += [c for c in constraints if not (own and normalise(requirement_name(c) or "") == own)]
        shown = name if where == "base" else Path(name).name  # never a host path in the evidence
        result.sources.append(f"{shown} ({'base revision' if where == 'base' else 'this machine'})")
        for hashed in lines:
            line, hashes = lockfile.split_hashes(hashed)
            pinned = lockfile.pin_of(hashed) if hashes else None
            if pinned is not None:
                # pip-compile --generate-hashes: the pin is checked against what pip installs; pip
                # itself gets the bare line (its hash mode would refuse the unhashed pytest).
                result.pins.append(pinned)
            self_ref = _SELF.match(line)
            dist = requirement_name(line)
            local = None if self_ref is not None else local_project(repo, base, line)
            if self_ref is not None:
                # `-e .` / `.[test]`: the project itself; its declarations are installed instead.
                result.dropped.append(line)
                project_deps = True
                wanted_extras += [e.strip() for e in (self_ref.group(1) or "").split(",") if e.strip()]
            elif local is not None:
                # Another project of the repository (a monorepo's `-e opentelemetry-api`): the checkout's own code,
                # from its import folder in each revision; its declarations are installed instead.
                result.dropped.append(line)
                sub = _metadata(repo, base, local[0])
                if sub.get("name"):
                    neighbours.add(normalise(sub["name"]))
                raw += _declared(sub, local[1]) if sub.get("where") else []
                result.import_folders += package_folders(repo, base, local[0]) or [local[0]]
            elif own and dist and normalise(dist) == own:
                result.dropped.append(line)
            else:
                raw.append(line)
    if project_deps or wanted_extras:
        if not meta.get("where"):
            raise UsageError("the base revision declares no dependencies (no pyproject.toml [project], "
                             "[tool.poetry] or [tool.flit.metadata], setup.cfg or literal setup.py)",
                             "pass --requirements FILE instead")
        declared = _declared(meta, list(dict.fromkeys(wanted_extras)))
        label = meta["where"] + (f" [{','.join(dict.fromkeys(wanted_extras))}]" if wanted_extras else "")
        result.sources.append(f"{label} (base revision)")
        raw = declared + raw
    if pytest_pin is not None:
        pin = pytest_pin.strip()
        if normalise(requirement_name(pin) or "") != "pytest" or pin.startswith("-"):
            raise UsageError(f"--pytest {pytest_pin!r} is not a pytest requirement", "e.g. --pytest 'pytest==7.4.4'")
        # --pytest is the person's choice: it replaces a pytest the project pins (sanic's test extra
        # pins pytest 5.2.1, older than the run guard supports).
        result.replaced = [r for r in raw if normalise(requirement_name(r) or "") == "pytest"]
        raw = [r for r in raw if r not in result.replaced]
        raw.append(pin)
        result.sources.append(f"--pytest {pin}")
    elif not any(normalise(requirement_name(r) or "") == "pytest" and _VERSIONED.search(r) for r in raw):
        # No pytest chosen, none versioned by the project: the one its lock file runs (flask's uv.lock pins 8.3.5;
        # the newest, 9, lacks the `_pytest.monkeypatch.notset` its conftest reads), as a limit, never an install.
        if found := locked_pytest(repo, base, meta.get("name")):
            result.constraints.append(found[0])
            result.sources.append(f"{found[0]} ({found[1]} of the base revision: the pytest the project runs)")
    if lock is not None:
        locked = read_lock(repo, base, lock, meta.get("name"))
        result.lock = locked.as_json()
        result.sources.append(f"lock {locked.path}")
        result.constraints += [p.constraint() for p in locked.pins]
        result.pins += [p for p in locked.pins if p.hashes]
    if user := pkg_resources_user(repo, base):
        # Installing the project with setuptools, as its maintainers did, brought pkg_resources with it
        # (jaraco.functools' namespace package declares itself through it): a setuptools of its time.
        declared = [r for r in raw if normalise(requirement_name(r) or "") == "setuptools"]
        if not declared:
            raw.append(SETUPTOOLS_WITH_PKG_RESOURCES)
        # A setuptools the project declares at 71 or later (a test group saying `setuptools<82,>=81`, as tox's
        # does) beside a constraint below 71 would leave pip nothing: the last releases that ship pkg_resources then.
        chosen = SETUPTOOLS_LAST_WITH_PKG_RESOURCES if any(_from_71(r) for r in declared) else \
            SETUPTOOLS_WITH_PKG_RESOURCES
        result.constraints.append(chosen)
        result.sources.append(f"{chosen} ({user} imports pkg_resources)")
    # A neighbour named as a dependency (`opentelemetry-api == 1.41.0.dev`, unreleased) is the checkout's too.
    result.lines = [r for r in dict.fromkeys(raw) if normalise(requirement_name(r) or "") not in neighbours]
    result.constraints = list(dict.fromkeys(result.constraints))
    result.import_folders = list(dict.fromkeys(result.import_folders))
    return result


# Releases whose pkg_resources imports its own vendored copies (setuptools 71 imports jaraco.text and
# more_itertools by those names, which a checkout's own `jaraco` namespace package hides; 82 removed it).
SETUPTOOLS_WITH_PKG_RESOURCES = "setuptools<71"
SETUPTOOLS_LAST_WITH_PKG_RESOURCES = "setuptools<82"


def _from_71(line: str) -> bool:
    """Whether a setuptools requirement's lower bound (`>=`, `>`, `==`, `~=`) is release 71 or later."""
    return any(int(m.group(1)) >= 71 for m in re.finditer(r"(?:>=|>|===|==|~=)\s*(\d+)", line.split(";", 1)[0]))


_PKG_RESOURCES = r"^\s*(import|from)\s+pkg_resources\b|__import__\(\s*['\"]pkg_resources['\"]"


_PKG_RESOURCES_GREP = ("grep", "-l", "-I", "-E", _PKG_RESOURCES)


def pkg_resources_user(repo: Path, base: str) -> str | None:
    """The first Python file of the base revision, setup.py aside (it runs at build time only), that
    imports pkg_resources: a namespace package declared through it, a version read with
    `get_distribution`. None when no file does. Collects the search `search_pkg_resources_soon` started."""
    session = git_session()
    started = session.kept.pop(("pkg_resources_user", str(repo), base), None) if session else None
    out: bytes
    if isinstance(started, subprocess.Popen):
        try:
            out, _ = started.communicate(timeout=GIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            started.kill()
            started.wait()
            raise UnavailableError(f"git grep in {repo} did not finish within {GIT_TIMEOUT:g} s",
                                   "check the repository is local and not locked by another process") from None
    else:
        out = git.run(repo, *_PKG_RESOURCES_GREP, base, "--", "*.py", ":(exclude)setup.py", check=False).stdout
    prefix = f"{base}:"
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        return line.removeprefix(prefix)
    return None


def search_pkg_resources_soon(repo: Path, base: str) -> None:
    """Start `pkg_resources_user`'s `git grep` over the whole base tree now, inside the caller's git
    session, so that it runs while the verification freezes the harness and reads the policy (on a
    real project it took 40-60 ms, on the critical path); `plan` collects it. Nothing outside a session."""
    session = git_session()
    if session is None:
        return
    started = git.popen(repo, *_PKG_RESOURCES_GREP, base, "--", "*.py", ":(exclude)setup.py",
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    session.kept[("pkg_resources_user", str(repo), base)] = started

    def reap() -> None:  # not collected (the verification stopped before its plan)
        if started.poll() is None:
            started.kill()
        started.communicate()

    session.closers.append(reap)


# -- where the project keeps its import packages ------------------------------------------------

_PACKAGE_DIR_CFG = re.compile(r"^package_dir\s*=\s*(?:\n\s+)?=\s*([\w./-]+)\s*$", re.M)


def package_folders(repo: Path, base: str, folder: str = "") -> list[str]:
    """The folder of the base revision where installing the project would find its packages, when it
    is not the repository's root: a package directory the project declares (setuptools'
    `package-dir = {"" = "lib"}`, `[tool.setuptools.packages.find] where`, setup.cfg's `package_dir`,
    setup.py's `package_dir={"": "lib"}`),
    else `src` when it holds a package and the root does not (the src layout, which pip, flit, hatch,
    poetry and pdm all find by themselves). [] for a flat layout. The tests import what an installed
    project would (`import click` from `src/click`), as its maintainers run them after `pip install -e .`."""
    declared: list[str] = []
    text = git.read_file_at(repo, base, _in(folder, "pyproject.toml"))
    if text is not None:
        try:
            tool = tomllib.loads(text.decode()).get("tool", {}).get("setuptools", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            tool = {}
        where = tool.get("package-dir", {}).get("") if isinstance(tool.get("package-dir"), dict) else None
        find = (tool.get("packages") or {}).get("find") if isinstance(tool.get("packages"), dict) else None
        if isinstance(where, str):
            declared.append(where)
        elif isinstance(find, dict) and isinstance(find.get("where"), list):
            declared += [w for w in find["where"] if isinstance(w, str)]
    cfg = git.read_file_at(repo, base, _in(folder, "setup.cfg"))
    if not declared and cfg is not None:
        m = _PACKAGE_DIR_CFG.search(cfg.decode(errors="replace"))
        if m:
            declared.append(m.group(1))
    setup_py = git.read_file_at(repo, base, _in(folder, "setup.py")) if not declared else None
    if setup_py is not None:
        mapping = _setup_py(setup_py.decode(errors="replace")).get("package_dir")
        if isinstance(mapping, dict) and isinstance(mapping.get(""), str):
            declared.append(mapping[""])
    # (a project in a folder of the repository, as a monorepo keeps each: its own paths, its folders returned whole)
    paths = [p[len(folder) + 1:] for p in git.tracked_paths(repo, base, folder)] if folder else git.tracked_paths(
        repo, base)
    roots = {p.split("/", 1)[0] for p in paths if "/" in p}

    def holds_package(folder: str) -> bool:
        prefix = folder.strip("/") + "/"
        # A package, a module, or a package inside namespace folders (src/ns/pkg/__init__.py, PEP 420).
        return any(p.startswith(prefix) and re.fullmatch(r"(?:[A-Za-z_]\w*/)+__init__\.py|[A-Za-z_]\w*\.py",
                                                         p[len(prefix):]) for p in paths)

    folders = [f.strip("/") for f in declared if f.strip("/ .") and ".." not in f and holds_package(f)]
    if not folders and holds_package("src"):
        own = {p[4:].split("/", 1)[0].removesuffix(".py") for p in paths if p.startswith("src/")}
        if not own & roots:
            folders = ["src"]
    return [_in(folder, f) for f in dict.fromkeys(folders)]


# -- which installed distributions provide the same import names as the checkout -----------------

def checkout_modules(tree: Path, pythonpath: list[str]) -> dict[str, str]:
    """Top-level import names the checkout provides (a package folder or a module), by where."""
    found: dict[str, str] = {}
    for rel in ["", *pythonpath]:
        root = tree / rel if rel else tree
        if not root.is_dir():
            continue
        for p in sorted(root.iterdir()):
            name = _module_name(p, package_marker=True)
            if name and name not in found and name not in ("setup", "conftest", "noxfile", "tasks"):
                found[name] = str(p.relative_to(tree))
    return found


def unbuilt_module(detail: str, tree: Path, pythonpath: list[str]) -> str:
    """One line naming what the checkout itself lacks when `detail` says `No module named 'pkg.x'` and
    `pkg` is the checkout's own package: a compiled extension committed as source only (pandas'
    `.pyx`), or a module generated at build or install time (a version file setuptools_scm writes);
    "" otherwise (a dependency that is not installed is another matter)."""
    m = re.search(r"No module named '([\w.]+)'", detail)
    # `from tests.fixtures.exceptions import nested1` where the harness has the package but not the module
    # (cleo's): a helper left out, as for `No module named` (a name that is no module is another matter).
    named = re.search(r"cannot import name '(\w+)' from '([\w.]+)'", detail)
    if named:
        name = f"{named.group(2)}.{named.group(1)}"
    elif not m or "." not in m.group(1):
        return ""
    else:
        name = m.group(1)
    where = checkout_modules(tree, pythonpath).get(name.split(".", 1)[0])
    if where is None:
        return ""
    stem = tree / where / Path(*name.split(".")[1:])
    if stem.with_suffix(".py").is_file() or (stem / "__init__.py").is_file():
        return (f"`{name}` is in the checkout but not in the harness: a helper the tests import; freeze it with "
                "the harness (a harness folder keeps its helpers)")
    if named:
        return ""
    init = tree / where / "__init__.py"
    if init.is_file() and re.search(r"declare_namespace|extend_path", init.read_text(errors="replace")):
        # jaraco.functools' `jaraco` (pkg_resources style): other distributions' jaraco.* live beside it.
        return (f"`{name}` is not in the checkout's `{name.split('.', 1)[0]}`, a namespace package other "
                "distributions share: install the one that provides it (--requirements FILE naming it)")
    sources = [str(p.relative_to(tree)) for ext in (".pyx", ".c", ".cpp", ".pxd")
               if (p := stem.with_suffix(ext)).is_file()]
    if sources:
        return (f"`{name}` is the checkout's own compiled extension: {sources[0]} is committed, the built module "
                "is not (--build-extensions builds it in the sandbox)")
    return (f"`{name}` is the checkout's own module and is not committed (generated when the project is built "
            "or installed: a compiled extension, or a version file setuptools_scm writes)")


def _module_name(p: Path, package_marker: bool) -> str | None:
    if p.name.startswith((".", "__")):
        return None
    if p.is_dir():
        if not re.fullmatch(r"[A-Za-z_]\w*", p.name) or p.name.endswith((".dist-info", ".egg-info")):
            return None
        return p.name if (not package_marker or (p / "__init__.py").is_file()) else None
    m = re.fullmatch(r"([A-Za-z_]\w*)(?:\.py|\.[\w-]+\.so|\.so)", p.name)
    return m.group(1) if m else None


def installed_modules(site_packages: Path) -> dict[str, str]:
    """Top-level import names of an environment, by the distribution that installed them."""
    found: dict[str, str] = {}
    if not site_packages.is_dir():
        return found
    for info in sorted(site_packages.glob("*.dist-info")):
        dist = info.name[:-len(".dist-info")]
        record = info / "RECORD"
        if not record.is_file():
            continue
        for line in record.read_text(errors="replace").splitlines():
            top = line.split(",", 1)[0].split("/", 1)
            if len(top) == 2 and not top[0].endswith((".dist-info", ".data")) and re.fullmatch(r"[A-Za-z_]\w*", top[0]):
                found.setdefault(top[0], dist)
            elif len(top) == 1:
                name = _module_name(Path(top[0]), package_marker=False)
                if name and top[0].endswith((".py", ".so")):
                    found.setdefault(name, dist)
    return found


def collisions(tree: Path, pythonpath: list[str], site_packages: Path,
               installed: dict[str, str] | None = None) -> list[dict[str, str]]:
    """Import names both the checkout and an installed distribution provide: the run imports the
    checkout's (it comes first on the path), and a person should know the environment has another.
    `installed`: `installed_modules(site_packages)` when already read (once for both revisions)."""
    have = installed if installed is not None else installed_modules(site_packages)
    return [{"module": name, "checkout": where, "installed": have[name]}
            for name, where in checkout_modules(tree, pythonpath).items() if name in have]


# Where a build backend is told to write the version module it generates at install (paths from the
# project's root): setuptools-scm (also under flit_scm), hatch-vcs (its build hook, or the wheel's).
_VERSION_FILE_KEYS = (("setuptools_scm", "write_to"), ("setuptools_scm", "version_file"),
                      ("hatch", "build", "hooks", "vcs", "version-file"),
                      ("hatch", "build", "targets", "wheel", "hooks", "vcs", "version-file"))
_MODULE_PATH = re.compile(r"(?:[A-Za-z_][\w-]*/)*[A-Za-z_]\w*\.py")


def version_files(repo: Path, base: str) -> dict[str, str | None]:
    """Version modules the base revision's pyproject.toml (or setup.py's `use_scm_version`) has its
    build backend write at install and that are therefore never committed (humanize's
    `src/humanize/_version.py`, which its package imports): as `pip install -e .` leaves them for the
    project's maintainers, the run writes them. Path -> the template the project gives for it (pdm's
    `write_template`), None for the usual module."""
    text = git.read_file_at(repo, base, "pyproject.toml")
    try:
        tool = tomllib.loads(text.decode()).get("tool", {}) if text is not None else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        tool = {}
    declared: list[Any] = []
    for keys in _VERSION_FILE_KEYS:
        value: Any = tool
        for k in keys:
            value = value.get(k) if isinstance(value, dict) else None
        declared.append(value)
    setup_py = git.read_file_at(repo, base, "setup.py")
    if setup_py is not None:  # setup(use_scm_version={"write_to": ...}), setuptools-scm's older way
        scm = _setup_py(setup_py.decode(errors="replace")).get("use_scm_version")
        declared += [scm.get("write_to"), scm.get("version_file")] if isinstance(scm, dict) else []
    out: dict[str, str | None] = {v: None for v in declared if isinstance(v, str) and _MODULE_PATH.fullmatch(v)}
    if setup_py is not None:  # numpy's old `write_version_py()`: setup.py writes the module itself
        for rel, template in _written_by_setup_py(setup_py.decode(errors="replace")).items():
            out.setdefault(rel, template)
    pdm: Any = tool.get("pdm") if isinstance(tool.get("pdm"), dict) else {}
    version, build = pdm.get("version"), pdm.get("build")
    if isinstance(version, dict) and version.get("source") in ("scm", "call") and \
            isinstance(version.get("write_to"), str):
        # pdm-backend writes `write_to` inside its package folder: `[tool.pdm.build] package-dir`, else
        # `src` where the project has one; with its `write_template` (the version alone by default).
        folder = build.get("package-dir") if isinstance(build, dict) else None
        if not isinstance(folder, str):
            folder = "src" if git.tracked_paths(repo, base, "src") else ""
        rel = f"{folder.strip('/')}/{version['write_to']}".lstrip("/")
        template = version.get("write_template")
        if _MODULE_PATH.fullmatch(rel):
            out.setdefault(rel, template if isinstance(template, str) else "{}\n")
    return out


_PERCENT_KEY = re.compile(r"%\((\w+)\)[sdr]")


def _written_by_setup_py(source: str) -> dict[str, str | None]:
    """Python modules setup.py writes when it runs (`open("numpy/version.py", "w")`, the path a literal or
    the default of the function's parameter): path -> a template for write_version_files, from the
    `%(name)s` text written there (`version`-like names get the version, `isrelease`-like ones True,
    others an empty string), or None for the usual module. Read as a syntax tree, never run."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, str | None] = {}
    # Each function's nodes with its parameters' literal defaults, and the module's own statements.
    scopes: list[tuple[list[ast.AST], dict[str, Any]]] = [
        ([n for stmt in tree.body if not isinstance(stmt, ast.FunctionDef) for n in ast.walk(stmt)], {})]
    for f in ast.walk(tree):
        if isinstance(f, ast.FunctionDef):
            params = f.args.args[len(f.args.args) - len(f.args.defaults):]
            scopes.append((list(ast.walk(f)), {a.arg: d.value for a, d in zip(params, f.args.defaults, strict=True)
                                               if isinstance(d, ast.Constant)}))
    for nodes, defaults in scopes:
        for node in nodes:
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "open" and len(node.args) >= 2):
                continue
            target, mode = node.args[0], node.args[1]
            path = target.value if isinstance(target, ast.Constant) else defaults.get(getattr(target, "id", ""))
            if not (isinstance(mode, ast.Constant) and str(mode.value).startswith("w") and isinstance(path, str)
                    and _MODULE_PATH.fullmatch(path.removeprefix("./"))):
                continue
            texts = [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)
                     and _PERCENT_KEY.search(n.value)]
            template = None
            if texts:
                def fill(m: re.Match[str]) -> str:
                    key = m.group(1).lower()
                    return "{0}" if "version" in key else "True" if "release" in key else ""
                template = _PERCENT_KEY.sub(fill, texts[0].replace("{", "{{").replace("}", "}}"))
            out.setdefault(path.removeprefix("./"), template)
    return out


def write_version_files(tree: Path, files: dict[str, str | None], version: str) -> list[str]:
    """Write each version module `files` names into an exported revision where the revision has none
    (a committed one is the revision's own and stays) and its folder is a real folder of the tree (never
    through a link a revision commits); the ones written, for the evidence's notes."""
    written: list[str] = []
    release = tuple(int(p) for p in re.findall(r"\d+", version)[:3]) or (0,)
    usual = (f"# Written by signoff for the run, as installing the project would (not committed).\n"
             f"__version__ = version = {version!r}\n__version_tuple__ = version_tuple = {release!r}\n"
             "__commit_id__ = commit_id = None\n")
    for rel, template in files.items():
        try:
            body = template.format(version) if template is not None else usual
        except (IndexError, KeyError, ValueError):  # a template with braces of its own: the usual module
            body = usual
        folder = tree
        for part in PurePosixPath(rel).parent.parts:
            folder = folder / part
            if folder.is_symlink() or not folder.is_dir():
                break
        else:
            try:
                fd = os.open(folder / PurePosixPath(rel).name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o644)
            except OSError:  # the revision commits it (or a link by that name): the revision's own
                continue
            with os.fdopen(fd, "w") as out:
                out.write(body)
            written.append(rel)
    return written


def _pyproject(repo: Path, base: str, folder: str = "") -> dict[str, Any]:
    """The base revision's pyproject.toml (of `folder`) as data; {} when it has none or it cannot be read."""
    text = git.read_file_at(repo, base, _in(folder, "pyproject.toml"))
    try:
        return tomllib.loads(text.decode()) if text is not None else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def declared_version(repo: Path, base: str) -> str:
    """The version the base revision declares as plain data (pyproject.toml's `[project]` or
    `[tool.poetry]`, setup.cfg's `[metadata]`, a literal in setup.py), else the one its tags give."""
    document = _pyproject(repo, base)
    poetry = (document.get("tool") or {}).get("poetry")
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string((git.read_file_at(repo, base, "setup.cfg") or b"").decode(errors="replace"))
    except configparser.Error:
        pass
    setup_py = git.read_file_at(repo, base, "setup.py")
    for value in ((document.get("project") or {}).get("version"), poetry.get("version") if isinstance(
            poetry, dict) else None, cfg.get("metadata", "version", fallback=None),
            _setup_py(setup_py.decode(errors="replace")).get("version") if setup_py is not None else None):
        if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)*\w*", value.strip()):
            return value.strip()
    return release_of(repo, base)


def write_metadata(tree: Path, name: str, version: str, entry_points: dict[str, list[str]] | None = None
                   ) -> str | None:
    """The installed-package metadata `pip install -e .` leaves (name, version and the entry points given)
    at the root of an exported revision, where `importlib.metadata.version("pre_commit")` finds it: code
    that reads its own version from there at import (pre-commit's constants), or finds its own parts by
    entry point (mkdocs' themes and plugins), runs as its maintainers' does. Never `pytest11`: the
    checkout's pytest plugins never load by themselves (the guard loads them after its start).
    None when the revision commits a folder by that name."""
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", name) or not re.fullmatch(r"[\w.+!-]+", version):
        return None
    folder = tree / f"{re.sub(r'[-_.]+', '_', name)}-{version}.dist-info"
    try:
        folder.mkdir()
    except OSError:
        return None
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    groups = {g: lines for g, lines in (entry_points or {}).items() if g != "pytest11" and lines}
    if groups:
        (folder / "entry_points.txt").write_text("".join(
            f"[{group}]\n" + "".join(f"{line}\n" for line in lines) + "\n" for group, lines in sorted(groups.items())))
    return folder.name


SCRIPTS_FOLDER = ".signoff-scripts"  # in an exported revision; last on the runs' PATH
_ENTRY = re.compile(r"^\s*([\w.-]+)\s*=\s*([\w.]+):([\w.]+)\s*(?:\[[^\]]*\])?\s*$")


def _declared_entries(repo: Path, base: str, group: str) -> list[str]:
    """The entry points of `group` the base revision declares, as `name = target` lines: pyproject.toml's
    (`[project.scripts]` or `[project.entry-points.GROUP]`, poetry's and flit's tables), setup.cfg's
    `[options.entry_points]`, setup.py's literal entries."""
    lines: list[str] = []
    document = _pyproject(repo, base)
    tool = document.get("tool") or {}
    project, poetry, flit = document.get("project") or {}, tool.get("poetry") or {}, tool.get("flit") or {}
    if group == "console_scripts":
        tables = [project.get("scripts"), poetry.get("scripts"), flit.get("scripts")]
    else:
        tables = [(project.get("entry-points") or {}).get(group), (poetry.get("plugins") or {}).get(group),
                  (flit.get("entrypoints") or {}).get(group)]
    for table in tables:
        for name, target in (table or {}).items() if isinstance(table, dict) else ():
            target = target.get("callable") if isinstance(target, dict) else target
            lines.append(f"{name} = {target}")
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string((git.read_file_at(repo, base, "setup.cfg") or b"").decode(errors="replace"))
    except configparser.Error:
        pass
    lines += cfg.get("options.entry_points", group, fallback="").splitlines()
    setup_py = git.read_file_at(repo, base, "setup.py")
    if setup_py is not None:
        lines += (_setup_py(setup_py.decode(errors="replace")).get("entry_points") or {}).get(group) or []
    return lines


def entry_points(repo: Path, base: str) -> dict[str, list[str]]:
    """Every entry point group the base revision declares but `pytest11` (see write_metadata), as
    `name = target` lines read as data (_declared_entries)."""
    document = _pyproject(repo, base)
    tool = document.get("tool") or {}
    tables = [(document.get("project") or {}).get("entry-points"), (tool.get("poetry") or {}).get("plugins"),
              (tool.get("flit") or {}).get("entrypoints")]
    groups = {"console_scripts"} | {str(g) for table in tables if isinstance(table, dict) for g in table}
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string((git.read_file_at(repo, base, "setup.cfg") or b"").decode(errors="replace"))
        groups.update(cfg.options("options.entry_points") if cfg.has_section("options.entry_points") else [])
    except configparser.Error:
        pass
    setup_py = git.read_file_at(repo, base, "setup.py")
    if setup_py is not None:
        groups.update(_setup_py(setup_py.decode(errors="replace")).get("entry_points") or {})
    out = {group: [line for line in (str(x).strip() for x in _declared_entries(repo, base, group))
                   if _ENTRY_LINE.match(line)] for group in sorted(groups - {"pytest11"})}
    return {group: lines for group, lines in out.items() if lines}


_ENTRY_LINE = re.compile(r"^[\w.-]+(?: [\w.-]+)*\s*=\s*[\w.]+(?::[\w.]+)?\s*(?:\[[\w,\s.-]*\])?$")


def console_scripts(repo: Path, base: str) -> dict[str, str]:
    """The commands installing the project puts on the PATH (`coverage`, which coverage.py's tests run in
    a subprocess): name -> "module:function", from the base's declarations (_declared_entries)."""
    out: dict[str, str] = {}
    for line in _declared_entries(repo, base, "console_scripts"):
        m = _ENTRY.match(str(line))
        if m and not m.group(1).startswith("."):
            out.setdefault(m.group(1), f"{m.group(2)}:{m.group(3)}")
    return out


_PLUGIN_ENTRY = re.compile(r"^\s*([\w.-]+)\s*=\s*([A-Za-z_][\w.]*)\s*$")


def pytest_plugins(repo: Path, base: str) -> dict[str, str]:
    """The project's own pytest plugins (pytest11 entry points, as installing it registers them:
    pytest-mock's `mocker` fixture, anyio's `-p anyio`): name -> module, from the base's declarations.
    Only plain module targets; the guard loads them from the checkout after its own start."""
    out: dict[str, str] = {}
    for line in _declared_entries(repo, base, "pytest11"):
        m = _PLUGIN_ENTRY.match(str(line))
        if m:
            out.setdefault(m.group(1), m.group(2))
    return out


def write_scripts(tree: Path, scripts: dict[str, str]) -> list[str]:
    """Each command as installing the project writes it, into SCRIPTS_FOLDER of an exported revision
    (the Python first on the PATH runs it; it imports the checkout as the tests do); the names written.
    Nothing when the revision commits that folder."""
    folder = tree / SCRIPTS_FOLDER
    try:
        folder.mkdir()
    except OSError:
        return []
    for name, target in scripts.items():
        module, function = target.split(":", 1)
        top, _, rest = function.partition(".")
        call = f"{top}{'.' + rest if rest else ''}"
        (folder / name).write_text(f"#!/usr/bin/env python3\n# Written by signoff for the run, as installing the "
                                   f"project would (its console script {name}).\nimport sys\n"
                                   f"from {module} import {top}\nsys.exit({call}())\n")
        (folder / name).chmod(0o755)
    return sorted(scripts)


def release_of(repo: Path, rev: str) -> str:
    """The version the nearest tag before `rev` names (`v4.12.3` -> `4.12.3`), as a version file
    generated from the repository's history would say; `0.0.0` without one."""
    tag = git.run(repo, "describe", "--tags", "--abbrev=0", rev, check=False).stdout.decode(errors="replace").strip()
    m = re.fullmatch(r"v?(\d+(?:\.\d+)*)", tag)
    return m.group(1) if m else "0.0.0"
