package gcpsm

import (
	"context"
	"hash/crc32"
	"net"
	"strings"
	"sync"
	"testing"

	secretmanager "cloud.google.com/go/secretmanager/apiv1"
	"cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// fakeSecretManager is a Secret Manager gRPC service holding versions in memory. The real
// client talks to it over TCP, so request names, payloads, checksums and status codes go
// through the same code as in production.
type fakeSecretManager struct {
	secretmanagerpb.UnimplementedSecretManagerServiceServer
	mu       sync.Mutex
	versions map[string][]byte // full version name -> data
	badCRC   map[string]bool
	calls    map[string]int
}

func (f *fakeSecretManager) AccessSecretVersion(_ context.Context, req *secretmanagerpb.AccessSecretVersionRequest) (*secretmanagerpb.AccessSecretVersionResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[req.GetName()]++
	data, ok := f.versions[req.GetName()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "Secret Version [%s] not found.", req.GetName())
	}
	sum := int64(crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
	if f.badCRC[req.GetName()] {
		sum++
	}
	return &secretmanagerpb.AccessSecretVersionResponse{Name: req.GetName(),
		Payload: &secretmanagerpb.SecretPayload{Data: data, DataCrc32C: &sum}}, nil
}

func startFake(t *testing.T, f *fakeSecretManager) []option.ClientOption {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	secretmanagerpb.RegisterSecretManagerServiceServer(srv, f)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return []option.ClientOption{
		option.WithEndpoint(ln.Addr().String()),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}
}

func TestResolveAgainstFakeService(t *testing.T) {
	f := &fakeSecretManager{
		versions: map[string][]byte{
			"projects/p1/secrets/openai/versions/latest": []byte("sk-latest"),
			"projects/p1/secrets/openai/versions/3":      []byte("sk-v3"),
			"projects/p1/secrets/bundle/versions/latest": []byte(`{"anthropic":"sk-ant","openrouter":"sk-or"}`),
			"projects/p1/secrets/corrupt/versions/1":     []byte("garbled"),
		},
		badCRC: map[string]bool{"projects/p1/secrets/corrupt/versions/1": true},
		calls:  map[string]int{},
	}
	r := NewDefault(startFake(t, f)...)
	ctx := context.Background()
	for _, tc := range []struct{ ref, want string }{
		{"gcp-sm://projects/p1/secrets/openai", "sk-latest"},
		{"gcp-sm://projects/p1/secrets/openai/versions/latest", "sk-latest"},
		{"gcp-sm://projects/p1/secrets/openai/versions/3", "sk-v3"},
		{"gcp-sm://projects/p1/secrets/bundle#anthropic", "sk-ant"},
		{"gcp-sm://projects/p1/secrets/bundle/versions/latest#openrouter", "sk-or"},
	} {
		got, err := r.Resolve(ctx, tc.ref)
		if err != nil {
			t.Errorf("Resolve(%s): %v", tc.ref, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Resolve(%s) = %q, want %q", tc.ref, got, tc.want)
		}
	}
	for name, n := range f.calls {
		if n != 1 {
			t.Errorf("%s was read %d times, want once", name, n)
		}
	}

	for _, tc := range []struct{ ref, wantErr string }{
		{"gcp-sm://projects/p1/secrets/missing", "NotFound"},
		{"gcp-sm://projects/p1/secrets/corrupt/versions/1", "CRC32C"},
		{"gcp-sm://projects/p1/secrets/bundle#nope", `no key "nope" (it has: anthropic, openrouter)`},
	} {
		_, err := r.Resolve(ctx, tc.ref)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Resolve(%s) error = %v, want one containing %q", tc.ref, err, tc.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "sk-") {
			t.Errorf("Resolve(%s) error leaks a secret value: %v", tc.ref, err)
		}
	}
	// Failures are not cached: a version added later is found.
	f.mu.Lock()
	f.versions["projects/p1/secrets/missing/versions/latest"] = []byte("late")
	f.mu.Unlock()
	if got, err := r.Resolve(ctx, "gcp-sm://projects/p1/secrets/missing"); err != nil || got != "late" {
		t.Errorf("Resolve after the version was added = %q, %v; want late", got, err)
	}
}

// TestNewWithClient drives New with a caller-built client, the form a platform main uses
// when it already holds one.
func TestNewWithClient(t *testing.T) {
	f := &fakeSecretManager{versions: map[string][]byte{"projects/p/secrets/s/versions/7": []byte("v7")}, calls: map[string]int{}}
	c, err := secretmanager.NewClient(context.Background(), startFake(t, f)...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := New(c).Resolve(context.Background(), "gcp-sm://projects/p/secrets/s/versions/7"); err != nil || got != "v7" {
		t.Fatalf("Resolve = %q, %v; want v7", got, err)
	}
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct{ ref, version, key, err string }{
		{ref: "gcp-sm://projects/p/secrets/s", version: "projects/p/secrets/s/versions/latest"},
		{ref: "gcp-sm://projects/p/secrets/s/versions/2#k", version: "projects/p/secrets/s/versions/2", key: "k"},
		{ref: "gcp-sm://projects/p/locations/eu/secrets/s", err: "regional secret"},
		{ref: "gcp-sm://projects/p/secrets", err: "write gcp-sm://"},
		{ref: "gcp-sm://projects//secrets/s", err: "write gcp-sm://"},
		{ref: "gcp-sm://projects/p/secrets/s/versions", err: "write gcp-sm://"},
		{ref: "gcp-sm://projects/p/secrets/s#", err: "empty JSON key"},
		{ref: "aws-sm://x", err: "not a gcp-sm:// reference"},
	} {
		v, k, err := ParseRef(tc.ref)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRef(%q) error = %v, want %q", tc.ref, err, tc.err)
			}
			continue
		}
		if err != nil || v != tc.version || k != tc.key {
			t.Errorf("ParseRef(%q) = %q, %q, %v; want %q, %q", tc.ref, v, k, err, tc.version, tc.key)
		}
	}
}
