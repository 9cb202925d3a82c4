package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func TestCost(t *testing.T) {
	measured := filepath.Join(t.TempDir(), "measured.json")
	if err := os.WriteFile(measured, []byte(`{"source":"a test run","figures":[
		{"platform":"lambda","memory_mb":256,"vcpu":0.145,"concurrency":1,"scenario":"chat","added_p50_ms":0.5,"added_p99_ms":0.9,"cold_start_ms":100},
		{"platform":"lambda","memory_mb":1024,"vcpu":0.579,"concurrency":1,"scenario":"chat","added_p50_ms":0.5,"added_p99_ms":0.9,"cold_start_ms":30}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		code  int
		match string // stdout, or stderr when code != 0
	}{
		// The embedded run: every profile, every size, and the templates' rule.
		{[]string{"cost"}, 0, `(?s)a 1 s JSON answer.*Lambda 128 MB.*a Claude Code session.*USD per session.*Template defaults`},
		{[]string{"cost", "-prices"}, 0, `LambdaArmGBSecond \| 1\.33334e-05 .*https://aws\.amazon\.com/lambda/pricing/`},
		{[]string{"-json", "cost", "-prices"}, 0, `"Name":"CloudRunVCPUSecond"`},
		// A table of its own: 256 MB at 1 s + 0.5 ms is 1.001 s x 0.25 GB x 0.0000133334 +
		// 0.20 per million requests + 1,100 bytes of logs at 0.50 a GB; no store feature.
		{[]string{"cost", "-measured", measured, "-profile", "json", "-features", "none", "-cold-share", "0"}, 0, `\| Lambda 256 MB \| 0\.50 \| 4\.05 \| 3\.34 \| 0\.20 \| 0\.00 \| 0\.51 \|`},
		{[]string{"cost", "-measured", measured, "-profile", "json"}, 0, `(?s)Lambda 256 MB.*\| lambda, 1 \| Lambda 256 MB \| Lambda 1024 MB`},
		{[]string{"cost", "-profile", "nope"}, 1, `no profile "nope" \(profiles: json, stream`},
		{[]string{"cost", "-features", "limits,magic"}, 1, `-features: "magic"`},
		{[]string{"cost", "-requests", "0"}, 1, `-requests must be above 0`},
		{[]string{"cost", "-measured", filepath.Join(t.TempDir(), "none.json")}, 1, `no such file`},
		{[]string{"cost", "extra"}, 2, `usage: fngate cost`},
	} {
		r := runFngate(t, nil, "", tc.args...)
		got := r.stdout
		if tc.code != 0 {
			got = r.stderr
		}
		if r.code != tc.code || !regexp.MustCompile(tc.match).MatchString(got) {
			t.Errorf("fngate %v: exit %d, want %d and %s:\n%s%s", tc.args, r.code, tc.code, tc.match, r.stdout, r.stderr)
		}
	}
}
