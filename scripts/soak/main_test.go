package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
)

// A healthy route that misses a deadline because the machine is slow is the gateway doing its
// job; a timeout that came early, a timeout where no upstream was involved, and every other
// wrong outcome still fail the soak.
func TestJudgeToleratesOnlyHonestTimeouts(t *testing.T) {
	ok := scenario{name: "ok", want: "ok"}
	broken := scenario{name: "cut", want: "broken"}
	refused := scenario{name: "refused field", want: "400"}
	left := scenario{name: "client leaves", disconnect: true}
	for _, tc := range []struct {
		sc     scenario
		got    string
		waited time.Duration
		want   verdict
	}{
		{ok, "ok", time.Millisecond, right},
		{left, "left", time.Millisecond, right},
		{ok, outcomeTimeout, firstByte + time.Second, honestTimeout},
		{broken, outcomeTimeout, idle, honestTimeout},
		{ok, outcomeTimeout, firstByte / 2, unexpected}, // the gateway gave up early
		{refused, outcomeTimeout, firstByte + time.Second, unexpected},
		{ok, "504", firstByte + time.Second, unexpected}, // a 504 that is not upstream_timeout
		{ok, "broken", time.Millisecond, unexpected},
		{broken, "ok", time.Millisecond, unexpected},
	} {
		if got := judge(tc.sc, tc.got, tc.waited); got != tc.want {
			t.Errorf("%s: %s after %v judged %d, want %d", tc.sc.name, tc.got, tc.waited, got, tc.want)
		}
	}
}

// The soak's config loads, with the timeouts the judgement assumes.
func TestConfigHasTheSoaksTimeouts(t *testing.T) {
	cfg, err := config.Parse(context.Background(), []byte(fmt.Sprintf(gatewayConfig, "http://127.0.0.1:9/v1")), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Timeouts; got.FirstByte.D() != firstByte || got.Idle.D() != idle || got.Total.D() != totalTimeout {
		t.Errorf("timeouts %+v, want first_byte %v, idle %v, total %v", got, firstByte, idle, totalTimeout)
	}
	if patience <= totalTimeout {
		t.Errorf("clients give up after %v, before the gateway's total %v", patience, totalTimeout)
	}
}
