"""HTTP for the hosted providers: timeouts, bounded retries with backoff on 429/5xx, cancellation,
and an honest account of whether a failed call may have been billed.

- Refused before running (4xx, 429, 5xx) or never connected: not billed; 429/5xx are retried up to
  `max_retries` times, waiting what `retry-after` says (or exponential backoff with jitter), never
  longer than `max_retry_wait`.
- Sent but no complete answer (read timeout, dropped connection, truncated body, cancelled while in
  flight): the outcome is unknown and the caller books the worst case. Such a call is not retried,
  because retrying could pay twice.
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

from signoff.agents.providers.base import CallFailed, ProviderSettings
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.tls import tls_context

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
# Error codes that mean money ran out, not "slow down": retrying cannot help.
QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "enforced_spend_limit_reached"})


@dataclass(frozen=True)
class HttpAnswer:
    body: dict[str, Any]
    attempts: int
    raw_digest: str


def retry_after(headers: httpx.Headers, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` as seconds or an HTTP date."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


def error_summary(body: Any) -> tuple[str, str, str]:
    """(type, code, message) from an OpenAI- or Anthropic-style error body, whatever is present."""
    if not isinstance(body, dict):
        return "", "", ""
    err = body.get("error")
    if isinstance(err, str):
        return "", "", err[:500]
    if not isinstance(err, dict):
        return "", "", str(body.get("message", ""))[:500]
    details: dict[str, Any] = err["details"] if isinstance(err.get("details"), dict) else {}
    code = err.get("code") or details.get("error_code") or ""
    return str(err.get("type", "")), str(code), str(err.get("message", ""))[:500]


def post_json(
    ps: ProviderSettings,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
    cancel: threading.Event | None = None,
    transport: httpx.BaseTransport | None = None,
) -> HttpAnswer:
    name = ps.provider
    attempts = 0
    timeout = httpx.Timeout(ps.timeout, connect=min(ps.timeout, 10.0))
    with httpx.Client(timeout=timeout, transport=transport, follow_redirects=False, verify=tls_context()) as http:
        while True:
            if cancel is not None and cancel.is_set():
                raise CallFailed(f"{name} call cancelled before it was sent", "nothing was spent",
                                 billed="no", outcome="cancelled", attempts=attempts)
            attempts += 1
            try:
                response = _send(http, url, headers, body, cancel, ps.timeout)
            except httpx.ConnectError as exc:
                # Never reached the server: safe to retry, certainly not billed.
                if attempts <= ps.max_retries and not _wait(_backoff(ps, attempts), cancel):
                    continue
                raise CallFailed(f"cannot connect to {name} at {url}: {exc}",
                                 "check base_url and that the server is running", billed="no",
                                 attempts=attempts) from exc
            except httpx.ConnectTimeout as exc:
                if attempts <= ps.max_retries and not _wait(_backoff(ps, attempts), cancel):
                    continue
                raise CallFailed(f"connecting to {name} at {url} timed out", "check the server and network",
                                 billed="no", attempts=attempts) from exc
            except _Cancelled as exc:
                raise CallFailed(f"{name} call cancelled while in flight; it may still be billed",
                                 "its worst case stays booked", billed="unknown", outcome="cancelled",
                                 attempts=attempts) from exc
            except _TooLarge as exc:
                raise CallFailed(f"{name} sent more than {MAX_RESPONSE_BYTES} bytes; the answer was dropped and "
                                 "the call may still be billed", "its worst case stays booked",
                                 billed="unknown", outcome="unknown", attempts=attempts) from exc
            except (httpx.TimeoutException, _Overdue) as exc:
                raise CallFailed(f"{name} did not answer within {ps.timeout:g}s ({type(exc).__name__}); "
                                 "the call may still be billed",
                                 "its worst case stays booked; raise timeout for long outputs",
                                 billed="unknown", outcome="unknown", attempts=attempts) from exc
            except httpx.TransportError as exc:
                raise CallFailed(f"the connection to {name} broke mid-call ({type(exc).__name__}: {exc}); "
                                 "the call may still be billed", "its worst case stays booked",
                                 billed="unknown", outcome="unknown", attempts=attempts) from exc
            status = response.status_code
            raw = response.content
            if 200 <= status < 300:
                try:
                    parsed = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    raise CallFailed(f"{name} answered {status} with a body that is not JSON ({len(raw)} bytes); "
                                     "the call may still be billed", "its worst case stays booked",
                                     billed="unknown", outcome="unknown", attempts=attempts) from exc
                if not isinstance(parsed, dict):
                    raise CallFailed(f"{name} answered {status} with JSON that is not an object",
                                     "its worst case stays booked", billed="unknown", outcome="unknown",
                                     attempts=attempts)
                return HttpAnswer(parsed, attempts, sha256_bytes(raw))
            try:
                err_body = json.loads(raw) if raw else {}
            except (json.JSONDecodeError, UnicodeDecodeError):
                err_body = {"error": raw[:300].decode("utf-8", "replace")}
            etype, code, message = error_summary(err_body)
            described = f"{name} answered {status}" + (f" {etype}" if etype else "") + \
                        (f" ({code})" if code else "") + (f": {message}" if message else "")
            wait = retry_after(response.headers)
            if status in RETRY_STATUSES and code not in QUOTA_CODES and attempts <= ps.max_retries:
                delay = wait if wait is not None else _backoff(ps, attempts)
                if delay > ps.max_retry_wait:
                    raise CallFailed(f"{described}; it asks to wait {delay:.0f}s, more than max_retry_wait "
                                     f"({ps.max_retry_wait:g}s)", "try again later", billed="no",
                                     outcome="error", attempts=attempts)
                if _wait(delay, cancel):
                    raise CallFailed(f"{name} call cancelled while waiting to retry", "nothing more was spent",
                                     billed="no", outcome="cancelled", attempts=attempts)
                continue
            raise CallFailed(described + (f" after {attempts} attempts" if attempts > 1 else ""),
                             _fix_for(status, code, ps), billed="no", outcome="error", attempts=attempts)


class _Cancelled(Exception):
    pass


class _Overdue(Exception):
    pass


class _TooLarge(Exception):
    pass


MAX_RESPONSE_BYTES = 8_000_000


@dataclass(frozen=True)
class _Raw:
    status_code: int
    headers: httpx.Headers
    content: bytes


def _read(http: httpx.Client, url: str, headers: dict[str, str], body: dict[str, Any]) -> _Raw:
    with http.stream("POST", url, headers=headers, json=body) as response:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise _TooLarge()
            chunks.append(chunk)
        return _Raw(response.status_code, response.headers, b"".join(chunks))


def _send(http: httpx.Client, url: str, headers: dict[str, str], body: dict[str, Any],
          cancel: threading.Event | None, deadline: float) -> _Raw:
    # The request runs beside us so that the whole attempt has a wall-clock bound (httpx's timeout is
    # per read, which a slowly dripping server could stretch forever) and so a caller can walk away
    # when cancelled; an abandoned worker ends with its own timeout and its answer is discarded.
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="signoff-agent-http")
    future: Future[_Raw] = pool.submit(_read, http, url, headers, body)
    pool.shutdown(wait=False)
    ends = time.monotonic() + deadline
    while True:
        if cancel is not None and cancel.is_set():
            raise _Cancelled()
        left = ends - time.monotonic()
        if left <= 0:
            raise _Overdue()
        try:
            return future.result(timeout=min(0.05, left))
        except TimeoutError:
            continue


def _backoff(ps: ProviderSettings, attempt: int) -> float:
    delay: float = min(ps.max_retry_wait, ps.backoff_base * (2 ** (attempt - 1)))
    return delay * (0.5 + random.random() / 2)


def _wait(seconds: float, cancel: threading.Event | None) -> bool:
    """Sleep; True when cancelled meanwhile."""
    if cancel is None:
        time.sleep(seconds)
        return False
    return cancel.wait(seconds)


def _fix_for(status: int, code: str, ps: ProviderSettings) -> str:
    if code in QUOTA_CODES:
        return "the provider account's spend limit is reached; raise it with the provider"
    if status in (401, 403):
        return f"check the key in ${ps.api_key_env or '(none configured)'} and its permissions"
    if status == 404:
        return f"check base_url ({ps.base_url}) and the model id ({ps.model})"
    if status in (400, 413, 422):
        return "the server refused the request; check model, max_output_tokens and structured for this server"
    return "try again later"
