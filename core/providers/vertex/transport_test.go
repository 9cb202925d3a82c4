package vertex

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/openaifake"
	"github.com/fngate/fngate/internal/vertexfake"
)

// serviceAccount writes a service account key whose token endpoint is a local server
// handing out "tok-1", and returns its path and how many tokens were handed out.
func serviceAccount(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var issued atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Form.Get("assertion") == "" {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"tok-1","token_type":"Bearer","expires_in":3600}`))
	}))
	t.Cleanup(tokens.Close)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": vertexfake.Project, "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "gateway@fngate-test.iam.gserviceaccount.com", "client_id": "1",
		"token_uri": tokens.URL,
	})
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, sa, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, &issued
}

// TestCredentialsOnFirstUse: building the provider looks for no credentials; the first call
// does, and a failed lookup is an auth failure (worth another route) that is not remembered,
// so once credentials exist the next call uses them: the OpenAI-compatible endpoint gets
// the service account's token, fetched once for several calls.
func TestCredentialsOnFirstUse(t *testing.T) {
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json"))
	openapi := vertexfake.NewOpenAPI()
	defer openapi.Close()
	openapi.Token = "tok-1"
	pp, err := New(&config.Connection{Kind: Kind, Project: vertexfake.Project, Location: vertexfake.Location, BaseURL: openapi.URL}, providers.Env{})
	if err != nil {
		t.Fatalf("New looked for credentials: %v", err)
	}
	p := pp.(*Provider)
	if p.creds.Load() != nil || p.client.Load() != nil {
		t.Fatal("New made credentials or a client")
	}
	req := chat(t, `{"model":"gw/llama","messages":[{"role":"user","content":"hi"}]}`)
	target := providers.Target{Model: "meta/llama-3.3-70b-instruct-maas"}
	_, err = p.Generate(context.Background(), req, target)
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.Auth || !strings.Contains(pe.Message, "Application Default Credentials") {
		t.Fatalf("without credentials: %v", err)
	}
	if _, err := p.Generate(context.Background(), req, providers.Target{Model: "gemini-2.5-flash"}); !errors.As(err, &pe) || pe.Class != providers.Auth {
		t.Fatalf("gRPC without credentials: %v", err)
	}
	if len(openapi.Seen()) != 0 || p.client.Load() != nil {
		t.Fatal("a call went out without credentials")
	}

	path, issued := serviceAccount(t)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
	openapi.Fake.Default = openaifake.Reply{Text: "authorised", PromptTokens: 1, CompletionTokens: 1}
	for range 3 {
		a, err := p.Generate(context.Background(), req, target)
		if err != nil {
			t.Fatal(err)
		}
		if text, _ := a.Text(); text != "authorised" {
			t.Fatalf("content %q", text)
		}
	}
	if n := issued.Load(); n != 1 {
		t.Errorf("%d tokens fetched for 3 calls, want 1 (cached)", n)
	}
	for _, s := range openapi.Seen() {
		if s.Authorization != "Bearer tok-1" {
			t.Errorf("Authorization %q", s.Authorization)
		}
	}
}

// TestOneClientForConcurrentFirstCalls: calls that race to be first share one gRPC client,
// so the fake sees them all on one connection.
func TestOneClientForConcurrentFirstCalls(t *testing.T) {
	fake := vertexfake.New()
	defer fake.Close()
	fake.SetDefault(vertexfake.Reply{Gemini: &vertexfake.Answer{Text: "ok"}})
	pp, err := New(&config.Connection{Kind: Kind, Project: vertexfake.Project, Location: vertexfake.Location, Endpoint: fake.Addr, Insecure: true}, providers.Env{})
	if err != nil {
		t.Fatal(err)
	}
	p := pp.(*Provider)
	req := chat(t, `{"model":"gw/gemini","messages":[{"role":"user","content":"hi"}]}`)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if _, err = p.Generate(context.Background(), req, providers.Target{Model: "gemini-2.5-flash"}); err == nil {
				var s llm.Stream
				if s, err = p.Stream(context.Background(), req, providers.Target{Model: "gemini-2.5-flash"}); err == nil {
					_, err = collect(s)
				}
			}
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
	peers := map[string]bool{}
	for _, r := range fake.Requests() {
		peers[r.Peer] = true
	}
	if len(fake.Requests()) != 32 || len(peers) != 1 {
		t.Errorf("%d calls from %d connections, want 32 from 1", len(fake.Requests()), len(peers))
	}
}

func collect(s llm.Stream) (llm.Delta, error) {
	defer s.Close()
	var last llm.Delta
	for {
		d, err := s.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return last, nil
			}
			return last, err
		}
		last = d
	}
}

// TestOversizedAnswers: an upstream cannot make the gateway buffer more than it reads. A
// gRPC message above the receive limit (32 MB; here lowered to 1 KB) fails the call as
// unavailable, worth another route, not as the quota error gRPC's own status code would
// suggest; a partner model's answer of 100,000 tool calls is refused by openaicompat's
// bounded parser rather than decoded whole.
func TestOversizedAnswers(t *testing.T) {
	fake := vertexfake.New()
	defer fake.Close()
	openapi := vertexfake.NewOpenAPI()
	defer openapi.Close()
	pp, err := New(&config.Connection{Kind: Kind, Project: vertexfake.Project, Location: vertexfake.Location, Endpoint: fake.Addr,
		Insecure: true, BaseURL: openapi.URL}, providers.Env{})
	if err != nil {
		t.Fatal(err)
	}
	p := pp.(*Provider)
	if p.maxRecv != 32<<20 {
		t.Fatalf("receive limit %d, want 32 MB", p.maxRecv)
	}
	p.maxRecv = 1 << 10
	big := &vertexfake.Answer{Text: strings.Repeat("word ", 1000)}
	fake.Enqueue(vertexfake.Reply{Gemini: big}, vertexfake.Reply{Messages: []*aiplatformpb.GenerateContentResponse{big.Response()}})
	req := chat(t, `{"model":"gw","messages":[{"role":"user","content":"hi"}]}`)
	target := providers.Target{Model: "gemini-2.5-flash"}
	_, err = p.Generate(context.Background(), req, target)
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.Unavailable || !strings.Contains(pe.Message, "larger than") {
		t.Errorf("whole answer: %v", err)
	}
	if _, err := p.Stream(context.Background(), req, target); !errors.As(err, &pe) || pe.Class != providers.Unavailable {
		t.Errorf("stream message: %v", err)
	}

	// 100,000 tool calls in 5 MB: encoding/json would build them all.
	calls := strings.Repeat(`{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}},`, 100_000)
	openapi.Fake.Enqueue(openaifake.Reply{Body: []byte(`{"choices":[{"message":{"content":null,"tool_calls":[` +
		strings.TrimSuffix(calls, ",") + `]},"finish_reason":"tool_calls"}]}`)})
	_, err = p.Generate(context.Background(), req, providers.Target{Model: "meta/llama-3.3-70b-instruct-maas"})
	if !errors.As(err, &pe) || pe.Class != providers.Unavailable || !strings.Contains(pe.Message, "tool calls") {
		t.Errorf("an answer of 100,000 tool calls: %v", err)
	}
}
