package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/responsecache"
)

// HeaderCache says what the response cache did for a request whose model or key caches:
// hit, miss or bypass (record.CacheHit ...). Requests that cache nothing carry none.
const HeaderCache = "X-Fngate-Cache"

// The response cache (Options.Cache; models and keys opt in with cache: {ttl}). A request is
// looked up once it is admitted (its key's limits and budget hold, so a key past its budget
// is refused before the cache, and a hit counts against the rate limit's requests) and
// before any route is planned. A hit is answered from the recording in the door's shape, a
// whole answer or a stream replayed delta by delta, through the same encoders as an upstream's
// answer: its attempt is outcome cache_hit, uses nothing and costs nothing, so the
// admission's reservation is given back whole. A miss is served upstream, and its answer, if
// complete, is written after the client has its last byte by the cache writer, off the
// request path (cachewriter.go). The client's Cache-Control: no-cache skips the read (the
// answer is cached anew), no-store skips both.
//
// What is not cached: a request whose door says so (uncacheableDoor: a Responses request that
// continues a stored one, a WebSocket warm-up, a compaction), and an answer that is not
// complete (responsecache.Complete), a stream cut or failed, or a client that left.

// cacheState is the cache's part in one request.
type cacheState struct {
	key    string
	model  string
	ttl    time.Duration
	result string // record.CacheHit, CacheMiss, CacheBypass
	write  bool   // a complete answer is cached
}

// replayingDoor is a door that marks what it answers from the cache (the Responses door
// gives an upstream's recorded object its own times).
type replayingDoor interface{ replaying() }

// uncacheableDoor is a door some of whose requests the cache must not serve: reason says why
// a request is one of them, "" when it is not.
type uncacheableDoor interface {
	uncacheable() (reason string)
}

// cacheSetting is the cache setting of a request by k to m: the key's own, else
// key_defaults', else the model's (config's Cache documents the rule).
func (g *Gateway) cacheSetting(k *clientKey, m *model) *config.Cache {
	if k != nil {
		if k.Cache != nil {
			return k.Cache
		}
		if g.keyDefaultCache != nil {
			return g.keyDefaultCache
		}
	}
	return m.cfg.Cache
}

// fromCache looks the request up in the response cache, and answers it when it is a hit. It
// reports whether the client has been answered.
func (q *request) fromCache() bool {
	g := q.g
	if g.cache == nil {
		return false
	}
	set := g.cacheSetting(q.rc.key, q.m)
	if !set.On() {
		return false
	}
	c := &cacheState{model: q.rc.model, ttl: set.TTL.D()}
	q.cache = c
	noCache, noStore := cacheControl(q.r.Header)
	if u, ok := q.wire.(uncacheableDoor); noStore || ok && u.uncacheable() != "" {
		c.mark(q, record.CacheBypass)
		return false
	}
	id, err := responsecache.NewIdentity(q.partition(set), q.req)
	if err != nil {
		// A request the door decoded always marshals; should one not, it is served uncached.
		g.cacheFailed(&q.rc, "key", err)
		c.mark(q, record.CacheBypass)
		return false
	}
	c.key, c.write = id.Key(), true
	if noCache {
		c.mark(q, record.CacheMiss)
		return false
	}
	rec := q.lookup(c.key)
	otherForm := rec != nil && (rec.Whole != nil) == q.req.Stream
	if rec == nil || otherForm && !rec.Portable() {
		// A recording only its own form can replay whole is a miss for the other form,
		// whose answer then replaces it.
		c.mark(q, record.CacheMiss)
		return false
	}
	c.mark(q, record.CacheHit)
	q.serveHit(rec)
	return true
}

// mark records the cache's result on the request and its answer.
func (c *cacheState) mark(q *request, result string) {
	c.result = result
	q.rc.cache = result
	q.w.Header().Set(HeaderCache, result)
}

