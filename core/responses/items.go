package responses

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
)

// The encrypted_content of a reasoning item the gateway made from Anthropic-wire thinking:
// the block's signature (or a redacted block's data) behind a prefix that says so. Given back
// in a later turn's input, such an item becomes the thinking block again, which Anthropic
// verifies (and, with tools, requires); a reasoning item without it (OpenAI's own, or one
// given back without its encrypted_content) is sent only to the native route.
const (
	signaturePrefix = "fngate:v1:signature:"
	redactedPrefix  = "fngate:v1:redacted:"
)

type itemKind uint8

const (
	itemMessage   itemKind = iota
	itemCall               // function_call: one tool_use part
	itemOutput             // function_call_output: one tool_result part
	itemReasoning          // reasoning: a thinking part when the gateway made it, else none
	itemOther              // an item only OpenAI's Responses API models
	// itemCompaction is a compaction item the gateway sealed: no parts until Unseal opens it,
	// then the user message of its summary (compact.go).
	itemCompaction
)

// item is one input item decoded.
type item struct {
	path   string
	raw    []byte
	kind   itemKind
	role   string // messages
	parts  []llm.Part
	callID string // calls and outputs
	ref    string // an item_reference's id
	sealed string // a gateway-sealed compaction item's encrypted_content
}

var (
	messageKeys   = []string{"type", "role", "content", "id", "status", "phase"}
	callKeys      = []string{"type", "id", "call_id", "name", "arguments", "status", "namespace", "caller", "async"}
	outputKeys    = []string{"type", "id", "call_id", "output", "status", "name", "namespace", "caller"}
	reasoningKeys = []string{"type", "id", "summary", "content", "encrypted_content", "status"}
	statuses      = []string{"in_progress", "completed", "incomplete"}
)

// item decodes one input item at path.
func (d *decoder) item(path string, v []byte) (item, error) {
	it := item{path: path, raw: v}
	if jsonx.KindOf(v) != jsonx.Object {
		return it, invalidType(path, "an object", v)
	}
	typ, hasRole, onlyID := "", false, false
	keys := 0 // besides type
	var err error
	_ = jsonx.Members(v, func(key string, el []byte) error {
		switch key {
		case "type":
			if !isNull(el) {
				typ, err = str(path+".type", el)
			}
			return nil
		case "role":
			hasRole = true
		case "id":
			onlyID = true
		}
		keys++
		return nil
	})
	onlyID = onlyID && keys == 1
	switch {
	case err != nil:
		return it, err
	case typ == "" && hasRole:
		typ = "message" // the easy input message: {role, content}
	case typ == "" && onlyID:
		typ = "item_reference" // OpenAI's item reference may leave out its type: {id}
	case typ == "":
		return it, missing(path + ".type")
	}
	switch typ {
	case "message":
		return it, d.message(&it, v)
	case "function_call":
		return it, d.call(&it, v)
	case "function_call_output":
		return it, d.output(&it, v)
	case "reasoning":
		return it, d.reasoningItem(&it, v)
	case "compaction":
		return it, d.compactionItem(&it, v)
	}
	it.kind = itemOther
	if typ == "item_reference" {
		// One to an item of the gateway's is resolved from the store (references.go);
		// until then, and when it cannot be, it is OpenAI's to resolve.
		id, err := reference(path, v)
		if err != nil {
			return it, err
		}
		it.ref = id
		d.only(path, path+" is an item_reference, which only OpenAI can resolve")
	} else {
		d.only(path, path+" is a "+typ+" item, which only OpenAI's Responses API models")
	}
	return it, nil
}

