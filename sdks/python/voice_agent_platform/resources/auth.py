from typing import Optional

from .._core import RequestOptions
from .._generated import models as M
from .._generated.resources.auth import AuthBase


class Auth(AuthBase):
    """``client.auth``: a login, refresh or logout also updates the client's own tokens."""

    def login(self, body: M.LoginBody, options: Optional[RequestOptions] = None) -> M.LoginResponse:
        """Logs in: later requests of this client use (and refresh) the tokens; ``on_tokens`` is told."""
        pair = super().login(body, options)
        self._core.auth.store(dict(pair))
        return pair

    def refresh(self, body: M.RefreshTokenBody, options: Optional[RequestOptions] = None) -> M.RefreshTokenResponse:
        pair = super().refresh(body, options)
        self._core.auth.store(dict(pair))
        return pair

    def logout(self, options: Optional[RequestOptions] = None) -> None:
        """Ends the session on the server and forgets the tokens."""
        super().logout(options)
        self._core.auth.clear()
