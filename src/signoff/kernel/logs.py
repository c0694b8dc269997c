"""How a long-running process logs: `[log]` in signoff.toml.

    [log]
    format = "json"       # or "text" (the default): one JSON object per line, for a log shipper
    level = "info"        # debug, info, warning (the default), error
    requests = true       # one line per HTTP request: route template, method, status, seconds

A JSON line holds `time` (RFC 3339 UTC), `level`, `logger`, `message`, the fields a caller passed
in `extra={"fields": {...}}`, and `exception` when there is one. Request lines never carry a raw
path, query or header: a route's template says which endpoint, without the ids or text in it.
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from typing import Any

from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
REQUESTS = "signoff.requests"
QUIET_CLIENTS = ("httpx", "httpx2", "httpcore", "urllib3")


@dataclass(frozen=True)
class LogConfig:
    format: str = "text"
    level: str = "warning"
    requests: bool = False

    @classmethod
    def load(cls, settings: Settings | None) -> LogConfig:
        section = settings.section("log") if settings is not None else {}
        unknown = sorted(set(section) - {"format", "level", "requests"})
        if unknown:
            raise UsageError(f"[log] has no setting {unknown[0]!r}", "use format, level and requests")
        cfg = cls(**section)
        if cfg.format not in ("text", "json"):
            raise UsageError(f"[log] format must be \"text\" or \"json\", not {cfg.format!r}", 'set format = "json"')
        if cfg.level not in LEVELS:
            raise UsageError(f"[log] level must be one of {', '.join(LEVELS)}, not {cfg.level!r}",
                             'set level = "info"')
        if not isinstance(cfg.requests, bool):
            raise UsageError("[log] requests must be true or false", "set requests = true")
        return cfg


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {"time": utc_iso(record.created), "level": record.levelname.lower(),
                                "logger": record.name, "message": record.getMessage()}
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update({k: v for k, v in fields.items() if k not in line})
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure(cfg: LogConfig) -> None:
    """Send every logger's records at `cfg.level` and above to standard error, in `cfg.format`."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if cfg.format == "json" else
                         logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(LEVELS[cfg.level])
    # uvicorn's loggers keep their own handlers unless told otherwise: one format for the whole process
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    logging.getLogger(REQUESTS).setLevel(logging.INFO if cfg.requests else logging.CRITICAL + 1)
    # HTTP clients log each request's full URL at info, query string and all (a token in a query
    # would reach the log): their warnings and errors only.
    for name in QUIET_CLIENTS:
        logging.getLogger(name).setLevel(max(logging.WARNING, LEVELS[cfg.level]))
