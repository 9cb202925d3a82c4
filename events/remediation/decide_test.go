package remediation

import (
	"testing"
	"time"

	"github.com/fngate/fngate/core/routestate"
)

func TestDecisions(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	p := DefaultPolicy()
	const route = "claude/claude-sonnet-4-5"
	active := routestate.State{Route: route, Status: routestate.Active}
	cooling := routestate.State{Route: route, Status: routestate.Cooling, Until: now.Add(time.Minute), Reason: "rate_limited", Version: 3}
	cooled := routestate.State{Route: route, Status: routestate.Cooling, Until: now.Add(-time.Second), Reason: "rate_limited", Version: 3}
	disabled := routestate.State{Route: route, Status: routestate.Disabled, Reason: ReasonCredentials, Version: 4}
	chatOnly := routestate.State{Route: route, Status: routestate.Active, ChatOnly: true, Version: 2}
	cleared := routestate.State{Route: route, Status: routestate.Active, Since: now.Add(-time.Second), Version: 5}

	tests := []struct {
		name     string
		class    string
		endpoint string
		status   int
		at       time.Time // error time; zero means now
		cur      routestate.State
		want     Action
		status2  routestate.Status // the planned status
		reason   string
		chatOnly bool
	}{
		{name: "429 on an active route cools it (once the burst is complete)", class: "rate_limited", status: 429, cur: active, want: Cool, status2: routestate.Cooling, reason: "rate_limited"},
		{name: "529 overloaded cools", class: "overloaded", status: 529, cur: active, want: Cool, status2: routestate.Cooling, reason: "overloaded"},
		{name: "503 unavailable cools", class: "unavailable", status: 503, cur: active, want: Cool, status2: routestate.Cooling, reason: "unavailable"},
		{name: "a cooldown that ended counts as active", class: "unavailable", status: 502, cur: cooled, want: Cool, status2: routestate.Cooling, reason: "unavailable"},
		{name: "burst on a cooling route changes nothing", class: "rate_limited", status: 429, cur: cooling, want: None},
		{name: "burst on a disabled route changes nothing", class: "rate_limited", status: 429, cur: disabled, want: None},
		{name: "auth disables with reason credentials", class: "auth", status: 401, cur: active, want: Disable, status2: routestate.Disabled, reason: ReasonCredentials},
		{name: "auth on a cooling route disables it", class: "auth", status: 403, cur: cooling, want: Disable, status2: routestate.Disabled, reason: ReasonCredentials},
		{name: "auth on a disabled route changes nothing", class: "auth", status: 401, cur: disabled, want: None},
		{name: "not_found disables", class: "not_found", status: 404, cur: active, want: Disable, status2: routestate.Disabled, reason: ReasonModelNotFound},
		{name: "unsupported completions marks chat-only", class: "unsupported", endpoint: "completions", status: 501, cur: active, want: ChatOnly, status2: routestate.Active, chatOnly: true},
		{name: "chat-only keeps a cooling status", class: "unsupported", endpoint: "completions", status: 501, cur: cooling, want: ChatOnly, status2: routestate.Cooling, reason: "rate_limited", chatOnly: true},
		{name: "unsupported on an already chat-only route changes nothing", class: "unsupported", endpoint: "completions", status: 501, cur: chatOnly, want: None},
		{name: "unsupported on chat is about the request", class: "unsupported", endpoint: "chat", status: 501, cur: active, want: None},
		{name: "timeout is not acted on", class: "timeout", status: 504, cur: active, want: None},
		{name: "bad_request is the client's", class: "bad_request", status: 400, cur: active, want: None},
		{name: "stream_broken is not acted on", class: "stream_broken", cur: active, want: None},
		{name: "an error from before an operator's clear changes nothing", class: "auth", status: 401, at: now.Add(-2 * time.Second), cur: cleared, want: None},
		{name: "an error after the clear acts", class: "auth", status: 401, at: now, cur: cleared, want: Disable, status2: routestate.Disabled, reason: ReasonCredentials},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at := tc.at
			if at.IsZero() {
				at = now
			}
			rec := Record{Time: at, Route: route, ErrorClass: tc.class, Endpoint: tc.endpoint, Status: tc.status}
			rl, reason := classify(rec)
			act, to, why, ok := next(rl, reason, rec, tc.cur, "eb:1", now, p)
			if act != tc.want || ok != (tc.want != None) {
				t.Fatalf("action = %s (ok %v, why %q), want %s", act, ok, why, tc.want)
			}
			if why == "" {
				t.Error("no why")
			}
			if tc.want == None {
				if to != tc.cur {
					t.Fatalf("no-op changed the record: %+v", to)
				}
				return
			}
			if to.Status != tc.status2 || to.Reason != tc.reason || to.ChatOnly != tc.chatOnly {
				t.Fatalf("to = %+v, want status %s reason %q chat-only %v", to, tc.status2, tc.reason, tc.chatOnly)
			}
			if to.Version != tc.cur.Version || to.EventID != "eb:1" || !to.Since.Equal(now) || !to.UpdatedAt.Equal(now) {
				t.Fatalf("to = %+v: want the read version, the event id and now", to)
			}
			if tc.want == Cool && !to.Until.Equal(now.Add(p.Cooldown)) {
				t.Fatalf("until = %v, want now + %v", to.Until, p.Cooldown)
			}
			if tc.want == Disable && !to.Until.IsZero() {
				t.Fatalf("a disabled route has an until: %v", to.Until)
			}
		})
	}
}

