package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	if r := runCLI(t, env, "", "rollback", coolID); r.code != 1 || !strings.Contains(r.stderr, "changed after that action") ||
		!strings.Contains(r.stderr, "fngate-remediate rollback -force "+coolID) {
		t.Fatalf("a second rollback of the same action must refuse and name -force: %+v", r)
	}
	if r := runCLI(t, env, "", "rollback", "-force", coolID); r.code != 0 || !strings.Contains(r.stdout, "-> active v3") {
		t.Fatalf("forced rollback: %+v", r)
	}
	if r := runCLI(t, env, "", "clear", "mock/error:503"); r.code != 0 || !strings.Contains(r.stdout, "nothing to clear") {
		t.Fatalf("clear of an active route: %+v", r)
	}

	if r := runCLI(t, env, "", "clear", "mock/error:502"); r.code != 1 || !strings.Contains(r.stderr, "no such route in route state: mock/error:502 has no record") {
		t.Fatalf("clear of a route the store does not know must say so: %+v", r)
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

// A saved log is judged by its own timestamps: errors a second apart, written an hour ago,
// are a burst, and the tool says which clock it used.
func TestIngestJudgesWindowsByTheLogsTimestamps(t *testing.T) {
	store := "file:" + filepath.Join(t.TempDir(), "routestate.json")
	env := map[string]string{"FNGATE_ROUTE_STORE": store, "REMEDIATION_MODE": "apply"}
	written := time.Now().Add(-time.Hour).UTC()
	r := runCLI(t, env, gatewayLog(5, written), "ingest")
	if r.code != 0 || !strings.Contains(r.stdout, "windows judged by the log lines' own timestamps") ||
		!strings.Contains(r.stdout, "mock/error:503: cool applied: active v0 -> cooling(unavailable)") ||
		!strings.Contains(r.stdout, "that cooldown is already over by this machine's clock") {
		t.Fatalf("ingest of an hour-old burst: %+v", r)
	}
	// Spread over more than the window by their own times, the same errors are no burst.
	var spread strings.Builder
	for i := range 5 {
		spread.WriteString(gatewayLog(1, written.Add(time.Duration(i)*20*time.Second)))
	}
	env["FNGATE_ROUTE_STORE"] = "file:" + filepath.Join(t.TempDir(), "routestate.json")
	if r := runCLI(t, env, spread.String(), "ingest"); r.code != 0 || strings.Contains(r.stdout, "cool applied") {
		t.Fatalf("errors 20 s apart by their timestamps: %+v", r)
	}
}

// A dry run plans without taking the deliveries: applying the same log afterwards acts.
func TestDryRunDoesNotClaimDeliveries(t *testing.T) {
	env := map[string]string{"FNGATE_ROUTE_STORE": "file:" + filepath.Join(t.TempDir(), "routestate.json")}
	log := gatewayLog(5, time.Now())
	if r := runCLI(t, env, log, "ingest"); r.code != 0 || !strings.Contains(r.stdout, "mock/error:503: would cool") {
		t.Fatalf("dry run: %+v", r)
	}
	// A second dry run of the same log is recognised (its deliveries are the dry run's).
	if r := runCLI(t, env, log, "ingest"); r.code != 0 || !strings.Contains(r.stdout, "5 already handled before") {
		t.Fatalf("second dry run: %+v", r)
	}
	env["REMEDIATION_MODE"] = "apply"
	if r := runCLI(t, env, log, "ingest"); r.code != 0 || !strings.Contains(r.stdout, "cool applied") || strings.Contains(r.stdout, "already handled") {
		t.Fatalf("apply after a dry run must act on the same deliveries: %+v", r)
	}
	if r := runCLI(t, env, "", "status"); !regexp.MustCompile(`mock/error:503\s+cooling`).MatchString(r.stdout) {
		t.Fatalf("status after apply: %+v", r)
	}
}

// -json prints every command's result as one JSON document and the decision lines as the
// functions' JSON lines, in the shapes docs/remediation.md shows.
func TestJSONOutput(t *testing.T) {
	env := map[string]string{"FNGATE_ROUTE_STORE": "file:" + filepath.Join(t.TempDir(), "routestate.json"), "REMEDIATION_MODE": "apply"}
	r := runCLI(t, env, gatewayLog(5, time.Now()), "-json", "ingest")
	var ing struct {
		Mode, Clock string
		Handled     int
		Actions     []struct {
			Route, Action string
			ActionID      string `json:"action_id"`
			Applied       bool
		}
	}
	decodeJSON(t, r, &ing)
	if ing.Mode != "apply" || ing.Clock != "log" || ing.Handled != 5 || len(ing.Actions) != 1 || ing.Actions[0].Action != "cool" || !ing.Actions[0].Applied {
		t.Fatalf("ingest -json: %+v", ing)
	}
	var line map[string]any
	last := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if err := json.Unmarshal([]byte(last[len(last)-1]), &line); err != nil || line["msg"] != "remediation" || line["action"] != "cool" {
		t.Fatalf("decision line with -json is not the functions' JSON line: %q (%v)", last[len(last)-1], err)
	}

	var states []struct {
		Route, Status, Effective, Reason string
	}
	decodeJSON(t, runCLI(t, env, "", "status", "-json"), &states)
	if len(states) != 1 || states[0].Route != "mock/error:503" || states[0].Effective != "cooling" || states[0].Reason != "unavailable" {
		t.Fatalf("status -json: %+v", states)
	}
	var snaps []struct {
		ActionID      string `json:"action_id"`
		Route, Action string
	}
	decodeJSON(t, runCLI(t, env, "", "-json", "actions"), &snaps)
	if len(snaps) != 1 || snaps[0].ActionID != ing.Actions[0].ActionID {
		t.Fatalf("actions -json: %+v", snaps)
	}
	var undo struct {
		Action string
		To     struct{ Status string }
	}
	decodeJSON(t, runCLI(t, env, "", "-json", "rollback", snaps[0].ActionID), &undo)
	if undo.Action != "rollback" || undo.To.Status != "active" {
		t.Fatalf("rollback -json: %+v", undo)
	}
	var cleared struct{ Action, Why string }
	decodeJSON(t, runCLI(t, env, "", "clear", "-json", "mock/error:503"), &cleared)
	if cleared.Action != "none" || cleared.Why != "already active with no marks" {
		t.Fatalf("clear -json: %+v", cleared)
	}
	var swept []any
	decodeJSON(t, runCLI(t, env, "", "-json", "sweep"), &swept)
	if len(swept) != 0 {
		t.Fatalf("sweep -json: %+v", swept)
	}
}

func decodeJSON(t *testing.T, r result, v any) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, r.stdout)
	}
}

// The old name still works for one release and says, in one line on stderr, what replaces it;
// stdout stays the command's result alone.
func TestDeprecationNotice(t *testing.T) {
	env := map[string]string{"FNGATE_ROUTE_STORE": "file:" + filepath.Join(t.TempDir(), "routestate.json")}
	r := runCLI(t, env, "", "-json", "status")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("status: %+v", r)
	}
	first, _, _ := strings.Cut(r.stderr, "\n")
	if !strings.Contains(first, "deprecated, use `fngate remediation`") {
		t.Fatalf("no deprecation notice on stderr: %q", r.stderr)
	}
}
