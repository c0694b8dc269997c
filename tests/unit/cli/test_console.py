"""The CLI's consoles print data as written."""

from __future__ import annotations

from signoff.cli.output import make_console


def test_emoji_codes_in_printed_data_stay_as_written() -> None:
    console = make_console()
    with console.capture() as captured:
        console.print("reason: test_a.py::test_smile:smile: failed :warning:", highlight=False)
        console.print("[bold]x[/] :thumbs_up:", highlight=False)
    assert captured.get() == "reason: test_a.py::test_smile:smile: failed :warning:\nx :thumbs_up:\n"
