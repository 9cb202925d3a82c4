package responsecache_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/responsecache"
)

// keyRequest is a request with something in each part NewIdentity reads, and a partition
// with each field set, for the identity tests to change one thing of.
func keyRequest() (responsecache.Partition, *llm.Request) {
	temp := 0.2
	maxOut := 64
	p := responsecache.Partition{Scope: "key:a", Model: "gpt", Door: "chat", Profile: "strict", Residency: "eu", Guardrails: []string{"pii"}}
	return p, &llm.Request{
		Model:     "gpt",
		System:    []llm.Part{{Kind: llm.PartText, Text: "Be terse."}},
		Messages:  []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "Name three primes."}}}},
		MaxTokens: &maxOut, Temperature: &temp,
		Anthropic: &llm.Anthropic{Version: "2023-06-01", Fields: []llm.RawField{{Name: "service_tier", Value: json.RawMessage(`"auto"`)}}},
		Responses: &llm.Responses{Fields: []llm.RawField{{Name: "truncation", Value: json.RawMessage(`"auto"`)}}},
	}
}

func identity(t *testing.T, p responsecache.Partition, req *llm.Request) responsecache.Identity {
	t.Helper()
	id, err := responsecache.NewIdentity(p, req)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestIdentityLeavesOutWhatDoesNotChangeTheAnswer: stream, stream_options, the log labels
// (user, metadata, the session, metadata.user_id), store and the model field of the body
// (the gateway model is the partition's) give the identity of the request without them, and
// NewIdentity leaves the request as it was.
func TestIdentityLeavesOutWhatDoesNotChangeTheAnswer(t *testing.T) {
	p, plain := keyRequest()
	want := identity(t, p, plain)
	raw := func(name, v string) llm.RawField { return llm.RawField{Name: name, Value: json.RawMessage(v)} }
	for _, tc := range []struct {
		name   string
		change func(r *llm.Request)
	}{
		{"stream", func(r *llm.Request) { r.Stream = true }},
		{"user", func(r *llm.Request) { r.User = "alice" }},
		{"metadata", func(r *llm.Request) { r.Metadata = map[string]string{"run": "ci-42"} }},
		{"session", func(r *llm.Request) { r.Session = "claude-code-session" }},
		{"the body's model", func(r *llm.Request) { r.Model = "gpt-alias" }},
		{"metadata.user_id", func(r *llm.Request) { r.Anthropic.UserID = "u-1" }},
		{"Anthropic raw labels", func(r *llm.Request) {
			r.Anthropic.Fields = append(r.Anthropic.Fields, raw("metadata", `{"user_id":"u-1"}`), raw("stream", `true`))
		}},
		{"store", func(r *llm.Request) { r.Responses.Store = true }},
		{"Responses raw labels", func(r *llm.Request) {
			r.Responses.Fields = append([]llm.RawField{raw("user", `"alice"`), raw("stream_options", `{}`)}, r.Responses.Fields...)
			r.Responses.Fields = append(r.Responses.Fields, raw("metadata", `{"a":"b"}`), raw("store", `true`))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, req := keyRequest()
			tc.change(req)
			before, _ := json.Marshal(req)
			if got := identity(t, p, req); got != want {
				t.Errorf("key %s, want the plain request's %s", got.Key(), want.Key())
			}
			if after, _ := json.Marshal(req); string(after) != string(before) {
				t.Errorf("NewIdentity changed the request\nbefore %s\n after %s", before, after)
			}
		})
	}
	// Raw fields that were only labels are no fields (a regression: [] and null digested apart).
	t.Run("only labels among the raw fields", func(t *testing.T) {
		_, none := keyRequest()
		none.Responses.Fields, none.Anthropic.Fields = nil, nil
		_, labels := keyRequest()
		labels.Responses.Fields = []llm.RawField{raw("user", `"alice"`)}
		labels.Anthropic.Fields = []llm.RawField{raw("metadata", `{}`)}
		if a, b := identity(t, p, none), identity(t, p, labels); a != b {
			t.Errorf("labels alone: %s, none: %s", b.Key(), a.Key())
		}
	})
}

// TestIdentityKeepsWhatDecidesTheAnswer: a change to the request's content changes its
// digest but not its partition (a semantic cache would search that partition), and a change
// to any part of the partition changes both, so no two partitions share an entry.
func TestIdentityKeepsWhatDecidesTheAnswer(t *testing.T) {
	p, plain := keyRequest()
	want := identity(t, p, plain)
	for _, tc := range []struct {
		name string
		req  func(r *llm.Request)
	}{
		{"a message", func(r *llm.Request) { r.Messages[0].Parts[0].Text = "Name four primes." }},
		{"the system", func(r *llm.Request) { r.System = nil }},
		{"temperature", func(r *llm.Request) { v := 0.3; r.Temperature = &v }},
		{"output maximum", func(r *llm.Request) { v := 65; r.MaxTokens = &v }},
		{"tools", func(r *llm.Request) { r.Tools = []llm.Tool{{Name: "lookup"}} }},
		{"an Anthropic field", func(r *llm.Request) { r.Anthropic.Fields[0].Value = json.RawMessage(`"standard_only"`) }},
		{"the anthropic-version", func(r *llm.Request) { r.Anthropic.Version = "2024-01-01" }},
		{"a Responses field", func(r *llm.Request) { r.Responses.Fields[0].Value = json.RawMessage(`"disabled"`) }},
		{"reasoning effort", func(r *llm.Request) { r.Responses.Effort = "high" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, req := keyRequest()
			tc.req(req)
			got := identity(t, p, req)
			if got.Digest == want.Digest {
				t.Error("the digest did not change")
			}
			if got.Partition != want.Partition {
				t.Error("the partition changed with the request's content")
			}
		})
	}
	for _, tc := range []struct {
		name string
		part func(p *responsecache.Partition)
	}{
		{"scope", func(p *responsecache.Partition) { p.Scope = responsecache.ScopeOf(responsecache.ScopeTeam, "a", "red") }},
		{"model", func(p *responsecache.Partition) { p.Model = "gpt-mini" }},
		{"door", func(p *responsecache.Partition) { p.Door = "messages" }},
		{"profile", func(p *responsecache.Partition) { p.Profile = "extended" }},
		{"residency", func(p *responsecache.Partition) { p.Residency = "" }},
		{"guardrails", func(p *responsecache.Partition) { p.Guardrails = append(p.Guardrails, "secrets") }},
		{"guardrails' order", func(p *responsecache.Partition) { p.Guardrails = []string{"secrets", "pii"} }},
	} {
		t.Run("partition "+tc.name, func(t *testing.T) {
			q := p
			q.Guardrails = append([]string(nil), p.Guardrails...)
			tc.part(&q)
			got := identity(t, q, plain)
			if got.Partition == want.Partition || got.Digest == want.Digest {
				t.Errorf("partition %+v: key %s, the same as %+v's in part", q, got.Key(), p)
			}
		})
	}
	if k := want.Key(); len(k) != responsecache.MaxKeyBytes || !responsecache.ValidKey(k) {
		t.Errorf("key %q: %d bytes, valid %v", k, len(k), responsecache.ValidKey(k))
	}
	if again := identity(t, p, plain); !reflect.DeepEqual(again, want) {
		t.Error("the identity of one request differs between calls")
	}
}

// TestScopeOf: scope key shares by the key's id, team by its team (a key without one keeps
// its own), global with every key.
func TestScopeOf(t *testing.T) {
	for _, tc := range []struct{ scope, id, team, want string }{
		{responsecache.ScopeKey, "a", "red", "key:a"},
		{"", "a", "red", "key:a"},
		{responsecache.ScopeTeam, "a", "red", "team:red"},
		{responsecache.ScopeTeam, "c", "", "key:c"},
		{responsecache.ScopeGlobal, "a", "red", "global"},
	} {
		if got := responsecache.ScopeOf(tc.scope, tc.id, tc.team); got != tc.want {
			t.Errorf("ScopeOf(%q, %q, %q) = %q, want %q", tc.scope, tc.id, tc.team, got, tc.want)
		}
	}
}
