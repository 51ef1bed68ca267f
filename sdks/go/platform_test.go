//go:build integration

package voiceagent

// The SDK against the real platform at VAP_BASE_URL (started by test/sdk/go.test.ts with
// 3-second access tokens): login and the shared refresh, typed errors, pagination, streamed
// uploads and downloads, workspaces, voice sessions, and the README's quickstart run as printed
// (a sandbox call, waited for, its recording downloaded, its webhook verified).
// Run: VAP_BASE_URL=http://127.0.0.1:3000 go test -tags integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

const password = "correct horse battery"

func baseURL(t *testing.T) string {
	url := os.Getenv("VAP_BASE_URL")
	if url == "" {
		t.Fatal("VAP_BASE_URL names the platform these tests run against (test/sdk/go.test.ts sets it)")
	}
	return url
}

type account struct {
	client *Client
	email  string
	mu     sync.Mutex
	saved  []Tokens
}

func (a *account) tokens() []Tokens {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Tokens(nil), a.saved...)
}

func newAccount(t *testing.T) *account {
	var b [5]byte
	_, _ = rand.Read(b[:])
	a := &account{email: "go-" + hex.EncodeToString(b[:]) + "@example.com"}
	if _, err := NewClient(baseURL(t)).Auth.Register(context.Background(), RegisterParams{Email: a.email, Password: password}); err != nil {
		t.Fatal(err)
	}
	a.client = NewClient(baseURL(t), WithLogin(a.email, password), WithTokenHook(func(tokens Tokens) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.saved = append(a.saved, tokens)
	}))
	return a
}

// expire waits out the access token by its own exp claim, which the server rounds up: it may
// outlive the expires_in the SDK counts from by up to a second.
func expire(a *account) {
	_, expiresAt := claimedLifetime(a.client.Tokens().AccessToken)
	time.Sleep(time.Until(expiresAt) + 50*time.Millisecond)
}

func TestPlatformLoginThenOneRefreshSharedByConcurrentRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newAccount(t)
	me, err := a.client.Auth.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(a.tokens()); n != 1 {
		t.Fatalf("the hook was told %d times of the login", n)
	}
	expire(a)
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			it := a.client.Agents.List(ctx, &ListAgentsQuery{Limit: Int(1)})
			it.Next()
			errs <- it.Err()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	saved := a.tokens()
	if len(saved) != 2 {
		t.Fatalf("%d logins and refreshes for five requests, want one refresh", len(saved))
	}
	expire(a)
	resumed := NewClient(baseURL(t), WithTokens(saved[1].AccessToken, saved[1].RefreshToken))
	again, err := resumed.Auth.Me(ctx)
	if err != nil || again.ID != me.ID {
		t.Fatalf("resumed session: %v %v", again, err)
	}
}

func TestPlatformTypedErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	it := NewClient(baseURL(t)).Agents.List(ctx, nil)
	it.Next()
	var apiErr *APIError
	if !errors.As(it.Err(), &apiErr) || apiErr.Status != http.StatusUnauthorized || apiErr.RequestID == "" {
		t.Fatalf("error %v", it.Err())
	}
	a := newAccount(t)
	_, err := a.client.Agents.Create(ctx, CreateAgentParams{Name: "x", MaxDurationSeconds: Int(-5)})
	if !errors.As(err, &apiErr) || apiErr.Status != 422 || apiErr.Code != "validation_failed" {
		t.Fatalf("error %v", err)
	}
	found := false
	for _, e := range apiErr.Errors {
		found = found || strings.Contains(e.Path, "max_duration_seconds")
	}
	if !found {
		t.Fatalf("errors %+v", apiErr.Errors)
	}
}

func TestPlatformPagination(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newAccount(t)
	created := map[string]bool{}
	for i := 0; i < 5; i++ {
		agent, err := a.client.Agents.Create(ctx, CreateAgentParams{Name: "Agent " + string(rune('A'+i))})
		if err != nil {
			t.Fatal(err)
		}
		created[agent.ID] = true
	}
	it := a.client.Agents.List(ctx, &ListAgentsQuery{Limit: Int(2)})
	listed := map[string]bool{}
	for it.Next() {
		listed[it.Current().ID] = true
	}
	if it.Err() != nil || len(listed) != 5 || it.Pages() != 3 {
		t.Fatalf("listed %d in %d pages: %v", len(listed), it.Pages(), it.Err())
	}
	for id := range created {
		if !listed[id] {
			t.Fatalf("%s not listed", id)
		}
	}
}

func TestPlatformPagesThroughCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newAccount(t)
	agent, err := a.client.Agents.Create(ctx, CreateAgentParams{Name: "Caller"})
	if err != nil {
		t.Fatal(err)
	}
	placed := map[string]bool{}
	for i := 0; i < 3; i++ {
		call, err := a.client.Calls.Create(ctx, CreateOutboundCallParams{AgentID: agent.ID, To: "+15550100200", Simulation: &CreateOutboundCallParamsSimulation{CallerScript: []any{"Goodbye!"}}})
		if err != nil {
			t.Fatal(err)
		}
		placed[call.ID] = true
	}
	it := a.client.Calls.List(ctx, &ListCallsQuery{Limit: Int(2)})
	listed := map[string]bool{}
	for it.Next() {
		listed[it.Current().ID] = true
	}
	if it.Err() != nil || it.Pages() != 2 || len(listed) != 3 {
		t.Fatalf("listed %d calls in %d pages: %v", len(listed), it.Pages(), it.Err())
	}
	for id := range placed {
		if !listed[id] {
			t.Fatalf("call %s not listed", id)
		}
	}
}

