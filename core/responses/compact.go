package responses

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/compaction"
	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// POST /v1/responses/compact, as OpenAI serves it: the body names the model and the
// conversation (input, previous_response_id, instructions), and the answer is a
// response.compaction object whose output is every user message of the conversation
// followed by one compaction item, whose encrypted_content stands for the rest.
//
// The native route (the openai kind) is sent the request and its answer passes through. On
// every other route the gateway compacts: the route's model is asked, with CompactionPrompt,
// for a summary of the conversation written out as a transcript, and the summary is sealed
// (core/compaction) into the compaction item. Given back as input, on /v1/responses or here,
// an item the gateway sealed is opened (Unseal) into the user message SummaryPrefix + summary,
// for every route; an item OpenAI sealed goes only to OpenAI.

// CompactionMaxTokens bounds the summary a route's model is asked for (lower where the
// model's max_output_tokens is): enough for the summary the prompt asks for, of a conversation
// that filled a large context window, and a bound on what a compaction can cost.
const CompactionMaxTokens = 8192

// CompactionPrompt is the system prompt of the request that asks a route's model for the
// summary of a conversation; the conversation follows as the user's message, a transcript
// between <conversation> and </conversation> (see Compaction).
const CompactionPrompt = `You compact conversations between a user and an AI assistant so that the assistant can go on in a fresh context window with your summary in place of the conversation. The conversation so far is in the user's message, between <conversation> and </conversation>: the user's messages, the assistant's answers, the tools it called with their results, and any summary of an earlier compaction.

Write a summary from which the assistant can carry on as if it still had the whole conversation:
- the user's goals, requests and constraints, and whether each is done, in progress or still open;
- what the assistant did and decided, and why; the tool calls that mattered and what they returned;
- the files, commands, names, numbers, identifiers and code it will need again, exactly as written;
- errors met and how they were resolved, and approaches that were tried and failed;
- where the work stands now and what the next steps are.

Leave out what no longer matters. Write only the summary, as plain text in the language of the conversation: no preamble, and do not answer or continue the conversation.`

// SummaryPrefix opens the user message a gateway-sealed compaction item becomes.
const SummaryPrefix = "Summary of the earlier conversation, which was compacted:\n\n"

// compactFields are the fields of a compact request OpenAI defines.
var compactFields = []string{
	"model", "input", "previous_response_id", "instructions", "prompt_cache_key", "prompt_cache_retention",
	"prompt_cache_options", "service_tier", "image",
}

// DecodeCompact decodes and validates a POST /v1/responses/compact body as OpenAI does: an
// unknown field is refused naming it, the model is required, input may be a string, items
// or null (previous_response_id then gives the conversation). The conversation is built by
// Unseal, Continue and Compaction, in that order.
func DecodeCompact(body []byte, lim llm.Limits) (*Request, *llm.Error) {
	body, e := checkBody(body)
	if e != nil {
		return nil, e
	}
	r := &Request{
		LLM: &llm.Request{Op: llm.OpChat, LateSystem: llm.LateSystemHoist, MaxTokensParam: "max_output_tokens",
			Responses: &llm.Responses{Compact: true}},
		echo: map[string][]byte{},
		lim:  lim.WithDefaults(),
	}
	d := decoder{r: r}
	hasInput := false
	err := jsonx.Members(body, func(key string, v []byte) error {
		var err error
		switch key {
		case "model":
			if isNull(v) {
				return nil // the SDKs type it nullable; OpenAI, like the gateway, needs one
			}
			err = d.member(key, v)
		case "input":
			if isNull(v) {
				return nil
			}
			hasInput = true
			err = d.member(key, v)
		case "previous_response_id", "instructions", "prompt_cache_key", "prompt_cache_retention":
			err = d.member(key, v)
		case "service_tier":
			s, e := enumOrNull(key, v, "auto", "default", "fast", "flex", "priority")
			if s != "" && s != "auto" && s != "default" {
				d.only(key, "service_tier "+s+" is one of OpenAI's processing tiers")
			}
			err = e
		case "prompt_cache_options":
			if !isNull(v) {
				d.only(key, "prompt_cache_options configures OpenAI's prompt cache")
			}
		case "image":
			if !isNull(v) {
				d.only(key, "image sets how OpenAI compresses the images of the context")
			}
		default:
			return unknownParam(key, key, compactFields...)
		}
		if err == nil && key != "model" && key != "input" && key != "previous_response_id" {
			r.LLM.Responses.Fields = append(r.LLM.Responses.Fields, llm.RawField{Name: key, Value: json.RawMessage(v)})
		}
		return err
	})
	if e := asError(err); e != nil {
		return nil, e
	}
	if r.LLM.Model == "" {
		return nil, asError(missing("model"))
	}
	if !hasInput && r.PreviousResponseID == "" {
		return nil, asError(missing("input"))
	}
	return r, nil
}

