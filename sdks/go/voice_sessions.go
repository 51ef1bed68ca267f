package voiceagent

import (
	"fmt"
	"net/url"
	"strings"
)

// MediaURL is the built-in media WebSocket's URL of a session created by
// client.VoiceSessions.Create, its token included. On that socket the agent speaks first; send
// binary PCM16 mono 16 kHz audio or {"type":"text","text":…}; receive binary PCM16 agent speech,
// {"type":"transcript",role,text,final}, {"type":"clear"} and {"type":"end",reason}. Go's
// standard library has no WebSocket client: open the URL with one such as
// github.com/coder/websocket or github.com/gorilla/websocket.
func (s *VoiceSessionsService) MediaURL(session *CreateVoiceSessionResponse) (string, error) {
	if session.Transport != "builtin" {
		return "", fmt.Errorf("voiceagent: a %s session is joined with the LiveKit client SDK (url and token)", session.Transport)
	}
	separator := "?"
	if strings.Contains(session.URL, "?") {
		separator = "&"
	}
	return session.URL + separator + "token=" + url.QueryEscape(session.Token), nil
}
