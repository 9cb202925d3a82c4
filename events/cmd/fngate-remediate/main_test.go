package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] })
	return result{code, out.String(), errb.String()}
}

func gatewayLog(n int, now time.Time) string {
	var b strings.Builder
	b.WriteString(`{"time":"` + now.Format(time.RFC3339Nano) + `","level":"INFO","msg":"listening","addr":"http://127.0.0.1:8080"}` + "\n")
	for i := range n {
		fmt.Fprintf(&b, `{"time":%q,"level":"ERROR","msg":"provider_error","request_id":"req_%d","endpoint":"chat","model":"mock/failover","route":"mock/error:503","connection":"mock","provider":"mock","upstream_model":"error:503","attempt":1,"stream":false,"outcome":"failover","latency_ms":0.1,"status":503,"error_class":"unavailable","error_code":"mock_503","error_message":"mock failure 503 Service Unavailable"}`+"\n",
			now.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), i)
		fmt.Fprintf(&b, `{"time":%q,"level":"INFO","msg":"request","request_id":"req_%d","status":200}`+"\n", now.Format(time.RFC3339Nano), i)
	}
	return b.String()
}

// The operator's loop on a local file store: remediate from a gateway log, inspect, undo,
// clear.
func TestOperatorCommands(t *testing.T) {
	store := "file:" + filepath.Join(t.TempDir(), "routestate.json")
	env := map[string]string{"FNGATE_ROUTE_STORE": store, "REMEDIATION_MODE": "apply"}
	log := gatewayLog(5, time.Now())

	r := runCLI(t, env, log, "ingest")
	if r.code != 0 || !strings.Contains(r.stdout, "5 provider errors handled (mode apply)") {
		t.Fatalf("ingest: %+v", r)
	}
	if r := runCLI(t, env, log, "ingest"); r.code != 0 || !strings.Contains(r.stderr, "duplicate=true") {
		t.Fatalf("the same log again must be recognised: %+v", r)
	}
	r = runCLI(t, env, "", "status")
	if r.code != 0 || !regexp.MustCompile(`mock/error:503\s+cooling\s+\S+\s+unavailable`).MatchString(r.stdout) {
		t.Fatalf("status: %+v", r)
	}
	r = runCLI(t, env, "", "actions")
	ids := regexp.MustCompile(`(?m)^(\d{8}T\d{6}Z-[0-9a-f]{10})\s+\S+\s+mock/error:503\s+cool\s`).FindStringSubmatch(r.stdout)
	if r.code != 0 || ids == nil {
		t.Fatalf("actions: %+v", r)
	}
	coolID := ids[1]

	r = runCLI(t, env, "", "rollback", coolID)
	if r.code != 0 || !regexp.MustCompile(`^mock/error:503: cooling\(unavailable\) until \S+ v1 -> active v2 \(action `).MatchString(r.stdout) {
		t.Fatalf("rollback: %+v", r)
	}
	if r := runCLI(t, env, "", "rollback", coolID); r.code != 1 || !strings.Contains(r.stderr, "changed after that action") {
		t.Fatalf("a second rollback of the same action must refuse: %+v", r)
	}
	if r := runCLI(t, env, "", "rollback", "-force", coolID); r.code != 0 || !strings.Contains(r.stdout, "-> active v3") {
		t.Fatalf("forced rollback: %+v", r)
	}
	if r := runCLI(t, env, "", "clear", "mock/error:503"); r.code != 0 || !strings.Contains(r.stdout, "nothing to clear") {
		t.Fatalf("clear of an active route: %+v", r)
	}

	// Without REMEDIATION_MODE the sweep only plans.
	delete(env, "REMEDIATION_MODE")
	if r := runCLI(t, env, "", "sweep"); r.code != 0 || !strings.Contains(r.stdout, "no ended cooldowns (mode dry_run)") {
		t.Fatalf("sweep: %+v", r)
	}
}

func TestUsageErrors(t *testing.T) {
	env := map[string]string{"FNGATE_ROUTE_STORE": "file:" + filepath.Join(t.TempDir(), "s.json")}
	for _, args := range [][]string{{}, {"frobnicate"}, {"rollback"}, {"clear"}} {
		if r := runCLI(t, env, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
	if r := runCLI(t, env, "", "-store", "redis:x", "status"); r.code != 1 || !strings.Contains(r.stderr, "unknown kind") {
		t.Errorf("bad store: %+v", r)
	}
	if r := runCLI(t, map[string]string{"REMEDIATION_MODE": "maybe"}, "", "status"); r.code != 2 {
		t.Errorf("bad mode: %+v", r)
	}
}
