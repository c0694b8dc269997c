"""Lock files read as data: every format gives the same pins (name, version, hashes, marker), the
project itself and unpinnable sources are left out, and what pip installed is checked against them."""

from __future__ import annotations

import json

import pytest

from signoff.kernel.errors import UsageError
from signoff.repair import lockfile

H1 = "sha256:" + "a" * 64
H2 = "sha256:" + "b" * 64

REQUIREMENTS = f"""\
# pip-compile --generate-hashes
attrs==23.1.0 \\
    --hash={H1} \\
    --hash={H2}
    # via pricing
colorama==0.4.6 ; sys_platform == "win32" \\
    --hash={H1}
requests>=2
"""

PIPFILE = {"_meta": {}, "default": {"attrs": {"version": "==23.1.0", "hashes": [H1]}},
           "develop": {"pytest": {"version": "==7.4.4", "hashes": [H2], "markers": "python_version >= '3.7'"},
                       "mylib": {"git": "https://example.invalid/mylib.git", "ref": "abc"}}}

UV = f"""\
version = 1
[[package]]
name = "pricing"
version = "1.0"
source = {{ editable = "." }}

[[package]]
name = "attrs"
version = "23.1.0"
source = {{ registry = "https://pypi.org/simple" }}
sdist = {{ url = "https://files.example/attrs.tar.gz", hash = "{H1}" }}
wheels = [{{ url = "https://files.example/attrs.whl", hash = "{H2}" }}]

[[package]]
name = "forked"
version = "0.1"
source = {{ git = "https://example.invalid/forked.git" }}
"""

POETRY = f"""\
[[package]]
name = "attrs"
version = "23.1.0"
category = "main"
files = [{{ file = "attrs-23.1.0-py3-none-any.whl", hash = "{H1}" }}]

[[package]]
name = "six"
version = "1.16.0"
category = "dev"

[metadata.files]
six = [{{ file = "six-1.16.0.tar.gz", hash = "{H2}" }}]
"""

PDM = f"""\
[[package]]
name = "attrs"
version = "23.1.0"
marker = "python_version >= '3.8'"
files = [{{ file = "attrs-23.1.0.tar.gz", hash = "{H1}" }}]
"""

PYLOCK = f"""\
lock-version = "1.0"
[[packages]]
name = "attrs"
version = "23.1.0"
marker = "python_version >= '3.8'"
wheels = [{{ name = "attrs-23.1.0-py3-none-any.whl", hashes = {{ sha256 = "{"a" * 64}" }} }}]

[[packages]]
name = "local"
directory = {{ path = "vendor/local" }}
"""


def test_every_format_gives_the_same_pins() -> None:
    req = lockfile.parse("requirements/dev.txt", REQUIREMENTS.encode())
    assert [(p.name, p.version, p.hashes, p.marker) for p in req.pins] == [
        ("attrs", "23.1.0", (H1, H2), None), ("colorama", "0.4.6", (H1,), 'sys_platform == "win32"')]
    assert req.unpinned == ["requests>=2"] and req.format == "requirements"

    pipfile = lockfile.parse("Pipfile.lock", json.dumps(PIPFILE).encode())
    assert [p.constraint() for p in pipfile.pins] == ["attrs==23.1.0", "pytest==7.4.4 ; python_version >= '3.7'"]
    assert pipfile.unpinned == ["mylib"]

    uv = lockfile.parse("uv.lock", UV.encode(), project="pricing")
    assert [(p.name, p.hashes) for p in uv.pins] == [("attrs", (H1, H2))]
    assert uv.unpinned == ["forked"]  # the project's own editable entry is neither pinned nor listed

    poetry = lockfile.parse("poetry.lock", POETRY.encode())
    assert [(p.name, p.version, p.hashes) for p in poetry.pins] == [("attrs", "23.1.0", (H1,)),
                                                                     ("six", "1.16.0", (H2,))]
    pdm = lockfile.parse("pdm.lock", PDM.encode())
    assert pdm.pins[0].constraint() == "attrs==23.1.0 ; python_version >= '3.8'"
    pylock = lockfile.parse("pylock.toml", PYLOCK.encode())
    assert [(p.name, p.hashes) for p in pylock.pins] == [("attrs", (H1,))] and pylock.unpinned == ["local"]
    # The evidence names the file by its digest and counts, never its whole text.
    assert set(pylock.as_json()) == {"path", "format", "sha256", "pins", "hashed", "unpinned"}


def test_the_project_itself_is_never_pinned() -> None:
    lock = lockfile.parse("requirements.txt", b"Pricing_Lib==1.0\nattrs==23.1.0\n", project="pricing-lib")
    assert [p.name for p in lock.pins] == ["attrs"]


def test_unreadable_or_unknown_locks_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="not a lock file"):
        lockfile.kind("Cargo.lock")
    with pytest.raises(UsageError, match="cannot be read as pipfile"):
        lockfile.parse("Pipfile.lock", b"{not json")
    with pytest.raises(UsageError, match="cannot be read as uv"):
        lockfile.parse("uv.lock", b"[[package]\n")


def test_installed_archives_are_checked_against_the_locked_hashes() -> None:
    pins = lockfile.parse("r.txt", f"attrs==23.1.0 --hash={H1}\nsix==1.16.0 --hash={H2}\n".encode()).pins
    good = [{"name": "attrs", "version": "23.1.0", "hashes": {"sha256": "a" * 64}},
            {"name": "pytest", "version": "8.0", "hashes": {"sha256": "c" * 64}}]  # not in the lock: not judged
    assert lockfile.check_hashes(pins, good) == []
    forged = [{"name": "attrs", "version": "23.1.0", "hashes": {"sha256": "c" * 64}}]
    assert lockfile.check_hashes(pins, forged) == [
        "attrs 23.1.0: the archive's sha256:cccccccccccc... matches none of the lock's hashes"]
    other = [{"name": "Six", "version": "1.17.0", "hashes": {"sha256": "b" * 64}}]
    assert lockfile.check_hashes(pins, other) == ["Six 1.17.0 installed, the lock pins 1.16.0"]
    # pip spells a version as its metadata does; the lock as its tool did.
    assert lockfile.check_hashes(lockfile.parse("r.txt", f"six==1.16 --hash={H2}\n".encode()).pins,
                                 [{"name": "six", "version": "1.16.0", "hashes": {"sha256": "b" * 64}}]) == []
