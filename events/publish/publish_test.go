package publish_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/events/publish"
	"github.com/fngate/fngate/events/remediation"
)

func attempt(i int, class string, status int) *record.Attempt {
	return &record.Attempt{
		Time: time.Date(2026, 11, 29, 12, 0, 0, i*1000, time.UTC), RequestID: fmt.Sprint("req_", i), Endpoint: "chat",
		Model: "example/chat", Route: "claude/claude-sonnet-4-5", Connection: "claude", Provider: "anthropic",
		UpstreamModel: "claude-sonnet-4-5", Residency: "us", Attempt: 1, Outcome: record.OutcomeFailover,
		Status: status, ErrorClass: class, ErrorCode: "code", ErrorMessage: "upstream said no",
	}
}

// fakeBus records PutEvents calls; gate, when set, holds each call until it is closed.
type fakeBus struct {
	mu      sync.Mutex
	calls   [][]types.PutEventsRequestEntry
	entered chan struct{}
	gate    chan struct{}
	refuse  int // refuse this many entries of each call
	fail    error
}

func (f *fakeBus) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	if f.entered != nil {
		select {
		case f.entered <- struct{}{}:
		default:
		}
	}
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	f.calls = append(f.calls, in.Entries)
	f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	out := &eventbridge.PutEventsOutput{FailedEntryCount: int32(f.refuse)}
	for i := range in.Entries {
		e := types.PutEventsResultEntry{EventId: aws.String(fmt.Sprint("id-", i))}
		if i < f.refuse {
			e = types.PutEventsResultEntry{ErrorCode: aws.String("InternalFailure"), ErrorMessage: aws.String("try again")}
		}
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}

func (f *fakeBus) sizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, c := range f.calls {
		out = append(out, len(c))
	}
	return out
}

