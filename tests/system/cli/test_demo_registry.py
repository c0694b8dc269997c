"""Which demos a fresh `signoff` process knows: every one by name, and the ones `signoff demo` alone runs."""

from __future__ import annotations

import subprocess
import sys


def test_the_agents_demo_is_there_by_name_in_any_process_and_not_in_every_demo() -> None:
    """`signoff demo agents` once existed only after another command had imported the agents CLI."""
    probe = "import signoff.demo.commands as c; print(sorted(c.DEMOS), c.EVERY)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "['agents', 'desk', 'incident', 'ledger', 'notes', 'repair'] " \
                                  "['ledger', 'repair', 'notes', 'incident', 'desk']"
