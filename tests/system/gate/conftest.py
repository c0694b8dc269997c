"""The gate against a real `signoff serve` (tests/support/serve.py)."""

from tests.support.serve import Served, served

__all__ = ["Served", "served"]
