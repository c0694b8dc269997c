"""The base's setup.py is parsed once per text for the several things a verification reads from it;
each caller still gets a copy of its own to change."""

from __future__ import annotations

import ast
import uuid

import pytest

from signoff.repair import testenv

SETUP = 'from setuptools import setup\nsetup(name="NAME", install_requires=["six"], version="1.2")\n'


def test_one_parse_per_text_and_a_copy_for_each_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"pkg-{uuid.uuid4().hex}"  # a text no earlier test parsed (the parse is kept per process)
    setup = SETUP.replace("NAME", name)
    parses: list[str] = []
    real = ast.parse
    monkeypatch.setattr(testenv.ast, "parse", lambda source, *a, **k: parses.append(source) or real(source, *a, **k))
    first = testenv._setup_py(setup)
    assert first == {"name": name, "install_requires": ["six"], "version": "1.2"}
    first["install_requires"].append("changed by a caller")
    first.pop("name")
    assert testenv._setup_py(setup) == {"name": name, "install_requires": ["six"], "version": "1.2"}
    assert parses == [setup]
    assert testenv._setup_py(setup + "\n")["name"] == name and len(parses) == 2  # another text
