package gateway

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/telemetry"
)

// Guardrails (guardrails: in the config; models, keys and key_defaults attach them). Input
// guardrails run once a request is admitted (its key's limits hold, so a key past its budget
// costs no guardrail call) and before the response cache's lookup and any planning: a block
// is the client's 400 and never fails over, a mask changes the request every later step sees
// (the cache key, the routes, the stored response). Output guardrails check a whole answer
// before it is sent, and a stream in windows (guardrail.Stream) below the response cache's
// recording, so the cache holds answers as they left them. They run in the order attached,
// the model's before the key's, each seeing the text as the one before left it: a local
// masker first keeps PII from ever reaching a cloud guardrail.

// GuardrailFactory makes the checker of a configured guardrail. The platforms give one that
// knows the cloud kinds (core/guardrail/kinds); without one only the local kind is built.
type GuardrailFactory func(g *config.Guardrail) (guardrail.Checker, error)

// guardrails are the gateway's configured guardrails.
type guardrails struct {
	byName      map[string]*guardrail.Guard
	keyDefaults []config.GuardrailUse
	// series are the decisions' metric lines by guardrail and action, rendered once: a
	// local guardrail decides on every request.
	series map[string]map[string]*telemetry.Series
	now    func() time.Time
}

// guardrailActions are the actions a decision's metrics are recorded under.
var guardrailActions = []string{record.GuardrailPass, record.GuardrailMasked, record.GuardrailBlocked,
	record.GuardrailLogged, record.GuardrailFailedOpen, record.GuardrailFailedClosed}

func newGuardrails(cfg *config.Config, factory GuardrailFactory, metrics io.Writer, now func() time.Time) (*guardrails, error) {
	if len(cfg.Guardrails) == 0 {
		return nil, nil
	}
	if factory == nil {
		factory = localOnly
	}
	if metrics == nil {
		metrics = os.Stdout
	}
	emf := telemetry.NewEMF(metrics, "fngate")
	gs := &guardrails{byName: map[string]*guardrail.Guard{}, series: map[string]map[string]*telemetry.Series{}, now: now}
	for name, gc := range cfg.Guardrails {
		gs.series[name] = map[string]*telemetry.Series{}
		for _, action := range guardrailActions {
			s, err := emf.Series([]telemetry.Dimension{{Name: "Guardrail", Value: name}, {Name: "Action", Value: action}},
				[]telemetry.Metric{{Name: record.MetricGuardrailDecisions, Unit: "Count"}, {Name: record.MetricGuardrailLatency, Unit: "Milliseconds"}})
			if err != nil {
				return nil, err
			}
			gs.series[name][action] = s
		}
		gc.Name = name
		c, err := factory(gc)
		if err != nil {
			return nil, fmt.Errorf("gateway: guardrail %s: %w", name, err)
		}
		gs.byName[name] = guardrail.NewGuard(gc, c)
	}
	if cfg.KeyDefaults != nil {
		gs.keyDefaults = cfg.KeyDefaults.Guardrails
	}
	return gs, nil
}

// guardState is the guardrails' part in one request.
type guardState struct {
	in, out []guardrail.Use
	// stream is the current attempt's checked stream, nil when not streaming.
	stream *guardrail.Stream
}

// usesOf is what applies to a request by k to m: the model's uses, then the key's own (else
// key_defaults'), each once, split by direction. gs may be nil (no guardrail configured).
// A stored key may name a guardrail the config no longer has (the admin API checked it
// against the config of its day): the request is refused, as a guardrail that cannot check
// is by default, rather than served unchecked.
func (gs *guardrails) usesOf(m *model, k *clientKey) (in, out []guardrail.Use, oe *llm.Error) {
	extra := []config.GuardrailUse(nil)
	if k != nil {
		extra = k.Guardrails
		if extra == nil && gs != nil {
			extra = gs.keyDefaults
		}
	}
	if gs == nil {
		if len(extra) > 0 {
			return nil, nil, unconfiguredGuardrail(extra[0].Name)
		}
		return nil, nil, nil
	}
	all := m.cfg.Guardrails
	if len(extra) > 0 {
		all = slices.Clone(all)
		for _, u := range extra {
			if !slices.Contains(all, u) {
				all = append(all, u)
			}
		}
	}
	for _, u := range all {
		g := gs.byName[u.Name]
		if g == nil {
			return nil, nil, unconfiguredGuardrail(u.Name)
		}
		use := guardrail.Use{Guard: g, Mode: u.Mode}
		if u.Input() {
			in = append(in, use)
		}
		if u.Output() {
			out = append(out, use)
		}
	}
	return in, out, nil
}

