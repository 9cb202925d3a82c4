package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path"
	"strconv"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/telemetry"
)

// Rate-limit headers, OpenAI's names, on every answer to a key with a rate limit.
const (
	HeaderLimitRequests     = "X-Ratelimit-Limit-Requests"
	HeaderRemainingRequests = "X-Ratelimit-Remaining-Requests"
	HeaderResetRequests     = "X-Ratelimit-Reset-Requests"
	HeaderLimitTokens       = "X-Ratelimit-Limit-Tokens"
	HeaderRemainingTokens   = "X-Ratelimit-Remaining-Tokens"
	HeaderResetTokens       = "X-Ratelimit-Reset-Tokens"
)

// DefaultReservedOutput is the output a request reserves when neither it nor its model sets a
// maximum.
const DefaultReservedOutput = 4096

// typeInsufficientQuota is OpenAI's error type for a spent quota.
const typeInsufficientQuota = "insufficient_quota"

// limiter holds keys to their rate limits and budgets, on counters every instance shares.
//
// A request is admitted by one conditional write before any route is planned: its request,
// its reserved tokens (the input estimate plus the output maximum) and its estimated cost are
// charged to every counter that applies, if every limit still holds. As each attempt is
// logged, what it used is tallied (counts the provider did not report are estimated); when
// the request has ended, after the client has its last byte, one unconditional write gives
// back the difference. No counter call ever sits between an upstream's first byte and the
// client.
type limiter struct {
	store   counters.Store
	timeout time.Duration
	closed  bool // on_store_error: closed
	policy  string
	emf     *telemetry.EMF
}

// rule is one scope's limits: the key's own (scope "") or one per_model glob's.
type rule struct {
	scope    string
	rpm, tpm int64
	day, mon int64 // nano-USD
	// tcpm is tool_calls_per_minute: the key's own scope's, for /mcp (mcp.go).
	tcpm int64
}

func (r *rule) applies(model string) bool {
	if r.scope == "" {
		return true
	}
	ok, _ := path.Match(r.scope, model)
	return ok
}

// lease is what one request took from its key's counters, settled when it ends.
type lease struct {
	key                  string // the key's id: the counters follow it
	w                    counters.Windows
	rules                []*rule
	priced               bool
	input                int // the input estimate, charged for attempts that did not report theirs
	reservedTok, usedTok int64
	reservedUSD, usedUSD int64 // nano-USD
	// guarded: guardrail calls were charged, which count as spend on a free model too.
	guarded bool
	// metered: a guardrail that charges (a cloud service) applies, so the key's budget is
	// checked at admission even on a free model: its charges are the key's spend, and a key
	// past its budget must not run up more of it.
	metered bool
}

// newLimiter returns the limiter of keys, nil when none has a limit and no stored key
// (stored) may be given one.
func newLimiter(cfg *config.Config, keys []clientKey, stored bool, store counters.Store, metrics io.Writer) (*limiter, error) {
	limited := stored
	for i := range keys {
		limited = limited || keys[i].rules != nil
	}
	if !limited {
		return nil, nil
	}
	l := &limiter{store: store, timeout: cfg.Counters.Timeout.D(), policy: cfg.Counters.OnStoreError}
	l.closed = l.policy == config.StoreErrorClosed
	if l.store == nil {
		if s := cfg.Counters.Kind; s != "" && s != config.StoreMemory {
			return nil, fmt.Errorf("gateway: counters.store is %s, but this platform supplied no counter store", s)
		}
		l.store = counters.NewMemory()
	}
	if metrics == nil {
		metrics = os.Stdout
	}
	l.emf = telemetry.NewEMF(metrics, "fngate")
	return l, nil
}

// compileRules returns the rules of a key's effective limits: its own scope first, then
// one per per_model glob; nil when it has none.
func compileRules(kl config.KeyLimits) []*rule {
	if !kl.Limited() {
		return nil
	}
	rules := []*rule{newRule("", kl.Rate, kl.Budget)}
	for _, g := range kl.Globs() {
		if m := kl.PerModel[g]; m != nil {
			rules = append(rules, newRule(g, m.Rate, m.Budget))
		}
	}
	return rules
}

