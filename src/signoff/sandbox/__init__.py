"""Run untrusted code with no network, no secrets and hard limits, and record what held.

    from signoff.sandbox import run, Mount, Limits
    ex = run(["python", "-m", "pytest", "-q"], [Mount(checkout, "/src")], Limits(memory_mb=384))

bubblewrap is the default backend (Docker/Podman where an engine answers); see docs/sandbox.md.
"""

from signoff.sandbox.model import Execution, Limits, Mount, PythonEnv, SandboxUnavailable
from signoff.sandbox.nodeenv import NodeEnv, NpmError, prepare_node_env
from signoff.sandbox.pyenv import PipError, find_python, prepare_python_env
from signoff.sandbox.run import prepare_run, run

__all__ = ["Execution", "Limits", "Mount", "NodeEnv", "NpmError", "PipError", "PythonEnv", "SandboxUnavailable",
           "find_python", "prepare_node_env", "prepare_python_env", "prepare_run", "run"]
