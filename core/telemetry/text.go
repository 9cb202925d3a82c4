package telemetry

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/fngate/fngate/core/record"
)

// FormatText is logging.format: text, for a person at a terminal: one readable line per
// request (status, door, model, route, attempts, latency, time to first token, tokens, cost,
// key), a line per failed attempt, and the other messages as "LEVEL msg key=value ...".
// Successful attempt lines are left out: the request's line says what they said.
const FormatText = "text"

// maxTextValue bounds a value on a text line: a terminal is no place for a 3 MB user label.
const maxTextValue = 512

// textHandler writes FormatText lines. Every record is one Write, so the Redactor behind it
// sees whole lines.
type textHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	attrs []slog.Attr // from WithAttrs, flattened
	group string      // from WithGroup, dotted
}

func newTextHandler(w io.Writer) *textHandler { return &textHandler{mu: &sync.Mutex{}, w: w} }

func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *textHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), flatten(h.group, as)...)
	return &c
}

func (h *textHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.group = join(h.group, name)
	return &c
}

// fields is a record's attributes by dotted name, in order.
type fields struct {
	keys []string
	vals map[string]slog.Value
}

func (f *fields) take(k string) (slog.Value, bool) {
	v, ok := f.vals[k]
	delete(f.vals, k)
	return v, ok
}

