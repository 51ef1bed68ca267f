package voiceagent

// A local HTTP server whose answers each test scripts per path (as the platform answers under
// load), for the tests that need answers the real platform does not give on demand.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

type answer struct {
	status  int
	body    any
	headers map[string]string
	reset   bool          // close the connection without an answer
	hang    time.Duration // answer after this long
}

type seen struct {
	method string
	path   string
	query  string
	header http.Header
	body   []byte
}

type fake struct {
	*httptest.Server
	mu      sync.Mutex
	scripts map[string][]answer
	seen    map[string][]seen
	handler func(w http.ResponseWriter, r *http.Request, body []byte) bool
}

func newFake(t *testing.T) *fake {
	f := &fake{scripts: map[string][]answer{}, seen: map[string][]seen{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) script(path string, answers ...answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripts[path] = append(f.scripts[path], answers...)
}

func (f *fake) requests(path string) []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.seen[path]...)
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.seen[r.URL.Path] = append(f.seen[r.URL.Path], seen{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: body})
	next := answer{status: 200}
	if list := f.scripts[r.URL.Path]; len(list) > 0 {
		next, f.scripts[r.URL.Path] = list[0], list[1:]
	}
	handler := f.handler
	f.mu.Unlock()
	if handler != nil && handler(w, r, body) {
		return
	}
	if next.reset {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	if next.hang > 0 {
		select {
		case <-time.After(next.hang):
		case <-r.Context().Done():
			return
		}
	}
	status := next.status
	payload := next.body
	if payload == nil && status >= 400 {
		code := map[int]string{429: "rate_limited", 422: "validation_failed", 401: "unauthorized"}[status]
		if code == "" {
			code = "service_unavailable"
		}
		payload = map[string]any{"type": "about:blank", "title": "x", "status": status, "detail": "scripted", "code": code, "request_id": "req_fake"}
	}
	if payload == nil {
		payload = map[string]any{"data": []any{}, "has_more": false, "next_cursor": nil, "access_token": "a", "refresh_token": "r", "expires_in": 60}
	}
	data, _ := json.Marshal(payload)
	contentType := "application/json"
	if status >= 400 {
		contentType = "application/problem+json"
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Request-Id", "req_fake")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	for name, value := range next.headers {
		w.Header().Set(name, value)
	}
	w.WriteHeader(status)
	_, _ = w.Write(data)
}
