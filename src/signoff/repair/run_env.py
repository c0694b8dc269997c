"""Environment variables a person sets for the test run (`--env NAME=VALUE`), and the ones refused.

Some projects choose what their tests do by a variable: django-model-utils' settings use SQLite
only when `SQLITE` is set, else a PostgreSQL server the sandbox never has. The variables change what
the tests do, so they are part of what is judged: recorded in the settings and the execution
identity (the fingerprint), shown in a contract a person approves, and given to every execution of
the verification (base and candidate alike, and the extension build, `repair/extensions.py`).

They may never switch a defence off. Refused are the variables that change what the interpreter, the
dynamic linker, pytest, a start-up hook or a shell loads, and the ones the run sets itself (its paths,
its home, the guard's keys): a project has no need of them that a person could not meet another way
(`--pythonpath`, the harness's pytest.ini, `--requirements`).
"""

from __future__ import annotations

import re

from signoff.kernel.errors import UsageError

MAX_VARIABLES = 64
MAX_VALUE = 4096
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Prefixes whose every variable is read by something that loads code or judges the run, and why.
REFUSED_PREFIXES: dict[str, str] = {
    "PYTHON": "read by the Python interpreter at start-up (import path, start-up file, hooks, warnings, hash seed)",
    "PYTEST_": "read by pytest (added options, plugins to load, plugin autoload)",
    "PY_": "read by pytest and its py library (import mismatch checks, colours)",
    "LD_": "read by the dynamic linker (libraries preloaded or searched first)",
    "DYLD_": "read by the dynamic linker (libraries preloaded or searched first)",
    "SIGNOFF_": "signoff's own: the guard's keys, the checkout and harness places",
    "COV_CORE_": "read by pytest-cov's start-up hook, which starts coverage in every Python process",
    "BASH_FUNC_": "a shell function every bash imports",
    "NODE_": "read by node (options such as --require, module paths)",
    "OPENSSL_": "read by OpenSSL when Python's ssl module loads it (a configuration that loads engines and providers)",
}
# Single names of the same kinds.
REFUSED_NAMES: dict[str, str] = {
    "GLIBC_TUNABLES": "read by the C library when any program starts",
    "GCONV_PATH": "where the C library loads character-set modules from",
    "LOCPATH": "where the C library loads locale data from",
    "COVERAGE_PROCESS_START": "read by coverage's start-up hook, which starts coverage in every Python process",
    "SETUPTOOLS_USE_DISTUTILS": "read by setuptools' start-up hook, which chooses the distutils every import gets",
    "BASH_ENV": "a file every non-interactive bash runs first",
    "ENV": "a file the shell runs at start",
    "SHELLOPTS": "options every bash starts with",
    "BASHOPTS": "options every bash starts with",
    "PS4": "evaluated by a tracing shell",
    "IFS": "how the shell splits words",
    "CDPATH": "where the shell's cd looks",
    # The run sets these itself (repair/runners.py: Runner.env); another value would move its places.
    "PATH": "set by the run: the environment's interpreter first, the project's commands last",
    "HOME": "set by the run: its writable work folder",
    "TMPDIR": "set by the run: the sandbox's private /tmp",
    "LANG": "set by the run (C.UTF-8); set LC_ALL for another locale",
    "NO_COLOR": "set by the run: reports are read without colour",
    "HYPOTHESIS_STORAGE_DIRECTORY": "set by the run: inside its writable work folder",
}

FIX = ("leave it out: signoff never lets a variable change what Python, pytest, the linker or a shell loads. "
       "Put folders on the import path with --pythonpath, pytest options in the harness's pytest.ini, and "
       "packages in --requirements")


def refused(name: str) -> str | None:
    """Why `name` may not be set for the run, or None when it may. Compared without case: a variable a
    loader reads under another spelling elsewhere is refused too."""
    upper = name.upper()
    if upper in REFUSED_NAMES:
        return REFUSED_NAMES[upper]
    return next((why for prefix, why in REFUSED_PREFIXES.items() if upper.startswith(prefix)), None)


def check(env: dict[str, str]) -> dict[str, str]:
    """`env` as the run gets it, or UsageError naming the first variable that may not be set."""
    if len(env) > MAX_VARIABLES:
        raise UsageError(f"--env sets {len(env)} variables, more than {MAX_VARIABLES}",
                         "set only the variables the tests read")
    for name, value in env.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise UsageError(f"--env {name!r}: not a variable name", "use letters, digits and _, not starting with "
                                                                     "a digit: --env NAME=VALUE")
        if not isinstance(value, str) or "\0" in value or len(value) > MAX_VALUE:
            raise UsageError(f"--env {name}: the value must be text without NUL bytes, at most {MAX_VALUE} "
                             "characters", "pass --env NAME=VALUE")
        why = refused(name)
        if why is not None:
            raise UsageError(f"--env {name} is refused: {why}, which could switch off what keeps the candidate's "
                             "code from the verdict", FIX)
    return dict(sorted(env.items()))


def parse(assignments: list[str]) -> dict[str, str]:
    """`["SQLITE=1", "TZ=UTC"]` -> {"SQLITE": "1", "TZ": "UTC"}, checked; a name given twice is refused."""
    env: dict[str, str] = {}
    for text in assignments:
        name, sep, value = text.partition("=")
        if not sep:
            raise UsageError(f"--env {text!r} has no '='", "pass --env NAME=VALUE (an empty value: NAME=)")
        if name in env:
            raise UsageError(f"--env {name} is given twice", "give each variable once")
        env[name] = value
    return check(env)


def shown(env: dict[str, str]) -> str:
    """One line for a person: `SQLITE=1, TZ=UTC`."""
    return ", ".join(f"{k}={v}" for k, v in sorted(env.items()))
