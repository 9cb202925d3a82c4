package vertex

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/vertexfake"
)

// TestStreamReportsEarlyFailure: the client opens a stream even when Vertex AI refuses
// the call at once; Stream receives before returning, so the refusal is its classified
// error rather than something the first Next finds, for Gemini and for Claude. A stream
// whose first message arrived is handed out with that message intact.
func TestStreamReportsEarlyFailure(t *testing.T) {
	fake := vertexfake.New()
	defer fake.Close()
	pp, err := New(&config.Connection{Kind: Kind, Project: vertexfake.Project, Location: vertexfake.Location, Endpoint: fake.Addr, Insecure: true}, providers.Env{})
	if err != nil {
		t.Fatal(err)
	}
	p := pp.(*Provider)
	req := chat(t, `{"model":"gw","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	for _, model := range []string{"gemini-2.5-flash", "claude-sonnet-4-5"} {
		fake.Enqueue(vertexfake.Reply{Err: vertexfake.Status(codes.PermissionDenied, "Permission denied on resource project fngate-test.")})
		s, err := p.Stream(context.Background(), req, providers.Target{Model: model})
		var pe *providers.Error
		if s != nil || !errors.As(err, &pe) || pe.Class != providers.Auth || pe.Status != 403 {
			t.Errorf("%s: stream %v, error %v", model, s, err)
		}
	}
	fake.Enqueue(vertexfake.Reply{Gemini: &vertexfake.Answer{Text: "first"}},
		vertexfake.Reply{Claude: &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("first")}}})
	for _, model := range []string{"gemini-2.5-flash", "claude-sonnet-4-5"} {
		s, err := p.Stream(context.Background(), req, providers.Target{Model: model})
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.Next()
		for err == nil && d.Text == "" {
			d, err = s.Next()
		}
		if err != nil || d.Text != "first" {
			t.Errorf("%s: first delta %+v, %v", model, d, err)
		}
		s.Close()
	}
}
