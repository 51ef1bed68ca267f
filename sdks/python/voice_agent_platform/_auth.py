"""Credentials and the tokens of a login.

With an API key every request carries the key. With email and password the SDK logs in at the
first request, and when the access token expires (401 ``token_expired``) it refreshes it once for
every request in flight: threads wait on the same lock, and those that were refused with a token
already replaced simply resend. A refresh token that no longer works falls back to the password.
"""

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

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
        self._expires_at = 0.0
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

    def bearer(self) -> Optional[str]:
        """The bearer for the next request (logging in first when only a password is known)."""
        if self._api_key:
            return self._api_key
        if not self._access and self._has_password:
            with self._lock:
                if not self._access:
                    self._login()
        return self._access

    def refresh_after(self, stale: str) -> None:
        """Cures ``stale``, the token a request was refused with; concurrent callers share one refresh."""
        with self._lock:
            if self._access and self._access != stale:
                return
            self._renew()

    def store(self, pair: Dict[str, Any]) -> None:
        self._access = pair["access_token"]
        self._refresh = pair["refresh_token"]
        self._expires_at = time.time() + float(pair["expires_in"])
        if self._on_tokens:
            self._on_tokens(Tokens(self._access, self._refresh, self._expires_at))

    def clear(self) -> None:
        self._access = None
        self._refresh = None
        self._expires_at = 0.0

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
