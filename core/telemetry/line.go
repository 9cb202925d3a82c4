package telemetry

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MaxLineBytes bounds every log line. CloudWatch Logs and Cloud Logging both refuse entries
// over 256 KB, and Cloud Logging counts the resource and labels the platform adds to the
// entry, so a line keeps 16 KiB of headroom below that.
const MaxLineBytes = 240 << 10

// keptOnCut are the top-level fields a cut line never loses: what queries, alarms, bills and
// the self-repair handlers read. Their values are short unless a client made them long (a
// 3 MB model name), so they are cut to keptValueBytes and no further.
var keptOnCut = map[string]bool{
	"time": true, "level": true, "severity": true, "msg": true, "message": true,
	"request_id": true, "endpoint": true, "model": true, "route": true, "connection": true,
	"provider": true, "upstream_model": true, "residency": true, "attempt": true,
	"attempts": true, "stream": true, "outcome": true, "status": true, "error_class": true,
	"error_code": true, "usage": true, "cost_usd": true, "latency_ms": true, "ttft_ms": true,
	"overhead_ms": true,
}

const (
	// keptValueBytes bounds a value of a kept field.
	keptValueBytes = 1 << 10
	// minCutBytes is the least a free-text value is cut to; when even that does not fit,
	// the free-text fields are dropped instead.
	minCutBytes = 256
)

// lineLimiter writes lines of at most max bytes. It sits behind the Redactor, so it cuts
// lines that are already redacted.
type lineLimiter struct {
	w   io.Writer
	max int
}

func (l *lineLimiter) Write(p []byte) (int, error) {
	out := p
	if len(p) > l.max {
		out = limitLine(p, l.max)
	}
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// limitLine cuts a JSON line to at most limit bytes and keeps it JSON. Values of kept fields
// are cut to keptValueBytes; then every other value (string, array, number; nested in
// objects such as labels too) longer than some length T is cut to T, with T as large as the
// line allows, so short values stay whole and only the big ones lose their tails. When T
// would be under minCutBytes, the fields that are not kept are dropped. Either way the line
// gains a log_cut field saying what happened, and each cut value ends in a marker. A line
// that is not a JSON object is cut as text.
func limitLine(p []byte, limit int) []byte {
	line := bytes.TrimSuffix(p, []byte("\n"))
	root, ok := parseObject(line)
	if !ok {
		return append([]byte(Cut(string(line), limit-1)), '\n')
	}
	var kept, free []*[]byte
	for i := range root.members {
		m := &root.members[i]
		if keptOnCut[m.name] {
			m.leaves(&kept)
		} else {
			m.leaves(&free)
		}
	}
	cutValues := func(vs []*[]byte, to int) (n int) {
		for _, v := range vs {
			if len(*v) > to {
				*v, n = cutValue(*v, to), n+1
			}
		}
		return n
	}
	note := func(n int) string { return cutNote(limit, strconv.Itoa(n)+" values were cut") }
	// Room for the free values: the line less its newline, its structure, the kept values
	// and the log_cut member.
	avail := limit - 1 - root.size() - len(`,"log_cut":""`) - len(note(len(kept)+len(free)))
	n := cutValues(kept, keptValueBytes)
	for _, v := range kept {
		avail -= len(*v)
	}
	if t := fill(free, avail); t >= minCutBytes {
		n += cutValues(free, t)
		root.add("log_cut", note(n))
		return append(root.appendTo(make([]byte, 0, limit)), '\n')
	}
	// Only the kept fields, each once (slog writes a repeated key as often as it is given).
	seen := map[string]bool{}
	dropped := 0
	root.members = slices.DeleteFunc(root.members, func(m member) bool {
		drop := !keptOnCut[m.name] || seen[m.name] || m.obj != nil && len(m.obj.appendTo(nil)) > keptValueBytes
		seen[m.name] = true
		if drop {
			dropped++
		}
		return drop
	})
	root.add("log_cut", cutNote(limit, strconv.Itoa(dropped)+" fields were dropped"))
	return append(root.appendTo(make([]byte, 0, limit)), '\n')
}

func cutNote(limit int, what string) string {
	return "the line exceeded " + strconv.Itoa(limit) + " bytes: " + what
}

// fill returns the largest T such that the values, each cut to at most T bytes, take at most
// avail bytes (water-filling: every value longer than T is cut to T, the others stay); -1
// when not even T = 0 fits.
func fill(values []*[]byte, avail int) int {
	lens := make([]int, len(values))
	rest := 0
	for i, v := range values {
		lens[i] = len(*v)
		rest += lens[i]
	}
	if rest <= avail {
		return math.MaxInt // nothing needs cutting (cutting the kept values was enough)
	}
	slices.Sort(lens)
	slices.Reverse(lens)
	// With the k longest cut to T and the rest whole: k*T + rest <= avail, and T must not be
	// below the longest uncut value.
	for k := 1; k <= len(lens); k++ {
		rest -= lens[k-1]
		next := 0
		if k < len(lens) {
			next = lens[k]
		}
		if t := (avail - rest) / k; t >= next {
			return t
		}
	}
	return -1
}

// cutValue cuts the encoded JSON value v to at most limit bytes. A string keeps its longest
// prefix that ends neither inside an escape nor inside a character, then a marker; any other
// value becomes a string saying how long it was.
func cutValue(v []byte, limit int) []byte {
	if len(v) <= limit {
		return v
	}
	if v[0] != '"' {
		return strconv.AppendQuote(nil, cutMarker(len(v)))
	}
	marker := cutMarker(len(v))
	room := limit - len(marker) - 1 // where the text must end: the marker and a quote follow
	i := 1
	for i < len(v)-1 {
		n := 1
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == 'u':
			n = 6
		case v[i] == '\\':
			n = 2
		case v[i] >= utf8.RuneSelf:
			_, n = utf8.DecodeRune(v[i:])
		}
		if i+n > room {
			break
		}
		i += n
	}
	out := append(make([]byte, 0, limit), v[:i]...)
	out = append(out, cutMarker(len(v)-1-i)...)
	return append(out, '"')
}