// charge reports whether a request by k to m may be charged by its guardrails: the cloud
// services meter their calls; the local kind is free.
func (gs *guardrails) charge(m *model, k *clientKey) bool {
	in, out, _ := gs.usesOf(m, k)
	for _, u := range slices.Concat(in, out) {
		if u.Kind != config.GuardrailLocal {
			return true
		}
	}
	return false
}

// unconfiguredGuardrail refuses a request by a key whose guardrail is not in the config.
func unconfiguredGuardrail(name string) *llm.Error {
	return &llm.Error{Status: http.StatusServiceUnavailable, Type: llm.TypeServiceUnavailable, Code: "guardrail_unavailable",
		Message: "guardrail " + name + " of this key is not in the gateway's config, so its requests cannot be checked; an administrator must configure it or change the key"}
}

// partitionNames are the uses as the response cache's key names them: answers checked
// differently are different answers.
func (s *guardState) partitionNames() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.in)+len(s.out))
	for _, u := range s.in {
		out = append(out, "in:"+u.Name+":"+u.Mode)
	}
	for _, u := range s.out {
		out = append(out, "out:"+u.Name+":"+u.Mode)
	}
	return out
}

// guardInput runs the request's input guardrails on the decoded request. It reports false
// when the client has been answered (a block, a guardrail that failed closed, a request
// output guardrails cannot read).
func (q *request) guardInput() bool {
	in, out, oe := q.g.guardrails.usesOf(q.m, q.rc.key)
	if oe != nil {
		q.refuse(oe)
		return false
	}
	if len(in)+len(out) == 0 {
		return true
	}
	q.guard = &guardState{in: in, out: out}
	if len(out) > 0 {
		if oe := outputUncheckable(q.req, q.rc.model); oe != nil {
			q.refuse(oe)
			return false
		}
		// Output guardrails read the normalized answer: the upstream's own events, which a
		// door would pass through as they came, are not what the client may get.
		q.req.PassThrough = llm.WireNone
	}
	if len(in) == 0 {
		return true
	}
	texts, images := guardrail.TextsOf(q.req), guardrail.ImagesOf(q.req)
	if texts.Len() == 0 && len(images) == 0 {
		return true
	}
	cur, ok := q.runInput(texts.Texts(), images)
	if ok {
		texts.PutBack(q.req, cur)
	}
	return ok
}

// guardEmbeddings runs the input guardrails on an embeddings request's texts.
func (q *request) guardEmbeddings(req *llm.EmbedRequest) bool {
	in, _, oe := q.g.guardrails.usesOf(q.m, q.rc.key)
	if oe != nil {
		q.refuse(oe)
		return false
	}
	if len(in) == 0 {
		return true
	}
	q.guard = &guardState{in: in}
	if req.Input == nil {
		q.refuse(llm.BadRequest("input", "the guardrails of "+q.rc.model+" read text, and token ids cannot be read: send the input as strings"))
		return false
	}
	cur, ok := q.runInput(req.Input, nil)
	if ok {
		req.Input = cur
	}
	return ok
}

// runInput runs the input uses in order on texts, and on images where a use's service takes
// them; ok false when the client has been answered. The model's total bounds them all together, as it bounds an attempt: a guardrail
// slower than the request may take has timed out, and its on_error decides, before any
// attempt begins with a total of its own.
func (q *request) runInput(texts []string, images []guardrail.Image) (out []string, ok bool) {
	ctx, cancel := context.WithTimeoutCause(q.r.Context(), q.m.timeouts.Total.D(), errGuardTotal)
	defer cancel()
	for _, u := range q.guard.in {
		o := u.RunWith(ctx, guardrail.Input, texts, images)
		q.decided(o.Decision)
		switch {
		case o.Failed != nil && q.clientGone():
			q.done(statusClientClosed, "", nil)
			return nil, false
		case o.Failed != nil:
			q.refuse(guardUnavailable(u.Name, o.Decision))
			return nil, false
		case o.Blocked:
			q.refuse(guardBlocked(u.Name, o.Decision, "request"))
			return nil, false
		}
		texts = o.Texts
	}
	return texts, true
}

