package agents

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"
)

// The trap's half of the guard, without a client binary: an HTTP client that honours its
// proxy setting reports the host it wanted and fails fast.
func TestProxyTrapRecordsWhereARequestWasGoing(t *testing.T) {
	trap := newProxyTrap(t)
	proxy, _ := url.Parse(trap.url())
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	if _, err := c.Get("https://api.example.invalid/v1/ping"); err == nil {
		t.Error("a request through the trap succeeded")
	}
	if _, err := c.Get("http://telemetry.example.invalid/event"); err != nil {
		t.Logf("plain HTTP through the trap: %v", err)
	}
	got := trap.close()
	want := []string{"CONNECT api.example.invalid:443 HTTP/1.1", "GET http://telemetry.example.invalid/event HTTP/1.1"}
	if !slices.Equal(got, want) {
		t.Errorf("trap saw %q, want %q", got, want)
	}
}

func TestMergeEnvKeepsTheLastValue(t *testing.T) {
	got := mergeEnv([]string{"A=1", "B=2", "A=3", "C=", "B=4"})
	want := []string{"A=3", "B=4", "C="}
	if !slices.Equal(got, want) {
		t.Errorf("mergeEnv = %q, want %q", got, want)
	}
}
