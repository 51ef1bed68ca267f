"""Credentials and the tokens of a login.

With an API key every request carries the key. With email and password the SDK logs in at the
first request, and when the access token expires (401 ``token_expired``) it refreshes it once for
every request in flight: threads wait on the same lock, and those that were refused with a token
already replaced simply resend. A streamed body cannot be resent, so before one is sent a token
past half its lifetime is refreshed first. A refresh token that no longer works falls back to the
password.
"""

import base64
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

from ._errors import ApiError


@dataclass(frozen=True)
class Tokens:
    """What ``on_tokens`` is told after every login and refresh: persist it to resume later."""

    access_token: str
    refresh_token: str
    expires_at: float
    """When the access token expires (seconds since the epoch)."""


TokenCall = Callable[[str, Dict[str, str]], Dict[str, Any]]


class TokenManager:
    def __init__(
        self,
        call: TokenCall,
        *,
        api_key: Optional[str] = None,
        email: Optional[str] = None,
        password: Optional[str] = None,
        access_token: Optional[str] = None,
        refresh_token: Optional[str] = None,
        on_tokens: Optional[Callable[[Tokens], None]] = None,
    ) -> None:
        self._call = call
        self._api_key = api_key
        self._email = email
        self._password = password
        self._access = access_token
        self._refresh = refresh_token
        # When the access token was issued and expires (seconds since the epoch; 0: unknown).
        self._issued_at, self._expires_at = _claimed_lifetime(access_token)
        self._on_tokens = on_tokens
        self._lock = threading.Lock()

    @property
    def can_refresh(self) -> bool:
        return not self._api_key and bool(self._refresh or self._has_password)

    @property
    def tokens(self) -> Optional[Tokens]:
        if self._access and self._refresh:
            return Tokens(self._access, self._refresh, self._expires_at)
        return None

    @property
    def _has_password(self) -> bool:
        return bool(self._email and self._password)

    def bearer(self, sent_once: bool = False) -> Optional[str]:
        """The bearer for the next request (logging in first when only a password is known).

        ``sent_once``: the body cannot be resent, so a 401 ``token_expired`` could not be cured by
        refreshing and resending; the token is refreshed first when it is past half its lifetime
        instead (threads waiting on the lock find it fresh and share that one refresh).
        """
        if self._api_key:
            return self._api_key
        if not self._access and self._has_password:
            with self._lock:
                if not self._access:
                    self._login()
        elif sent_once and self._past_half_life() and self.can_refresh:
            with self._lock:
                if self._past_half_life():
                    self._renew()
        return self._access

    def _past_half_life(self) -> bool:
        # Half, not the end: a token close to its expiry may expire before the server checks it.
        return self._expires_at > 0 and time.time() >= (self._issued_at + self._expires_at) / 2

    def refresh_after(self, stale: str) -> None:
        """Cures ``stale``, the token a request was refused with; concurrent callers share one refresh."""
        with self._lock:
            if self._access and self._access != stale:
                return
            self._renew()

    def store(self, pair: Dict[str, Any]) -> None:
        self._access = pair["access_token"]
        self._refresh = pair["refresh_token"]
        self._issued_at = time.time()
        self._expires_at = self._issued_at + float(pair["expires_in"])
        if self._on_tokens:
            self._on_tokens(Tokens(self._access, self._refresh, self._expires_at))

    def clear(self) -> None:
        self._access = None
        self._refresh = None
        self._issued_at = self._expires_at = 0.0

    def _login(self) -> None:
        self.store(self._call("/v1/auth/login", {"email": self._email or "", "password": self._password or ""}))

    def _renew(self) -> None:
        if self._refresh:
            try:
                self.store(self._call("/v1/auth/refresh", {"refresh_token": self._refresh}))
                return
            except ApiError as error:
                if error.status != 401 or not self._has_password:
                    raise
        if not self._has_password:
            raise RuntimeError("the session expired and there is no password to log in again")
        self._login()


def _claimed_lifetime(token: Optional[str]) -> Tuple[float, float]:
    """When a resumed access token was issued and expires, from its JWT ``iat`` and ``exp`` claims
    ((0, 0) when it is no JWT with an ``exp``). Read without verifying: the server verifies; the SDK
    only learns when to refresh. Without ``iat`` the token counts as issued at its expiry (refreshed
    once expired)."""
    parts = (token or "").split(".")
    if len(parts) < 2:
        return 0.0, 0.0
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return 0.0, 0.0
    expires = claims.get("exp") if isinstance(claims, dict) else None
    if not _is_number(expires):
        return 0.0, 0.0
    issued = claims.get("iat")
    return float(issued if _is_number(issued) else expires), float(expires)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
