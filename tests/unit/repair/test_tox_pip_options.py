"""tox's deps lines are `pip install` arguments: options that say how to install are no requirement."""

from __future__ import annotations

from signoff.repair import testenv


def test_upgrade_options_of_tox_deps_are_dropped_and_a_clustered_include_kept() -> None:
    """sqlfluff's tox.ini (blind17): `-Urrequirements.txt` is `pip install -U -r requirements.txt`; written into a
    requirements file as it stands, pip stopped at `Invalid requirement: -U` and nothing was installed."""
    tox = ("[testenv]\ndeps =\n    -Urrequirements.txt\n    -Ur requirements_dev.txt\n    -U -r other.txt\n"
           "    --upgrade requests\n    -U\n    --force-reinstall -e .\n    -Ue plugins/example\n    Unidecode\n")
    assert testenv.tox_deps(tox, (3, 11)) == ["-rrequirements.txt", "-r requirements_dev.txt", "-r other.txt",
                                              "requests", "-e .", "-e plugins/example", "Unidecode"]
