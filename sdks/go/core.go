package voiceagent

// The transport under every method: URL and headers, authentication and its refresh, timeouts,
// retries, and turning answers into values or *APIError.
//
// Retries: 429 was refused before any work, so any method repeats it (honouring Retry-After); a
// 5xx, 408, a timeout or a lost connection may have done the work, so only GET/PUT/DELETE and
// POSTs, which always carry an Idempotency-Key (one per logical request, the same on every
// attempt), are repeated. A body streamed from an io.Reader can be sent once only: not repeated.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mathrand "math/rand"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const retryAfterCap = 60 * time.Second

type core struct {
	baseURL       string
	http          *http.Client
	auth          *tokenManager
	workspaceID   string
	timeout       time.Duration
	maxRetries    int
	retryDelay    time.Duration
	maxRetryDelay time.Duration
	headers       http.Header
}

// request is one operation's call, as the generated methods describe it.
type request struct {
	op       string
	method   string
	path     string
	query    any
	body     any
	bodyKind string // json, form, csv, raw, multipart
	public   bool
	binary   bool
}

func call[T any](ctx context.Context, c *core, r *request, opts []RequestOption) (*T, error) {
	out := new(T)
	resp, err := c.send(ctx, r, opts)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &ConnectionError{Op: r.method + " " + r.path, Err: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("voiceagent: %s %s answered JSON the SDK cannot read: %w", r.method, r.path, err)
	}
	return out, nil
}

func callVoid(ctx context.Context, c *core, r *request, opts []RequestOption) error {
	resp, err := c.send(ctx, r, opts)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

func download(ctx context.Context, c *core, r *request, opts []RequestOption) (*Download, error) {
	r.binary = true
	resp, err := c.send(ctx, r, opts)
	if err != nil {
		return nil, err
	}
	return &Download{ReadCloser: resp.Body, Status: resp.StatusCode, Header: resp.Header, ContentType: contentType(resp.Header)}, nil
}

func contentType(h http.Header) string {
	return strings.TrimSpace(strings.SplitN(h.Get("Content-Type"), ";", 2)[0])
}

// tokenCall is how the token manager logs in and refreshes: a public JSON POST.
func (c *core) tokenCall(ctx context.Context, path string, body any) (*TokenPair, error) {
	return call[TokenPair](ctx, c, &request{op: path, method: "POST", path: path, body: body, bodyKind: "json", public: true}, nil)
}

func (c *core) settingsOf(opts []RequestOption) requestSettings {
	s := requestSettings{timeout: c.timeout, maxRetries: c.maxRetries, workspaceID: c.workspaceID, headers: http.Header{}}
	for _, opt := range opts {
		opt(&s)
	}
	return s
}

// send sends a request until it succeeds (2xx), fails for good or runs out of retries; the
// caller owns the answer's body.
func (c *core) send(ctx context.Context, r *request, opts []RequestOption) (*http.Response, error) {
	s := c.settingsOf(opts)
	key := ""
	if r.method == http.MethodPost {
		key = s.idempotencyKey
		if key == "" {
			key = newIdempotencyKey()
		}
	}
	body, err := encodeBody(r.bodyKind, r.body)
	if err != nil {
		return nil, err
	}
	target := c.baseURL + r.path
	if r.query != nil {
		search, err := encodeQuery(r.query)
		if err != nil {
			return nil, err
		}
		if search != "" {
			target += "?" + search
		}
	}
	mayRepeat := r.method != http.MethodPatch
	retries, refreshed := 0, false
	for {
		token := ""
		if !r.public {
			if token, err = c.auth.bearer(ctx, !body.replayable); err != nil {
				return nil, err
			}
		}
		resp, err := c.attempt(ctx, r, s, target, body, token, key)
		if err != nil {
			var failure *ConnectionError
			if !errors.As(err, &failure) || !body.replayable || !mayRepeat || retries >= s.maxRetries || ctx.Err() != nil {
				return nil, err
			}
			if err := sleep(ctx, c.backoff(retries)); err != nil {
				return nil, err
			}
			retries++
			continue
		}
		if resp.StatusCode < 400 {
			return resp, nil
		}
		apiErr := readError(resp)
		if resp.StatusCode == http.StatusUnauthorized && apiErr.Code == "token_expired" && token != "" && !refreshed && body.replayable && c.auth.canRefresh() {
			refreshed = true
			if err := c.auth.refreshAfter(ctx, token); err != nil {
				return nil, err
			}
			continue
		}
		retriable := resp.StatusCode == http.StatusTooManyRequests || ((resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500) && mayRepeat)
		if !retriable || !body.replayable || retries >= s.maxRetries {
			return nil, apiErr
		}
		delay, ok := retryAfter(resp.Header)
		if !ok {
			delay = c.backoff(retries)
		}
		if err := sleep(ctx, delay); err != nil {
			return nil, err
		}
		retries++
	}
}

// attempt sends the request once, bounded by the per-attempt timeout.
func (c *core) attempt(ctx context.Context, r *request, s requestSettings, target string, body *encodedBody, token, key string) (*http.Response, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if s.timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, s.timeout)
	}
	req, err := http.NewRequestWithContext(actx, r.method, target, body.reader())
	if err != nil {
		cancel()
		return nil, err
	}
	if body.length >= 0 {
		req.ContentLength = body.length
	}
	accept := "application/json"
	if r.binary {
		accept = "*/*"
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", UserAgent)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if s.workspaceID != "" && !r.public {
		req.Header.Set("X-Workspace-Id", s.workspaceID)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if body.contentType != "" {
		req.Header.Set("Content-Type", body.contentType)
	}
	for _, h := range []http.Header{c.headers, s.headers} {
		for name, values := range h {
			req.Header[http.CanonicalHeaderKey(name)] = values
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &ConnectionError{Op: r.method + " " + r.path, Err: err, Timeout: actx.Err() == context.DeadlineExceeded}
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends the attempt's timeout context once its body has been read and closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (c *core) backoff(attempt int) time.Duration {
	ceiling := math.Min(float64(c.maxRetryDelay), float64(c.retryDelay)*math.Pow(2, float64(attempt)))
	return time.Duration(ceiling * (1 - 0.25*mathrand.Float64()))
}

func retryAfter(h http.Header) (time.Duration, bool) {
	value := h.Get("Retry-After")
	if value == "" {
		return 0, false
	}
	var delay time.Duration
	if seconds, err := strconv.ParseFloat(value, 64); err == nil {
		delay = time.Duration(seconds * float64(time.Second))
	} else if at, err := http.ParseTime(value); err == nil {
		delay = time.Until(at)
	} else {
		return 0, false
	}
	if delay < 0 {
		delay = 0
	}
	if delay > retryAfterCap {
		delay = retryAfterCap
	}
	return delay, true
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// newIdempotencyKey answers a random UUID (version 4).
func newIdempotencyKey() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("voiceagent: no randomness: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