func (d *decoder) message(it *item, v []byte) error {
	p := it.path
	it.kind = itemMessage
	var content []byte
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := p + "." + key
		var err error
		switch key {
		case "type", "id":
			if key == "id" {
				_, err = optStr(fp, el)
			}
		case "role":
			it.role, err = enum(fp, el, "user", "assistant", "system", "developer")
		case "content":
			content = el
		case "status":
			_, err = enumOrNull(fp, el, statuses...)
		case "phase":
			// commentary | final_answer labels an earlier assistant message; a hint other
			// backends have no use for, since they read the text.
			_, err = enumOrNull(fp, el, "commentary", "final_answer")
		default:
			err = unknownParam(fp, key, messageKeys...)
		}
		return err
	})
	if err != nil {
		return err
	}
	if it.role == "" {
		return missing(p + ".role")
	}
	cp := p + ".content"
	switch jsonx.KindOf(content) {
	case jsonx.Invalid:
		return missing(cp)
	case jsonx.String:
		s, _ := str(cp, content)
		it.parts = []llm.Part{{Kind: llm.PartText, Text: s}}
		return nil
	case jsonx.Array:
		return jsonx.Elements(content, func(i int, el []byte) error {
			part, ok, err := d.contentPart(at(cp, i), el, it.role)
			if ok {
				it.parts = append(it.parts, part)
			}
			return err
		})
	}
	return invalidType(cp, "a string or an array of content parts", content)
}

// contentPart decodes one part of a message's content; ok is false for a part only the
// native route can carry (recorded as such).
func (d *decoder) contentPart(p string, v []byte, role string) (llm.Part, bool, error) {
	typ, err := typeOf(p, v)
	if err != nil {
		return llm.Part{}, false, err
	}
	allowed := []string{"input_text", "input_image", "input_file"}
	if role == llm.RoleAssistant {
		allowed = []string{"output_text", "refusal", "input_text"}
	}
	if !contains(allowed, typ) {
		return llm.Part{}, false, invalidValue(p+".type", typ, allowed...)
	}
	switch typ {
	case "input_text":
		text, err := textMember(p, v, "text", "type", "text")
		return llm.Part{Kind: llm.PartText, Text: text}, true, err
	case "refusal":
		// An earlier refusal is what the assistant said.
		text, err := textMember(p, v, "refusal", "type", "refusal")
		return llm.Part{Kind: llm.PartText, Text: text}, true, err
	case "output_text":
		return d.outputText(p, v)
	case "input_image":
		part, ok, err := d.image(p, v)
		if ok && (role == llm.RoleSystem || role == llm.RoleDeveloper) {
			d.only(p, p+" is an image in a "+role+" message, which only OpenAI takes")
			ok = false
		}
		return part, ok, err
	}
	d.only(p, p+" is an input_file, which only OpenAI's Responses API reads")
	return llm.Part{}, false, fileKeys(p, v)
}

// textMember reads the one string member name of a part whose keys are keys.
func textMember(p string, v []byte, name string, keys ...string) (string, error) {
	text, found := "", false
	err := jsonx.Members(v, func(key string, el []byte) error {
		switch {
		case key == "type":
			return nil
		case key == name:
			found = true
			var err error
			text, err = str(p+"."+key, el)
			return err
		}
		return unknownParam(p+"."+key, key, keys...)
	})
	if err == nil && !found {
		err = missing(p + "." + name)
	}
	return text, err
}

// outputText reads an earlier answer's text. Its annotations and logprobs are what OpenAI
// returned about it: accepted empty; with citations in them the item is the native route's.
func (d *decoder) outputText(p string, v []byte) (llm.Part, bool, error) {
	var part llm.Part
	part.Kind = llm.PartText
	found, ok := false, true
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := p + "." + key
		switch key {
		case "type":
		case "text":
			found = true
			var err error
			part.Text, err = str(fp, el)
			return err
		case "annotations", "logprobs":
			if isNull(el) {
				return nil
			}
			if jsonx.KindOf(el) != jsonx.Array {
				return invalidType(fp, "an array", el)
			}
			if jsonx.Count(el) > 0 {
				d.only(fp, fp+" holds "+key+" of an earlier OpenAI answer")
				ok = false
			}
		default:
			return unknownParam(fp, key, "type", "text", "annotations", "logprobs")
		}
		return nil
	})
	if err == nil && !found {
		err = missing(p + ".text")
	}
	return part, ok, err
}

