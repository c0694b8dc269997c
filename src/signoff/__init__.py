"""signoff: agents draft, people sign off, code verifies."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("signoff")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+src"

__all__ = ["__version__"]
