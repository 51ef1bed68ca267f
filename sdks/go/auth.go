package voiceagent

// Credentials and the tokens of a login. With an API key every request carries the key. With
// email and password the client logs in at its first request, and when the access token expires
// (401 token_expired) it refreshes it once for every request in flight: they wait on the same
// mutex, and those refused with a token already replaced simply resend. A refresh token that no
// longer works falls back to the password.

import (
	"context"
	"errors"
	"net/http"
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
	expiresAt time.Time
	onTokens  func(Tokens)
	call      func(ctx context.Context, path string, body any) (*TokenPair, error)
}

func (m *tokenManager) hasPassword() bool { return m.email != "" && m.password != "" }

func (m *tokenManager) canRefresh() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.apiKey == "" && (m.refresh != "" || m.hasPassword())
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
// ahead: the request cannot be resent (a streamed body), so an expired token is refreshed first.
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
	} else if ahead && m.access != "" && !m.expiresAt.IsZero() && time.Until(m.expiresAt) < time.Second {
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
	m.expiresAt = time.Now().Add(time.Duration(pair.ExpiresIn) * time.Second)
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
	s.c.auth.access, s.c.auth.refresh, s.c.auth.expiresAt = "", "", time.Time{}
	s.c.auth.mu.Unlock()
	return nil
}
