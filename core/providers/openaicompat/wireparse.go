package openaicompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fngate/fngate/core/llm"
)

// completion is the part of a non-streamed chat.completion (or text_completion) the gateway
// reads.
type completion struct {
	choices   int // how many choices the answer had
	content   *string
	refusal   *string
	toolCalls []toolCall
	finish    string
	usage     *wireUsage
	model     string
}

// toolCall is one tool call of a whole answer.
type toolCall struct {
	ID, Name, Arguments string
}

// parseCompletion reads a whole answer the way parseChunk reads a chunk: one pass, the fields
// above, everything else skipped and validated. FuzzParseCompletion checks it against
// encoding/json.
func parseCompletion(b []byte, c *completion) error {
	p := scanner{b: b}
	p.ws()
	err := p.object(func(key []byte) error {
		switch string(key) {
		case "choices":
			return p.array(func(i int) error {
				c.choices++
				if i > 0 {
					return p.skip()
				}
				return p.object(func(key []byte) error {
					switch string(key) {
					case "message":
						return p.object(func(key []byte) error {
							switch string(key) {
							case "content":
								return p.optionalString(&c.content)
							case "refusal":
								return p.optionalString(&c.refusal)
							case "tool_calls":
								c.toolCalls = c.toolCalls[:0]
								return p.array(func(i int) error {
									if i == maxToolCalls {
										return errTooManyCalls
									}
									var tc toolCall
									err := p.object(func(key []byte) error {
										switch string(key) {
										case "id":
											return p.nullableString(&tc.ID)
										case "function":
											return p.function(&tc.Name, &tc.Arguments)
										}
										return p.skip()
									})
									c.toolCalls = append(c.toolCalls, tc)
									return err
								})
							}
							return p.skip()
						})
					case "text":
						return p.optionalString(&c.content)
					case "finish_reason":
						return p.nullableString(&c.finish)
					}
					return p.skip()
				})
			})
		case "usage":
			return p.usage(&c.usage)
		case "model":
			return p.nullableString(&c.model)
		}
		return p.skip()
	})
	if err != nil {
		return err
	}
	return p.end()
}

// chunk is the part of a streamed chat.completion.chunk (or text_completion chunk) the gateway
// reads.
type chunk struct {
	content   string
	refusal   string
	toolCalls []llm.ToolCallDelta
	finish    string
	usage     *wireUsage
	errRaw    []byte // the value of a non-null "error" key
	// wantModel reads the model field, which a stream says in every chunk and is read only
	// until it has been (so one string for the stream, not one per chunk).
	wantModel bool
	model     string
}

// parseChunk reads one chunk. Decoding every chunk with encoding/json cost about a quarter of
// the gateway's CPU on a stream, so this walks the JSON once, keeps only the fields above and
// skips the rest; the usage object, once per answer, goes through encoding/json.
// FuzzParseChunk checks it against encoding/json.
func parseChunk(b []byte, c *chunk) error {
	p := scanner{b: b}
	p.ws()
	err := p.object(func(key []byte) error {
		switch string(key) {
		case "choices":
			return p.array(func(i int) error {
				if i > 0 {
					return p.skip() // n is always 1
				}
				return p.choice(c)
			})
		case "usage":
			return p.usage(&c.usage)
		case "model":
			if c.wantModel {
				return p.nullableString(&c.model)
			}
		case "error":
			raw, err := p.raw()
			if err == nil && string(raw) != "null" {
				c.errRaw = raw
			}
			return err
		}
		return p.skip()
	})
	if err != nil {
		return err
	}
	return p.end()
}

func (p *scanner) choice(c *chunk) error {
	return p.object(func(key []byte) error {
		switch string(key) {
		case "delta":
			return p.object(func(key []byte) error {
				switch string(key) {
				case "content":
					return p.nullableString(&c.content)
				case "refusal":
					return p.nullableString(&c.refusal)
				case "tool_calls":
					if p.null() {
						return nil
					}
					return p.array(func(i int) error {
						if i == maxToolCalls {
							return errTooManyCalls
						}
						var tc llm.ToolCallDelta
						err := p.object(func(key []byte) error {
							switch string(key) {
							case "index":
								return p.int(&tc.Index)
							case "id":
								return p.nullableString(&tc.ID)
							case "function":
								return p.function(&tc.Name, &tc.Arguments)
							}
							return p.skip()
						})
						c.toolCalls = append(c.toolCalls, tc)
						return err
					})
				}
				return p.skip()
			})
		case "text":
			return p.nullableString(&c.content)
		case "finish_reason":
			return p.nullableString(&c.finish)
		}
		return p.skip()
	})
}