// image reads an input_image: an http(s) URL or a base64 data URL. A file_id is OpenAI's.
// detail (auto, low, high, original) is a resolution hint other backends choose for
// themselves.
func (d *decoder) image(p string, v []byte) (llm.Part, bool, error) {
	var part llm.Part
	part.Kind = llm.PartImage
	url, fileID := "", ""
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := p + "." + key
		var err error
		switch key {
		case "type":
		case "image_url":
			url, err = optStr(fp, el)
		case "file_id":
			fileID, err = optStr(fp, el)
		case "detail":
			_, err = enumOrNull(fp, el, "auto", "low", "high", "original")
		default:
			err = unknownParam(fp, key, "type", "image_url", "file_id", "detail")
		}
		return err
	})
	if err != nil {
		return part, false, err
	}
	switch {
	case fileID != "":
		d.only(p+".file_id", p+".file_id names a file uploaded to OpenAI")
		return part, false, nil
	case url == "":
		return part, false, missing(p + ".image_url")
	case strings.HasPrefix(url, "data:"):
		meta, data, ok := strings.Cut(url[len("data:"):], ",")
		media, isBase64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isBase64 || !strings.HasPrefix(media, "image/") || data == "" {
			return part, false, invalid(p+".image_url", "Invalid '"+p+".image_url': expected a base64-encoded data URL with an image MIME type (data:image/png;base64,...).")
		}
		part.MediaType, part.Data = media, data
	case strings.HasPrefix(url, "https://"), strings.HasPrefix(url, "http://"):
		part.URL = url
	default:
		return part, false, invalid(p+".image_url", "Invalid '"+p+".image_url': expected an http(s) URL or a base64-encoded data URL.")
	}
	return part, true, nil
}

func fileKeys(p string, v []byte) error {
	return jsonx.Members(v, func(key string, el []byte) error {
		switch key {
		case "type", "file_id", "file_data", "file_url", "filename", "detail":
			return nil
		}
		return unknownParam(p+"."+key, key, "type", "file_id", "file_data", "file_url", "filename")
	})
}

func (d *decoder) call(it *item, v []byte) error {
	p := it.path
	it.kind = itemCall
	tu := llm.Part{Kind: llm.PartToolUse}
	namespace := ""
	var have [3]bool
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := p + "." + key
		var err error
		switch key {
		case "type":
		case "id":
			_, err = optStr(fp, el)
		case "call_id":
			have[0] = true
			it.callID, err = str(fp, el)
		case "name":
			have[1] = true
			tu.Name, err = str(fp, el)
		case "arguments":
			have[2] = true
			tu.Input, err = str(fp, el)
		case "status":
			_, err = enumOrNull(fp, el, statuses...)
		case "namespace":
			if !isNull(el) {
				namespace, err = str(fp, el)
			}
		case "caller", "async":
			if !isNull(el) {
				d.only(fp, fp+" belongs to OpenAI's own tool runtime")
			}
		default:
			err = unknownParam(fp, key, callKeys...)
		}
		return err
	})
	if err != nil {
		return err
	}
	for i, k := range []string{"call_id", "name", "arguments"} {
		if !have[i] {
			return missing(p + "." + k)
		}
	}
	if namespace != "" {
		// Codex gives its calls of a namespace's functions back so: named as the tools were
		// offered to a route other than OpenAI's.
		flat := Flatten(namespace, tu.Name)
		if !llm.ValidToolName(flat, maxFlatName) {
			d.only(p+".namespace", "the call of the namespace "+strconv.Quote(namespace)+"'s function "+strconv.Quote(tu.Name)+" names "+
				strconv.Quote(flat)+" on routes other than OpenAI's, "+strconv.Itoa(len(flat))+" characters, longer than the "+strconv.Itoa(maxFlatName)+" they take")
		}
		tu.Name = flat
	}
	tu.ID = it.callID
	it.parts = []llm.Part{tu}
	return nil
}

