package voiceagent

// The SDK against openapi.json and a local fake server: every operation, retries, errors,
// timeouts, pagination, refresh (before a streamed upload too), uploads and webhooks.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func fastClient(url string, opts ...ClientOption) *Client {
	return NewClient(url, append([]ClientOption{WithAPIKey("sk_test"), WithRetryDelay(5*time.Millisecond, 20*time.Millisecond)}, opts...)...)
}

type specOperation struct {
	OperationID string `json:"operationId"`
	Parameters  []struct {
		In   string `json:"in"`
		Name string `json:"name"`
	} `json:"parameters"`
	RequestBody json.RawMessage   `json:"requestBody"`
	Security    *[]map[string]any `json:"security"`
}

func TestEveryOperationIsAMethodSendingItsMethodAndPath(t *testing.T) {
	data, err := os.ReadFile("../../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	f := newFake(t)
	client := fastClient(f.URL, WithMaxRetries(0))
	ctx := context.Background()
	count := 0
	for route, item := range spec.Paths {
		for method, raw := range item {
			if !strings.Contains("get post put patch delete", method) {
				continue
			}
			count++
			var op specOperation
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			place, ok := Operations[op.OperationID]
			if !ok {
				t.Fatalf("%s (%s %s) is missing from the Go SDK", op.OperationID, method, route)
			}
			resource := reflect.ValueOf(client).Elem().FieldByName(place.Resource)
			if !resource.IsValid() {
				t.Fatalf("client.%s is missing", place.Resource)
			}
			fn := resource.MethodByName(place.Method)
			if !fn.IsValid() {
				t.Fatalf("client.%s.%s is missing", place.Resource, place.Method)
			}
			expected := route
			var args []reflect.Value
			pathParams := []string{}
			for _, p := range op.Parameters {
				if p.In == "path" {
					pathParams = append(pathParams, p.Name)
					expected = strings.ReplaceAll(expected, "{"+p.Name+"}", "v-"+p.Name)
				}
			}
			fnType := fn.Type()
			for i := 0; i < fnType.NumIn(); i++ {
				in := fnType.In(i)
				switch {
				case in == reflect.TypeOf((*context.Context)(nil)).Elem():
					args = append(args, reflect.ValueOf(ctx))
				case in.Kind() == reflect.String:
					args = append(args, reflect.ValueOf("v-"+pathParams[0]))
					pathParams = pathParams[1:]
				case fnType.IsVariadic() && i == fnType.NumIn()-1:
				case in == reflect.TypeOf((*io.Reader)(nil)).Elem():
					args = append(args, reflect.ValueOf(strings.NewReader("phone\n")))
				default:
					args = append(args, reflect.Zero(in))
				}
			}
			results := fn.Call(args)
			switch value := results[0].Interface().(type) {
			case interface{ Next() bool }:
				value.Next()
			case *Download:
				if value != nil {
					value.Close()
				}
			}
			if last := results[len(results)-1].Interface(); last != nil {
				if err, isErr := last.(error); isErr && err != nil {
					t.Fatalf("client.%s.%s: %v", place.Resource, place.Method, err)
				}
			}
			requests := f.requests(expected)
			if len(requests) == 0 {
				t.Fatalf("client.%s.%s sent nothing to %s", place.Resource, place.Method, expected)
			}
			last := requests[len(requests)-1]
			if last.method != strings.ToUpper(method) || place.HTTPMethod != last.method {
				t.Errorf("client.%s.%s sent %s, want %s", place.Resource, place.Method, last.method, strings.ToUpper(method))
			}
			if ua := last.header.Get("User-Agent"); ua != "voice-agent-platform-go/1.4.0" {
				t.Errorf("User-Agent %q", ua)
			}
			public := op.Security != nil && len(*op.Security) == 0
			if (last.header.Get("Authorization") != "") == public {
				t.Errorf("%s: authorization sent %v, public %v", op.OperationID, last.header.Get("Authorization") != "", public)
			}
		}
	}
	if count != len(Operations) {
		t.Fatalf("openapi.json has %d operations, the SDK %d", count, len(Operations))
	}
}

func TestPostRetriedAfter429And503WithOneIdempotencyKey(t *testing.T) {
	f := newFake(t)
	f.script("/v1/agents", answer{status: 429, headers: map[string]string{"Retry-After": "0.05"}}, answer{status: 503}, answer{status: 201, body: map[string]any{"id": "agent_1", "name": "A"}})
	agent, err := fastClient(f.URL).Agents.Create(context.Background(), CreateAgentParams{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	if agent.ID != "agent_1" {
		t.Fatalf("agent %+v", agent)
	}
	attempts := f.requests("/v1/agents")
	if len(attempts) != 3 {
		t.Fatalf("%d attempts", len(attempts))
	}
	key := attempts[0].header.Get("Idempotency-Key")
	if len(key) != 36 {
		t.Fatalf("key %q", key)
	}
	for _, a := range attempts {
		if a.header.Get("Idempotency-Key") != key || string(a.body) != `{"name":"A"}` {
			t.Fatalf("attempt %q %s", a.header.Get("Idempotency-Key"), a.body)
		}
	}
	if _, err := fastClient(f.URL).Agents.Create(context.Background(), CreateAgentParams{Name: "B"}); err != nil {
		t.Fatal(err)
	}
	if again := f.requests("/v1/agents"); again[3].header.Get("Idempotency-Key") == key {
		t.Fatal("a new logical request got the same key")
	}
	if _, err := fastClient(f.URL).Agents.Create(context.Background(), CreateAgentParams{Name: "C"}, WithIdempotencyKey("mine")); err != nil {
		t.Fatal(err)
	}
	if mine := f.requests("/v1/agents"); mine[4].header.Get("Idempotency-Key") != "mine" {
		t.Fatal("the caller's key was not used")
	}
}

func TestPatchNotRepeatedAfter503AndTheErrorIsTyped(t *testing.T) {
	f := newFake(t)
	f.script("/v1/agents/agent_3", answer{status: 503})
	_, err := fastClient(f.URL).Agents.Update(context.Background(), "agent_3", UpdateAgentParams{Name: String("C")})
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %T %v", err, err)
	}
	if apiErr.Status != 503 || apiErr.Code != "service_unavailable" || apiErr.RequestID != "req_fake" || apiErr.Detail != "scripted" {
		t.Fatalf("error %+v", apiErr)
	}
	if n := len(f.requests("/v1/agents/agent_3")); n != 1 {
		t.Fatalf("%d attempts", n)
	}
}

func TestValidationErrorCarriesTheFields(t *testing.T) {
	f := newFake(t)
	f.script("/v1/agents", answer{status: 422, body: map[string]any{"status": 422, "code": "validation_failed", "detail": "invalid", "request_id": "req_1", "errors": []map[string]string{{"path": "/max_duration_seconds", "message": "must be >= 10"}}}})
	_, err := fastClient(f.URL).Agents.Create(context.Background(), CreateAgentParams{Name: "x"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 422 || apiErr.Code != "validation_failed" || len(apiErr.Errors) != 1 || apiErr.Errors[0].Path != "/max_duration_seconds" {
		t.Fatalf("error %#v", err)
	}
	if n := len(f.requests("/v1/agents")); n != 1 {
		t.Fatalf("a 422 was repeated: %d attempts", n)
	}
	if !strings.Contains(err.Error(), "422 validation_failed: invalid") {
		t.Fatalf("message %q", err.Error())
	}
}

func TestRetriesStopAtMaxRetries(t *testing.T) {
	f := newFake(t)
	f.script("/v1/wallet", answer{status: 429}, answer{status: 429}, answer{status: 429})
	_, err := fastClient(f.URL).Wallet.Retrieve(context.Background(), WithRequestMaxRetries(1))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 429 {
		t.Fatalf("error %v", err)
	}
	if n := len(f.requests("/v1/wallet")); n != 2 {
		t.Fatalf("%d attempts", n)
	}
}

func TestLostConnectionRetriedForGET(t *testing.T) {
	f := newFake(t)
	f.script("/v1/wallet", answer{reset: true}, answer{status: 200, body: map[string]any{"balance_usd": 5}})
	if _, err := fastClient(f.URL).Wallet.Retrieve(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(f.requests("/v1/wallet")); n != 2 {
		t.Fatalf("%d attempts", n)
	}
	// A new server: net/http itself resends once on a kept-alive connection that was closed.
	g := newFake(t)
	g.script("/v1/wallet", answer{reset: true}, answer{reset: true})
	_, err := fastClient(g.URL, WithMaxRetries(1)).Wallet.Retrieve(context.Background())
	var failure *ConnectionError
	if !errors.As(err, &failure) || failure.Timeout {
		t.Fatalf("error %T %v", err, err)
	}
}

func TestStreamedUploadSentOnce(t *testing.T) {
	f := newFake(t)
	f.script("/v1/campaigns/cmp_1/upload", answer{status: 503})
	reader, writer := io.Pipe()
	go func() {
		_, _ = writer.Write([]byte("phone\n"))
		_, _ = writer.Write([]byte("+15550100200\n"))
		writer.Close()
	}()
	_, err := fastClient(f.URL).Campaigns.Upload(context.Background(), "cmp_1", reader)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 503 {
		t.Fatalf("error %v", err)
	}
	attempts := f.requests("/v1/campaigns/cmp_1/upload")
	if len(attempts) != 1 || string(attempts[0].body) != "phone\n+15550100200\n" || attempts[0].header.Get("Content-Type") != "text/csv" {
		t.Fatalf("attempts %+v", attempts)
	}
	// A reader holding its bytes already is retried.
	f.script("/v1/campaigns/cmp_2/upload", answer{status: 503})
	if _, err := fastClient(f.URL).Campaigns.Upload(context.Background(), "cmp_2", strings.NewReader("phone\n")); err != nil {
		t.Fatal(err)
	}
	if n := len(f.requests("/v1/campaigns/cmp_2/upload")); n != 2 {
		t.Fatalf("%d attempts", n)
	}
}

func TestMultipartUploadStreamsTheFile(t *testing.T) {
	f := newFake(t)
	reader, writer := io.Pipe()
	go func() {
		_, _ = writer.Write([]byte("Opening hours: "))
		_, _ = writer.Write([]byte("nine to five.\n"))
		writer.Close()
	}()
	_, err := fastClient(f.URL).KnowledgeBases.AddSourceUpload(context.Background(), "kb_1", AddKnowledgeSourceUpload{File: File{Reader: reader, Name: "hours.txt", ContentType: "text/plain"}, Title: String("Hours")})
	if err != nil {
		t.Fatal(err)
	}
	sent := f.requests("/v1/knowledge-base/kb_1/sources")[0]
	media, params, err := mime.ParseMediaType(sent.header.Get("Content-Type"))
	if err != nil || media != "multipart/form-data" {
		t.Fatalf("content type %q", sent.header.Get("Content-Type"))
	}
	form, err := multipart.NewReader(strings.NewReader(string(sent.body)), params["boundary"]).ReadForm(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	file, _ := form.File["file"][0].Open()
	content, _ := io.ReadAll(file)
	if string(content) != "Opening hours: nine to five.\n" || form.File["file"][0].Filename != "hours.txt" || form.Value["title"][0] != "Hours" {
		t.Fatalf("form %+v %q", form.Value, content)
	}
}

func TestTimeoutPerAttemptAndByContext(t *testing.T) {
	f := newFake(t)
	f.script("/v1/health", answer{hang: time.Second}, answer{hang: time.Second})
	_, err := fastClient(f.URL).Health.Check(context.Background(), WithRequestTimeout(100*time.Millisecond), WithRequestMaxRetries(1))
	var failure *ConnectionError
	if !errors.As(err, &failure) || !failure.Timeout {
		t.Fatalf("error %T %v", err, err)
	}
	if n := len(f.requests("/v1/health")); n != 2 {
		t.Fatalf("%d attempts", n)
	}
	f.script("/v1/health", answer{hang: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := fastClient(f.URL).Health.Check(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %T %v", err, err)
	}
}

func TestPaginationFollowsNextCursor(t *testing.T) {
	f := newFake(t)
	f.handler = func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		if r.URL.Path != "/v1/agents" {
			return false
		}
		pages := map[string]string{
			"":   `{"data":[{"id":"a5"},{"id":"a4"}],"has_more":true,"next_cursor":"a4"}`,
			"a4": `{"data":[{"id":"a3"},{"id":"a2"}],"has_more":true,"next_cursor":"a2"}`,
			"a2": `{"data":[{"id":"a1"}],"has_more":false,"next_cursor":null}`,
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(pages[r.URL.Query().Get("cursor")]))
		return true
	}
	it := fastClient(f.URL).Agents.List(context.Background(), &ListAgentsQuery{Limit: Int(2), Name: String("x")})
	var ids []string
	for it.Next() {
		ids = append(ids, it.Current().ID)
	}
	if it.Err() != nil || strings.Join(ids, ",") != "a5,a4,a3,a2,a1" || it.Pages() != 3 {
		t.Fatalf("ids %v pages %d err %v", ids, it.Pages(), it.Err())
	}
	queries := f.requests("/v1/agents")
	if queries[0].query != "limit=2&name=x" || queries[2].query != "cursor=a2&limit=2&name=x" {
		t.Fatalf("queries %q %q", queries[0].query, queries[2].query)
	}
}

func TestOneRefreshSharedByConcurrentRequests(t *testing.T) {
	f := newFake(t)
	var logins, refreshes int32
	var mu sync.Mutex
	current := ""
	var saved []Tokens
	f.handler = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		w.Header().Set("Content-Type", "application/json")
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v1/auth/login":
			atomic.AddInt32(&logins, 1)
			current = "access-1"
			_, _ = w.Write([]byte(`{"access_token":"access-1","refresh_token":"rt_1","token_type":"Bearer","expires_in":2}`))
		case "/v1/auth/refresh":
			n := atomic.AddInt32(&refreshes, 1)
			if !strings.Contains(string(body), `"rt_1"`) {
				w.WriteHeader(401)
				return true
			}
			current = "access-" + strconv.Itoa(int(n)+1)
			_, _ = w.Write([]byte(`{"access_token":"` + current + `","refresh_token":"rt_2","token_type":"Bearer","expires_in":2}`))
		default:
			if r.Header.Get("Authorization") != "Bearer "+current {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(401)
				_, _ = w.Write([]byte(`{"status":401,"code":"token_expired","detail":"expired"}`))
				return true
			}
			_, _ = w.Write([]byte(`{"id":"user_1","email":"a@example.com"}`))
		}
		return true
	}
	client := NewClient(f.URL, WithLogin("a@example.com", "pw"), WithTokenHook(func(tokens Tokens) { saved = append(saved, tokens) }))
	if _, err := client.Auth.Me(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	current = "access-expired" // every token the client holds is now refused as expired
	mu.Unlock()
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := client.Auth.Me(context.Background())
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if logins != 1 || refreshes != 1 || len(saved) != 2 || saved[1].AccessToken != "access-2" || client.Tokens().RefreshToken != "rt_2" {
		t.Fatalf("logins %d refreshes %d saved %+v", logins, refreshes, saved)
	}
}

// tokenPair is the answer of a login or refresh handing out access (and its refresh token).
func tokenPair(access string, expiresIn int) answer {
	return answer{status: 200, body: map[string]any{"access_token": access, "refresh_token": "rt_" + access, "token_type": "Bearer", "expires_in": expiresIn}}
}

// streamed answers a reader holding nothing in memory: its body is streamed, and sent once only.
func streamed(text string) io.Reader {
	reader, writer := io.Pipe()
	go func() {
		_, _ = writer.Write([]byte(text))
		writer.Close()
	}()
	return reader
}

// unsignedJWT is a JWT with these claims: the SDK reads them, only the server verifies a signature.
func unsignedJWT(claims map[string]any) string {
	header, _ := json.Marshal(map[string]string{"alg": "HS256", "typ": "JWT"})
	payload, _ := json.Marshal(claims)
	return base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload) + ".signature"
}

func TestStreamedUploadsRefreshATokenPastHalfItsLifeFirstOnceForAll(t *testing.T) {
	f := newFake(t)
	f.script("/v1/auth/login", tokenPair("access-1", 3600))
	f.script("/v1/auth/refresh", tokenPair("access-2", 3600))
	var told []string
	client := NewClient(f.URL, WithLogin("a@example.com", "pw"), WithTokenHook(func(tokens Tokens) { told = append(told, tokens.AccessToken) }))
	if _, err := client.Auth.Me(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 31 minutes later: past half of its hour, yet 29 minutes before it expires.
	auth := client.core.auth
	auth.mu.Lock()
	auth.issuedAt, auth.expiresAt = auth.issuedAt.Add(-31*time.Minute), auth.expiresAt.Add(-31*time.Minute)
	auth.mu.Unlock()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, id := range []string{"cmp_a", "cmp_b"} {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			_, err := client.Campaigns.Upload(context.Background(), id, streamed("phone\n+15550100200\n"))
			errs <- err
		}(id)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.requests("/v1/auth/refresh")); n != 1 || !reflect.DeepEqual(told, []string{"access-1", "access-2"}) {
		t.Fatalf("%d refreshes, told %v", n, told)
	}
	for _, path := range []string{"/v1/campaigns/cmp_a/upload", "/v1/campaigns/cmp_b/upload"} {
		sent := f.requests(path)
		if len(sent) != 1 || sent[0].header.Get("Authorization") != "Bearer access-2" || string(sent[0].body) != "phone\n+15550100200\n" {
			t.Fatalf("%s: %+v", path, sent)
		}
	}
}

func TestResumedTokenPastHalfItsLifeRefreshedBeforeAStreamedUploadNotBeforeJSON(t *testing.T) {
	f := newFake(t)
	f.script("/v1/auth/refresh", tokenPair("access-3", 3600))
	now := time.Now().Unix()
	resumed := unsignedJWT(map[string]any{"sub": "user_1", "iat": now - 40*60, "exp": now + 20*60})
	client := NewClient(f.URL, WithTokens(resumed, "rt_saved"))
	if _, err := client.Auth.Me(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.requests("/v1/auth/me")[0].header.Get("Authorization"); got != "Bearer "+resumed || len(f.requests("/v1/auth/refresh")) != 0 {
		t.Fatalf("a JSON request can be resent: sent as is, no refresh ahead (sent with %q)", got)
	}
	if _, err := client.Campaigns.Upload(context.Background(), "cmp_c", streamed("phone\n")); err != nil {
		t.Fatal(err)
	}
	refreshes := f.requests("/v1/auth/refresh")
	if len(refreshes) != 1 || string(refreshes[0].body) != `{"refresh_token":"rt_saved"}` {
		t.Fatalf("refreshes %+v", refreshes)
	}
	if got := f.requests("/v1/campaigns/cmp_c/upload")[0].header.Get("Authorization"); got != "Bearer access-3" {
		t.Fatalf("upload sent with %q", got)
	}
}

func TestWorkspaceHeader(t *testing.T) {
	f := newFake(t)
	client := fastClient(f.URL, WithWorkspace("ws_1"))
	if _, err := client.Wallet.Retrieve(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WithWorkspace("ws_2").Wallet.Retrieve(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Wallet.Retrieve(context.Background(), WithRequestWorkspace("ws_3")); err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, r := range f.requests("/v1/wallet") {
		got = append(got, r.header.Get("X-Workspace-Id"))
	}
	if strings.Join(got, ",") != "ws_1,ws_2,ws_3" {
		t.Fatalf("workspaces %v", got)
	}
}

func TestNullableFields(t *testing.T) {
	data, err := json.Marshal(UpdateKnowledgeBaseParams{Name: String("FAQ"), Description: Null[string]()})
	if err != nil || string(data) != `{"name":"FAQ","description":null}` {
		t.Fatalf("%s %v", data, err)
	}
	data, _ = json.Marshal(UpdateKnowledgeBaseParams{Description: NullableOf("About us")})
	if string(data) != `{"description":"About us"}` {
		t.Fatalf("%s", data)
	}
	data, _ = json.Marshal(UpdateKnowledgeBaseParams{})
	if string(data) != `{}` {
		t.Fatalf("%s", data)
	}
}

func TestWebhookSignatures(t *testing.T) {
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123"))
	body := []byte(`{"type":"call.ended","event_id":"evt_1","data":{"status":"completed"}}`)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte("0123456789abcdef0123"))
	mac.Write([]byte("evt_1." + ts + "."))
	mac.Write(body)
	standard := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	service := hmac.New(sha256.New, []byte(secret))
	service.Write(body)
	header := http.Header{}
	header.Set("webhook-id", "evt_1")
	header.Set("webhook-timestamp", ts)
	header.Set("webhook-signature", "v1,bm90IGl0 "+standard)
	header.Set("X-Service-Signature", "sha256="+hex.EncodeToString(service.Sum(nil)))
	for _, scheme := range []WebhookScheme{"", SchemeStandard, SchemeService} {
		event, err := VerifyWebhook(body, header, secret, VerifyOptions{Scheme: scheme})
		if err != nil || event.Type != "call.ended" || event.EventID != "evt_1" {
			t.Fatalf("%s: %+v %v", scheme, event, err)
		}
		var data struct{ Status string }
		if json.Unmarshal(event.Data, &data) != nil || data.Status != "completed" {
			t.Fatalf("data %s", event.Data)
		}
		tampered := []byte(strings.Replace(string(body), "completed", "failed", 1))
		var refused *WebhookVerificationError
		if _, err := VerifyWebhook(tampered, header, secret, VerifyOptions{Scheme: scheme}); !errors.As(err, &refused) {
			t.Fatalf("%s: tampered body accepted: %v", scheme, err)
		}
		if _, err := VerifyWebhook(body, header, secret, VerifyOptions{Scheme: scheme, Now: time.Now().Add(10 * time.Minute)}); !errors.As(err, &refused) {
			t.Fatalf("%s: old delivery accepted: %v", scheme, err)
		}
	}
	if _, err := VerifyWebhook(body, header, secret, VerifyOptions{Now: time.Now().Add(10 * time.Minute), Tolerance: time.Hour}); err != nil {
		t.Fatalf("tolerance: %v", err)
	}
}
