"""The transport under every resource method: URL and headers, authentication and its refresh,
timeouts, retries, and turning answers into values or typed errors (standard library only).

Retries: 429 was refused before any work, so any method repeats it (honouring Retry-After); a
5xx, a timeout or a lost connection may have done the work, so only GET/PUT/DELETE and POSTs,
which always carry an Idempotency-Key (one per logical request), are repeated.
"""

import email.utils
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Dict, Generic, Iterator, Mapping, Optional, TypedDict, TypeVar

from ._auth import TokenManager, Tokens
from ._errors import ApiConnectionError, ApiTimeoutError, api_error_of
from ._streams import Download, encode_body
from ._version import VERSION

T = TypeVar("T")
IDEMPOTENT = {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"}
RETRY_AFTER_CAP = 60.0


class RequestOptions(TypedDict, total=False):
    """Per-request options, the last argument of every method."""

    timeout: float
    max_retries: int
    idempotency_key: str
    workspace_id: str
    headers: Dict[str, str]


def _retry_after(headers: Mapping[str, str]) -> Optional[float]:
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        seconds = parsed.timestamp() - time.time() if parsed else 0.0
    return min(max(seconds, 0.0), RETRY_AFTER_CAP)


class PageIterator(Generic[T]):
    """A list: iterate it for every item of every page (fetched as the loop goes), or take ``first_page()``."""

    def __init__(self, fetch: Callable[[Optional[str]], Dict[str, Any]]) -> None:
        self._fetch = fetch

    def first_page(self) -> Dict[str, Any]:
        return self._fetch(None)

    def pages(self) -> Iterator[Dict[str, Any]]:
        cursor: Optional[str] = None
        while True:
            page = self._fetch(cursor)
            yield page
            if not page.get("has_more") or not page.get("next_cursor"):
                return
            cursor = page["next_cursor"]

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from page["data"]


class Core:
    def __init__(
        self,
        base_url: str,
        *,
        api_key: Optional[str] = None,
        email: Optional[str] = None,
        password: Optional[str] = None,
        access_token: Optional[str] = None,
        refresh_token: Optional[str] = None,
        on_tokens: Optional[Callable[[Tokens], None]] = None,
        workspace_id: Optional[str] = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        retry_delay: float = 0.5,
        max_retry_delay: float = 8.0,
        default_headers: Optional[Mapping[str, str]] = None,
        auth: Optional[TokenManager] = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.workspace_id = workspace_id
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_delay = retry_delay
        self.max_retry_delay = max_retry_delay
        self.default_headers = dict(default_headers or {})
        self.auth = auth or TokenManager(
            lambda path, body: self.request({"method": "POST", "path": path, "body": body, "body_kind": "json", "public": True}),
            api_key=api_key,
            email=email,
            password=password,
            access_token=access_token,
            refresh_token=refresh_token,
            on_tokens=on_tokens,
        )

    def with_workspace(self, workspace_id: str) -> "Core":
        return Core(
            self.base_url,
            workspace_id=workspace_id,
            timeout=self.timeout,
            max_retries=self.max_retries,
            retry_delay=self.retry_delay,
            max_retry_delay=self.max_retry_delay,
            default_headers=self.default_headers,
            auth=self.auth,
        )

    def request(self, spec: Dict[str, Any], options: Optional[Mapping[str, Any]] = None) -> Any:
        response = self.send(spec, options or {})
        kind = spec.get("response_type", "json")
        if kind == "binary":
            return Download(response)
        with response:
            data = response.read()
        if kind == "void" or response.status == 204 or not data:
            return None
        return json.loads(data)

    def paginate(self, spec: Dict[str, Any], options: Optional[Mapping[str, Any]] = None) -> PageIterator[Any]:
        def fetch(cursor: Optional[str]) -> Dict[str, Any]:
            query = {**(spec.get("query") or {}), **({"cursor": cursor} if cursor else {})}
            return self.request({**spec, "query": query, "response_type": "json"}, options)

        return PageIterator(fetch)

    def url(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        pairs = []
        for key, value in (query or {}).items():
            if value is None:
                continue
            for item in value if isinstance(value, (list, tuple)) else [value]:
                pairs.append((key, str(item).lower() if isinstance(item, bool) else str(item)))
        search = urllib.parse.urlencode(pairs)
        return f"{self.base_url}{path}{'?' + search if search else ''}"

    def _headers(self, spec: Dict[str, Any], options: Mapping[str, Any], token: Optional[str], key: Optional[str], content_type: Optional[str]) -> Dict[str, str]:
        headers = {
            "accept": "*/*" if spec.get("response_type") == "binary" else "application/json",
            "user-agent": f"voice-agent-platform-python/{VERSION}",
        }
        if token:
            headers["authorization"] = f"Bearer {token}"
        workspace = options.get("workspace_id") or self.workspace_id
        if workspace and not spec.get("public"):
            headers["x-workspace-id"] = workspace
        if key:
            headers["idempotency-key"] = key
        if content_type:
            headers["content-type"] = content_type
        return {**headers, **self.default_headers, **(options.get("headers") or {})}

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self.max_retry_delay, self.retry_delay * 2**attempt)
        return ceiling * (1 - 0.25 * random.random())

    def send(self, spec: Dict[str, Any], options: Mapping[str, Any]) -> Any:
        """Sends a request until it succeeds, fails for good or runs out of retries."""
        method = spec["method"]
        max_retries = options.get("max_retries", self.max_retries)
        key = (options.get("idempotency_key") or str(uuid.uuid4())) if method == "POST" else None
        data, content_type, replayable = encode_body(spec.get("body_kind"), spec.get("body"))
        url = self.url(spec["path"], spec.get("query"))
        may_repeat = method in IDEMPOTENT or (method == "POST" and key is not None)
        retries, refreshed = 0, False
        while True:
            token = None if spec.get("public") else self.auth.bearer(not replayable)
            headers = self._headers(spec, options, token, key, content_type)
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                return urllib.request.urlopen(request, timeout=options.get("timeout", self.timeout))
            except urllib.error.HTTPError as answer:
                status, answer_headers = answer.code, answer.headers
                body = _read_problem(answer)
            except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as error:
                timed_out = isinstance(error, (socket.timeout, TimeoutError)) or isinstance(getattr(error, "reason", None), (socket.timeout, TimeoutError))
                failure = (ApiTimeoutError if timed_out else ApiConnectionError)(f"{method} {url}: {error}")
                if not (replayable and may_repeat and retries < max_retries):
                    raise failure from error
                time.sleep(self._backoff(retries))
                retries += 1
                continue
            code = body.get("code") if isinstance(body, dict) else None
            if status == 401 and code == "token_expired" and token and not refreshed and replayable and self.auth.can_refresh:
                refreshed = True
                self.auth.refresh_after(token)
                continue
            retriable = status == 429 or ((status == 408 or status >= 500) and may_repeat)
            if replayable and retriable and retries < max_retries:
                delay = _retry_after(answer_headers)
                time.sleep(delay if delay is not None else self._backoff(retries))
                retries += 1
                continue
            raise api_error_of(status, body, answer_headers)


def _read_problem(answer: urllib.error.HTTPError) -> Any:
    try:
        text = answer.read().decode("utf-8", "replace")
    finally:
        answer.close()
    if "json" not in (answer.headers.get("content-type") or ""):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text