// function reads a tool call's function object, whole or a fragment of it.
func (p *scanner) function(name, arguments *string) error {
	return p.object(func(key []byte) error {
		switch string(key) {
		case "name":
			return p.nullableString(name)
		case "arguments":
			return p.nullableString(arguments)
		}
		return p.skip()
	})
}

// usage reads the usage object, null or once per answer, through encoding/json.
func (p *scanner) usage(dst **wireUsage) error {
	raw, err := p.raw()
	if err != nil || string(raw) == "null" {
		return err
	}
	*dst = new(wireUsage)
	return json.Unmarshal(raw, *dst)
}

// wireUsage is OpenAI's usage object. Counts it leaves out (or sends as null) stay nil.
type wireUsage struct {
	PromptTokens        *int `json:"prompt_tokens"`
	CompletionTokens    *int `json:"completion_tokens"`
	TotalTokens         *int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// llm converts to the gateway's usage, which shares OpenAI's meaning of each count.
func (w *wireUsage) llm() *llm.Usage {
	if w == nil {
		return nil
	}
	u := &llm.Usage{InputTokens: w.PromptTokens, OutputTokens: w.CompletionTokens, TotalTokens: w.TotalTokens}
	if d := w.PromptTokensDetails; d != nil {
		u.CacheReadTokens = d.CachedTokens
	}
	if d := w.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = d.ReasoningTokens
	}
	return u
}

// end refuses anything but white space after the value.
func (p *scanner) end() error {
	p.ws()
	if p.i != len(p.b) {
		return errSyntax
	}
	return nil
}

var errSyntax = errors.New("invalid JSON in stream chunk")

// maxDepth bounds how deeply objects and arrays may nest. The scanner recurses once per
// level, so without a bound an 8 MB chunk of brackets overflows the goroutine stack, a fatal
// error that takes every request of the process with it, and a million levels cost ~350 MB
// of stack. What the gateway reads sits at most 7 levels down (chunk, choices, choice, delta,
// tool_calls, call, function; tool arguments are strings) and the deepest values it skips,
// logprobs, add a few more; 512 leaves ample room for extension values servers add while
// keeping a hostile chunk to ~200 KB of stack. encoding/json's own bound is 10,000.
const maxDepth = 512

var errTooDeep = errors.New("JSON nested more than " + strconv.Itoa(maxDepth) + " levels deep")

// maxToolCalls bounds the tool calls of one answer or chunk. Each costs some 60 bytes once
// read, against 3 bytes of input ("{},"), so a padded 32 MB answer would otherwise hold
// 700 MB; no model makes more than a few dozen calls in a turn.
const maxToolCalls = 1024

var errTooManyCalls = errors.New("more than " + strconv.Itoa(maxToolCalls) + " tool calls")

// scanner is a minimal JSON reader over one value in memory.
type scanner struct {
	b     []byte
	i     int
	depth int // objects and arrays open at i
}

func (p *scanner) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *scanner) peek() byte {
	if p.i < len(p.b) && p.b[p.i] > ' ' { // no white space: the compact JSON servers send
		return p.b[p.i]
	}
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *scanner) expect(c byte) error {
	if p.peek() != c {
		return errSyntax
	}
	p.i++
	return nil
}

// object calls field for each key, positioned at its value; field must consume the value.
// A null object is accepted as empty.
func (p *scanner) object(field func(key []byte) error) error {
	if p.null() {
		return nil
	}
	if err := p.expect('{'); err != nil {
		return err
	}
	if err := p.enter(); err != nil {
		return err
	}
	if p.peek() == '}' {
		p.i++
		p.depth--
		return nil
	}
	for {
		key, err := p.rawString()
		if err != nil {
			return err
		}
		if err := p.expect(':'); err != nil {
			return err
		}
		p.ws()
		if err := field(key); err != nil {
			return err
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			p.depth--
			return nil
		default:
			return errSyntax
		}
	}
}

func (p *scanner) array(elem func(i int) error) error {
	if p.null() {
		return nil
	}
	if err := p.expect('['); err != nil {
		return err
	}
	if err := p.enter(); err != nil {
		return err
	}
	if p.peek() == ']' {
		p.i++
		p.depth--
		return nil
	}
	for n := 0; ; n++ {
		p.ws()
		if err := elem(n); err != nil {
			return err
		}
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			p.depth--
			return nil
		default:
			return errSyntax
		}
	}
}

