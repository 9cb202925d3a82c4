package bedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// chunkReader turns InvokeModelWithResponseStream's events into the text/event-stream the
// Anthropic API itself sends, for anthropic.NewStream. Each chunk event's payload is
// {"bytes": "<base64 of one Anthropic event>"} (the SDK has decoded the base64 already);
// it becomes "event: <type>\ndata: <event>\n\n".
//
// The end of the events is io.EOF whatever the cause: the SDK closes the channel with
// Err() == nil both at a proper end and when the connection drops, so the translator's rule
// (no message_stop, no success) decides. An exception Bedrock sends inside the stream
// (throttlingException, modelStreamErrorException, ...) is returned classified, as are the
// gateway's own cancellations.
type chunkReader struct {
	ctx context.Context
	es  *bedrockruntime.InvokeModelWithResponseStreamEventStream
	buf []byte // SSE bytes not yet read
	off int
	err error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.err != nil {
			return 0, r.err
		}
		r.buf, r.off = r.buf[:0], 0
		select {
		case ev, open := <-r.es.Events():
			if !open {
				r.err = r.end()
				continue
			}
			if c, ok := ev.(*types.ResponseStreamMemberChunk); ok {
				var stop bool
				r.buf, stop = appendEvent(r.buf, c.Value.Bytes)
				if stop {
					// Nothing follows message_stop; reading on would only wait for the
					// connection to close (the translator drains its body after the end).
					r.err = io.EOF
				}
			}
			// Members newer than this code carry nothing the translator reads.
		case <-r.ctx.Done():
			r.err = classify(r.ctx, r.ctx.Err())
		}
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// end is the reader's error once the events channel closed.
func (r *chunkReader) end() error {
	if err := r.es.Err(); err != nil {
		return streamError(r.ctx, err)
	}
	if err := r.ctx.Err(); err != nil {
		return classify(r.ctx, err)
	}
	return io.EOF
}

// Close releases the connection; safe to call more than once.
func (r *chunkReader) Close() error {
	_ = r.es.Close()
	return nil
}

// messageStop is Anthropic's message_stop event. Bedrock's carries one more member,
// amazon-bedrock-invocationMetrics (token counts and latencies of the invocation), which is
// not part of Anthropic's wire: the event is sent as Anthropic sends it.
var messageStop = []byte(`{"type":"message_stop"}`)

// appendEvent appends one Anthropic event as a server-sent event. An event's JSON may not hold
// a line break for SSE; Bedrock sends compact JSON, and anything else is compacted first
// (a line break inside a JSON string is invalid JSON, which the translator reports). stop
// reports a message_stop.
func appendEvent(b, data []byte) (out []byte, stop bool) {
	if bytes.ContainsAny(data, "\r\n") {
		var c bytes.Buffer
		if json.Compact(&c, data) == nil {
			data = c.Bytes()
		} else {
			data = bytes.ReplaceAll(bytes.ReplaceAll(data, []byte{'\r'}, []byte{' '}), []byte{'\n'}, []byte{' '})
		}
	}
	typ := eventType(data)
	stop = typ == "message_stop"
	if stop {
		data = messageStop
	}
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...), stop
}

// eventType reads an event's "type", which Anthropic writes first; the decoder is the
// fallback for any other layout. An event without one is named "message", SSE's default.
func eventType(data []byte) string {
	const prefix = `{"type":"`
	if rest, ok := bytes.CutPrefix(data, []byte(prefix)); ok {
		if end := bytes.IndexByte(rest, '"'); end > 0 && bytes.IndexByte(rest[:end], '\\') < 0 && len(rest[:end]) <= 64 {
			return string(rest[:end])
		}
	}
	var e struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &e) == nil && e.Type != "" && len(e.Type) <= 64 && !bytes.ContainsAny([]byte(e.Type), "\r\n") {
		return e.Type
	}
	return "message"
}