// outputUncheckable refuses what output guardrails cannot read as text: tools only Anthropic
// or OpenAI's Responses API run (their results come as blocks and items of their own), and
// whatever else of a Responses request only its native route honours.
func outputUncheckable(req *llm.Request, model string) *llm.Error {
	for i := range req.Tools {
		if req.Tools[i].Raw != nil {
			return llm.BadRequest(fmt.Sprintf("tools[%d]", i), "the output guardrails of "+model+
				" read answers as text, and the results of a server tool ("+req.Tools[i].Name+") are blocks they cannot read; use function tools")
		}
	}
	if oe := req.Responses.Refusal(); oe != nil {
		return llm.BadRequest(oe.Param, "the output guardrails of "+model+
			" read answers as text, so requests are served through the translated Responses API, which cannot honour this: "+oe.Message)
	}
	return nil
}

// errGuardTotal ends the input guardrails' checks when the model's total runs out.
var errGuardTotal = fmt.Errorf("the guardrails' checks exceeded the total timeout: %w", context.DeadlineExceeded)

// guardAnswer runs the output guardrails on a whole answer of attempt a: a mask changes it, a
// block withholds it (it ends as a content filter ends it). It returns the client's error
// when a guardrail failed closed. The checks run under the attempt's context, so its total
// bounds them as it bounds a stream's (guardStream).
func (q *request) guardAnswer(a *attempt, ans *llm.Answer) *llm.Error {
	s := q.guard
	if s == nil || len(s.out) == 0 {
		return nil
	}
	at := guardrail.TextsOfAnswer(ans)
	cur := at.Texts()
	if len(cur) == 0 {
		return nil
	}
	for _, u := range s.out {
		o := u.Run(a.ctx, guardrail.Output, cur)
		q.decided(o.Decision)
		switch {
		case o.Failed != nil:
			return guardUnavailable(u.Name, o.Decision)
		case o.Blocked:
			guardrail.Withhold(ans)
			return nil
		}
		cur = o.Texts
	}
	at.PutBack(ans, cur)
	return nil
}

// guardFailure ends a stream whose output guardrail failed closed: the client gets the
// error, and no route is blamed or tried next (every route's answer goes through the same
// guardrail).
type guardFailure struct{ oe *llm.Error }

func (e *guardFailure) Error() string { return e.oe.Message }

// guardStream wraps an attempt's stream in the output guardrails' window check.
func (q *request) guardStream(a *attempt, st llm.Stream) llm.Stream {
	s := q.guard
	if s == nil || len(s.out) == 0 || st == nil {
		return st
	}
	window, overlap := 0, 0
	for _, u := range s.out {
		w, o := u.Window()
		if window == 0 || w < window {
			window = w
		}
		overlap = max(overlap, o)
	}
	overlap = min(overlap, window/2)
	gst := guardrail.NewStream(st, window, overlap, func(texts []string) ([]string, bool, error) {
		for _, u := range s.out {
			o := u.Run(a.ctx, guardrail.Output, texts)
			q.decided(o.Decision)
			switch {
			case o.Failed != nil:
				return nil, false, &guardFailure{guardUnavailable(u.Name, o.Decision)}
			case o.Blocked:
				return nil, true, nil
			}
			texts = o.Texts
		}
		return texts, false, nil
	})
	gst.OnUpstream = func() { a.first.Stop() }
	for _, u := range s.out {
		if u.Kind != config.GuardrailLocal {
			// A service's round trip must not stall a fast upstream once per window.
			gst.ReadAhead(readAheadWindows * window)
			break
		}
	}
	s.stream = gst
	return gst
}

// readAheadWindows is how many windows of output a stream checked by a cloud guardrail reads
// ahead while a window is checked: what came meanwhile is checked as one.
const readAheadWindows = 4

// withheld is how many characters of output a guardrail kept from the client in the current
// stream.
func (q *request) withheld() int {
	if q.guard == nil || q.guard.stream == nil {
		return 0
	}
	return q.guard.stream.Withheld()
}