func newPublisher(t *testing.T, opt publish.Options) *publish.Publisher {
	t.Helper()
	p, err := publish.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func TestBatchesOfTenAndCloseFlushes(t *testing.T) {
	bus := &fakeBus{}
	p := newPublisher(t, publish.Options{Client: bus, Linger: time.Hour, EventBus: "fngate"})
	for i := range 25 {
		p.OnAttempt(attempt(i, "rate_limited", 429))
	}
	p.OnAttempt(&record.Attempt{Route: "a/b", Outcome: record.OutcomeOK}) // a success is not an error
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(bus.sizes()); got != "[10 10 5]" {
		t.Fatalf("batch sizes %s, want [10 10 5]", got)
	}
	if s := p.Stats(); s != (publish.Stats{Published: 25}) {
		t.Fatalf("stats %+v", s)
	}
	e := bus.calls[0][0]
	if aws.ToString(e.Source) != publish.Source || aws.ToString(e.DetailType) != publish.DetailType || aws.ToString(e.EventBusName) != "fngate" {
		t.Fatalf("entry %+v", e)
	}
	rec, err := remediation.DecodeDetail([]byte(aws.ToString(e.Detail)))
	if err != nil || rec != publish.Detail(attempt(0, "rate_limited", 429)) {
		t.Fatalf("detail %s decodes to %+v, %v", aws.ToString(e.Detail), rec, err)
	}
}

func TestLingerSendsAPartialBatch(t *testing.T) {
	bus := &fakeBus{}
	p := newPublisher(t, publish.Options{Client: bus, Linger: 20 * time.Millisecond})
	p.OnAttempt(attempt(1, "auth", 401))
	deadline := time.Now().Add(2 * time.Second)
	for len(bus.sizes()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a lone error was never sent")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFlushSendsWhatIsQueued(t *testing.T) {
	bus := &fakeBus{}
	p := newPublisher(t, publish.Options{Client: bus, Linger: time.Hour})
	for i := range 3 {
		p.OnAttempt(attempt(i, "unavailable", 503))
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(bus.sizes()); got != "[3]" {
		t.Fatalf("after Flush: %s", got)
	}
}

// The request path must never wait on EventBridge: with the worker stuck in a call and the
// queue full, OnAttempt drops and returns at once.
func TestOnAttemptNeverBlocks(t *testing.T) {
	bus := &fakeBus{entered: make(chan struct{}, 1), gate: make(chan struct{})}
	var logs bytes.Buffer
	var logMu sync.Mutex
	p := newPublisher(t, publish.Options{Client: bus, Queue: 20, Logger: slog.New(slog.NewJSONHandler(lockedWriter{&logs, &logMu}, nil))})
	for i := range 10 {
		p.OnAttempt(attempt(i, "rate_limited", 429))
	}
	<-bus.entered // the first full batch is now stuck in PutEvents
	t0 := time.Now()
	for i := range 100 {
		p.OnAttempt(attempt(10+i, "rate_limited", 429))
	}
	took := time.Since(t0)
	if took > 50*time.Millisecond {
		t.Fatalf("100 OnAttempt calls took %v while EventBridge hung", took)
	}
	if d := p.Stats().Dropped; d != 80 {
		t.Fatalf("dropped %d, want 80 (queue of 20 while one batch is in flight)", d)
	}
	logMu.Lock()
	warnings := strings.Count(logs.String(), "provider error not published")
	logMu.Unlock()
	if warnings != 1 {
		t.Fatalf("%d drop warnings for 80 drops, want 1 (rate-limited)", warnings)
	}
	close(bus.gate)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Published != 30 {
		t.Fatalf("stats after release: %+v; want the 30 queued ones published", s)
	}
	p.OnAttempt(attempt(0, "auth", 401)) // after Close: dropped, no panic
	if d := p.Stats().Dropped; d != 81 {
		t.Fatalf("dropped after close = %d", d)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestFailuresAreCountedAndLogged(t *testing.T) {
	var logs bytes.Buffer
	bus := &fakeBus{refuse: 1}
	p := newPublisher(t, publish.Options{Client: bus, Linger: time.Hour, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	for i := range 4 {
		p.OnAttempt(attempt(i, "overloaded", 529))
	}
	_ = p.Flush(context.Background())
	if s := p.Stats(); s.Published != 3 || s.Failed != 1 {
		t.Fatalf("partial refusal: %+v", s)
	}
	bus.fail = errors.New("AccessDeniedException: not authorized to perform events:PutEvents")
	p.OnAttempt(attempt(9, "overloaded", 529))
	_ = p.Close(context.Background())
	if s := p.Stats(); s.Failed != 2 {
		t.Fatalf("failed call: %+v", s)
	}
	if !strings.Contains(logs.String(), "InternalFailure: try again") {
		t.Fatalf("refusal reason not logged:\n%s", logs.String())
	}
}

func TestDetailTruncatesLongMessagesOnARuneBoundary(t *testing.T) {
	a := attempt(0, "bad_request", 400)
	a.ErrorMessage = strings.Repeat("é", 3000)
	d := publish.Detail(a)
	if len(d.ErrorMessage) > 2048 || !utf8Valid(d.ErrorMessage) {
		t.Fatalf("message of %d bytes, valid UTF-8 %v", len(d.ErrorMessage), utf8Valid(d.ErrorMessage))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// The rule pattern is JSON EventBridge accepts and names the publisher's identity.
func TestRulePatternNamesThePublisher(t *testing.T) {
	var p struct {
		Source     []string `json:"source"`
		DetailType []string `json:"detail-type"`
		Detail     struct {
			ErrorClass []string          `json:"error_class"`
			Status     []json.RawMessage `json:"status"`
		} `json:"detail"`
	}
	if err := json.Unmarshal([]byte(publish.RulePattern), &p); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p.Source) != "["+publish.Source+"]" || fmt.Sprint(p.DetailType) != "["+publish.DetailType+"]" || len(p.Detail.ErrorClass) != 6 || len(p.Detail.Status) != 2 {
		t.Fatalf("pattern %+v", p)
	}
}