// object is a JSON object whose members keep their order and their exact encoding.
type object struct{ members []member }

type member struct {
	name string
	key  []byte  // encoded, with its quotes
	val  []byte  // encoded; unused when obj is set
	obj  *object // the value, when it is an object
}

func (o *object) add(name, value string) {
	o.members = append(o.members, member{name: name, key: encodeString(name), val: encodeString(value)})
}

// encodeString encodes s as slog does, without HTML escapes.
func encodeString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// leaves appends the member's non-object values, at any depth.
func (m *member) leaves(out *[]*[]byte) {
	if m.obj == nil {
		*out = append(*out, &m.val)
		return
	}
	for i := range m.obj.members {
		m.obj.members[i].leaves(out)
	}
}

// size is the encoded length of o without its leaves' values.
func (o *object) size() int {
	n := 2 + max(len(o.members)-1, 0) // braces and commas
	for _, m := range o.members {
		n += len(m.key) + 1
		if m.obj != nil {
			n += m.obj.size()
		}
	}
	return n
}

func (o *object) appendTo(b []byte) []byte {
	b = append(b, '{')
	for i, m := range o.members {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.key...)
		b = append(b, ':')
		if m.obj != nil {
			b = m.obj.appendTo(b)
		} else {
			b = append(b, m.val...)
		}
	}
	return append(b, '}')
}

// parseObject splits an encoded JSON object into its members, recursing into values that are
// objects.
func parseObject(data []byte) (*object, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	o, ok := decodeObject(dec)
	if !ok || dec.More() {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return o, true
}

func decodeObject(dec *json.Decoder) (*object, bool) {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	o := &object{}
	for dec.More() {
		t, err := dec.Token()
		name, isKey := t.(string)
		var val json.RawMessage
		if err != nil || !isKey || dec.Decode(&val) != nil {
			return nil, false
		}
		m := member{name: name, key: encodeString(name), val: val}
		if len(val) > 0 && val[0] == '{' {
			sub, ok := decodeObject(json.NewDecoder(bytes.NewReader(val)))
			if !ok {
				return nil, false
			}
			m.obj, m.val = sub, nil
		}
		o.members = append(o.members, m)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	return o, true
}
