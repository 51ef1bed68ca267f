package voiceagent

// Verifies the platform's webhook deliveries. Each carries two signatures:
//   - Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature: v1,<base64> (one or
//     more, space-separated: after a rotation the old secret signs too), HMAC-SHA256 of
//     id.timestamp.body keyed with the base64 bytes after whsec_; the timestamp must be within the
//     tolerance, which refuses replays of old deliveries.
//   - X-Service-Signature: sha256=<hex>, HMAC-SHA256 of the raw body keyed with the whole secret
//     string. It signs no timestamp, so webhook-timestamp (when present) is still checked.
//
// Verify the raw body exactly as received: decoding and re-encoding JSON changes the bytes.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WebhookEvent is a verified delivery: its type and id, and its data to decode by type
// (json.Unmarshal(event.Data, &voiceagent.CallEndedData{})).
type WebhookEvent struct {
	Type      string          `json:"type"`
	EventID   string          `json:"event_id"`
	Timestamp string          `json:"timestamp"`
	CallID    string          `json:"call_id,omitempty"`
	AgentID   string          `json:"agent_id,omitempty"`
	Data      json.RawMessage `json:"data"`
	// Raw is the body as received.
	Raw []byte `json:"-"`
}

// WebhookScheme is the signature VerifyWebhook checks.
type WebhookScheme string

const (
	// SchemeAuto checks Standard Webhooks when webhook-signature is present, else X-Service-Signature.
	SchemeAuto WebhookScheme = "auto"
	// SchemeStandard checks webhook-id, webhook-timestamp and webhook-signature.
	SchemeStandard WebhookScheme = "standard"
	// SchemeService checks X-Service-Signature (and webhook-timestamp when present).
	SchemeService WebhookScheme = "service"
)

// VerifyOptions tunes VerifyWebhook; the zero value is a 5-minute tolerance and SchemeAuto.
type VerifyOptions struct {
	Tolerance time.Duration
	Scheme    WebhookScheme
	// Now is the current time (tests); zero means time.Now().
	Now time.Time
}

// VerifyWebhook verifies a delivery (its raw body, its headers and the agent's or tenant
// webhook's whsec_ secret) and answers its event; a *WebhookVerificationError otherwise.
func VerifyWebhook(payload []byte, header http.Header, secret string, options VerifyOptions) (*WebhookEvent, error) {
	if options.Tolerance <= 0 {
		options.Tolerance = 5 * time.Minute
	}
	if options.Now.IsZero() {
		options.Now = time.Now()
	}
	standard := options.Scheme == SchemeStandard || ((options.Scheme == "" || options.Scheme == SchemeAuto) && header.Get("Webhook-Signature") != "")
	var err error
	if standard {
		err = verifyStandard(payload, header, secret, options)
	} else {
		err = verifyService(payload, header, secret, options)
	}
	if err != nil {
		return nil, err
	}
	event := &WebhookEvent{Raw: payload}
	if json.Unmarshal(payload, event) != nil {
		return nil, &WebhookVerificationError{Reason: "the body is not JSON"}
	}
	return event, nil
}

// Verify verifies a delivery; see VerifyWebhook.
func (s *WebhooksService) Verify(payload []byte, header http.Header, secret string, options VerifyOptions) (*WebhookEvent, error) {
	return VerifyWebhook(payload, header, secret, options)
}

func checkTimestamp(value string, options VerifyOptions, required bool) error {
	if value == "" {
		if required {
			return &WebhookVerificationError{Reason: "missing webhook-timestamp"}
		}
		return nil
	}
	seconds, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return &WebhookVerificationError{Reason: "invalid webhook-timestamp"}
	}
	skew := options.Now.Unix() - seconds
	if skew < 0 {
		skew = -skew
	}
	if time.Duration(skew)*time.Second > options.Tolerance {
		return &WebhookVerificationError{Reason: "webhook-timestamp outside the tolerance"}
	}
	return nil
}

func verifyStandard(body []byte, header http.Header, secret string, options VerifyOptions) error {
	id, timestamp, signatures := header.Get("Webhook-Id"), header.Get("Webhook-Timestamp"), header.Get("Webhook-Signature")
	if id == "" || signatures == "" {
		return &WebhookVerificationError{Reason: "missing webhook-id or webhook-signature"}
	}
	if err := checkTimestamp(timestamp, options, true); err != nil {
		return err
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return &WebhookVerificationError{Reason: "the secret is not whsec_ and base64"}
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	expected := []byte("v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for _, candidate := range strings.Split(signatures, " ") {
		if hmac.Equal([]byte(candidate), expected) {
			return nil
		}
	}
	return &WebhookVerificationError{Reason: "no webhook-signature matches"}
}

func verifyService(body []byte, header http.Header, secret string, options VerifyOptions) error {
	signature := header.Get("X-Service-Signature")
	if signature == "" {
		return &WebhookVerificationError{Reason: "missing X-Service-Signature"}
	}
	if err := checkTimestamp(header.Get("Webhook-Timestamp"), options, false); err != nil {
		return err
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	expected := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(signature), []byte(expected)) {
		return &WebhookVerificationError{Reason: "X-Service-Signature does not match"}
	}
	return nil
}