// partition is what the request shares entries with: its scope under set, its model, door,
// request profile and residency.
func (q *request) partition(set *config.Cache) responsecache.Partition {
	p := responsecache.Partition{Model: q.rc.model, Door: q.wire.endpoint()}
	k := q.rc.key
	var id, team string
	if k != nil {
		id, team, p.Residency = k.ID, k.Team, k.Residency
	}
	p.Scope = responsecache.ScopeOf(set.Scope, id, team)
	p.Guardrails = q.guard.partitionNames()
	switch prof := q.g.profile(k); {
	case prof.Extended && prof.NamesOptional:
		p.Profile = config.ProfileExtended + "+" + config.IgnoreMessageNames
	case prof.Extended:
		p.Profile = config.ProfileExtended
	default:
		p.Profile = config.ProfileStrict
	}
	return p
}

// lookup reads the recording under key; nil for a miss, a store that failed (logged) or an
// entry this gateway cannot read.
func (q *request) lookup(key string) *responsecache.Recording {
	g := q.g
	ctx, cancel := context.WithTimeout(q.r.Context(), g.cacheTimeout)
	start := time.Now()
	e, err := g.cache.Get(ctx, key)
	q.rc.cacheLookup = time.Since(start)
	cancel()
	switch {
	case errors.Is(err, responsecache.ErrNotFound):
		return nil
	case err != nil:
		if !q.clientGone() {
			g.cacheFailed(&q.rc, "read", err)
		}
		return nil
	}
	rec, err := responsecache.Decode(e.Body)
	if err != nil {
		g.cacheFailed(&q.rc, "read", err)
		return nil
	}
	return rec
}

// cacheRoute is what answers a hit, as headers, records and log lines name it.
var cacheRoute = &route{id: "cache", kind: "cache"}

// serveHit answers the request from rec: a whole answer, or a stream replayed from it.
func (q *request) serveHit(rec *responsecache.Recording) {
	if rd, ok := q.wire.(replayingDoor); ok {
		rd.replaying()
	}
	a := q.begin(cacheRoute, 0)
	q.rc.attempts-- // no upstream was tried
	a.hit = true
	a.rec.Saved = rec.Usage()
	q.rc.saved = a.rec.Saved
	if q.req.Stream {
		q.replay(a, rec.Stream())
		return
	}
	ans := rec.Answer()
	if ans.RawWire == llm.WireAnthropic && len(ans.Raw) > 0 {
		if patched := messages.PatchID(ans.Raw, "msg_"+randomID(24)); patched != nil {
			ans.Raw = patched
		} else {
			ans.Raw, ans.RawWire = nil, llm.WireNone
		}
	}
	a.answered(ans)
	a.rec.Latency = a.arrived()
	a.finish(record.OutcomeCacheHit, nil)
	q.writeAnswer(cacheRoute, ans)
}

// replay streams a hit's deltas through the door's encoder, as a committed upstream stream
// is sent (committed): the same events, ids of the gateway's own making, the cached usage.
func (q *request) replay(a *attempt, deltas []llm.Delta) {
	msgID := "msg_" + randomID(24)
	for i := range deltas {
		if r := deltas[i].Raw; r != nil && r.Wire == llm.WireAnthropic && r.Name == "message_start" {
			r.Data = messages.PatchStartID(r.Data, msgID)
		}
	}
	s := &streaming{attempt: a, enc: q.wire.(door).encoder(&q.rc)}
	a.usage = &s.usage
	st := &replayed{deltas: deltas}
	if err := q.firstVisible(s, st); err != nil {
		// A recording has its visible content (only complete answers are cached), so this
		// is a recording that says nothing: the client gets the stream-less failure.
		a.finish(record.OutcomeError, a.failure(err))
		q.fail(cacheRoute, errNoContent.ClientError())
		return
	}
	a.rec.TTFT = a.arrived()
	q.rc.ttft = time.Since(q.rc.start)
	s.st = st
	q.committed(s)
}

// replayed is a Stream of recorded deltas: all in hand, so the gateway writes them without
// waiting (Pending) and flushes once, before the end.
type replayed struct {
	deltas []llm.Delta
	next   int
}

func (r *replayed) Next() (llm.Delta, error) {
	if r.next == len(r.deltas) {
		return llm.Delta{}, io.EOF
	}
	r.next++
	return r.deltas[r.next-1], nil
}

func (*replayed) Pending() bool { return true }

func (*replayed) Close() error { return nil }

// recording is a Stream that keeps a copy of every delta it passes on, so a stream that ends
// complete can be cached as it was sent.
type recording struct {
	llm.Stream
	deltas []llm.Delta
	bytes  int
	// over: the stream outgrew what a cache entry can hold, and is no longer kept.
	over bool
}

