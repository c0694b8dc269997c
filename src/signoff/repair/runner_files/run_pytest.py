"""signoff runner: guard, then pytest, then (only after plugins are loaded) the checkout.

`--base-first SPEC` before the paths: the base's execution first, in a forked child of this
interpreter, its result out on stdout before this process runs the candidate's (see the guard)."""
import importlib.util
import os.path
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("signoff_guard", os.path.join(here, "signoff_guard.py"))
if spec is None or spec.loader is None:  # a .py path always has a spec and a loader
    raise SystemExit(f"signoff runner: cannot load the guard from {here}")
guard = importlib.util.module_from_spec(spec)
spec.loader.exec_module(guard)  # reads, scrubs and removes the key, installs the audit hook

import pytest  # noqa: E402 -- resolved from the prepared environment; the checkout is not on the path

sys.modules["signoff_guard"] = guard  # so that its own functions are in the integrity snapshot
if sys.argv[1] == "--base-first":
    guard.run_base_first(sys.argv[2])
    del sys.argv[1:3]
guard.start([p for p in sys.argv[1].split(":") if p])
guard.exit_now(guard.finish(pytest.main(sys.argv[2:], plugins=[guard.Plugin()])))