func newRule(scope string, r *config.Rate, b *config.Budget) *rule {
	out := &rule{scope: scope}
	if r != nil {
		out.rpm, out.tpm, out.tcpm = r.RequestsPerMinute, r.TokensPerMinute, r.ToolCallsPerMinute
	}
	if b != nil {
		out.day, out.mon = nanoUSD(b.USDPerDay), nanoUSD(b.USDPerMonth)
	}
	return out
}

func nanoUSD(usd float64) int64 { return int64(math.Round(usd * 1e9)) }

// admitLimits holds the request to its key's limits once its model is known: in is its input
// estimate and out the output it may produce (none for an embedding). When ok is false the
// client has its answer.
func (q *request) admitLimits(in, out int) bool {
	g, rc, m := q.g, &q.rc, q.m
	l := g.limiter
	if l == nil || rc.key == nil {
		return true
	}
	var rules []*rule
	for _, ru := range rc.key.rules {
		if ru.applies(rc.model) {
			rules = append(rules, ru)
		}
	}
	if len(rules) == 0 {
		return true
	}
	ls := &lease{key: rc.key.ID, rules: rules, priced: m.cfg.Priced(), input: in, reservedTok: int64(in + out),
		metered: g.guardrails.charge(m, rc.key)}
	if ls.priced {
		usd, _ := cost(m.cfg.Price, &llm.Usage{InputTokens: &in, OutputTokens: &out})
		ls.reservedUSD = nanoUSD(usd)
	}
	for _, ru := range rules {
		if ru.tpm > 0 && ls.reservedTok > ru.tpm {
			q.refuse(tooManyTokens(rc, ru, ls.reservedTok, out > 0))
			return false
		}
	}
	now := g.now()
	ctx, cancel := context.WithTimeout(q.r.Context(), l.timeout)
	c, ok, err := l.store.Take(ctx, ls.key, counters.At(now), ls.amounts())
	cancel()
	switch {
	case err != nil && q.clientGone():
		q.done(statusClientClosed, "", nil)
		return false
	case err != nil:
		g.counterStoreFailed(rc, "take", err)
		if l.closed {
			q.refuse(&llm.Error{Status: http.StatusServiceUnavailable, Type: llm.TypeServiceUnavailable, Code: "limits_unavailable", RetryAfter: "1",
				Message: "the gateway cannot check this key's rate limits and budgets right now (counters.on_store_error: closed); retry shortly"})
			return false
		}
		return true
	case !ok:
		setRateHeaders(q.w.Header(), rules, c, now)
		q.refuse(refusal(rc, ls, c, now))
		return false
	}
	ls.w = c.Windows
	rc.lease = ls
	setRateHeaders(q.w.Header(), rules, c, now)
	return true
}

// reservedOutput is the output a request may produce: its maximum, else the model's.
func (m *model) reservedOutput(req *llm.Request) int {
	switch {
	case req.MaxTokens != nil:
		return *req.MaxTokens
	case m.cfg.MaxOutputTokens > 0:
		return m.cfg.MaxOutputTokens
	}
	return DefaultReservedOutput
}

// amounts is what admission charges: to each rule's counters one request, the reserved tokens
// and, on a priced model, the estimated cost. Unlimited counters are counted too, for the
// operator's view of a key's usage; a free model's requests are not held to budgets.
func (ls *lease) amounts() []counters.Amount {
	out := make([]counters.Amount, 0, 4*len(ls.rules))
	for _, ru := range ls.rules {
		out = append(out,
			limited(ru.scope, counters.Requests, 1, ru.rpm-1, ru.rpm > 0),
			limited(ru.scope, counters.Tokens, ls.reservedTok, ru.tpm-ls.reservedTok, ru.tpm > 0))
		if ls.priced || ls.metered {
			out = append(out,
				limited(ru.scope, counters.SpendDay, ls.reservedUSD, ru.day-1, ru.day > 0),
				limited(ru.scope, counters.SpendMonth, ls.reservedUSD, ru.mon-1, ru.mon > 0))
		}
	}
	return out
}

func limited(scope string, k counters.Kind, n, max int64, on bool) counters.Amount {
	return counters.Amount{Counter: counters.Counter{Scope: scope, Kind: k}, N: n, Max: max, Limited: on}
}

