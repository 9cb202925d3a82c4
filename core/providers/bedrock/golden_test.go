package bedrock

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/bedrockfake"
)

// fakeProvider builds a provider on a fresh fake, with static credentials from the
// environment as the default chain finds them.
func fakeProvider(t *testing.T) (*Provider, *bedrockfake.Server) {
	t.Helper()
	awstest.Isolate(t, "AKIDFAKE")
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
func streamResult(st llm.Stream) ([]llm.Delta, error) {
	defer st.Close()
	var ds []llm.Delta
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
