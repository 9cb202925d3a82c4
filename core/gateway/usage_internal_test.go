package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/record"
)

// stuckHistory reports each write's start and holds it until released.
type stuckHistory struct {
	*counters.MemoryHistory
	started chan struct{}
	release chan struct{}
}

func (s *stuckHistory) AddUsage(ctx context.Context, key string, at time.Time, model string, u counters.Usage) error {
	s.started <- struct{}{}
	<-s.release
	return s.MemoryHistory.AddUsage(ctx, key, at, model, u)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAFullUsageQueueDrops: with the writers stuck, the queue holds usageQueue requests'
// usage and drops the rest without waiting, with one warning and one metric for the burst;
// what was queued is written, merged, once the store answers.
func TestAFullUsageQueueDrops(t *testing.T) {
	h := &stuckHistory{MemoryHistory: counters.NewMemoryHistory(), started: make(chan struct{}, usageQueue+1), release: make(chan struct{})}
	var logs, metrics syncBuffer
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	l := newUsageLog(h, slog.New(slog.NewJSONHandler(&logs, nil)), &metrics, func() time.Time { return now })
	one := usageEntry{key: "app", day: counters.Day(now), model: "m", at: now, u: counters.Usage{Requests: 1, InputTokens: 2}}
	l.add(one)
	<-h.started // the writer holds the first; the queue is empty again
	const extra = 10
	start := time.Now()
	for range usageQueue + extra {
		l.add(one)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("queueing took %v with the writers stuck", d)
	}
	if n := strings.Count(logs.String(), record.MsgUsageDropped); n != 1 {
		t.Fatalf("%d %s lines for one burst, want 1:\n%s", n, record.MsgUsageDropped, logs.String())
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(logs.String())), &line); err != nil {
		t.Fatal(err)
	}
	if line["level"] != "WARN" || line["dropped"] != float64(1) {
		t.Errorf("warning = %v; want the first drop of the burst", line)
	}
	if !strings.Contains(metrics.String(), `"`+record.MetricUsageDropped+`":1`) {
		t.Errorf("metrics = %s; want %s", metrics.String(), record.MetricUsageDropped)
	}
	close(h.release)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.wait(ctx); err != nil {
		t.Fatal(err)
	}
	rows, _ := h.MemoryHistory.Usage(ctx, "app", now, now)
	if len(rows) != 1 || rows[0].Requests != usageQueue+1 || rows[0].InputTokens != 2*(usageQueue+1) {
		t.Fatalf("history = %+v; want the %d queued requests", rows, usageQueue+1)
	}
	// Merged: far fewer writes than requests.
	if writes := len(h.started); writes > usageQueue/usageBatch+2 {
		t.Errorf("%d writes for %d requests; a round merges what it takes", writes+1, usageQueue+1)
	}
	// Once the queue has drained, the rest of the burst is reported.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(metrics.String(), `"`+record.MetricUsageDropped+`":9`) {
		if time.Now().After(deadline) {
			t.Fatalf("the burst's other %d drops were never reported: %s", extra-1, metrics.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
