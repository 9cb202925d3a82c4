package bedrock

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/bedrockfake"
)

func toolStart(block int32, id, name string) types.ConverseStreamOutput {
	return &types.ConverseStreamOutputMemberContentBlockStart{Value: types.ContentBlockStartEvent{
		ContentBlockIndex: aws.Int32(block),
		Start:             &types.ContentBlockStartMemberToolUse{Value: types.ToolUseBlockStart{ToolUseId: aws.String(id), Name: aws.String(name)}}}}
}

func toolInput(block int32, s string) types.ConverseStreamOutput {
	return &types.ConverseStreamOutputMemberContentBlockDelta{Value: types.ContentBlockDeltaEvent{
		ContentBlockIndex: aws.Int32(block), Delta: &types.ContentBlockDeltaMemberToolUse{Value: types.ToolUseBlockDelta{Input: aws.String(s)}}}}
}

func text(block int32, s string) types.ConverseStreamOutput {
	return &types.ConverseStreamOutputMemberContentBlockDelta{Value: types.ContentBlockDeltaEvent{
		ContentBlockIndex: aws.Int32(block), Delta: &types.ContentBlockDeltaMemberText{Value: s}}}
}

// TestTranslatorIndexes feeds recorded event sequences to the translator: tool calls are
// numbered 0, 1, ... in the order they start, whatever their content block index, and
// fragments of interleaved calls go to the right call.
func TestTranslatorIndexes(t *testing.T) {
	events := []types.ConverseStreamOutput{
		&types.ConverseStreamOutputMemberMessageStart{Value: types.MessageStartEvent{Role: types.ConversationRoleAssistant}},
		text(0, "Let me look."),
		toolStart(3, "tooluse_a", "a"),
		toolStart(7, "tooluse_b", "b"),
		toolInput(7, `{"y":`),
		toolInput(3, `{"x":`),
		toolInput(3, `1}`),
		toolInput(7, `2}`),
		&types.ConverseStreamOutputMemberMessageStop{Value: types.MessageStopEvent{StopReason: types.StopReasonToolUse}},
	}
	var tr translator
	var got []llm.ToolCallDelta
	var content, finish string
	for _, ev := range events {
		d, ok, err := tr.event(ev)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if d.Content() {
				t.Errorf("a visible delta was dropped: %+v", d)
			}
			continue
		}
		got = append(got, d.ToolCalls...)
		content += d.Text
		finish += string(d.Stop)
	}
	want := []llm.ToolCallDelta{
		{Index: 0, ID: "tooluse_a", Name: "a"}, {Index: 1, ID: "tooluse_b", Name: "b"},
		{Index: 1, Arguments: `{"y":`}, {Index: 0, Arguments: `{"x":`}, {Index: 0, Arguments: `1}`}, {Index: 1, Arguments: `2}`},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("delta %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if content != "Let me look." || finish != "tool_use" || !tr.stopped {
		t.Errorf("content %q finish %q stopped %v", content, finish, tr.stopped)
	}

	// A second start for the same block would renumber a call the client already has.
	var tr2 translator
	_, _, _ = tr2.event(toolStart(1, "tooluse_a", "a"))
	_, _, err := tr2.event(toolStart(1, "tooluse_c", "c"))
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.StreamBroken {
		t.Errorf("duplicate start: got %v, want stream_broken", err)
	}
}

// TestConcurrentStreams runs streams side by side on one provider, as a gateway does. Each
// must read back its own answer, on Converse and on InvokeModel, without a data race under
// -race.
func TestConcurrentStreams(t *testing.T) {
	p, f := fakeProvider(t)
	const n = 8
	for i := range n {
		f.Script(fmt.Sprint("m", i), bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: fmt.Sprint("answer number ", i, " in pieces")}}, Chunk: 3})
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := p.Stream(ctx, hello(), providers.Target{Model: fmt.Sprint("m", i), API: []string{"converse", "invoke"}[i%2]})
			if err != nil {
				errs <- err
				return
			}
			ds, err := streamResult(st)
			if err != nil {
				errs <- err
				return
			}
			var text strings.Builder
			for _, d := range ds {
				text.WriteString(d.Text)
			}
			if want := fmt.Sprint("answer number ", i, " in pieces"); text.String() != want {
				errs <- fmt.Errorf("stream %d read %q, want %q", i, text.String(), want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
