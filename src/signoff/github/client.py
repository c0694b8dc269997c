"""A small GitHub REST client on httpx: authentication, pagination, rate limits, ETags, errors.

Behaviour follows GitHub's REST documentation ("Rate limits for the REST API", "Using pagination in
the REST API", "Best practices for using the REST API"):
- Pages are followed through the `Link` header's `rel="next"`, only on the API's own origin (the
  token is never sent to a host a response names).
- A primary limit (403/429 with `x-ratelimit-remaining: 0`) waits until `x-ratelimit-reset`; a
  secondary limit or abuse detection waits `retry-after`, or a minute doubling per repeat. A wait
  longer than `max_wait` is an error that says when to come back, never a silent hang.
- GETs send `If-None-Match` with the ETag of the last answer; a 304 (which does not count against
  the limit) returns the cached body.
- Errors become the kernel's: 401/403 RefusedError, 404 NotFoundError, 409 ConflictError, 422
  UsageError with GitHub's own messages, 5xx and cut-short answers UnavailableError.
"""

from __future__ import annotations

import json
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from signoff.github.auth import Auth
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, SignoffError, UnavailableError, UsageError
from signoff.kernel.tls import tls_context

API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="([^"]+)"')
_ETAG_ENTRIES = 256
_SERVER_RETRIES = 3


class GitHubClient:
    def __init__(self, auth: Auth, api_url: str = API_URL, *, max_wait: float = 60.0, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None, sleep: Callable[[float], None] = time.sleep,
                 now: Callable[[], float] = time.time) -> None:
        self.auth = auth
        self.api_url = api_url.rstrip("/")
        self.max_wait = max_wait
        self.http = httpx.Client(timeout=timeout, transport=transport, follow_redirects=False, verify=tls_context(),
                                 headers={"Accept": "application/vnd.github+json",
                                          "X-GitHub-Api-Version": API_VERSION, "User-Agent": "signoff"})
        self._sleep = sleep
        self._now = now
        self._etags: OrderedDict[str, tuple[str, Any]] = OrderedDict()

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests ---------------------------------------------------------------------------------

    def request(self, method: str, path: str, *, json_body: Any = None,
                params: dict[str, Any] | None = None) -> Any:
        """The parsed JSON of a successful answer (None for 204)."""
        return self._send(method, self._url(path), json_body, params)[1]

    def paginate(self, path: str, params: dict[str, Any] | None = None, key: str | None = None) -> Iterator[Any]:
        """Every item of a listing, page by page. `key` names the list in wrapped answers
        (`{"total_count": n, "check_runs": [...]}`); a listing that ends short of its total fails."""
        url: str | None = self._url(path)
        query: dict[str, Any] | None = {"per_page": 100, **(params or {})}
        seen = 0
        total: int | None = None
        while url is not None:
            response, body = self._send("GET", url, None, query)
            query = None  # the next link carries the query
            if key is not None:
                if not isinstance(body, dict) or not isinstance(body.get(key), list):
                    raise UnavailableError(f"GitHub's answer to {path} has no {key!r} list", "try again later")
                total = body.get("total_count") if isinstance(body.get("total_count"), int) else total
                items = body[key]
            else:
                if not isinstance(body, list):
                    raise UnavailableError(f"GitHub's answer to {path} is not a list", "try again later")
                items = body
            yield from items
            seen += len(items)
            url = self._next(response)
        if total is not None and seen < total:
            raise UnavailableError(f"GitHub listed {seen} of the {total} items of {path}: the listing was cut short",
                                   "try again; a partial listing is never taken as complete")

    def _url(self, path: str) -> str:
        return path if path.startswith(self.api_url + "/") else f"{self.api_url}/{path.lstrip('/')}"

    def _next(self, response: httpx.Response) -> str | None:
        for target, rel in _LINK.findall(response.headers.get("link", "")):
            if rel == "next":
                url = urljoin(self.api_url + "/", target)
                if _origin(url) != _origin(self.api_url):
                    raise UnavailableError(f"GitHub's next page points at another host ({_origin(url)})",
                                           "check [github] api_url; the token is not sent elsewhere")
                return str(url)
        return None

    def _send(self, method: str, url: str, json_body: Any, params: dict[str, Any] | None) -> tuple[httpx.Response, Any]:
        cache_key = url + "?" + json.dumps(params, sort_keys=True) if method == "GET" else ""
        limited = 0
        failed = 0
        while True:
            headers = {"Authorization": self.auth.header(self.http, self.api_url)}
            cached = self._etags.get(cache_key) if cache_key else None
            if cached is not None:
                headers["If-None-Match"] = cached[0]
            try:
                r = self.http.request(method, url, json=json_body, params=params, headers=headers)
            except httpx.HTTPError as exc:
                raise UnavailableError(f"GitHub did not answer {method} {_path(url)}: {exc}",
                                       "check the network and [github] api_url") from exc
            if r.status_code == 304 and cached is not None:
                self._etags.move_to_end(cache_key)
                return r, cached[1]
            if r.status_code in (403, 429):
                wait = self._rate_wait(r, limited)
                if wait is not None:
                    if wait > self.max_wait:
                        raise UnavailableError(
                            f"GitHub's rate limit asks {method} {_path(url)} to wait {wait:.0f} s, "
                            f"more than the {self.max_wait:.0f} s allowed",
                            f"try again after {time.strftime('%H:%M:%S UTC', time.gmtime(self._now() + wait))}, "
                            "or raise [github] max_wait")
                    self._sleep(wait)
                    limited += 1
                    continue
            if r.status_code >= 500 and failed < _SERVER_RETRIES:
                self._sleep(min(2.0 ** failed, self.max_wait))
                failed += 1
                continue
            body = _body(r, method, url)
            if r.status_code >= 400:
                raise _error(r, body, method, url)
            etag = r.headers.get("etag")
            if cache_key and etag:
                self._etags[cache_key] = (etag, body)
                self._etags.move_to_end(cache_key)
                while len(self._etags) > _ETAG_ENTRIES:
                    self._etags.popitem(last=False)
            return r, body

    def _rate_wait(self, r: httpx.Response, repeats: int) -> float | None:
        """Seconds to wait before retrying a rate-limited answer, or None when it is a real refusal."""
        after = r.headers.get("retry-after")
        if after is not None:
            try:
                return max(0.0, float(after))
            except ValueError:
                return 60.0
        if r.headers.get("x-ratelimit-remaining") == "0":
            try:
                return max(0.0, float(r.headers.get("x-ratelimit-reset", "0")) - self._now()) + 1
            except ValueError:
                return 60.0
        message = _message(_body(r, "", "", strict=False)).lower()
        if "secondary rate limit" in message or "abuse" in message:
            return 60.0 * float(2**repeats)
        return None