// charge tallies what one attempt used, as it is logged: the counts its provider reported,
// and for a count it did not report an estimate (the input estimate; a quarter of the
// characters it streamed or answered). An attempt that produced nothing known is free; an
// embedding answered is something known, though it has no output to count.
func (rc *requestCtx) charge(a *attempt, u *llm.Usage, m *model) {
	ls := rc.lease
	if ls == nil || u.InputTokens == nil && u.OutputTokens == nil && a.outChars == 0 && !a.embedded {
		return
	}
	in, out := ls.input, (a.outChars+3)/4
	if u.InputTokens != nil {
		in = *u.InputTokens
	}
	if u.OutputTokens != nil {
		out = *u.OutputTokens
	}
	ls.usedTok += int64(in + out)
	if ls.priced {
		usd, _ := cost(m.cfg.Price, &llm.Usage{InputTokens: &in, OutputTokens: &out, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens})
		ls.usedUSD += nanoUSD(usd)
	}
}

// settle gives back what the request reserved and did not use (or adds what it used beyond),
// once it has ended. A window that has passed since admission is left alone.
func (g *Gateway) settle(rc *requestCtx) {
	ls := rc.lease
	if ls == nil {
		return
	}
	dTok, dUSD := ls.usedTok-ls.reservedTok, ls.usedUSD-ls.reservedUSD
	now := counters.At(g.now())
	var amounts []counters.Amount
	for _, ru := range ls.rules {
		if dTok != 0 && now.Minute <= ls.w.Minute {
			amounts = append(amounts, limited(ru.scope, counters.Tokens, dTok, 0, false))
		}
		if (ls.priced || ls.guarded) && dUSD != 0 {
			if now.Day <= ls.w.Day {
				amounts = append(amounts, limited(ru.scope, counters.SpendDay, dUSD, 0, false))
			}
			if now.Month <= ls.w.Month {
				amounts = append(amounts, limited(ru.scope, counters.SpendMonth, dUSD, 0, false))
			}
		}
	}
	if len(amounts) == 0 {
		return
	}
	// Not the request's context: a client that left still used what it used.
	ctx, cancel := context.WithTimeout(context.Background(), g.limiter.timeout)
	defer cancel()
	if err := g.limiter.store.Add(ctx, ls.key, ls.w, amounts); err != nil {
		g.counterStoreFailed(rc, "settle", err)
	}
}

func (g *Gateway) counterStoreFailed(rc *requestCtx, op string, err error) {
	l := g.limiter
	attrs := appendKey([]slog.Attr{slog.String("request_id", rc.id)}, rc.key)
	g.log.LogAttrs(context.Background(), slog.LevelError, record.MsgCounterStoreError, append(attrs,
		slog.String("op", op),
		slog.String("on_store_error", l.policy),
		slog.String("error", err.Error()))...)
	props := map[string]any{"key": rc.key.Name, "op": op, "request_id": rc.id}
	if rc.key.stored {
		props["key_id"] = rc.key.ID
	}
	_ = l.emf.Write(g.now(), []telemetry.Dimension{{Name: "OnStoreError", Value: l.policy}},
		[]telemetry.Metric{{Name: record.MetricCounterStoreErrors, Unit: "Count", Value: 1}}, props)
}

// refusal is the client's answer to a charge the store refused: budget_exceeded when a budget
// is spent (retrying cannot help: x-should-retry: false), else rate_limit_exceeded with
// Retry-After at the end of the window that filled.
func refusal(rc *requestCtx, ls *lease, c counters.Counts, now time.Time) *llm.Error {
	var rate *llm.Error
	for _, ru := range ls.rules {
		for _, b := range []struct {
			k     counters.Kind
			limit int64
			span  string
		}{{counters.SpendDay, ru.day, "daily"}, {counters.SpendMonth, ru.mon, "monthly"}} {
			if (ls.priced || ls.metered) && b.limit > 0 && c.Value(ru.scope, b.k) >= b.limit {
				return &llm.Error{Status: http.StatusTooManyRequests, Type: typeInsufficientQuota, Code: "budget_exceeded", NoRetry: true,
					Message: fmt.Sprintf("Key %s has spent $%.4f of its %s budget of $%.2f%s; it renews at %s.",
						rc.key.Name, float64(c.Value(ru.scope, b.k))/1e9, b.span, float64(b.limit)/1e9, onModels(ru), c.Windows.End(b.k).Format(time.RFC3339))}
			}
		}
		if rate != nil {
			continue
		}
		used, limit, asked, what := c.Value(ru.scope, counters.Requests), ru.rpm, int64(1), "requests per minute (RPM)"
		if !(limit > 0 && used+asked > limit) {
			used, limit, asked, what = c.Value(ru.scope, counters.Tokens), ru.tpm, ls.reservedTok, "tokens per minute (TPM)"
			if !(limit > 0 && used+asked > limit) {
				continue
			}
		}
		wait := untilReset(c.Windows, now)
		rate = &llm.Error{Status: http.StatusTooManyRequests, Type: llm.TypeRateLimit, Code: "rate_limit_exceeded", RetryAfter: retryAfter(wait),
			Message: fmt.Sprintf("Rate limit reached for key %s%s on %s: Limit %d, Used %d, Requested %d. Please try again in %s.",
				rc.key.Name, onModels(ru), what, limit, used, asked, wait)}
	}
	if rate != nil {
		return rate
	}
	// The store refused on counts it saw that this read no longer shows (a concurrent
	// settlement gave tokens back): the client may retry at once.
	return &llm.Error{Status: http.StatusTooManyRequests, Type: llm.TypeRateLimit, Code: "rate_limit_exceeded", RetryAfter: "1",
		Message: "Rate limit reached for key " + rc.key.Name + "; please try again in 1s."}
}

