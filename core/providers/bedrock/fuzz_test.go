package bedrock

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/llm"
)

// fuzzEvents turns fuzz bytes into a ConverseStream event sequence: each step's first byte
// picks the event, the next one its content block, and text comes from the input itself.
func fuzzEvents(data []byte) []types.ConverseStreamOutput {
	var out []types.ConverseStreamOutput
	text := func(i int) string {
		end := min(len(data), i+1+int(data[i]%9))
		return string(data[i:end])
	}
	for i := 0; i+1 < len(data); i += 2 {
		block := aws.Int32(int32(data[i+1] % 4))
		switch data[i] % 7 {
		case 0:
			out = append(out, &types.ConverseStreamOutputMemberMessageStart{Value: types.MessageStartEvent{Role: types.ConversationRoleAssistant}})
		case 1:
			out = append(out, &types.ConverseStreamOutputMemberContentBlockStart{Value: types.ContentBlockStartEvent{ContentBlockIndex: block,
				Start: &types.ContentBlockStartMemberToolUse{Value: types.ToolUseBlockStart{ToolUseId: aws.String("tooluse_" + text(i)), Name: aws.String("f")}}}})
		case 2:
			out = append(out, &types.ConverseStreamOutputMemberContentBlockDelta{Value: types.ContentBlockDeltaEvent{ContentBlockIndex: block,
				Delta: &types.ContentBlockDeltaMemberText{Value: text(i)}}})
		case 3:
			out = append(out, &types.ConverseStreamOutputMemberContentBlockDelta{Value: types.ContentBlockDeltaEvent{ContentBlockIndex: block,
				Delta: &types.ContentBlockDeltaMemberToolUse{Value: types.ToolUseBlockDelta{Input: aws.String(text(i))}}}})
		case 4:
			out = append(out, &types.ConverseStreamOutputMemberContentBlockStop{Value: types.ContentBlockStopEvent{ContentBlockIndex: block}})
		case 5:
			out = append(out, &types.ConverseStreamOutputMemberMessageStop{Value: types.MessageStopEvent{StopReason: types.StopReason(text(i))}})
		case 6:
			out = append(out, &types.ConverseStreamOutputMemberMetadata{Value: types.ConverseStreamMetadataEvent{
				Usage: &types.TokenUsage{InputTokens: aws.Int32(int32(data[i+1])), OutputTokens: aws.Int32(3), TotalTokens: aws.Int32(int32(data[i+1]) + 3)}}})
		}
	}
	return out
}

// FuzzTranslator: no event sequence panics the translator, and whatever it emits keeps the
// promises clients rely on: tool call indexes are dense and start at 0, and fragments never
// precede their call (a missing id is the gateway's to make up).
func FuzzTranslator(f *testing.F) {
	f.Add([]byte{0, 0, 1, 1, 3, 1, 3, 1, 1, 2, 3, 2, 5, 0, 6, 9})
	f.Add([]byte{2, 0, 2, 0, 4, 0, 1, 1, 3, 1, 5, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var tr translator
		seen := map[int]bool{}
		for _, ev := range fuzzEvents(data) {
			d, ok, err := tr.event(ev)
			if err != nil {
				return // a refused sequence ends the stream; what matters is no panic
			}
			if !ok {
				continue
			}
			checkToolCalls(t, d.ToolCalls, seen)
		}
	})
}

func checkToolCalls(t *testing.T, calls []llm.ToolCallDelta, seen map[int]bool) {
	t.Helper()
	for _, c := range calls {
		if !seen[c.Index] {
			if c.Index != len(seen) {
				t.Fatalf("tool index %d is not dense (next is %d)", c.Index, len(seen))
			}
			seen[c.Index] = true
		}
	}
}
