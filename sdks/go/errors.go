package voiceagent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// APIError is an answer of status 4xx or 5xx, with the problem+json fields (RFC 9457) the
// platform sends. Take it with errors.As:
//
//	var apiErr *voiceagent.APIError
//	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound { … }
type APIError struct {
	Status    int
	Code      string // e.g. validation_failed, not_found, rate_limited, token_expired
	Detail    string
	Type      string
	RequestID string
	// Errors lists the fields at fault of a 422 validation_failed.
	Errors []FieldError
	Header http.Header
	// Body is the answer as received.
	Body []byte
}

// FieldError is one field at fault of a validation error.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (e *APIError) Error() string {
	text := e.Detail
	if text == "" {
		text = strings.TrimSpace(string(e.Body))
		if len(text) > 200 {
			text = text[:200]
		}
	}
	if text == "" {
		text = "no detail"
	}
	if e.Code != "" {
		return fmt.Sprintf("voiceagent: %d %s: %s", e.Status, e.Code, text)
	}
	return fmt.Sprintf("voiceagent: %d: %s", e.Status, text)
}

func readError(resp *http.Response) *APIError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &APIError{Status: resp.StatusCode, Header: resp.Header, Body: body, RequestID: resp.Header.Get("X-Request-Id")}
	var problem struct {
		Code      string       `json:"code"`
		Detail    string       `json:"detail"`
		Type      string       `json:"type"`
		RequestID string       `json:"request_id"`
		Errors    []FieldError `json:"errors"`
	}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") && json.Unmarshal(body, &problem) == nil {
		e.Code, e.Detail, e.Type, e.Errors = problem.Code, problem.Detail, problem.Type, problem.Errors
		if problem.RequestID != "" {
			e.RequestID = problem.RequestID
		}
	}
	return e
}

// ConnectionError is a request that got no answer: refused or reset, or ended by the SDK's
// per-attempt timeout (Timeout). A context canceled or past its deadline answers the context's
// error instead.
type ConnectionError struct {
	Op      string
	Err     error
	Timeout bool
}

func (e *ConnectionError) Error() string {
	if e.Timeout {
		return fmt.Sprintf("voiceagent: %s: timed out: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("voiceagent: %s: %v", e.Op, e.Err)
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// WebhookVerificationError is a webhook delivery whose signature or timestamp does not verify.
type WebhookVerificationError struct {
	Reason string
}

func (e *WebhookVerificationError) Error() string {
	return "voiceagent: webhook not verified: " + e.Reason
}