func (d *decoder) output(it *item, v []byte) error {
	p := it.path
	it.kind = itemOutput
	tr := llm.Part{Kind: llm.PartToolResult}
	hasCall, hasOutput := false, false
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := p + "." + key
		var err error
		switch key {
		case "type":
		case "id", "name":
			_, err = optStr(fp, el)
		case "call_id":
			hasCall = true
			it.callID, err = str(fp, el)
		case "output":
			hasOutput = true
			err = d.outputContent(&tr, fp, el)
		case "status":
			_, err = enumOrNull(fp, el, statuses...)
		case "namespace":
			// The call it answers, found by call_id, has it already.
			if !isNull(el) {
				_, err = str(fp, el)
			}
		case "caller":
			if !isNull(el) {
				d.only(fp, fp+" belongs to OpenAI's own tool runtime")
			}
		default:
			err = unknownParam(fp, key, outputKeys...)
		}
		return err
	})
	if err != nil {
		return err
	}
	if !hasCall {
		return missing(p + ".call_id")
	}
	if !hasOutput {
		return missing(p + ".output")
	}
	tr.ToolUseID = it.callID
	it.parts = []llm.Part{tr}
	return nil
}

// outputContent reads a function's output: a string, or text, image and file parts.
func (d *decoder) outputContent(tr *llm.Part, p string, v []byte) error {
	if jsonx.KindOf(v) == jsonx.String {
		s, _ := str(p, v)
		tr.Text = s
		return nil
	}
	if jsonx.KindOf(v) != jsonx.Array {
		return invalidType(p, "a string or an array of content parts", v)
	}
	tr.Content = []llm.Part{}
	return jsonx.Elements(v, func(i int, el []byte) error {
		part, ok, err := d.contentPart(at(p, i), el, llm.RoleUser)
		if ok {
			tr.Content = append(tr.Content, part)
		}
		return err
	})
}

func (d *decoder) reasoningItem(it *item, v []byte) error {
	p := it.path
	it.kind = itemReasoning
	var summary []string
	encrypted := ""
	hasSummary := false
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := p + "." + key
		var err error
		switch key {
		case "type":
		case "id":
			_, err = optStr(fp, el)
		case "summary":
			hasSummary = true
			err = array(fp, el, func(i int, part []byte) error {
				sp := at(fp, i)
				if typ, err := typeOf(sp, part); err != nil {
					return err
				} else if typ != "summary_text" {
					return invalidValue(sp+".type", typ, "summary_text")
				}
				text, err := textMember(sp, part, "text", "type", "text")
				summary = append(summary, text)
				return err
			})
		case "content":
			// Raw reasoning text (open-weight models): the native route's to read back.
			if !isNull(el) && jsonx.KindOf(el) != jsonx.Array {
				return invalidType(fp, "an array", el)
			}
		case "encrypted_content":
			encrypted, err = optStr(fp, el)
		case "status":
			_, err = enumOrNull(fp, el, statuses...)
		default:
			err = unknownParam(fp, key, reasoningKeys...)
		}
		return err
	})
	if err != nil {
		return err
	}
	if !hasSummary {
		return missing(p + ".summary")
	}
	switch {
	case strings.HasPrefix(encrypted, signaturePrefix):
		it.parts = []llm.Part{{Kind: llm.PartThinking, Text: strings.Join(summary, ""), Signature: encrypted[len(signaturePrefix):]}}
	case strings.HasPrefix(encrypted, redactedPrefix):
		it.parts = []llm.Part{{Kind: llm.PartRedactedThinking, Data: encrypted[len(redactedPrefix):]}}
	}
	return nil
}

