"""Keys made by many processes at once (a crew's agents signing their first call together)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from signoff.trust import KeyStore


def test_a_key_created_by_many_at_once_is_one_whole_key(tmp_path: Path) -> None:
    """Sixteen threads in each of three processes create the same key at the same moment, in fresh
    stores, ten times over: every one gets the same key, and none reads a key file still being
    written (that failed with "Unable to load PEM file" when a crew's agents signed their first
    call together)."""
    code = (
        "import sys, threading\n"
        "from pathlib import Path\n"
        "from signoff.trust import KeyStore\n"
        "root = Path(sys.argv[1])\n"
        "for round_ in range(10):\n"
        "    barrier, ids, errors = threading.Barrier(16), [], []\n"
        "    def one():\n"
        "        barrier.wait()\n"
        "        try:\n"
        "            ids.append(KeyStore(root / str(round_)).ensure('agent-calls').keyid)\n"
        "        except Exception as exc:\n"
        "            errors.append(repr(exc))\n"
        "    threads = [threading.Thread(target=one) for _ in range(16)]\n"
        "    [t.start() for t in threads]\n"
        "    [t.join() for t in threads]\n"
        "    print(round_, errors or sorted(set(ids)), flush=True)\n"
    )
    runs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
            for _ in range(3)]
    outputs = [run.communicate(timeout=120)[0] for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs
    for round_ in range(10):
        key = KeyStore(tmp_path / str(round_)).ensure("agent-calls")
        for output in outputs:
            assert f"{round_} {[key.keyid]}" in output.splitlines(), output
        assert sorted(p.name for p in (tmp_path / str(round_)).iterdir()) == ["agent-calls.key", "agent-calls.pub"]
