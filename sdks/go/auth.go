package voiceagent

// Credentials and the tokens of a login. With an API key every request carries the key. With
// email and password the client logs in at its first request, and when the access token expires
// (401 token_expired) it refreshes it once for every request in flight: they wait on the same
// mutex, and those refused with a token already replaced simply resend. A streamed body cannot be
// resent, so before one is sent a token past half its lifetime is refreshed first. A refresh token
// that no longer works falls back to the password.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Tokens is what the token hook is told after every login and refresh: persist it to resume the
// session later (WithTokens).
type Tokens struct {
	AccessToken  string
	RefreshToken string
	// ExpiresAt is when the access token expires.
	ExpiresAt time.Time
}

type tokenManager struct {
	mu        sync.Mutex
	apiKey    string
	email     string
	password  string
	access    string
	refresh   string
	issuedAt  time.Time // when the access token was issued and expires (zero: unknown)
	expiresAt time.Time
	onTokens  func(Tokens)
	call      func(ctx context.Context, path string, body any) (*TokenPair, error)
}

func (m *tokenManager) hasPassword() bool { return m.email != "" && m.password != "" }

func (m *tokenManager) canRefresh() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.renewable()
}

// renewable is canRefresh with the mutex held.
func (m *tokenManager) renewable() bool {
	return m.apiKey == "" && (m.refresh != "" || m.hasPassword())
}

// pastHalfLife tells whether the access token has lived half its lifetime (false when unknown):
// half, not the end, as a token close to its expiry may expire before the server checks it.
func (m *tokenManager) pastHalfLife() bool {
	if m.expiresAt.IsZero() {
		return false
	}
	half := m.issuedAt.Add(m.expiresAt.Sub(m.issuedAt) / 2)
	return !time.Now().Before(half)
}

func (m *tokenManager) current() *Tokens {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.access == "" || m.refresh == "" {
		return nil
	}
	return &Tokens{AccessToken: m.access, RefreshToken: m.refresh, ExpiresAt: m.expiresAt}
}

// bearer answers the token of the next request, logging in first when only a password is known.
// ahead: the request cannot be resent (a streamed body), so a 401 token_expired could not be cured
// by refreshing and resending; the token is refreshed first when it is past half its lifetime
// instead (callers waiting on the mutex then find it fresh and share that one refresh).
func (m *tokenManager) bearer(ctx context.Context, ahead bool) (string, error) {
	if m.apiKey != "" {
		return m.apiKey, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.access == "" && m.hasPassword() {
		if err := m.login(ctx); err != nil {
			return "", err
		}
	} else if ahead && m.access != "" && m.pastHalfLife() && m.renewable() {
		if err := m.renew(ctx); err != nil {
			return "", err
		}
	}
	return m.access, nil
}

// refreshAfter cures stale, the token a request was refused with; concurrent callers share one
// refresh.
func (m *tokenManager) refreshAfter(ctx context.Context, stale string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.access != "" && m.access != stale {
		return nil
	}
	return m.renew(ctx)
}

func (m *tokenManager) store(pair *TokenPair) {
	m.access, m.refresh = pair.AccessToken, pair.RefreshToken
	m.issuedAt = time.Now()
	m.expiresAt = m.issuedAt.Add(time.Duration(pair.ExpiresIn) * time.Second)
	if m.onTokens != nil {
		m.onTokens(Tokens{AccessToken: m.access, RefreshToken: m.refresh, ExpiresAt: m.expiresAt})
	}
}

func (m *tokenManager) login(ctx context.Context) error {
	pair, err := m.call(ctx, "/v1/auth/login", LoginParams{Email: m.email, Password: m.password})
	if err != nil {
		return err
	}
	m.store(pair)
	return nil
}

func (m *tokenManager) renew(ctx context.Context) error {
	if m.refresh != "" {
		pair, err := m.call(ctx, "/v1/auth/refresh", RefreshTokenParams{RefreshToken: m.refresh})
		if err == nil {
			m.store(pair)
			return nil
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized || !m.hasPassword() {
			return err
		}
	}
	if !m.hasPassword() {
		return errors.New("voiceagent: the session expired and there is no password to log in again")
	}
	return m.login(ctx)
}

// claimedLifetime answers when a resumed access token was issued and expires, from its JWT iat
// and exp claims (zero times when it is no JWT with an exp). Read without verifying: the server
// verifies; the SDK only learns when to refresh. Without iat the token counts as issued at its
// expiry (refreshed once expired).
func claimedLifetime(token string) (issuedAt, expiresAt time.Time) {
	parts := strings.Split(token, ".")
	if len(parts) < 2 {
		return time.Time{}, time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	var claims struct {
		Iat *float64 `json:"iat"`
		Exp *float64 `json:"exp"`
	}
	if err != nil || json.Unmarshal(payload, &claims) != nil || claims.Exp == nil {
		return time.Time{}, time.Time{}
	}
	if claims.Iat == nil {
		claims.Iat = claims.Exp
	}
	return unixSeconds(*claims.Iat), unixSeconds(*claims.Exp)
}

func unixSeconds(seconds float64) time.Time {
	return time.Unix(0, int64(seconds*float64(time.Second)))
}

// Login logs in (POST /v1/auth/login): later requests of this client use and refresh these
// tokens, and the token hook is told.
func (s *AuthService) Login(ctx context.Context, params LoginParams, opts ...RequestOption) (*LoginResponse, error) {
	pair, err := s.login(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	s.c.auth.mu.Lock()
	s.c.auth.store(pair)
	s.c.auth.mu.Unlock()
	return pair, nil
}

// Refresh exchanges a refresh token for new tokens (POST /v1/auth/refresh), which this client
// then uses.
func (s *AuthService) Refresh(ctx context.Context, params RefreshTokenParams, opts ...RequestOption) (*RefreshTokenResponse, error) {
	pair, err := s.refresh(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	s.c.auth.mu.Lock()
	s.c.auth.store(pair)
	s.c.auth.mu.Unlock()
	return pair, nil
}

// Logout ends the session on the server (POST /v1/auth/logout) and forgets the tokens.
func (s *AuthService) Logout(ctx context.Context, opts ...RequestOption) error {
	if err := s.logout(ctx, opts...); err != nil {
		return err
	}
	s.c.auth.mu.Lock()
	s.c.auth.access, s.c.auth.refresh = "", ""
	s.c.auth.issuedAt, s.c.auth.expiresAt = time.Time{}, time.Time{}
	s.c.auth.mu.Unlock()
	return nil
}
