package mock

import (
	"context"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

func chatReq(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: text}}}}}
}

func newMock(t *testing.T) *Provider {
	t.Helper()
	p, err := New(&config.Connection{Kind: Kind}, providers.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Provider)
}

// panics runs f and returns the recovered value, or nil when f returned normally.
func panics(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

func TestPanicModelsParse(t *testing.T) {
	p := newMock(t)
	for _, m := range []string{"panic", "panic:0", "panic:3"} {
		if e := p.Check(nil, providers.Target{Model: m}); e != nil {
			t.Errorf("Check(%q) = %v, want accepted", m, e.Message)
		}
	}
	for _, m := range []string{"panic:", "panic:x", "panic:-1"} {
		if e := p.Check(nil, providers.Target{Model: m}); e == nil {
			t.Errorf("Check(%q) accepted a malformed model", m)
		}
	}
}

func TestPanicBeforeOutput(t *testing.T) {
	p := newMock(t)
	if v := panics(func() { _, _ = p.Stream(context.Background(), chatReq("hi"), providers.Target{Model: "panic"}) }); v == nil {
		t.Error("Stream(panic) returned instead of panicking")
	}
	if v := panics(func() { _, _ = p.Generate(context.Background(), chatReq("hi"), providers.Target{Model: "panic:2"}) }); v == nil {
		t.Error("Generate(panic:2) returned instead of panicking")
	}
}

func TestPanicAfterWords(t *testing.T) {
	p := newMock(t)
	st, err := p.Stream(context.Background(), chatReq("hi"), providers.Target{Model: "panic:2"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	v := panics(func() {
		for {
			d, err := st.Next()
			if err != nil {
				t.Errorf("Next: %v before the panic", err)
				return
			}
			got = append(got, d.Text)
		}
	})
	if v == nil {
		t.Fatal("the stream ended without panicking")
	}
	if len(got) != 2 || got[0] != "Lorem" || got[1] != " ipsum" {
		t.Errorf("words before the panic = %q, want [Lorem  ipsum]", got)
	}
}
