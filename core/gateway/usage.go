package gateway

import (
	"context"
	"io"
	"log/slog"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/telemetry"
)

// Usage history (Options.History): every request with a key whose model is one of the
// gateway's adds one counters.Usage to the key's day, limited or not, refused or served,
// once it has ended. The request's goroutine only queues it (a send on a buffered channel
// that never waits); writers write it to the store off the request path, after the client
// has its answer. A full queue drops the usage with a usage_dropped warning and the
// UsageDropped metric, at most once a second, rather than grow or slow requests down; a
// failed write is logged and never reaches the client. Flush waits for what is queued, for
// platforms that freeze the process between requests (Lambda).
const (
	// usageQueue is how many requests' usage may wait for the writers.
	usageQueue = 4096
	// usageBatch is how many queued usages one round takes, merged by key, day and model
	// before they are written: under load, writes fall far below one per request.
	usageBatch = 256
	// usageWriters bounds the writes one round makes at a time.
	usageWriters = 8
	// usageTimeout bounds one write.
	usageTimeout = 5 * time.Second
)

// usageEntry is one request's usage, or several merged.
type usageEntry struct {
	key, day, model string
	at              time.Time
	u               counters.Usage
}

type usageLog struct {
	h   counters.History
	q   chan usageEntry
	log *slog.Logger
	emf *telemetry.EMF
	now func() time.Time

	backlog // queued or being written

	dropped  atomic.Int64 // since the last warning
	lastWarn atomic.Int64 // unix nanoseconds of the last warning
}

func newUsageLog(h counters.History, log *slog.Logger, metrics io.Writer, now func() time.Time) *usageLog {
	if metrics == nil {
		metrics = os.Stdout
	}
	l := &usageLog{h: h, q: make(chan usageEntry, usageQueue), log: log, emf: telemetry.NewEMF(metrics, "fngate"), now: now}
	go l.run()
	return l
}

// usedTokens are the tokens a request's attempts reported, each attempt's added: a request
// that failed over used what its failed attempts reported too, as its cost says. (The
// request line's usage is the answering attempt's.)
type usedTokens struct{ in, out int64 }

func (t *usedTokens) add(u *llm.Usage) {
	if u.InputTokens != nil {
		t.in += int64(*u.InputTokens)
	}
	if u.OutputTokens != nil {
		t.out += int64(*u.OutputTokens)
	}
}

// recordUsage queues the usage of a request that has ended: the tokens its attempt lines
// report and the cost they show, added up. A request refused before any upstream call is a request of no
// tokens. A request without a key, or whose model is not one of the gateway's (a typo, a
// body that did not decode), is not kept: history is per key and gateway model.
func (q *request) recordUsage() {
	l, rc := q.g.usage, &q.rc
	if l == nil || rc.key == nil || q.m == nil {
		return
	}
	u := counters.Usage{Requests: 1, InputTokens: rc.used.in, OutputTokens: rc.used.out, CostNanoUSD: int64(math.Round(rc.costUSD * 1e9))}
	at := l.now()
	l.add(usageEntry{key: rc.key.ID, day: counters.Day(at), model: rc.model, at: at, u: u})
}

func (l *usageLog) add(e usageEntry) {
	l.backlog.add(1)
	select {
	case l.q <- e:
		return
	default:
	}
	l.done(1)
	l.dropped.Add(1)
	l.reportDrops(false)
}

// reportDrops logs and counts the usages dropped since the last report: at most once a
// second while they are being dropped, and once more (drained) when the queue has emptied,
// so the end of a burst is reported too.
func (l *usageLog) reportDrops(drained bool) {
	if l.dropped.Load() == 0 {
		return
	}
	now := time.Now()
	last := l.lastWarn.Load()
	if !drained && now.UnixNano()-last < int64(time.Second) || !l.lastWarn.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	n := l.dropped.Swap(0)
	if n == 0 {
		return
	}
	l.log.LogAttrs(context.Background(), slog.LevelWarn, record.MsgUsageDropped, slog.Int64("dropped", n), slog.Int("queue", usageQueue))
	_ = l.emf.Write(now, nil, []telemetry.Metric{{Name: record.MetricUsageDropped, Unit: "Count", Value: float64(n)}}, nil)
}

// run writes rounds: what the queue holds, up to usageBatch, merged, written by up to
// usageWriters at once.
func (l *usageLog) run() {
	batch := make([]usageEntry, 0, usageBatch)
	for first := range l.q {
		batch = append(batch[:0], first)
	drain:
		for len(batch) < usageBatch {
			select {
			case e := <-l.q:
				batch = append(batch, e)
			default:
				break drain
			}
		}
		n := len(batch)
		l.write(merge(batch))
		l.done(n)
		l.reportDrops(len(l.q) == 0)
	}
}

// merge adds up the usages of one key, day and model, in place.
func merge(batch []usageEntry) []usageEntry {
	if len(batch) < 2 {
		return batch
	}
	type id struct{ key, day, model string }
	at := make(map[id]int, len(batch))
	out := batch[:0]
	for _, e := range batch {
		k := id{e.key, e.day, e.model}
		if i, ok := at[k]; ok {
			out[i].u.Add(e.u)
			continue
		}
		at[k] = len(out)
		out = append(out, e)
	}
	return out
}

func (l *usageLog) write(entries []usageEntry) {
	if len(entries) == 1 { // a quiet instance's round: no goroutine for it
		l.writeOne(&entries[0])
		return
	}
	sem := make(chan struct{}, usageWriters)
	var wg sync.WaitGroup
	for i := range entries {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			l.writeOne(&entries[i])
		}()
	}
	wg.Wait()
}

func (l *usageLog) writeOne(e *usageEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), usageTimeout)
	defer cancel()
	if err := l.h.AddUsage(ctx, e.key, e.at, e.model, e.u); err != nil {
		l.log.LogAttrs(ctx, slog.LevelError, record.MsgUsageError,
			slog.String("key_id", e.key), slog.String("model", e.model), slog.String("day", e.day),
			slog.Int64("requests", e.u.Requests), slog.String("error", err.Error()))
		_ = l.emf.Write(time.Now(), nil, []telemetry.Metric{{Name: record.MetricUsageErrors, Unit: "Count", Value: 1}}, nil)
	}
}

// FlushUsage waits until the usage of every request that has ended is in the history (or
// ctx ends): Lambda calls it after each invoke's response, before the process may freeze.
// Without Options.History it returns at once.
func (g *Gateway) FlushUsage(ctx context.Context) error {
	if g.usage == nil {
		return nil
	}
	return g.usage.wait(ctx)
}