// decided records a decision: one per guardrail and direction, a stream's windows adding
// up into one. It is counted in metrics and its cost charged to the key's spend.
func (q *request) decided(d record.Guardrail) {
	q.rc.guardUSD += d.CostUSD
	if ls := q.rc.lease; ls != nil && d.CostUSD > 0 {
		ls.usedUSD += nanoUSD(d.CostUSD)
		ls.guarded = true
	}
	gs := q.g.guardrails
	if s := gs.series[d.Name][d.Action]; s != nil {
		_ = s.Write(gs.now(), 1, ms(d.Latency))
	}
	rc := &q.rc
	for i := range rc.guardrails {
		p := &rc.guardrails[i]
		if p.Name == d.Name && p.On == d.On && p.Mode == d.Mode {
			mergeDecision(p, &d)
			return
		}
	}
	rc.guardrails = append(rc.guardrails, d)
}

// guardrailLog is a decision as the request line shows it.
type guardrailLog struct {
	Name       string   `json:"name"`
	On         string   `json:"on"`
	Mode       string   `json:"mode"`
	Action     string   `json:"action"`
	WouldBe    string   `json:"would_be,omitempty"`
	Categories []string `json:"categories,omitempty"`
	Error      string   `json:"error,omitempty"`
	Checks     int      `json:"checks"`
	Cached     int      `json:"cached,omitempty"`
	LatencyMS  float64  `json:"latency_ms"`
	Units      int      `json:"units,omitempty"`
	CostUSD    float64  `json:"cost_usd,omitempty"`
}

func guardrailLogs(ds []record.Guardrail) []guardrailLog {
	out := make([]guardrailLog, len(ds))
	for i, d := range ds {
		out[i] = guardrailLog{Name: d.Name, On: d.On, Mode: d.Mode, Action: d.Action, WouldBe: d.WouldBe, Categories: d.Categories,
			Error: d.Error, Checks: d.Checks, Cached: d.Cached, LatencyMS: ms(d.Latency), Units: d.Units, CostUSD: d.CostUSD}
	}
	return out
}

// mergeDecision adds a stream's later window to its decision: the strongest action stands.
func mergeDecision(p, d *record.Guardrail) {
	if actionRank(d.Action) > actionRank(p.Action) {
		p.Action, p.Error = d.Action, d.Error
	}
	if d.WouldBe == record.GuardrailBlocked || p.WouldBe == "" {
		p.WouldBe = cmp.Or(d.WouldBe, p.WouldBe)
	}
	for _, c := range d.Categories {
		if !slices.Contains(p.Categories, c) {
			p.Categories = append(p.Categories, c)
		}
	}
	p.Checks += d.Checks
	p.Cached += d.Cached
	p.Latency += d.Latency
	p.Units += d.Units
	p.CostUSD += d.CostUSD
}

func actionRank(a string) int {
	switch a {
	case record.GuardrailBlocked, record.GuardrailFailedClosed:
		return 3
	case record.GuardrailMasked:
		return 2
	case record.GuardrailFailedOpen, record.GuardrailLogged:
		return 1
	}
	return 0
}

// guardBlocked is a block's answer: the guardrail and what matched are named, never the
// matched text. The word guardrail_blocked is in the message too, for the Messages door,
// whose errors carry a type but no code.
func guardBlocked(name string, d record.Guardrail, what string) *llm.Error {
	msg := "guardrail_blocked: guardrail " + name + " blocked the " + what
	if len(d.Categories) > 0 {
		msg += " (" + strings.Join(d.Categories, ", ") + ")"
	}
	return &llm.Error{Status: http.StatusBadRequest, Type: llm.TypeInvalidRequest, Code: "guardrail_blocked", NoRetry: true, Message: msg}
}

// guardUnavailable is the answer when a guardrail failed closed.
func guardUnavailable(name string, d record.Guardrail) *llm.Error {
	return &llm.Error{Status: http.StatusServiceUnavailable, Type: llm.TypeServiceUnavailable, Code: "guardrail_unavailable", RetryAfter: "1",
		Message: "guardrail " + name + " could not check this request (" + d.Error + "), and it is configured on_error: closed; retry shortly"}
}

// localOnly builds the local kind; the cloud kinds need a platform's factory.
func localOnly(g *config.Guardrail) (guardrail.Checker, error) {
	if g.Kind != config.GuardrailLocal {
		return nil, fmt.Errorf("kind %s is not built into this gateway (no GuardrailFactory knows it)", g.Kind)
	}
	return newLocalChecker(g)
}
