package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/telemetry"
)

// The response cache's writes. A complete answer is queued once its client has its last byte
// (a send on a buffered channel that never waits) and written by a few writers off the
// request path, each write under the cache's timeout. A full queue skips the answer (logged:
// the cache is an optimisation, never a reason to slow a request), a store that fails or
// refuses an entry too large is logged, and neither reaches a client. Flush waits for the
// queue, for platforms that freeze the process between requests (Lambda).
const (
	// cacheQueue is how many answers may wait for the writers.
	cacheQueue = 256
	// cacheWriters is how many writes run at once.
	cacheWriters = 4
)

type cacheWrite struct {
	entry     responsecache.Entry
	rec       *responsecache.Recording
	requestID string
}

type cacheWriter struct {
	store   responsecache.Store
	timeout time.Duration
	log     *slog.Logger
	emf     *telemetry.EMF
	now     func() time.Time
	q       chan cacheWrite
	backlog
}

func newCacheWriter(store responsecache.Store, timeout time.Duration, log *slog.Logger, metrics io.Writer, now func() time.Time) *cacheWriter {
	if metrics == nil {
		metrics = os.Stdout
	}
	w := &cacheWriter{store: store, timeout: timeout, log: log, emf: telemetry.NewEMF(metrics, "fngate"), now: now, q: make(chan cacheWrite, cacheQueue)}
	for range cacheWriters {
		go w.run()
	}
	return w
}

// put queues rec as the answer of q, cached for its ttl.
func (w *cacheWriter) put(q *request, rec *responsecache.Recording) {
	c := q.cache
	now := w.now()
	cw := cacheWrite{entry: responsecache.Entry{Key: c.key, Model: c.model, Created: now, Expires: now.Add(c.ttl)}, rec: rec, requestID: q.rc.id}
	w.add(1)
	select {
	case w.q <- cw:
	default:
		w.done(1)
		w.log.LogAttrs(context.Background(), slog.LevelInfo, record.MsgCacheSkipped,
			slog.String("request_id", cw.requestID), slog.String("model", c.model), slog.String("reason", "queue_full"))
	}
}

func (w *cacheWriter) run() {
	for cw := range w.q {
		w.write(&cw)
		w.done(1)
	}
}

func (w *cacheWriter) write(cw *cacheWrite) {
	body, err := cw.rec.Encode()
	if err == nil {
		cw.entry.Body = body
		ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
		err = w.store.Put(ctx, &cw.entry)
		cancel()
	}
	switch {
	case err == nil:
	case errors.Is(err, responsecache.ErrTooLarge):
		w.log.LogAttrs(context.Background(), slog.LevelInfo, record.MsgCacheSkipped,
			slog.String("request_id", cw.requestID), slog.String("model", cw.entry.Model),
			slog.String("reason", "too_large"), slog.Int("bytes", len(body)))
	default:
		w.log.LogAttrs(context.Background(), slog.LevelError, record.MsgCacheError,
			slog.String("request_id", cw.requestID), slog.String("model", cw.entry.Model),
			slog.String("op", "write"), slog.String("error", err.Error()))
		w.metric("write")
	}
}

// metric counts a failed cache call of op.
func (w *cacheWriter) metric(op string) {
	if w == nil {
		return
	}
	_ = w.emf.Write(w.now(), []telemetry.Dimension{{Name: "Op", Value: op}},
		[]telemetry.Metric{{Name: record.MetricCacheErrors, Unit: "Count", Value: 1}}, nil)
}

// Flush waits until the usage of every request that has ended is in the history and every
// answer queued for the response cache is written (or ctx ends): Lambda calls it after each
// invoke's response, before the process may freeze.
func (g *Gateway) Flush(ctx context.Context) error {
	err := g.FlushUsage(ctx)
	if g.cacheWrites != nil {
		err = errors.Join(err, g.cacheWrites.wait(ctx))
	}
	return err
}
