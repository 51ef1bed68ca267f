// Package voiceagent is the official Go client of the Voice Agent Platform API (standard library
// only, Go ≥ 1.19).
//
// Every operation of the platform's openapi.json is a method of a resource of the Client, taking
// a context.Context first: client.Agents.Create(ctx, params), client.Calls.List(ctx, query),
// client.VoiceSessions.Create(ctx, params). The models are generated from openapi.json
// (scripts/generate.mjs). The client logs in and refreshes its tokens by itself, retries what is
// safe to retry, and answers errors as *APIError (use errors.As).
package voiceagent

import (
	"net/http"
	"strings"
	"time"
)

// Version is the SDK's version, sent in its User-Agent.
const Version = "1.4.0"

// UserAgent is the User-Agent of every request.
const UserAgent = "voice-agent-platform-go/" + Version

// DefaultBaseURL is where NewClient sends requests when given an empty base URL.
const DefaultBaseURL = "http://localhost:3000"

type settings struct {
	apiKey        string
	email         string
	password      string
	accessToken   string
	refreshToken  string
	onTokens      func(Tokens)
	workspaceID   string
	httpClient    *http.Client
	timeout       time.Duration
	maxRetries    int
	retryDelay    time.Duration
	maxRetryDelay time.Duration
	headers       http.Header
}

// ClientOption configures a Client (NewClient).
type ClientOption func(*settings)

// WithAPIKey authenticates every request with an API key (sk_…).
func WithAPIKey(key string) ClientOption { return func(s *settings) { s.apiKey = key } }

// WithLogin authenticates with email and password: the client logs in at its first request and
// logs in again if a refresh token no longer works.
func WithLogin(email, password string) ClientOption {
	return func(s *settings) { s.email, s.password = email, password }
}

// WithTokens resumes a session from saved tokens (see WithTokenHook).
func WithTokens(accessToken, refreshToken string) ClientOption {
	return func(s *settings) { s.accessToken, s.refreshToken = accessToken, refreshToken }
}

// WithTokenHook is told the tokens after every login and refresh, to persist them.
func WithTokenHook(hook func(Tokens)) ClientOption { return func(s *settings) { s.onTokens = hook } }

// WithWorkspace selects the workspace of every request (X-Workspace-Id).
func WithWorkspace(id string) ClientOption { return func(s *settings) { s.workspaceID = id } }

// WithHTTPClient sends requests through another http.Client (its Timeout should be zero: the
// SDK's own timeout applies per attempt).
func WithHTTPClient(client *http.Client) ClientOption {
	return func(s *settings) { s.httpClient = client }
}

// WithTimeout bounds each attempt of a request (default 60 s); the context bounds the whole.
func WithTimeout(d time.Duration) ClientOption { return func(s *settings) { s.timeout = d } }

// WithMaxRetries sets how many times a failed request is repeated (default 2).
func WithMaxRetries(n int) ClientOption { return func(s *settings) { s.maxRetries = n } }

// WithRetryDelay sets the backoff: base·2^n up to max, minus up to 25 % jitter (default 500 ms, 8 s).
func WithRetryDelay(base, max time.Duration) ClientOption {
	return func(s *settings) { s.retryDelay, s.maxRetryDelay = base, max }
}

// WithHeader adds a header to every request.
func WithHeader(name, value string) ClientOption {
	return func(s *settings) { s.headers.Add(name, value) }
}

// NewClient makes a client of the platform at baseURL (e.g. "https://api.example.com").
func NewClient(baseURL string, opts ...ClientOption) *Client {
	s := settings{
		httpClient:    http.DefaultClient,
		timeout:       60 * time.Second,
		maxRetries:    2,
		retryDelay:    500 * time.Millisecond,
		maxRetryDelay: 8 * time.Second,
		headers:       http.Header{},
	}
	for _, opt := range opts {
		opt(&s)
	}
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	c := &core{
		baseURL:       strings.TrimRight(baseURL, "/"),
		http:          s.httpClient,
		workspaceID:   s.workspaceID,
		timeout:       s.timeout,
		maxRetries:    s.maxRetries,
		retryDelay:    s.retryDelay,
		maxRetryDelay: s.maxRetryDelay,
		headers:       s.headers,
	}
	c.auth = &tokenManager{
		apiKey:   s.apiKey,
		email:    s.email,
		password: s.password,
		access:   s.accessToken,
		refresh:  s.refreshToken,
		onTokens: s.onTokens,
		call:     c.tokenCall,
	}
	c.auth.issuedAt, c.auth.expiresAt = claimedLifetime(s.accessToken)
	client := &Client{}
	client.init(c)
	return client
}

// WithWorkspace answers a client of the same session acting in another workspace.
func (c *Client) WithWorkspace(id string) *Client {
	copied := *c.core
	copied.workspaceID = id
	client := &Client{}
	client.init(&copied)
	return client
}

// Tokens answers the session's current tokens (nil with an API key or before the first login).
func (c *Client) Tokens() *Tokens { return c.core.auth.current() }

// RequestOption configures one request: the last arguments of every method.
type RequestOption func(*requestSettings)

type requestSettings struct {
	timeout        time.Duration
	maxRetries     int
	idempotencyKey string
	workspaceID    string
	headers        http.Header
}

// WithIdempotencyKey sends this Idempotency-Key with a POST instead of a generated one.
func WithIdempotencyKey(key string) RequestOption {
	return func(r *requestSettings) { r.idempotencyKey = key }
}

// WithRequestTimeout bounds each attempt of this request.
func WithRequestTimeout(d time.Duration) RequestOption {
	return func(r *requestSettings) { r.timeout = d }
}

// WithRequestMaxRetries sets how many times this request may be repeated.
func WithRequestMaxRetries(n int) RequestOption {
	return func(r *requestSettings) { r.maxRetries = n }
}

// WithRequestWorkspace sends this request in another workspace (X-Workspace-Id).
func WithRequestWorkspace(id string) RequestOption {
	return func(r *requestSettings) { r.workspaceID = id }
}

// WithRequestHeader adds a header to this request.
func WithRequestHeader(name, value string) RequestOption {
	return func(r *requestSettings) { r.headers.Add(name, value) }
}

// String answers a pointer to v, for optional fields of params: Name: voiceagent.String("Ada").
func String(v string) *string { return &v }

// Int answers a pointer to v, for optional integer fields.
func Int(v int64) *int64 { return &v }

// Float answers a pointer to v, for optional number fields.
func Float(v float64) *float64 { return &v }

// Bool answers a pointer to v, for optional boolean fields.
func Bool(v bool) *bool { return &v }
