package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestQuotas(t *testing.T) {
	for _, tc := range []struct {
		size string
		us   int64
	}{
		{"Lambda 128 MB", 7236}, {"Lambda 512 MB", 28943}, {"Lambda 1024 MB", 57886},
		{"Cloud Functions 0.083 vCPU", 8300}, {"Cloud Functions 1 vCPU", 100000},
		{"Cloud Functions 1 vCPU, concurrency 250", 100000},
	} {
		found := false
		for _, s := range functionSizes() {
			if s.name == tc.size {
				found = true
				if got := quotaUS(s.cpu); got != tc.us {
					t.Errorf("%s: quota %d us a period, want %d", tc.size, got, tc.us)
				}
			}
		}
		if !found {
			t.Errorf("no size %q", tc.size)
		}
	}
}

// The hierarchy is found whichever version the machine mounts, and a machine without a cpu
// controller is told so instead of measuring without a quota.
func TestCgroupRoot(t *testing.T) {
	v2 := t.TempDir()
	os.WriteFile(filepath.Join(v2, "cgroup.controllers"), []byte("cpuset cpu io memory pids\n"), 0o644)
	v1 := t.TempDir()
	os.MkdirAll(filepath.Join(v1, "cpu,cpuacct"), 0o755)
	os.WriteFile(filepath.Join(v1, "cpu,cpuacct", "cpu.cfs_quota_us"), []byte("-1\n"), 0o644)
	none := t.TempDir()
	os.WriteFile(filepath.Join(none, "cgroup.controllers"), []byte("memory pids\n"), 0o644)
	for _, tc := range []struct {
		name, sysfs, want string
		v2, fails         bool
	}{
		{"v2", v2, v2, true, false},
		{"v1", v1, filepath.Join(v1, "cpu,cpuacct"), false, false},
		{"none", none, "", false, true},
	} {
		dir, isV2, err := cgroupRoot(tc.sysfs)
		if (err != nil) != tc.fails || dir != tc.want || isV2 != tc.v2 {
			t.Errorf("%s: %q v2=%v err=%v", tc.name, dir, isV2, err)
		}
	}
}

func TestQuotaWrittenAndReadBack(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		g := &cgroup{dir: t.TempDir(), v2: v2}
		if err := g.setQuota(0.333); err != nil {
			t.Fatal(err)
		}
		q, p, err := g.quota()
		if err != nil || q != 33300 || p != 100000 {
			t.Errorf("v2=%v: quota %d/%d, %v", v2, q, p, err)
		}
	}
}

func TestParseThrottle(t *testing.T) {
	got := parseThrottle("nr_periods 120\nnr_throttled 30\nthrottled_time 5000\n")
	if got != (throttle{120, 30}) {
		t.Errorf("%+v", got)
	}
}
