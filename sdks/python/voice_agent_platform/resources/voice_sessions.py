from typing import Any, Mapping
from urllib.parse import quote

from .._generated.resources.voice_sessions import VoiceSessionsBase


class VoiceSessions(VoiceSessionsBase):
    """``client.voice_sessions``: ``create()`` answers the session with its media token (shown once).

    The built-in media WebSocket is at ``media_url(session)``: the agent speaks first; send binary
    PCM16 mono 16 kHz audio or ``{"type":"text","text":…}``; receive binary PCM16 agent speech,
    ``{"type":"transcript",role,text,final}``, ``{"type":"clear"}`` and ``{"type":"end",reason}``.
    The standard library has no WebSocket client: use one such as ``websockets`` with this URL.
    """

    def media_url(self, session: Mapping[str, Any]) -> str:
        if session["transport"] != "builtin":
            raise ValueError(f"a {session['transport']} session is joined with the LiveKit client SDK (url and token)")
        url = session["url"]
        return f"{url}{'&' if '?' in url else '?'}token={quote(session['token'], safe='')}"