func (h *textHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == record.MsgAttempt {
		return nil
	}
	f := fields{vals: map[string]slog.Value{}}
	add := func(a slog.Attr) {
		if _, dup := f.vals[a.Key]; !dup {
			f.keys = append(f.keys, a.Key)
		}
		f.vals[a.Key] = a.Value
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(func(a slog.Attr) bool {
		for _, fa := range flatten(h.group, []slog.Attr{a}) {
			add(fa)
		}
		return true
	})
	b := make([]byte, 0, 256)
	b = r.Time.AppendFormat(b, "15:04:05.000")
	b = append(b, ' ')
	switch r.Message {
	case record.MsgRequest:
		b = requestLine(b, &f)
	case record.MsgProviderError:
		b = attemptLine(b, r.Level, &f)
	default:
		b = append(b, r.Level.String()...)
		b = append(b, ' ')
		b = append(b, r.Message...)
	}
	for _, k := range f.keys {
		if v, ok := f.take(k); ok {
			b = pair(b, k, v)
		}
	}
	b = append(b, '\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b)
	return err
}

// requestLine lays out a request: "200 chat example/chat route=... attempts=1 812ms
// ttft=230ms tokens=12/340 cost=$0.0041 key=app id=req_...", then what else the line holds.
func requestLine(b []byte, f *fields) []byte {
	status, _ := f.take("status")
	b = append(b, status.String()...)
	for _, k := range []string{"endpoint", "model"} {
		if v, ok := f.take(k); ok && v.String() != "" {
			b = append(b, ' ')
			b = append(b, quoted(v.String())...)
		}
	}
	if v, ok := f.take("route"); ok {
		b = pair(b, "route", v)
	}
	if v, ok := f.take("attempts"); ok {
		b = pair(b, "attempts", v)
	}
	if v, ok := f.take("latency_ms"); ok {
		b = append(b, ' ')
		b = appendMillis(b, v)
	}
	if v, ok := f.take("ttft_ms"); ok {
		b = append(b, " ttft="...)
		b = appendMillis(b, v)
	}
	b = tokens(b, f)
	if v, ok := f.take("cost_usd"); ok {
		b = append(b, " cost=$"...)
		b = strconv.AppendFloat(b, v.Float64(), 'f', -1, 64)
	}
	if v, ok := f.take("labels.key"); ok {
		b = pair(b, "key", v)
	}
	b = errorText(b, f)
	if v, ok := f.take("request_id"); ok {
		b = pair(b, "id", v)
	}
	for _, k := range []string{"stream", "overhead_ms"} { // the JSON line's; noise here
		f.take(k)
	}
	return b
}

// attemptLine lays out a failed attempt: "ERROR attempt 1 a/model-a failover 503
// error=unavailable: ... id=req_...".
func attemptLine(b []byte, level slog.Level, f *fields) []byte {
	b = append(b, level.String()...)
	b = append(b, " attempt"...)
	if v, ok := f.take("attempt"); ok {
		b = append(b, ' ')
		b = append(b, v.String()...)
	}
	for _, k := range []string{"route", "outcome"} {
		if v, ok := f.take(k); ok {
			b = append(b, ' ')
			b = append(b, quoted(v.String())...)
		}
	}
	if v, ok := f.take("status"); ok {
		b = pair(b, "status", v)
	}
	if v, ok := f.take("latency_ms"); ok {
		b = append(b, ' ')
		b = appendMillis(b, v)
	}
	if v, ok := f.take("error_class"); ok {
		b = pair(b, "class", v)
	}
	b = errorText(b, f)
	if v, ok := f.take("request_id"); ok {
		b = pair(b, "id", v)
	}
	// The JSON line's details, which the request's line or the route name already say.
	for _, k := range []string{"endpoint", "model", "connection", "provider", "upstream_model", "residency", "stream", "labels.key"} {
		f.take(k)
	}
	return b
}

// tokens appends "tokens=in/out" with the cached share, when the usage was reported.
func tokens(b []byte, f *fields) []byte {
	in, hasIn := f.take("usage.prompt_tokens")
	out, hasOut := f.take("usage.completion_tokens")
	cached, hasCached := f.take("usage.cached_tokens")
	for _, k := range []string{"usage.total_tokens", "usage.cache_write_tokens", "usage.reasoning_tokens"} {
		f.take(k)
	}
	if !hasIn && !hasOut {
		return b
	}
	b = append(b, " tokens="...)
	b = append(b, orDash(in, hasIn)...)
	b = append(b, '/')
	b = append(b, orDash(out, hasOut)...)
	if hasCached && cached.Int64() > 0 {
		b = append(b, " cached="...)
		b = append(b, cached.String()...)
	}
	return b
}

func orDash(v slog.Value, ok bool) string {
	if !ok {
		return "-"
	}
	return v.String()
}

// errorText appends "error=code: message (param)".
func errorText(b []byte, f *fields) []byte {
	code, _ := f.take("error_code")
	msg, hasMsg := f.take("error_message")
	param, hasParam := f.take("error_param")
	if !hasMsg {
		return b
	}
	text := msg.String()
	if c := code.String(); c != "" {
		text = c + ": " + text
	}
	if hasParam {
		text += " (" + param.String() + ")"
	}
	return append(append(b, " error="...), quoted(text)...)
}

func pair(b []byte, k string, v slog.Value) []byte {
	b = append(b, ' ')
	b = append(b, k...)
	b = append(b, '=')
	if v.Kind() == slog.KindDuration {
		return append(b, v.Duration().String()...)
	}
	return append(b, quoted(v.String())...)
}

// appendMillis writes a _ms value as a duration a person reads at a glance: 0.42ms, 12.3ms,
// 812ms, 1.24s.
func appendMillis(b []byte, v slog.Value) []byte {
	ms := v.Float64()
	d := time.Duration(ms * float64(time.Millisecond))
	switch {
	case d >= time.Second:
		return append(strconv.AppendFloat(b, d.Seconds(), 'f', 2, 64), 's')
	case ms >= 100:
		return append(strconv.AppendFloat(b, ms, 'f', 0, 64), "ms"...)
	case ms >= 10:
		return append(strconv.AppendFloat(b, ms, 'f', 1, 64), "ms"...)
	}
	return append(strconv.AppendFloat(b, ms, 'f', 2, 64), "ms"...)
}

// quoted leaves a plain token as it is and quotes anything with spaces, quotes or control
// characters, cut to maxTextValue.
func quoted(s string) string {
	s = Cut(s, maxTextValue)
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if r <= ' ' || r == '"' || r == '=' || r == '\\' || r == 0x7f {
			return strconv.Quote(s)
		}
	}
	return s
}

// flatten names grouped attributes with dots (usage.prompt_tokens, labels.key).
func flatten(prefix string, as []slog.Attr) []slog.Attr {
	var out []slog.Attr
	for _, a := range as {
		a.Value = a.Value.Resolve()
		if a.Value.Kind() == slog.KindGroup {
			out = append(out, flatten(join(prefix, a.Key), a.Value.Group())...)
			continue
		}
		if a.Key == "" {
			continue
		}
		a.Key = join(prefix, a.Key)
		out = append(out, a)
	}
	return out
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	if k == "" {
		return prefix
	}
	return prefix + "." + k
}