// compactionItemKeys are the members of a compaction item: the input param's, and
// created_by, which an output item carries when a client sends it back as it came.
var compactionItemKeys = []string{"type", "id", "encrypted_content", "created_by"}

// compactionItem decodes a compaction item. The gateway's (compaction.Prefix) wait for
// Unseal; OpenAI's only OpenAI can read.
func (d *decoder) compactionItem(it *item, v []byte) error {
	p := it.path
	found := false
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := p + "." + key
		var err error
		switch key {
		case "type":
		case "id", "created_by":
			_, err = optStr(fp, el)
		case "encrypted_content":
			found = true
			it.sealed, err = str(fp, el)
			if err == nil && len(it.sealed) > compaction.MaxSealed {
				err = fail(bad(fp, "string_above_max_length", "Invalid '"+fp+"': string too long. Expected a string with maximum length 10485760."))
			}
		default:
			err = unknownParam(fp, key, compactionItemKeys...)
		}
		return err
	})
	switch {
	case err != nil:
		return err
	case !found:
		return missing(p + ".encrypted_content")
	case compaction.Sealed(it.sealed):
		it.kind = itemCompaction
		d.r.sealed++
	default:
		it.kind, it.sealed = itemOther, ""
		d.only(p, p+" is a compaction item OpenAI sealed, which only OpenAI can read")
	}
	return nil
}

// Unseal opens the gateway-sealed compaction items among the request's own with ring (nil
// when the gateway has no compaction keys), each bound to owner, the key whose conversation
// it summarizes. Each becomes the user message SummaryPrefix + summary, for every route, OpenAI's too, which
// cannot read the gateway's ciphertext; what is stored for previous_response_id is that
// message. An item that does not open is a 400 naming it. Call it before Continue.
func (r *Request) Unseal(ring *compaction.Keyring, owner string) *llm.Error {
	if r.sealed == 0 {
		return nil
	}
	for i := range r.own {
		it := &r.own[i]
		if it.kind != itemCompaction || it.parts != nil {
			continue
		}
		p := it.path + ".encrypted_content"
		if ring == nil {
			return bad(p, "invalid_encrypted_content", "Invalid '"+p+"': the item was sealed by a fngate gateway, and this one has no compaction keys (responses.compaction_keys) to open it.")
		}
		summary, err := ring.Open(owner, it.sealed)
		if err != nil {
			return bad(p, "invalid_encrypted_content", "Invalid '"+p+"': "+err.Error()+".")
		}
		text := SummaryPrefix + string(summary)
		it.role, it.sealed = llm.RoleUser, ""
		it.parts = []llm.Part{{Kind: llm.PartText, Text: text}}
		msg := append([]byte(`{"type":"message","role":"user","content":[{"type":"input_text","text":`), openai.AppendString(nil, text)...)
		it.raw = append(msg, "}]}"...)
		r.Items[i] = it.raw
	}
	r.sealed = 0
	return nil
}

// stillSealed is a gateway-sealed compaction item that reached the conversation unopened: one
// in the stored items of a continued response (the gateway stores them opened).
func stillSealed(path string) *llm.Error {
	return bad(path, "invalid_value", "Invalid '"+path+"': a compaction item sealed by the gateway can only be given in input.")
}

