from typing import Any, Optional

from ._auth import Tokens
from ._core import Core
from ._generated.client_base import Resources


class VoiceAgent(Resources):
    """The Voice Agent Platform client: one attribute per resource.

    ``client.agents.create({...})``, ``for call in client.calls.list():``,
    ``client.voice_sessions.create({...})`` …

    >>> client = VoiceAgent("https://api.example.com", api_key="sk_...")
    >>> client = VoiceAgent("https://api.example.com", email=..., password=..., on_tokens=save)
    """

    def __init__(self, base_url: str, **options: Any) -> None:
        core = options.pop("_core", None) or Core(base_url, **options)
        super().__init__(core)
        self._core = core

    def with_workspace(self, workspace_id: str) -> "VoiceAgent":
        """The same client (credentials and tokens shared) acting in another workspace."""
        return VoiceAgent(self._core.base_url, _core=self._core.with_workspace(workspace_id))

    @property
    def tokens(self) -> Optional[Tokens]:
        """The current login's tokens, if logged in with email and password."""
        return self._core.auth.tokens
