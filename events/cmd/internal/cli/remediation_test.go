package cli

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

// runFngate runs the fngate command with env as its whole environment.
func runFngate(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), Env{Args: args, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }, User: "tester"})
	return result{code, out.String(), errb.String()}
}

// fngate remediation is fngate-remediate under its new name: the same commands, flags and
// results, and messages that name the command as the operator typed it.
func TestRemediationUnderTheNewName(t *testing.T) {
	store := "file:" + filepath.Join(t.TempDir(), "routestate.json")
	env := map[string]string{"REMEDIATION_MODE": "apply"}
	var burst strings.Builder
	// Times relative to now: the cooling a burst starts lasts minutes, and status judges it by the clock.
	start := time.Now().UTC().Truncate(time.Second).Add(-time.Second)
	for i := range 5 { // five errors within a second: a burst
		fmt.Fprintf(&burst, `{"time":%q,"level":"ERROR","msg":"provider_error","request_id":"r%d","model":"mock/failover","route":"mock/error:503","connection":"mock","provider":"mock","status":503,"error_class":"unavailable"}`+"\n", start.Add(time.Duration(i%2)*time.Second).Format(time.RFC3339), i)
	}
	for _, tc := range []struct {
		args  []string
		code  int
		match string // stdout, or stderr when code != 0
	}{
		{[]string{"remediation", "-store", store, "ingest"}, 0, `5 provider errors handled \(mode apply\)`},
		{[]string{"remediation", "-store", store, "status"}, 0, `mock/error:503\s+cooling`},
		{[]string{"-json", "remediation", "-store", store, "status"}, 0, `"effective": "cooling"`},
		{[]string{"remediation", "-store", store, "clear", "mock/error:502"}, 1, `fngate: .*no such route.*\(fngate remediation status lists`},
		{[]string{"remediation", "-store", store, "rollback"}, 2, `usage: fngate remediation rollback`},
		{[]string{"remediation", "-store", store, "frobnicate"}, 2, `usage: fngate remediation`},
		{[]string{"remediation"}, 2, `usage: fngate remediation`},
		{[]string{"remediation", "-store", store, "clear", "mock/error:503"}, 0, `mock/error:503: cooling\(unavailable\) until \S+ v1 -> active v2`},
	} {
		r := runFngate(t, env, burst.String(), tc.args...)
		got := r.stdout
		if tc.code != 0 {
			got = r.stderr
		}
		if r.code != tc.code || !regexp.MustCompile(tc.match).MatchString(got) {
			t.Errorf("fngate %v: exit %d, want %d and %s:\n%+v", tc.args, r.code, tc.code, tc.match, r)
		}
	}
}
