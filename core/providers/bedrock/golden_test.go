package bedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/bedrock/bedrockfake"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with the file at path, or rewrites the file with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// cases lists the inputs of a testdata directory by case name.
func cases(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases in testdata/%s: %v", dir, err)
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strings.TrimSuffix(filepath.Base(p), ".json")
	}
	return names
}

func indentJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// fakeProvider builds a provider on a fresh fake, with static credentials from the
// environment as the default chain finds them.
func fakeProvider(t *testing.T) (*Provider, *bedrockfake.Server) {
	t.Helper()
	IsolateAWS(t, "AKIDFAKE")
	f := bedrockfake.Start()
	t.Cleanup(f.Close)
	f.AccessKeyID = "AKIDFAKE"
	p, err := testNew(&config.Connection{Kind: Kind, Name: "aws", Region: "us-east-1", Endpoint: f.URL}, providers.Env{HTTPClient: f.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Provider), f
}

// streamResult reads a stream to its end: the deltas, then the terminal error (nil at EOF).
func streamResult(st providers.Stream) ([]openai.Delta, error) {
	defer st.Close()
	var ds []openai.Delta
	for {
		d, err := st.Next()
		if err == io.EOF {
			return ds, nil
		}
		if err != nil {
			return ds, err
		}
		ds = append(ds, d)
	}
}

type goldenError struct {
	Class   string `json:"class"`
	Status  int    `json:"status,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
	// Client is the status the gateway answers with.
	Client int `json:"client_status"`
}

func errorOf(t *testing.T, err error) *goldenError {
	t.Helper()
	var pe *providers.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *providers.Error", err, err)
	}
	if pe.Provider != displayName {
		t.Errorf("error provider = %q, want %q", pe.Provider, displayName)
	}
	return &goldenError{Class: string(pe.Class), Status: pe.Status, Code: pe.Code, Message: pe.Message, Client: pe.ClientError().Status}
}

var ctx = context.Background()
