package bedrock

import (
	"encoding/pem"
	"errors"
	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/bedrockfake"
)

func hello() *llm.Request {
	return &llm.Request{Model: "gw", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "hi"}}}}}
}

func okAnswer() bedrockfake.Answer {
	return bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "ok"}}}
}

// scope returns the region and service of a SigV4 Authorization header.
func scope(t *testing.T, auth string) (region, service string) {
	t.Helper()
	cred, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 Credential=")
	if !ok {
		t.Fatalf("not a SigV4 header: %q", auth)
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(cred, "/") // KEY/DATE/REGION/SERVICE/aws4_request
	if len(parts) != 5 {
		t.Fatalf("bad credential scope %q", cred)
	}
	return parts[2], parts[3]
}

func TestRegistration(t *testing.T) {
	r := providers.Registry{}
	Register(r, sdkconfig.Load)
	if r[Kind] == nil || Kind != "bedrock" {
		t.Fatalf("Register did not add kind bedrock: %v", r.Kinds())
	}
	p, _ := fakeProvider(t)
	if p.Name() != "Amazon Bedrock" {
		t.Errorf("Name() = %q", p.Name())
	}
	// Bedrock is chat only: Check answers a legacy completion with the 501 naming Bedrock,
	// on either API.
	for _, api := range []string{"converse", "invoke"} {
		req := hello()
		req.Op = llm.OpCompletion
		if oe := p.Check(req, providers.Target{Model: "m", API: api}); oe == nil || oe.Status != 501 || oe.Code != "unsupported_endpoint" {
			t.Errorf("api %s: a completion got %v, want the 501", api, oe)
		}
	}
	if _, ok := any(p).(providers.TokenCounter); !ok {
		t.Error("the Bedrock provider does not count tokens")
	}
}

func TestNewContactsNothing(t *testing.T) {
	awstest.Isolate(t, "")
	f := bedrockfake.Start()
	defer f.Close()
	// No credentials anywhere: building still succeeds, since the chain is resolved lazily,
	// and the first call fails as the gateway's own auth problem without reaching Bedrock.
	p, err := testNew(&config.Connection{Kind: Kind, Region: "us-east-1", Endpoint: f.URL}, providers.Env{HTTPClient: f.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Fatalf("New sent %d requests", n)
	}
	f.Script("m", okAnswer())
	_, err = p.Generate(ctx, hello(), providers.Target{Model: "m"})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.Auth || pe.Code != "credentials" {
		t.Fatalf("got %v, want class auth for missing credentials", err)
	}
	if pe.ClientError().Status != 502 || pe.Failover() != true {
		t.Errorf("missing credentials: client status %d, failover %v", pe.ClientError().Status, pe.Failover())
	}
	_, err = p.Stream(ctx, hello(), providers.Target{Model: "m"})
	if !errors.As(err, &pe) || pe.Class != providers.Auth {
		t.Fatalf("stream: got %v, want class auth", err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("an unsigned request reached Bedrock (%d)", n)
	}
}

func TestRegion(t *testing.T) {
	awstest.Isolate(t, "AKIDFAKE")
	f := bedrockfake.Start()
	defer f.Close()
	f.Script("m", okAnswer())
	if _, err := testNew(&config.Connection{Kind: Kind, Endpoint: f.URL}, providers.Env{}); err == nil || !strings.Contains(err.Error(), "region") {
		t.Fatalf("no region anywhere: got %v, want an error naming region", err)
	}
	t.Setenv("AWS_REGION", "ap-southeast-2")
	for _, tc := range []struct{ conn, want string }{{"", "ap-southeast-2"}, {"eu-central-1", "eu-central-1"}} {
		p, err := testNew(&config.Connection{Kind: Kind, Region: tc.conn, Endpoint: f.URL}, providers.Env{HTTPClient: f.Client()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Generate(ctx, hello(), providers.Target{Model: "m"}); err != nil {
			t.Fatal(err)
		}
		region, service := scope(t, f.Last().Header.Get("Authorization"))
		if region != tc.want || service != "bedrock" {
			t.Errorf("connection region %q: signed for %s/%s, want %s/bedrock", tc.conn, region, service, tc.want)
		}
	}
}

func TestProfile(t *testing.T) {
	awstest.Isolate(t, "")
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials")
	conf := filepath.Join(dir, "config")
	if err := os.WriteFile(creds, []byte("[team]\naws_access_key_id = AKIDTEAM\naws_secret_access_key = s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[profile team]\nregion = eu-west-3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	t.Setenv("AWS_CONFIG_FILE", conf)
	f := bedrockfake.Start()
	defer f.Close()
	f.AccessKeyID = "AKIDTEAM"
	f.Script("m", okAnswer())
	p, err := testNew(&config.Connection{Kind: Kind, Endpoint: f.URL, Extra: map[string]any{"profile": "team"}}, providers.Env{HTTPClient: f.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Generate(ctx, hello(), providers.Target{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if region, _ := scope(t, f.Last().Header.Get("Authorization")); region != "eu-west-3" {
		t.Errorf("signed for %s, want the profile's eu-west-3", region)
	}
	if _, err := testNew(&config.Connection{Kind: Kind, Endpoint: f.URL, Extra: map[string]any{"profile": "nobody"}}, providers.Env{}); err == nil {
		t.Error("an unknown profile was accepted")
	}
}

func TestBearerToken(t *testing.T) {
	awstest.Isolate(t, "AKIDFAKE")
	f := bedrockfake.StartTLS()
	defer f.Close()
	f.Script("m", okAnswer())
	env := providers.Env{HTTPClient: f.Client()}
	call := func(t *testing.T, conn *config.Connection) (string, error) {
		t.Helper()
		p, err := testNew(conn, env)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Stream(ctx, hello(), providers.Target{Model: "m"}); err != nil {
			return "", err
		}
		return f.Last().Header.Get("Authorization"), nil
	}
	conn := func(extra map[string]any) *config.Connection {
		return &config.Connection{Kind: Kind, Region: "us-east-1", Endpoint: f.URL, Extra: extra}
	}

	f.BearerToken = "conn-key"
	auth, err := call(t, conn(map[string]any{"bearer_token": "conn-key"}))
	if err != nil || auth != "Bearer conn-key" {
		t.Errorf("bearer_token: Authorization %q, err %v", auth, err)
	}
	// The SDK reads AWS_BEARER_TOKEN_BEDROCK itself; the connection's key wins over it.
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "env-key")
	if auth, err := call(t, conn(map[string]any{"bearer_token": "conn-key"})); err != nil || auth != "Bearer conn-key" {
		t.Errorf("bearer_token with the env var set: Authorization %q, err %v", auth, err)
	}
	f.BearerToken = "env-key"
	if auth, err := call(t, conn(nil)); err != nil || auth != "Bearer env-key" {
		t.Errorf("AWS_BEARER_TOKEN_BEDROCK: Authorization %q, err %v", auth, err)
	}
	// A wrong key is the gateway's credentials failing: auth, so the route fails over.
	_, err = call(t, conn(map[string]any{"bearer_token": "stale"}))
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.Auth || pe.Code != "UnrecognizedClientException" {
		t.Errorf("wrong key: got %v, want auth UnrecognizedClientException", err)
	}
	// The SDK will not send a bearer token in clear text: refuse the connection up front.
	if _, err := testNew(&config.Connection{Kind: Kind, Region: "us-east-1", Endpoint: "http://127.0.0.1:1", Extra: map[string]any{"bearer_token": "k"}}, env); err == nil {
		t.Error("a bearer token over plain http was accepted")
	}
}

func TestModelIDInPath(t *testing.T) {
	p, f := fakeProvider(t)
	for _, id := range []string{
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0",
	} {
		f.Script(id, okAnswer())
		if _, err := p.Generate(ctx, hello(), providers.Target{Model: id}); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if got := f.Last().ModelID; got != id {
			t.Errorf("Bedrock saw model %q, want %q", got, id)
		}
	}
	// A model Bedrock does not know fails over as not_found.
	_, err := p.Generate(ctx, hello(), providers.Target{Model: "anthropic.nope"})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.NotFound || pe.Status != 404 {
		t.Errorf("unknown model: %v", err)
	}
}

func TestCABundle(t *testing.T) {
	awstest.Isolate(t, "AKIDFAKE")
	f := bedrockfake.StartTLS()
	defer f.Close()
	f.Script("m", okAnswer())
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	// The gateway's shared client does not trust the fake; the SDK's client, given the bundle,
	// does.
	env := providers.Env{HTTPClient: providers.NewHTTPClient(0)}
	conn := &config.Connection{Kind: Kind, Region: "us-east-1", Endpoint: f.URL}
	p, err := testNew(conn, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Generate(ctx, hello(), providers.Target{Model: "m"}); err == nil {
		t.Fatal("the shared client trusted a certificate it was never given")
	}
	t.Setenv("AWS_CA_BUNDLE", bundle)
	if p, err = testNew(conn, env); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Generate(ctx, hello(), providers.Target{Model: "m"}); err != nil {
		t.Errorf("AWS_CA_BUNDLE was not honoured: %v", err)
	}
}
