package providers

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxSSEEvent bounds what the reader takes in for one event: every line since the previous
// event (data, the event name, comments, ignored fields, blank lines), field names and line
// ends included. Whatever lines a hostile or broken upstream sends, Next returns an event or
// an error within this many bytes, having held no more.
const MaxSSEEvent = 8 << 20

// MaxSSEName bounds an event's name; names are words like content_block_delta.
const MaxSSEName = 1 << 10

// ErrSSETooLarge is returned for an event beyond MaxSSEEvent or a name beyond MaxSSEName.
var ErrSSETooLarge = errors.New("sse: event too large")

var (
	errSSEEventTooLarge = fmt.Errorf("%w: more than %d bytes without an event", ErrSSETooLarge, MaxSSEEvent)
	errSSENameTooLarge  = fmt.Errorf("%w: an event name longer than %d bytes", ErrSSETooLarge, MaxSSEName)
)

// SSEEvent is one server-sent event. Name and Data alias the reader's buffers and are valid
// until the next call to Next.
type SSEEvent struct {
	Name []byte // the event: field, empty when absent
	Data []byte // data: lines joined with \n
}

// SSEReader parses text/event-stream incrementally: comments (": OPENROUTER PROCESSING",
// keep-alives) are skipped, multi-line data is joined, CRLF is accepted. id, retry and
// unknown fields are read past without being kept: the gateway never reconnects.
type SSEReader struct {
	r        *bufio.Reader
	name     []byte
	data     []byte
	line     []byte
	size     int // bytes read since the previous event, line ends included
	hasData  bool
	complete bool // the last line read ended with a newline
}

// sseBuffer is the reader's buffer: a few dozen typical events, and net/http's own size. A
// stream holds it while it is open, so it is what 1,000 open streams cost 4 MB of rather than
// 16; an event longer than the buffer is put together line by line (readLine).
const sseBuffer = 4 << 10

// NewSSEReader reads events from r.
func NewSSEReader(r io.Reader) *SSEReader {
	return &SSEReader{r: bufio.NewReaderSize(r, sseBuffer), complete: true}
}

// Next returns the next event. At the end of input it returns io.EOF, or io.ErrUnexpectedEOF
// when the input stopped in the middle of a line (a cut connection). An event beyond the
// bounds above is ErrSSETooLarge.
func (s *SSEReader) Next() (SSEEvent, error) {
	s.name = s.name[:0]
	s.data = s.data[:0]
	s.hasData = false
	s.size = 0
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && s.complete && (s.hasData || len(s.name) > 0) {
				// The last event lacked its blank line; its lines were whole, so serve it.
				return SSEEvent{Name: s.name, Data: s.data}, nil
			}
			if err == io.EOF && !s.complete {
				return SSEEvent{}, io.ErrUnexpectedEOF
			}
			return SSEEvent{}, err
		}
		if len(line) == 0 {
			if s.hasData || len(s.name) > 0 {
				return SSEEvent{Name: s.name, Data: s.data}, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte{':'})
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			// Within MaxSSEEvent: the data is no longer than the lines it came in.
			if s.hasData {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			s.hasData = true
		case "event":
			if len(value) > MaxSSEName {
				return SSEEvent{}, errSSENameTooLarge
			}
			// The last event line names the event, as the WHATWG parser sets (not appends
			// to) the event type buffer.
			s.name = append(s.name[:0], value...)
		}
	}
}

// EventBuffered reports whether Next would return without reading from the network: the
// buffered bytes hold, from where the reader stands, the whole of an event that Next
// dispatches (a data or a named event line, then its blank line). Blocks of comments or of
// ignored fields alone, which Next reads past, do not count, nor does an event whose end has
// not arrived. It reads nothing itself.
func (s *SSEReader) EventBuffered() bool {
	n := s.r.Buffered()
	if n == 0 {
		return false
	}
	b, _ := s.r.Peek(n)
	hasData, hasName := false, false
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return false
		}
		line := b[:i]
		b = b[i+1:]
		if k := len(line); k > 0 && line[k-1] == '\r' {
			line = line[:k-1]
		}
		if len(line) == 0 {
			if hasData || hasName {
				return true
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		switch string(field) {
		case "data":
			hasData = true
		case "event":
			// As in Next: the last event line names the event, " " after the colon aside.
			hasName = len(value) > 1 || len(value) == 1 && value[0] != ' '
		}
	}
}

// readLine returns one line without its terminator, counting it, terminator included, into
// size. At the end of input it returns the read error, having cleared complete if
// a partial line was pending.
func (s *SSEReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		if s.size+len(s.line)+len(chunk) > MaxSSEEvent {
			return nil, errSSEEventTooLarge
		}
		if err == bufio.ErrBufferFull {
			s.line = append(s.line, chunk...)
			continue
		}
		if err != nil {
			if len(chunk) > 0 || len(s.line) > 0 {
				s.complete = false // the input ended mid-line
			}
			return nil, err
		}
		s.complete = true
		s.size += len(s.line) + len(chunk)
		var line []byte
		if len(s.line) > 0 {
			s.line = append(s.line, chunk...)
			line = s.line
		} else {
			line = chunk
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return line, nil
	}
}