// maxRecording bounds what a recording keeps of one stream: more than any store holds even
// compressed, so it is not worth holding in memory.
const maxRecording = 4 * responsecache.MaxEntryBytes

func (r *recording) Next() (llm.Delta, error) {
	d, err := r.Stream.Next()
	if err != nil || r.over {
		return d, err
	}
	c := cloneDelta(&d)
	r.bytes += len(c.Text) + len(c.Thinking) + len(c.Signature) + len(c.RedactedThinking) + len(c.Refusal)
	for _, tc := range c.ToolCalls {
		r.bytes += len(tc.Arguments) + len(tc.ID) + len(tc.Name)
	}
	if c.Raw != nil {
		r.bytes += len(c.Raw.Data)
	}
	if r.bytes > maxRecording {
		r.over, r.deltas = true, nil
		return d, nil
	}
	r.deltas = append(r.deltas, c)
	return d, nil
}

// Pending passes the wrapped stream's on: the gateway's flush deferral must not change
// because the stream is recorded.
func (r *recording) Pending() bool {
	p, ok := r.Stream.(llm.Pending)
	return ok && p.Pending()
}

// ModelReporter passes the wrapped stream's on.
func (r *recording) ResponseModel() string {
	if mr, ok := r.Stream.(llm.ModelReporter); ok {
		return mr.ResponseModel()
	}
	return ""
}

// cloneDelta copies what a delta shares with its stream's buffers (Raw.Data is valid only
// until the next Next) and with the gateway's later edits (the tool calls, the usage).
func cloneDelta(d *llm.Delta) llm.Delta {
	c := *d
	if d.ToolCalls != nil {
		c.ToolCalls = append([]llm.ToolCallDelta(nil), d.ToolCalls...)
	}
	if d.Usage != nil {
		var u llm.Usage
		u.Merge(d.Usage)
		c.Usage = &u
	}
	if d.Raw != nil {
		raw := *d.Raw
		raw.Data = append([]byte(nil), d.Raw.Data...)
		c.Raw = &raw
	}
	return c
}

// recordStream wraps an attempt's stream in a recording when its answer may be cached.
func (q *request) recordStream(st llm.Stream) llm.Stream {
	if c := q.cache; c == nil || !c.write || st == nil {
		return st
	}
	return &recording{Stream: st}
}

// cacheStream caches a stream that ended properly and complete, once its client has its last
// byte.
func (q *request) cacheStream(st llm.Stream) {
	r, ok := st.(*recording)
	if !ok || r.over || len(r.deltas) == 0 {
		return
	}
	var stop llm.StopReason
	for i := range r.deltas {
		if s := r.deltas[i].Stop; s != "" {
			stop = s
		}
	}
	if responsecache.Complete(stop) {
		q.g.cacheWrites.put(q, &responsecache.Recording{Deltas: r.deltas})
	}
}

// cacheAnswer caches a whole answer that is complete, once its client has it.
func (q *request) cacheAnswer(a *llm.Answer) {
	if c := q.cache; c != nil && c.write && c.result != record.CacheHit && responsecache.Complete(a.Stop) {
		q.g.cacheWrites.put(q, &responsecache.Recording{Whole: a})
	}
}

// cacheControl reads the client's Cache-Control: no-cache (serve fresh, cache it) and
// no-store (neither read nor write).
func cacheControl(h http.Header) (noCache, noStore bool) {
	for _, v := range h.Values("Cache-Control") {
		for d := range strings.SplitSeq(v, ",") {
			switch strings.ToLower(strings.TrimSpace(d)) {
			case "no-cache":
				noCache = true
			case "no-store":
				noStore = true
			}
		}
	}
	return noCache, noStore
}

// cacheFailed logs a failed cache call and counts it; the request goes on as a miss.
func (g *Gateway) cacheFailed(rc *requestCtx, op string, err error) {
	attrs := appendKey([]slog.Attr{slog.String("request_id", rc.id), slog.String("model", rc.model), slog.String("op", op)}, rc.key)
	g.log.LogAttrs(context.Background(), slog.LevelError, record.MsgCacheError, append(attrs, slog.String("error", err.Error()))...)
	g.cacheWrites.metric(op)
}