// Continue builds the conversation: history (the items of the response previous_response_id
// names: its input, then its output) and then the request's own items. Function calls join
// the assistant turn they are part of and their outputs one user turn, in order; each output
// must answer a call made before it, and each call be answered, as OpenAI requires.
func (r *Request) Continue(history []json.RawMessage) *llm.Error {
	d := decoder{r: r}
	items := make([]item, 0, len(history)+len(r.own))
	for _, h := range history {
		it, err := d.item("previous_response_id", h)
		if err != nil {
			return asError(err)
		}
		items = append(items, it)
	}
	items = append(items, r.own...)
	if len(items) > r.lim.MaxMessages {
		return bad("input", "array_above_max_length", "Invalid 'input': the conversation holds "+strconv.Itoa(len(items))+" items with the continued response's (this gateway's limit is "+strconv.Itoa(r.lim.MaxMessages)+").")
	}
	msgs, e := conversation(items)
	if e != nil {
		return e
	}
	r.conv = items
	if !hasTurn(msgs) && len(r.LLM.Responses.Only) == 0 && !r.WarmUp {
		return bad("input", "invalid_value", "Invalid 'input': it must hold at least one user or assistant message or item besides instructions.")
	}
	r.LLM.Messages = msgs
	in := make([]byte, 0, 64*len(items))
	in = append(in, '[')
	for i := range items {
		if i > 0 {
			in = append(in, ',')
		}
		in = append(in, items[i].raw...)
	}
	r.LLM.Responses.Input = append(in, ']')
	return nil
}

func conversation(items []item) ([]llm.Message, *llm.Error) {
	msgs := make([]llm.Message, 0, len(items))
	type run uint8
	const (
		none run = iota
		assistant
		outputs
	)
	last := none
	calls := map[string]string{} // call_id -> the call's path, until answered
	var order []string           // call ids in order, for the first unanswered
	answered := map[string]bool{}
	opaque := false // an item only OpenAI reads came before: it may hold a call
	for i := range items {
		it := &items[i]
		switch it.kind {
		case itemOther:
			last = none
			opaque = true
			continue
		case itemReasoning:
			if len(it.parts) == 0 {
				continue // not the gateway's: the native route has it among the raw items
			}
		case itemCompaction:
			if len(it.parts) == 0 {
				return nil, stillSealed(it.path)
			}
		case itemCall:
			if _, dup := calls[it.callID]; dup || answered[it.callID] {
				return nil, bad(it.path+".call_id", "invalid_value", "Invalid '"+it.path+".call_id': duplicate function call id '"+it.callID+"'.")
			}
			calls[it.callID] = it.path
			order = append(order, it.callID)
		case itemOutput:
			if _, ok := calls[it.callID]; ok {
				delete(calls, it.callID)
				answered[it.callID] = true
			} else if !opaque {
				return nil, bad(it.path+".call_id", "invalid_value", "No tool call found for function call output with call_id "+it.callID+".")
			}
			// Else the call may be in the earlier item (an item_reference to an OpenAI call):
			// OpenAI judges it on the native route, and the other routes refuse that item.
		}
		switch {
		case it.kind == itemOutput:
			if last == outputs {
				m := &msgs[len(msgs)-1]
				m.Parts = append(m.Parts, it.parts...)
				continue
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Parts: it.parts})
			last = outputs
		case it.kind == itemCall || it.kind == itemReasoning || it.role == llm.RoleAssistant:
			if last == assistant {
				m := &msgs[len(msgs)-1]
				m.Parts = append(m.Parts, it.parts...)
				continue
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Parts: append([]llm.Part(nil), it.parts...)})
			last = assistant
		default:
			role := it.role
			if role == llm.RoleDeveloper {
				// OpenAI's name for instructions since its reasoning models: every translated
				// backend takes them as system instructions (Bedrock's Converse has no other
				// word for them); the native route has the item as sent.
				role = llm.RoleSystem
			}
			msgs = append(msgs, llm.Message{Role: role, Parts: it.parts})
			last = none
		}
	}
	for _, id := range order {
		if p, open := calls[id]; open {
			return nil, bad(p, "invalid_value", "No tool output found for function call "+id+".")
		}
	}
	return msgs, nil
}

func hasTurn(msgs []llm.Message) bool {
	for i := range msgs {
		if msgs[i].Role == llm.RoleUser || msgs[i].Role == llm.RoleAssistant {
			return true
		}
	}
	return false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