// chunks is a reader that only streams (not held in memory), as a file or a pipe would.
type chunks struct{ parts [][]byte }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	if len(c.parts[0]) == 0 {
		c.parts = c.parts[1:]
	}
	return n, nil
}

func TestPlatformStreamedUploadsAndDownload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newAccount(t)
	agent, err := a.client.Agents.Create(ctx, CreateAgentParams{Name: "Uploader"})
	if err != nil {
		t.Fatal(err)
	}
	campaign, err := a.client.Campaigns.Create(ctx, CreateCampaignParams{Name: "Reminders", AgentID: agent.ID})
	if err != nil {
		t.Fatal(err)
	}
	expire(a) // a streamed body cannot be resent: the SDK refreshes before sending it
	csv := &chunks{parts: [][]byte{[]byte("phone,first_name\n"), []byte("+15550100200,Grace\n"), []byte("+15550100201,Alan\n")}}
	upload, err := a.client.Campaigns.Upload(ctx, campaign.ID, csv)
	if err != nil {
		t.Fatal(err)
	}
	if upload.Accepted != 2 {
		t.Fatalf("upload %+v", upload)
	}
	base, err := a.client.KnowledgeBases.Create(ctx, CreateKnowledgeBaseParams{Name: "FAQ"})
	if err != nil {
		t.Fatal(err)
	}
	file := &chunks{parts: [][]byte{[]byte("Opening hours: "), []byte("nine to five.\n")}}
	source, err := a.client.KnowledgeBases.AddSourceUpload(ctx, base.ID, AddKnowledgeSourceUpload{File: File{Reader: file, Name: "hours.txt", ContentType: "text/plain"}})
	if err != nil {
		t.Fatal(err)
	}
	if source.Title != "hours.txt" {
		t.Fatalf("source %+v", source)
	}
	results, err := a.client.Campaigns.Results(ctx, campaign.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer results.Close()
	body, err := io.ReadAll(results)
	if err != nil || results.ContentType != "text/csv" || !bytes.Contains(body, []byte("+15550100201")) {
		t.Fatalf("results %q %q %v", results.ContentType, body, err)
	}
}

func TestPlatformWorkspaceSelectionAndVoiceSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newAccount(t)
	other, err := a.client.Workspaces.Create(ctx, CreateWorkspaceParams{Name: "Second"})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := a.client.WithWorkspace(other.ID).Agents.Create(ctx, CreateAgentParams{Name: "Elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *APIError
	if _, err := a.client.Agents.Retrieve(ctx, elsewhere.ID); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("another workspace's agent: %v", err)
	}
	// A new workspace has no credit: the voice session runs in the personal one.
	home, err := a.client.Agents.Create(ctx, CreateAgentParams{Name: "Voice"})
	if err != nil {
		t.Fatal(err)
	}
	session, err := a.client.VoiceSessions.Create(ctx, CreateVoiceSessionParams{AgentID: home.ID, ExternalUserID: "user-1"})
	if err != nil {
		t.Fatal(err)
	}
	media, err := a.client.VoiceSessions.MediaURL(session)
	if !strings.HasPrefix(session.ID, "vs_") || session.Token == "" || err != nil || !strings.Contains(media, "token=") {
		t.Fatalf("session %+v, media %q %v", session, media, err)
	}
	ended, err := a.client.VoiceSessions.End(ctx, session.ID)
	if err != nil || ended.Status != "ended" {
		t.Fatalf("end: %+v %v", ended, err)
	}
}

func TestPlatformReadmeQuickstartRunsAsPrinted(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	match := regexp.MustCompile("(?s)## Quickstart.*?```go\n(.*?)```").FindSubmatch(readme)
	example, _ := os.ReadFile(filepath.Join("examples", "quickstart", "main.go"))
	if match == nil || string(match[1]) != string(example) {
		t.Fatal("the README's quickstart differs from examples/quickstart/main.go")
	}
	a := newAccount(t)
	work := t.TempDir()
	binary := filepath.Join(work, "quickstart")
	if out, err := exec.Command("go", "build", "-o", binary, "./examples/quickstart").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := exec.Command(binary)
	run.Dir = work
	run.Env = append(os.Environ(), "VAP_EMAIL="+a.email, "VAP_PASSWORD="+password)
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("quickstart: %v\n%s", err, out)
	}
	for _, line := range []string{`(?m)^call completed after \d+ s$`, `(?m)^recording saved: \d+ bytes$`, `(?m)^verified webhook call\.ended: completed$`} {
		if !regexp.MustCompile(line).Match(out) {
			t.Fatalf("quickstart printed no %s:\n%s", line, out)
		}
	}
	mp3, err := os.ReadFile(filepath.Join(work, "call.mp3"))
	if err != nil || len(mp3) < 10000 || !(bytes.HasPrefix(mp3, []byte("ID3")) || (mp3[0] == 0xFF && mp3[1]&0xE0 == 0xE0)) {
		t.Fatalf("call.mp3: %d bytes %v", len(mp3), err)
	}
}
