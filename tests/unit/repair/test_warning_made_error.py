"""A collection error that is a warning the project's own filters made an error (typer of December 2025 under
`filterwarnings = error`, with a click newer than the revision that deprecated `get_binary_stream`; blind18b) is
named as such, with the installed distribution the warning is about, and its fix says what to pin."""

from signoff.repair.testenv import warning_made_error
from signoff.repair.verdict import reason

INSTALLED = [{"name": "click", "version": "8.3.2"}, {"name": "Deprecated", "version": "1.2.18"},
             {"name": "pytest", "version": "9.0.1"}]
TYPER = ("tests/test_others.py: DeprecationWarning: 'click.utils.get_binary_stream' is deprecated and will be removed "
         "in Click 9.0.")


def test_a_warning_of_an_installed_dependency_names_it_and_what_to_pin() -> None:
    said = warning_made_error(TYPER, INSTALLED)
    assert said == "a warning the project's warning filters make an error: DeprecationWarning of click 8.3.2, " \
                   "installed here"
    fix = reason("collection_error", f"base: {TYPER} ({said})")["fix"]
    assert "`click<8.3.2`" in fix and "--requirements" in fix and "--lock" in fix
    # Named by a capitalised name alone ("removed in Click 9.0"), never by a plain word ("deprecated").
    assert "of click 8.3.2" in warning_made_error("t.py: FutureWarning: removed in Click 9.0", INSTALLED)
    assert warning_made_error("t.py: DeprecationWarning: this is deprecated", INSTALLED).endswith(
        ": DeprecationWarning")


def test_a_warning_of_no_installed_distribution_points_at_the_python_and_the_pins() -> None:
    detail = "t.py: DeprecationWarning: datetime.datetime.utcnow() is deprecated"
    said = warning_made_error(detail, INSTALLED)
    assert said == "a warning the project's warning filters make an error: DeprecationWarning"
    assert "--python" in reason("collection_error", f"{detail} ({said})")["fix"]


def test_other_errors_and_pytests_own_warnings_are_left_to_their_fixes() -> None:
    assert warning_made_error("t.py: ModuleNotFoundError: No module named 'yaml'", INSTALLED) == ""
    assert warning_made_error("conftest.py: PytestRemovedIn9Warning: the path argument is deprecated", INSTALLED) == ""
