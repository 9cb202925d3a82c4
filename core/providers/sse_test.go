package providers

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type sseWant struct{ name, data string }

func readAll(r io.Reader) ([]sseWant, error) {
	s := NewSSEReader(r)
	var out []sseWant
	for {
		ev, err := s.Next()
		if err != nil {
			return out, err
		}
		out = append(out, sseWant{string(ev.Name), string(ev.Data)})
	}
}

func TestSSEReader(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		want  []sseWant
		final error
	}{
		{"openai", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []sseWant{{"", `{"a":1}`}, {"", "[DONE]"}}, io.EOF},
		{"anthropic named events", "event: ping\ndata: {}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", []sseWant{{"ping", "{}"}, {"message_stop", `{"type":"message_stop"}`}}, io.EOF},
		{"comments skipped", ": OPENROUTER PROCESSING\n\ndata: x\n\n: keepalive\n\n", []sseWant{{"", "x"}}, io.EOF},
		{"crlf", "data: x\r\n\r\ndata: y\r\n\r\n", []sseWant{{"", "x"}, {"", "y"}}, io.EOF},
		{"multi-line data", "data: a\ndata: b\n\n", []sseWant{{"", "a\nb"}}, io.EOF},
		{"no space after colon", "data:x\n\n", []sseWant{{"", "x"}}, io.EOF},
		{"last event without blank line", "data: x\n", []sseWant{{"", "x"}}, io.EOF},
		{"cut mid-line", "data: {\"a\":1}\n\ndata: {\"b\"", []sseWant{{"", `{"a":1}`}}, io.ErrUnexpectedEOF},
		{"empty body", "", nil, io.EOF},
		{"id and retry ignored", "id: 7\nretry: 10\ndata: x\n\n", []sseWant{{"", "x"}}, io.EOF},
		{"the last event line names the event", "event: a\nevent: b\ndata: x\n\n", []sseWant{{"b", "x"}}, io.EOF},
		{"a name at the bound", "event: " + strings.Repeat("n", MaxSSEName) + "\ndata: x\n\n", []sseWant{{strings.Repeat("n", MaxSSEName), "x"}}, io.EOF},
		{"a name past the bound", "event: " + strings.Repeat("n", MaxSSEName+1) + "\ndata: x\n\n", nil, ErrSSETooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// One byte at a time: events must not depend on how reads are split.
			got, err := readAll(iotest.OneByteReader(strings.NewReader(tc.in)))
			if !errors.Is(err, tc.final) {
				t.Errorf("final error %v, want %v", err, tc.final)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("event %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// endless repeats pattern up to limit bytes, counting the bytes read.
type endless struct {
	pattern       []byte
	off, n, limit int
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n >= e.limit {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && e.n < e.limit {
		c := copy(p[k:min(len(p), k+e.limit-e.n)], e.pattern[e.off:])
		k, e.n, e.off = k+c, e.n+c, (e.off+c)%len(e.pattern)
	}
	return k, nil
}

// TestSSEReaderBoundsAnySequenceOfLines: whatever lines an upstream repeats without finishing
// an event, the reader gives up with ErrSSETooLarge having read little more than MaxSSEEvent,
// and so holds no more than that. Repeated "event: <1 MB>" lines once grew the name without
// limit (5.9 GB from one request).
func TestSSEReaderBoundsAnySequenceOfLines(t *testing.T) {
	mb := strings.Repeat("x", 1<<20)
	cases := []struct{ name, line string }{
		{"1 MB event names", "event: " + mb + "\n"},
		{"short event lines", "event: e\n"},
		{"data lines", "data: x\n"},
		{"empty data lines", "data:\n"},
		{"1 MB data lines", "data: " + mb + "\n"},
		{"ignored fields", "id: 1\nretry: 10\nfoo: bar\n"},
		{"comments", ": keep-alive\n"},
		{"blank lines and comments, never an event", ": keep-alive\n\n"},
		{"one endless line", "x"},
		{"crlf data lines", "data: x\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Four times the bound: a reader without one serves the whole input as an event
			// (or an error of another kind) instead of stopping early.
			src := &endless{pattern: []byte(tc.line), limit: 4 * MaxSSEEvent}
			s := NewSSEReader(src)
			var err error
			for err == nil {
				var ev SSEEvent
				if ev, err = s.Next(); err == nil {
					t.Fatalf("an event from an input that never finishes one: %.40q...", ev.Data)
				}
			}
			if !errors.Is(err, ErrSSETooLarge) {
				t.Errorf("got %v, want ErrSSETooLarge", err)
			}
			// Read-ahead is the bufio buffer (16 KB) at most.
			if src.n > MaxSSEEvent+32<<10 {
				t.Errorf("read %d bytes before giving up, bound %d", src.n, MaxSSEEvent)
			}
		})
	}
}

func TestSSEReaderBoundsEventSize(t *testing.T) {
	// An event is counted with its field names and line ends: "data: " and two newlines.
	const overhead = len("data: \n\n")
	cases := []struct {
		name string
		size int // of the data
		want error
	}{
		{"at the bound", MaxSSEEvent - overhead, io.EOF},
		{"one byte past", MaxSSEEvent - overhead + 1, ErrSSETooLarge},
		{"far past", MaxSSEEvent + 10, ErrSSETooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(strings.NewReader("data: " + strings.Repeat("x", tc.size) + "\n\n"))
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
			if tc.want == io.EOF && (len(got) != 1 || len(got[0].data) != tc.size) {
				t.Errorf("the event at the bound was not served whole")
			}
		})
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("event: a\ndata: b\n\n"))
	f.Add([]byte("data: x\r\n\r\n: c\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = readAll(strings.NewReader(string(in)))
	})
}

func TestParseErrorBody(t *testing.T) {
	cases := []struct {
		body, code, msg, param string
	}{
		{`{"error":{"message":"Rate limit","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "rate_limit_exceeded", "Rate limit", ""},
		{`{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":null}}`, "invalid_request_error", "bad", "messages"},
		{`{"error":{"code":502,"message":"model down","metadata":{}}}`, "502", "model down", ""},
		{`{"object":"error","message":"vllm says no","type":"BadRequestError","param":null,"code":400}`, "400", "vllm says no", ""},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`, "overloaded_error", "Overloaded", ""},
		{`{"error":{"code":429,"message":"Quota","status":"RESOURCE_EXHAUSTED"}}`, "RESOURCE_EXHAUSTED", "Quota", ""},
		{`upstream connect error`, "", "upstream connect error", ""},
		{`{"error":"flat string"}`, "", "flat string", ""},
	}
	for _, tc := range cases {
		code, msg, param := ParseErrorBody([]byte(tc.body))
		if code != tc.code || msg != tc.msg || param != tc.param {
			t.Errorf("%s: got (%q,%q,%q)", tc.body, code, msg, param)
		}
	}
}

func TestClassifyAndMap(t *testing.T) {
	cases := []struct {
		status   int
		class    Class
		client   int
		failover bool
	}{
		{400, BadRequest, 400, false},
		{401, Auth, 502, true},
		{402, Auth, 502, true},
		{403, Auth, 502, true},
		{404, NotFound, 502, true},
		{408, Timeout, 504, true},
		{422, BadRequest, 400, false},
		{429, RateLimited, 429, true},
		{500, Unavailable, 502, true},
		{501, Unsupported, 501, true},
		{503, Unavailable, 503, true},
		{504, Timeout, 504, true},
		{529, Overloaded, 503, true},
	}
	for _, tc := range cases {
		e := &Error{Class: ClassifyStatus(tc.status), Status: tc.status}
		if e.Class != tc.class || e.ClientError().Status != tc.client || e.Failover() != tc.failover {
			t.Errorf("%d: class %s client %d failover %v", tc.status, e.Class, e.ClientError().Status, e.Failover())
		}
	}
}

// once delivers its bytes in one read, then reports errWouldBlock: a read past what arrived
// is a read that would have waited on the network.
type once struct {
	b    []byte
	done bool
}

var errWouldBlock = errors.New("read past the buffered bytes")

func (o *once) Read(p []byte) (int, error) {
	if o.done {
		return 0, errWouldBlock
	}
	o.done = true
	return copy(p, o.b), nil
}

// EventBuffered is exact: true exactly when Next returns an event without reading on.
func TestSSEEventBuffered(t *testing.T) {
	for _, tc := range []struct {
		name, rest string
		want       bool
	}{
		{"nothing", "", false},
		{"a whole event", "data: x\n\n", true},
		{"a whole event, CRLF", "data: x\r\n\r\n", true},
		{"a named event without data", "event: ping\n\n", true},
		{"half an event", "data: x\n", false},
		{"half a line", "data: {\"a\"", false},
		{"a comment block alone", ": keep-alive\n\n", false},
		{"a comment block, then an event", ": keep-alive\n\ndata: x\n\n", true},
		{"a comment block, then half an event", ": keep-alive\n\ndata: x", false},
		{"ignored fields alone", "id: 7\nretry: 10\n\n", false},
		{"an empty event name", "event:\n\n", false},
		{"an event name of one space", "event: \n\n", false},
		{"a renamed-away event name", "event: a\nevent:\n\n", false},
		{"an empty data line", "data:\n\n", true},
		{"blank lines alone", "\n\n\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSSEReader(&once{b: []byte("data: first\n\n" + tc.rest)})
			if ev, err := s.Next(); err != nil || string(ev.Data) != "first" {
				t.Fatalf("first event %q, %v", ev.Data, err)
			}
			got := s.EventBuffered()
			_, err := s.Next()
			read := errors.Is(err, errWouldBlock)
			if got != tc.want || got == read {
				t.Errorf("EventBuffered %v (want %v); Next then read on: %v (%v)", got, tc.want, read, err)
			}
		})
	}
}