func onModels(ru *rule) string {
	if ru.scope == "" {
		return ""
	}
	return " on models matching " + ru.scope
}

// tooManyTokens refuses a request whose reservation alone exceeds a tokens-per-minute limit:
// no wait would let it in.
func tooManyTokens(rc *requestCtx, ru *rule, reserved int64, output bool) *llm.Error {
	what, advice := "the input estimate plus the output maximum", "Lower the output maximum or shorten the input."
	if !output { // an embedding: its input is all it reserves
		what, advice = "the input estimate", "Send fewer or shorter inputs."
	}
	return &llm.Error{Status: http.StatusTooManyRequests, Type: llm.TypeRateLimit, Code: "rate_limit_exceeded", NoRetry: true,
		Message: fmt.Sprintf("Request too large for key %s%s on tokens per minute (TPM): Limit %d, Requested %d (%s). %s",
			rc.key.Name, onModels(ru), ru.tpm, reserved, what, advice)}
}

func untilReset(w counters.Windows, now time.Time) time.Duration {
	return min(max(w.End(counters.Requests).Sub(now), 0), time.Minute).Round(time.Millisecond)
}

func retryAfter(d time.Duration) string {
	return strconv.FormatInt(max(int64(math.Ceil(d.Seconds())), 1), 10)
}

// setRateHeaders writes OpenAI's x-ratelimit-* headers: of the rules with a limit of each
// kind, the one with the least remaining.
func setRateHeaders(h http.Header, rules []*rule, c counters.Counts, now time.Time) {
	reset := untilReset(c.Windows, now).String()
	for _, kind := range []struct {
		k                       counters.Kind
		limit, remaining, reset string
	}{
		{counters.Requests, HeaderLimitRequests, HeaderRemainingRequests, HeaderResetRequests},
		{counters.Tokens, HeaderLimitTokens, HeaderRemainingTokens, HeaderResetTokens},
	} {
		var best *rule
		var bestLeft, bestLimit int64
		for _, ru := range rules {
			limit := ru.rpm
			if kind.k == counters.Tokens {
				limit = ru.tpm
			}
			if limit <= 0 {
				continue
			}
			left := max(limit-c.Value(ru.scope, kind.k), 0)
			if best == nil || left < bestLeft {
				best, bestLeft, bestLimit = ru, left, limit
			}
		}
		if best != nil {
			h.Set(kind.limit, strconv.FormatInt(bestLimit, 10))
			h.Set(kind.remaining, strconv.FormatInt(bestLeft, 10))
			h.Set(kind.reset, reset)
		}
	}
}

// outputChars counts what a streamed delta shows the client, for the estimate of an output
// the provider did not report (a cut stream).
func outputChars(d *llm.Delta) int {
	n := len(d.Text) + len(d.Thinking) + len(d.Refusal)
	for i := range d.ToolCalls {
		n += len(d.ToolCalls[i].Name) + len(d.ToolCalls[i].Arguments)
	}
	return n
}

// answerChars counts a whole answer the same way.
func answerChars(a *llm.Answer) int {
	n := 0
	if a.Refusal != nil {
		n += len(*a.Refusal)
	}
	for i := range a.Parts {
		p := &a.Parts[i]
		n += len(p.Text) + len(p.Input) + len(p.Name)
	}
	return n
}