func TestCountBurst(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	p := Policy{BurstErrors: 3, BurstWindow: 10 * time.Second}
	sec := func(n int) time.Time { return now.Add(time.Duration(n) * time.Second) }
	tests := []struct {
		name   string
		window []time.Time
		at     time.Time
		since  time.Time
		fired  bool
		kept   int
	}{
		{name: "first error", at: sec(0), kept: 1},
		{name: "third within the window fires and restarts", window: []time.Time{sec(-9), sec(-1)}, at: sec(0), fired: true},
		{name: "old errors drop out", window: []time.Time{sec(-30), sec(-11)}, at: sec(0), kept: 1},
		{name: "an error already outside the window does not count", window: []time.Time{sec(-5)}, at: sec(-15), kept: 1},
		{name: "errors before the route's last change do not count", window: []time.Time{sec(-8), sec(-7)}, at: sec(0), since: sec(-6), kept: 1},
		{name: "out-of-order delivery still counts", window: []time.Time{sec(-1)}, at: sec(-3), kept: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := routestate.Window{Route: "a/b", Errors: tc.window, Version: 7}
			got, fired := countBurst(w, tc.at, tc.since, now, p)
			if fired != tc.fired || len(got.Errors) != tc.kept {
				t.Fatalf("fired = %v with %d kept (%v); want %v with %d", fired, len(got.Errors), got.Errors, tc.fired, tc.kept)
			}
			if got.Version != 7 || got.Route != "a/b" {
				t.Fatalf("countBurst changed the window's identity: %+v", got)
			}
			for i := 1; i < len(got.Errors); i++ {
				if got.Errors[i].Before(got.Errors[i-1]) {
					t.Fatalf("window not in time order: %v", got.Errors)
				}
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := ConfigFromEnv(env(nil))
	if err != nil || c.Mode != DryRun || c.Policy != DefaultPolicy() {
		t.Fatalf("empty environment: %+v, %v; want dry-run with the default policy", c, err)
	}
	c, err = ConfigFromEnv(env(map[string]string{EnvMode: "apply", EnvBurstErrors: "3", EnvBurstWindow: "30s", EnvCooldown: "2m", EnvMaxEventAge: "1h", EnvIncidentCooldown: "30m"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Policy{BurstErrors: 3, BurstWindow: 30 * time.Second, Cooldown: 2 * time.Minute, MaxEventAge: time.Hour, ClaimTTL: DefaultClaimTTL, IncidentCooldown: 30 * time.Minute}
	if c.Mode != Apply || c.Policy != want {
		t.Fatalf("got %+v, want apply with %+v", c, want)
	}
	for k, v := range map[string]string{EnvMode: "aply", EnvBurstErrors: "0", EnvBurstWindow: "soon", EnvCooldown: "-1m", EnvIncidentCooldown: "0s"} {
		if _, err := ConfigFromEnv(env(map[string]string{k: v})); err == nil {
			t.Errorf("%s=%s was accepted", k, v)
		}
	}
}
