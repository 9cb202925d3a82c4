package bedrock

import (
	"context"
	"encoding/base64"
	"io"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// translator turns ConverseStream events into deltas. It is pure: the stream below feeds it
// events from the SDK, tests feed it recorded ones.
type translator struct {
	// tools maps a contentBlockIndex to the call's dense tool index. Bedrock counts text
	// blocks too, and a turn may open with a tool call, so the index is never derived from
	// the block index: calls are numbered densely in the order they start.
	tools   map[int32]int
	stopped bool // messageStop seen: the answer is complete
}

// event translates one event. ok is false for events that carry nothing for the client
// (messageStart, block stops, unknown members).
func (t *translator) event(ev types.ConverseStreamOutput) (d llm.Delta, ok bool, err error) {
	switch v := ev.(type) {
	case *types.ConverseStreamOutputMemberContentBlockStart:
		start, isTool := v.Value.Start.(*types.ContentBlockStartMemberToolUse)
		if !isTool {
			return d, false, nil
		}
		block := blockIndex(v.Value.ContentBlockIndex)
		if t.tools == nil {
			t.tools = make(map[int32]int, 2)
		}
		if _, dup := t.tools[block]; dup {
			return d, false, broken("a second tool call started in content block " + strconv.Itoa(int(block)))
		}
		idx := len(t.tools)
		t.tools[block] = idx
		// A missing id is the gateway's to make up, unique like any other.
		d.ToolCalls = []llm.ToolCallDelta{{Index: idx, ID: str(start.Value.ToolUseId), Name: str(start.Value.Name)}}
		return d, true, nil
	case *types.ConverseStreamOutputMemberContentBlockDelta:
		switch dv := v.Value.Delta.(type) {
		case *types.ContentBlockDeltaMemberText:
			d.Text = dv.Value
		case *types.ContentBlockDeltaMemberToolUse:
			block := blockIndex(v.Value.ContentBlockIndex)
			idx, started := t.tools[block]
			if !started {
				return d, false, broken("tool input arrived for content block " + strconv.Itoa(int(block)) + ", which started no tool call")
			}
			if args := str(dv.Value.Input); args != "" {
				d.ToolCalls = []llm.ToolCallDelta{{Index: idx, Arguments: args}}
			}
		case *types.ContentBlockDeltaMemberReasoningContent:
			// Reasoning reaches the doors that show it (Messages); its tokens count as
			// output either way.
			switch r := dv.Value.(type) {
			case *types.ReasoningContentBlockDeltaMemberText:
				d.Thinking = r.Value
			case *types.ReasoningContentBlockDeltaMemberSignature:
				d.Signature = r.Value
			case *types.ReasoningContentBlockDeltaMemberRedactedContent:
				if len(r.Value) > 0 {
					d.RedactedThinking = base64.StdEncoding.EncodeToString(r.Value)
				}
			}
		}
		return d, d.Content(), nil
	case *types.ConverseStreamOutputMemberMessageStop:
		t.stopped = true
		// malformed_* cannot become an error here without losing what was already streamed;
		// the answer ends as a plain end, as wire-formats.md section 3.8 says.
		d.Stop, _ = stopReason(v.Value.StopReason)
		return d, true, nil
	case *types.ConverseStreamOutputMemberMetadata:
		u := usage(v.Value.Usage)
		if !u.Reported() {
			return d, false, nil
		}
		d.Usage = &u
		return d, true, nil
	}
	// messageStart carries only the role, which the gateway sends with the first content;
	// contentBlockStop and members newer than this code carry nothing to forward.
	return d, false, nil
}

func blockIndex(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}

func broken(msg string) *providers.Error {
	return &providers.Error{Class: providers.StreamBroken, Provider: displayName, Message: msg}
}

// stream reads the SDK's event channel. The SDK closes the channel with Err() == nil both at a
// proper end and when the connection drops, even inside a frame (smithy-go reads an
// unexpected EOF as the end of the stream), so only a messageStop seen before the close makes
// the end a success.
type stream struct {
	ctx context.Context
	es  *bedrockruntime.ConverseStreamEventStream
	tr  translator
	eof bool
}

func (s *stream) Next() (llm.Delta, error) {
	for {
		if s.eof {
			return llm.Delta{}, io.EOF
		}
		var ev types.ConverseStreamOutput
		var open bool
		select {
		case ev, open = <-s.es.Events():
		case <-s.ctx.Done():
			return llm.Delta{}, classify(s.ctx, s.ctx.Err())
		}
		if !open {
			if err := s.es.Err(); err != nil {
				return llm.Delta{}, streamError(s.ctx, err)
			}
			if err := s.ctx.Err(); err != nil {
				return llm.Delta{}, classify(s.ctx, err)
			}
			if !s.tr.stopped {
				return llm.Delta{}, broken("the stream ended before messageStop")
			}
			s.eof = true
			return llm.Delta{}, io.EOF
		}
		d, ok, err := s.tr.event(ev)
		if err != nil {
			return llm.Delta{}, err
		}
		if ok {
			return d, nil
		}
	}
}

// streamError classifies a failure of an open stream: a transport error there (a connection
// cut mid-frame reads as unexpected EOF) is a broken stream, not a failed connection attempt.
func streamError(ctx context.Context, err error) *providers.Error {
	pe := classify(ctx, err)
	if pe.Class == providers.Unavailable && pe.Status == 0 && context.Cause(ctx) == nil {
		return broken("the stream broke off: " + err.Error())
	}
	return pe
}

func (s *stream) Close() error {
	_ = s.es.Close()
	return nil
}
