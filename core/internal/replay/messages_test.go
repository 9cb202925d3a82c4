package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// TestReplayThroughTheMessagesDoor serves each Anthropic recording to a gateway asked through
// /v1/messages: the door passes an Anthropic backend's answer through, so the client must get
// the recorded events (or body) exactly, with only the model renamed to the gateway's; an
// error recording must reach the client as Anthropic's error with the recorded status.
func TestReplayThroughTheMessagesDoor(t *testing.T) {
	recs := loadRecordings(t)
	n := 0
	for i := range rows {
		rw := &rows[i]
		rec := recs[rw.id]
		if rec == nil || rec.wire() != "anthropic" {
			continue
		}
		n++
		t.Run(rw.id, func(t *testing.T) {
			stream := rec.stream()
			up := serve(t, rec, stream)
			reg := providers.Registry{}
			up.register(reg)
			mock.Register(reg)
			cfg := gatewaytest.Config(t, fmt.Sprintf(gatewayConfig, up.conn, up.model, up.api), config.Options{Getenv: func(string) string { return "" }})
			srv := gatewaytest.Serve(t, cfg, gateway.Options{Registry: reg, Logger: (&gatewaytest.LogBuffer{}).Logger()})
			body := fmt.Sprintf(`{"model":"replay","max_tokens":64,"stream":%t,"messages":[{"role":"user","content":"Replay the recorded answer, please."}]}`, stream)
			r := srv.Do(t, http.MethodPost, "/v1/messages?beta=true", body, "Anthropic-Version", "2023-06-01")
			if rw.status != 0 {
				var e struct {
					Type  string
					Error struct{ Type, Message string }
				}
				if r.Status != rw.status || json.Unmarshal(r.Body, &e) != nil || e.Type != "error" || e.Error.Type == "" {
					t.Errorf("status %d body %s, want %d in Anthropic's error shape", r.Status, r.Body, rw.status)
				}
				return
			}
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if !stream {
				checkPassedThrough(t, rec.body, r.Body)
				return
			}
			want := anthropicEvents(rec)
			got := sseEvents(r.Body)
			if len(got) != len(want) {
				t.Fatalf("%d events, the recording has %d", len(got), len(want))
			}
			if rw.broken != "" {
				// The upstream's error event is the gateway's to classify and word (its
				// texts are redacted); the type of the failure is the recorded one.
				var up, gw struct{ Error struct{ Type string } }
				last := len(want) - 1
				if got[last].event != "error" || json.Unmarshal(want[last], &up) != nil || json.Unmarshal(got[last].data, &gw) != nil || gw.Error.Type != up.Error.Type {
					t.Errorf("last event %s %s, want an error event of type %q", got[last].event, got[last].data, up.Error.Type)
				}
				want = want[:last]
			}
			for i := range want {
				if i == 0 {
					checkPassedThrough(t, want[0], got[0].data)
					continue
				}
				if !bytes.Equal(bytes.TrimSpace(got[i].data), bytes.TrimSpace(want[i])) {
					t.Errorf("event %d:\n got %s\nwant %s", i, got[i].data, want[i])
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no Anthropic recording replayed")
	}
}

// checkPassedThrough compares an answer or message_start the client got with the recorded
// one: equal but for the model, which is the gateway's.
func checkPassedThrough(t *testing.T, recorded, got []byte) {
	t.Helper()
	var want, have map[string]any
	if json.Unmarshal(recorded, &want) != nil || json.Unmarshal(got, &have) != nil {
		t.Fatalf("not JSON:\n got %s\nwant %s", got, recorded)
	}
	model := func(v map[string]any) any {
		if m, ok := v["message"].(map[string]any); ok {
			v = m
		}
		mv := v["model"]
		v["model"] = "-"
		return mv
	}
	if m := model(have); m != "replay" {
		t.Errorf("model %v, want the gateway's model name", m)
	}
	model(want)
	w, _ := json.Marshal(want)
	h, _ := json.Marshal(have)
	if !bytes.Equal(w, h) {
		t.Errorf("passed through with changes:\n got %s\nwant %s", h, w)
	}
}