// Compaction turns the request, once Continue built its conversation, into the request for
// a summary that every route but the native one is sent: CompactionPrompt as the system
// prompt and the conversation written out as a transcript in one user message (each turn in
// a tag naming who spoke, tool calls and results with their ids, images in place). A
// transcript rather than the turns themselves: no backend then needs the conversation's tool
// definitions (the compact request has none, and Bedrock refuses tool calls without them),
// and the model reads the conversation as something to summarize rather than to continue.
func (r *Request) Compaction() {
	var t transcript
	t.text.WriteString("<conversation>\n")
	for i := range r.LLM.System {
		t.block("instructions", "", r.LLM.System[i].Text)
	}
	for i := range r.conv {
		it := &r.conv[i]
		switch it.kind {
		case itemMessage:
			t.open(it.role, "")
			t.parts(it.parts)
			t.close(it.role)
		case itemCompaction:
			t.block("summary", "", strings.TrimPrefix(it.parts[0].Text, SummaryPrefix))
		case itemCall:
			tu := &it.parts[0]
			t.block("tool_call", ` id="`+attr(tu.ID)+`" name="`+attr(tu.Name)+`"`, tu.Input)
		case itemOutput:
			tr := &it.parts[0]
			t.open("tool_result", ` id="`+attr(tr.ToolUseID)+`"`)
			if tr.Content != nil {
				t.parts(tr.Content)
			} else {
				t.text.WriteString(tr.Text)
			}
			t.close("tool_result")
		}
		// Reasoning is left out, as backends leave earlier turns' thinking out of the
		// context; items only OpenAI models keep the request on the native route.
	}
	t.text.WriteString("</conversation>")
	t.flush()
	r.LLM.System = []llm.Part{{Kind: llm.PartText, Text: CompactionPrompt}}
	r.LLM.Messages = []llm.Message{{Role: llm.RoleUser, Parts: t.out}}
}

// transcript writes a conversation as text, with its images as parts in place.
type transcript struct {
	text strings.Builder
	out  []llm.Part
}

func (t *transcript) open(tag, attrs string) {
	t.text.WriteString("<" + tag + attrs + ">\n")
}

func (t *transcript) close(tag string) {
	t.text.WriteString("\n</" + tag + ">\n")
}

func (t *transcript) block(tag, attrs, text string) {
	t.open(tag, attrs)
	t.text.WriteString(text)
	t.close(tag)
}

func (t *transcript) parts(parts []llm.Part) {
	for i := range parts {
		switch p := &parts[i]; p.Kind {
		case llm.PartText:
			if i > 0 {
				t.text.WriteString("\n")
			}
			t.text.WriteString(p.Text)
		case llm.PartImage:
			t.flush()
			t.out = append(t.out, *p)
		}
	}
}

// flush ends the text so far as a part.
func (t *transcript) flush() {
	if t.text.Len() > 0 {
		t.out = append(t.out, llm.Part{Kind: llm.PartText, Text: t.text.String()})
		t.text.Reset()
	}
}

// attr keeps a value from ending its attribute.
func attr(s string) string { return strings.ReplaceAll(s, `"`, "'") }

// AppendCompacted appends the response.compaction object of a compaction the gateway made:
// the conversation's user messages, as sent, then the compaction item sealing the summary.
func (r *Request) AppendCompacted(b []byte, id string, createdAt int64, sealed string, u *llm.Usage) []byte {
	b = append(b, `{"id":`...)
	b = openai.AppendString(b, id)
	b = append(b, `,"object":"response.compaction","created_at":`...)
	b = strconv.AppendInt(b, createdAt, 10)
	b = append(b, `,"output":[`...)
	for i := range r.conv {
		it := &r.conv[i]
		if it.kind != itemMessage || it.role != llm.RoleUser {
			continue
		}
		b = append(b, `{"id":`...)
		b = openai.AppendString(b, NewID("msg"))
		b = append(b, `,"type":"message","status":"completed","role":"user","content":`...)
		b = appendContent(b, it.raw)
		b = append(b, "},"...)
	}
	b = append(b, `{"id":`...)
	b = openai.AppendString(b, NewID("cmp"))
	b = append(b, `,"type":"compaction","encrypted_content":`...)
	b = openai.AppendString(b, sealed)
	b = append(b, `}],"usage":`...)
	b = AppendUsage(b, u)
	return append(b, '}')
}

// appendContent writes a message item's content as an array of parts: as sent, or the one
// input_text part a string content means.
func appendContent(b, item []byte) []byte {
	var content []byte
	_ = jsonx.Members(item, func(key string, v []byte) error {
		if key == "content" {
			content = v
		}
		return nil
	})
	if jsonx.KindOf(content) == jsonx.Array {
		return append(b, content...)
	}
	text, _ := str("content", content)
	b = append(b, `[{"type":"input_text","text":`...)
	b = openai.AppendString(b, text)
	return append(b, "}]"...)
}

// PatchCompacted returns a native upstream's response.compaction object with the gateway's
// response id and, where the object names one, the gateway's model; nil when it is not an
// object.
func PatchCompacted(obj []byte, id, model string) []byte {
	return patch(obj, map[string][]byte{
		"id":    openai.AppendString(nil, id),
		"model": openai.AppendString(nil, model),
	})
}