// enter opens one level of nesting; the caller closes it when its value ends. A value that
// fails leaves the count behind, which does not matter: the whole parse fails with it.
func (p *scanner) enter() error {
	if p.depth++; p.depth > maxDepth {
		return errTooDeep
	}
	return nil
}

func (p *scanner) null() bool {
	p.ws()
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

func (p *scanner) nullableString(dst *string) error {
	if p.null() {
		return nil
	}
	raw, err := p.rawString()
	if err != nil {
		return err
	}
	*dst, err = unquote(raw)
	return err
}

// optionalString reads a string or null into a pointer: nil for null, as encoding/json does.
func (p *scanner) optionalString(dst **string) error {
	if p.null() {
		*dst = nil
		return nil
	}
	var s string
	if err := p.nullableString(&s); err != nil {
		return err
	}
	*dst = &s
	return nil
}

func (p *scanner) int(dst *int) error {
	p.ws()
	start := p.i
	if err := p.skip(); err != nil {
		return err
	}
	n, err := strconv.Atoi(string(p.b[start:p.i]))
	if err != nil {
		return errSyntax
	}
	*dst = n
	return nil
}

// rawString returns the bytes between the quotes of a string, escapes untouched.
func (p *scanner) rawString() ([]byte, error) {
	if p.peek() != '"' {
		return nil, errSyntax
	}
	start := p.i + 1
	for i := start; i < len(p.b); i++ {
		switch c := p.b[i]; {
		case c == '\\':
			i++
		case c == '"':
			p.i = i + 1
			return p.b[start:i], nil
		case c < 0x20:
			return nil, errSyntax
		}
	}
	return nil, errSyntax
}

// raw returns the bytes of the next value.
func (p *scanner) raw() ([]byte, error) {
	p.ws()
	start := p.i
	err := p.skip()
	return p.b[start:p.i], err
}

// skip consumes one value of any type, validating it.
func (p *scanner) skip() error {
	switch c := p.peek(); {
	case c == '{':
		return p.object(func([]byte) error { return p.skip() })
	case c == '[':
		return p.array(func(int) error { return p.skip() })
	case c == '"':
		raw, err := p.rawString()
		if err != nil || plain(raw) {
			return err // a plain string is valid as it stands: no need to build it
		}
		if bytes.IndexByte(raw, '\\') < 0 {
			return nil // rawString refused control characters; nothing else can be wrong
		}
		_, err = unquote(raw)
		return err
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
				p.i += len(lit)
				return nil
			}
		}
		return errSyntax
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		for p.i < len(p.b) && isNumberByte(p.b[p.i]) {
			p.i++
		}
		if !validNumber(p.b[start:p.i]) {
			return errSyntax
		}
		return nil
	}
	return errSyntax
}

// validNumber reports whether n is a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(n []byte) bool {
	i := 0
	if i < len(n) && n[i] == '-' {
		i++
	}
	switch {
	case i < len(n) && n[i] == '0':
		i++
	case i < len(n) && n[i] >= '1' && n[i] <= '9':
		for i < len(n) && n[i] >= '0' && n[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(n) && n[i] == '.' {
		i++
		if i == len(n) || n[i] < '0' || n[i] > '9' {
			return false
		}
		for i < len(n) && n[i] >= '0' && n[i] <= '9' {
			i++
		}
	}
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		i++
		if i < len(n) && (n[i] == '+' || n[i] == '-') {
			i++
		}
		if i == len(n) || n[i] < '0' || n[i] > '9' {
			return false
		}
		for i < len(n) && n[i] >= '0' && n[i] <= '9' {
			i++
		}
	}
	return i == len(n)
}

func isNumberByte(d byte) bool {
	return d >= '0' && d <= '9' || d == '-' || d == '+' || d == '.' || d == 'e' || d == 'E'
}

// unquote decodes the inside of a JSON string. Strings without escapes (almost every token)
// are copied as they are.
func unquote(raw []byte) (string, error) {
	if plain(raw) {
		return string(raw), nil
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(raw[i:])
			out = utf8.AppendRune(out, r) // invalid bytes become U+FFFD, as encoding/json does
			i += size
			continue
		}
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(raw) {
			return "", errSyntax
		}
		i++
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				return "", errSyntax
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(raw, i+3); ok && i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 7
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", errSyntax
		}
		i++
	}
	return string(out), nil
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// plain reports whether a string's raw bytes are its value: no escape, nothing but ASCII.
func plain(raw []byte) bool {
	for _, c := range raw {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