# GitHub answers a commit it does not have with 422 and this message (its REST docs), not with 404;
# its answer carries no code for it, so the client reads it here, once, and raises a NotFoundError.
NO_COMMIT = "no commit found"


class UnknownCommit(NotFoundError):
    """GitHub does not have the commit asked for."""


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _path(url: str) -> str:
    return urlsplit(url).path


def _body(r: httpx.Response, method: str, url: str, strict: bool = True) -> Any:
    if r.status_code == 204 or not r.content:
        return None
    try:
        return r.json()
    except ValueError as exc:
        if not strict or r.status_code >= 400:
            return {"message": r.text[:200]}
        raise UnavailableError(f"GitHub's answer to {method} {_path(url)} was cut short or is not JSON",
                               "try again; nothing was taken from it") from exc


def _message(body: Any) -> str:
    return str(body.get("message", "")) if isinstance(body, dict) else ""


def _error(r: httpx.Response, body: Any, method: str, url: str) -> SignoffError:
    what = f"GitHub answered {r.status_code} to {method} {_path(url)}: {_message(body) or r.reason_phrase}"
    details = [str(e.get("message") or e.get("code")) for e in (body.get("errors") or [])
               if isinstance(e, dict)] if isinstance(body, dict) and isinstance(body.get("errors"), list) else []
    if details:
        what += " (" + "; ".join(details) + ")"
    if r.status_code == 401:
        return RefusedError(what, "check [github] token, or the App's id, key and installation")
    if r.status_code == 403:
        return RefusedError(what, "the token or App lacks a permission this needs (see docs/github.md)")
    if r.status_code == 404:
        return NotFoundError(what, "check the repository name and that the token or App can see it")
    if r.status_code == 409:
        return ConflictError(what, "the repository changed; read it again")
    if r.status_code == 422 and _message(body).lower().startswith(NO_COMMIT):
        return UnknownCommit(what, "check the commit id; push the commit first if GitHub should have it")
    if r.status_code == 422:
        return UsageError(what, "GitHub refused the request as invalid; see its message")
    return UnavailableError(what, "try again later")
