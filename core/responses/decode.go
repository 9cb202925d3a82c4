package responses

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// topLevel lists every field of a Responses request this door knows: the unknown-key refusal
// names the one a key differs from only by case.
var topLevel = []string{
	"model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
	"max_output_tokens", "temperature", "top_p", "stream", "stream_options", "metadata", "user",
	"store", "previous_response_id", "reasoning", "text", "include", "prompt_cache_key",
	"prompt_cache_retention", "client_metadata", "safety_identifier", "truncation", "service_tier",
	"background", "conversation", "prompt", "max_tool_calls", "top_logprobs", "context_management",
	"moderation", "access_programs", "prompt_cache_options",
}

// nativeOnly are top-level fields no translated route has any equivalent of, with why.
var nativeOnly = map[string]string{
	"conversation":         "conversation refers to a conversation object kept by OpenAI",
	"prompt":               "prompt refers to a prompt template kept by OpenAI",
	"max_tool_calls":       "max_tool_calls bounds OpenAI's own tool loop",
	"context_management":   "context_management is OpenAI's server-side compaction",
	"moderation":           "moderation is OpenAI's own",
	"access_programs":      "access_programs is OpenAI's own",
	"prompt_cache_options": "prompt_cache_options configures OpenAI's prompt cache",
}

// gatewayOwned are the fields the gateway writes itself on the native route, so they are not
// kept among the raw fields.
var gatewayOwned = map[string]bool{"model": true, "input": true, "stream": true, "store": true, "previous_response_id": true,
	"max_output_tokens": true}

// Decode decodes and validates a POST /v1/responses body. What OpenAI would refuse is refused
// the same way (400 invalid_request_error naming the field); what OpenAI accepts is accepted,
// and a route that cannot honour it refuses it later, at planning, with the reason. The
// conversation is built by Continue, once a continued response's items are known.
func Decode(body []byte, lim llm.Limits) (*Request, *llm.Error) {
	body, e := checkBody(body)
	if e != nil {
		return nil, e
	}
	lim = lim.WithDefaults()
	r := &Request{
		LLM: &llm.Request{Op: llm.OpChat, LateSystem: llm.LateSystemHoist, MaxTokensParam: "max_output_tokens",
			Responses: &llm.Responses{}},
		Store: true,
		echo:  map[string][]byte{},
		lim:   lim,
	}
	d := decoder{r: r}
	seen := map[string]bool{}
	err := jsonx.Members(body, func(key string, v []byte) error {
		seen[key] = true
		if err := d.member(key, v); err != nil {
			return err
		}
		if !gatewayOwned[key] {
			r.LLM.Responses.Fields = append(r.LLM.Responses.Fields, llm.RawField{Name: key, Value: json.RawMessage(v)})
		}
		return nil
	})
	if e := asError(err); e != nil {
		return nil, e
	}
	if r.LLM.Model == "" {
		if seen["model"] {
			return nil, bad("model", "invalid_value", "Invalid value for 'model': the model must be a non-empty string.")
		}
		return nil, asError(missing("model"))
	}
	if !seen["input"] && r.PreviousResponseID == "" && !seen["conversation"] && !seen["prompt"] {
		return nil, asError(missing("input"))
	}
	if e := d.finish(); e != nil {
		return nil, e
	}
	return r, nil
}

// checkBody refuses a body that is not one JSON object of bounded depth without repeated
// keys, and returns it trimmed.
func checkBody(body []byte) ([]byte, *llm.Error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, llm.BadRequest("", "The request body is empty: send a JSON object.")
	}
	if !json.Valid(body) {
		var v any
		msg := "We could not parse the JSON body of your request."
		if err := json.Unmarshal(body, &v); err != nil {
			msg = "We could not parse the JSON body of your request: " + err.Error() + "."
		}
		return nil, llm.BadRequest("", msg)
	}
	if jsonx.KindOf(body) != jsonx.Object {
		return nil, llm.BadRequest("", "The request body must be a JSON object.")
	}
	if jsonx.Depth(body) > maxNesting {
		return nil, llm.BadRequest("", "The request nests deeper than "+strconv.Itoa(maxNesting)+" levels.")
	}
	// Repeated keys anywhere (tool schemas, metadata, kept items): a proxy in front would
	// read the request differently.
	if e := openai.CheckDuplicateKeys(body); e != nil {
		return nil, e
	}
	return body, nil
}

type decoder struct {
	r      *Request
	choice *toolChoice
	// parallel is parallel_tool_calls when the client sent it.
	parallel *bool
}

func (d *decoder) member(key string, v []byte) error {
	r, req := d.r, d.r.LLM
	switch key {
	case "model":
		s, err := str(key, v)
		req.Model = s
		return err
	case "input":
		return d.input(v)
	case "instructions":
		s, err := optStr(key, v)
		if s != "" {
			req.System = []llm.Part{{Kind: llm.PartText, Text: s}}
		}
		d.echo(key, v)
		return err
	case "tools":
		return d.tools(v) // echoed in the response object's shape (appendFunctionEcho)
	case "tool_choice":
		d.echo(key, v)
		return d.toolChoice(v)
	case "parallel_tool_calls":
		if isNull(v) {
			return nil
		}
		b, err := boolean(key, v)
		d.parallel = &b
		d.echo(key, v)
		return err
	case "max_output_tokens":
		if isNull(v) {
			return nil
		}
		// OpenAI's own floor: fewer tokens than this cannot hold an answer.
		n, err := integer(key, v, 16, 1<<31-1)
		req.MaxTokens = &n
		d.echo(key, v)
		return err
	case "temperature":
		f, err := decimal(key, v, 0, 2)
		req.Temperature = f
		d.echo(key, v)
		return err
	case "top_p":
		f, err := decimal(key, v, 0, 1)
		req.TopP = f
		d.echo(key, v)
		return err
	case "stream":
		if isNull(v) {
			return nil
		}
		b, err := boolean(key, v)
		req.Stream = b
		return err
	case "stream_options":
		// include_obfuscation pads OpenAI's delta events; no other backend adds padding, and
		// asking for none is honoured everywhere.
		return d.streamOptions(v)
	case "metadata":
		d.echo(key, v)
		return d.metadata(v)
	case "user", "safety_identifier":
		s, err := optStr(key, v)
		if err == nil && key == "safety_identifier" && len(s) > 64 {
			err = fail(bad(key, "string_above_max_length", "Invalid 'safety_identifier': string too long. Expected a string with maximum length 64, but got a string with length "+strconv.Itoa(len(s))+" instead."))
		}
		if req.User == "" || key == "user" && s != "" {
			req.User = s
		}
		d.echo(key, v)
		return err
	case "store":
		if isNull(v) {
			return nil
		}
		b, err := boolean(key, v)
		r.Store = b
		return err
	case "previous_response_id":
		s, err := optStr(key, v)
		r.PreviousResponseID = s
		d.echo(key, v)
		return err
	case "reasoning":
		return d.reasoning(v) // echoed in the response object's shape
	case "text":
		return d.text(v) // echoed in the response object's shape
	case "include":
		return d.include(v)
	case "prompt_cache_key":
		s, err := optStr(key, v)
		// A caching hint: backends cache prompts by themselves. The weighted policy keeps one
		// key on one route, so its cache stays warm.
		req.Session = s
		if len(req.Session) > 128 {
			req.Session = req.Session[:128]
		}
		d.echo(key, v)
		return err
	case "prompt_cache_retention":
		s, err := enumOrNull(key, v, "in_memory", "24h")
		if s == "24h" {
			d.only(key, "prompt_cache_retention 24h is OpenAI's extended prompt cache")
		}
		d.echo(key, v)
		return err
	case "client_metadata":
		// The client's own telemetry about itself (Codex: its turn and session ids), not a
		// setting of the model: kept for the native route, meaningless to any other.
		return stringMap(key, v, 64, 1<<14)
	case "truncation":
		s, err := enumOrNull(key, v, "auto", "disabled")
		if s == "auto" {
			d.only(key, "truncation auto drops earlier items when the context is full, as only OpenAI does")
		}
		d.echo(key, v)
		return err
	case "service_tier":
		s, err := enumOrNull(key, v, "auto", "default", "flex", "scale", "priority")
		if s != "" && s != "auto" && s != "default" {
			d.only(key, "service_tier "+s+" is one of OpenAI's processing tiers")
		}
		return err
	case "background":
		if isNull(v) {
			return nil
		}
		b, err := boolean(key, v)
		if err == nil && b {
			return fail(llm.Unsupported(key, "background responses are not supported: the gateway keeps no response running to poll; stream instead"))
		}
		return err
	case "top_logprobs":
		if isNull(v) {
			return nil
		}
		n, err := integer(key, v, 0, 20)
		if n > 0 {
			d.only(key, "top_logprobs returns OpenAI's token log probabilities")
		}
		return err
	}
	if why, ok := nativeOnly[key]; ok {
		if !isNull(v) {
			d.only(key, why)
		}
		return nil
	}
	return unknownParam(key, key, topLevel...)
}

// echo keeps a field's raw value for the response object, which repeats it.
func (d *decoder) echo(key string, v []byte) {
	if !isNull(v) {
		d.r.echo[key] = v
	}
}

// only records a part of the request only OpenAI's Responses API honours.
func (d *decoder) only(param, why string) {
	rs := d.r.LLM.Responses
	rs.Only = append(rs.Only, only(param, why))
}

func enumOrNull(param string, v []byte, values ...string) (string, error) {
	if isNull(v) {
		return "", nil
	}
	return enum(param, v, values...)
}

func (d *decoder) streamOptions(v []byte) error {
	if isNull(v) {
		return nil
	}
	return object("stream_options", v, func(key string, el []byte) error {
		p := "stream_options." + key
		if key != "include_obfuscation" {
			return unknownParam(p, key, "include_obfuscation")
		}
		if isNull(el) {
			return nil
		}
		_, err := boolean(p, el)
		return err
	})
}

func (d *decoder) metadata(v []byte) error {
	if isNull(v) {
		return nil
	}
	md := map[string]string{}
	err := stringMapInto("metadata", v, maxMetadataKey, maxMetadataValue, md)
	if err == nil && len(md) > maxMetadataPairs {
		err = fail(bad("metadata", "object_above_max_properties", "Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with "+strconv.Itoa(len(md))+" properties instead."))
	}
	if len(md) > 0 {
		d.r.LLM.Metadata = md
	}
	return err
}

// stringMap checks an object of string values with bounded keys and values.
func stringMap(param string, v []byte, maxKey, maxValue int) error {
	if isNull(v) {
		return nil
	}
	return stringMapInto(param, v, maxKey, maxValue, nil)
}

func stringMapInto(param string, v []byte, maxKey, maxValue int, into map[string]string) error {
	return object(param, v, func(key string, el []byte) error {
		p := join(param, key)
		s, err := str(p, el)
		if err != nil {
			return err
		}
		if utf8.RuneCountInString(key) > maxKey {
			return fail(bad(param, "invalid_value", "Invalid '"+param+"': keys are at most "+strconv.Itoa(maxKey)+" characters, got "+strconv.Quote(key)+"."))
		}
		if utf8.RuneCountInString(s) > maxValue {
			return fail(bad(p, "string_above_max_length", "Invalid '"+p+"': string too long. Expected a string with maximum length "+strconv.Itoa(maxValue)+"."))
		}
		if into != nil {
			into[key] = s
		}
		return nil
	})
}

// input reads the request's own items; a string is the one user message it means.
func (d *decoder) input(v []byte) error {
	r := d.r
	switch jsonx.KindOf(v) {
	case jsonx.String:
		s, _ := str("input", v)
		msg := append([]byte(`{"type":"message","role":"user","content":[{"type":"input_text","text":`), openai.AppendString(nil, s)...)
		msg = append(msg, "}]}"...)
		r.Items = []json.RawMessage{msg}
		r.own = []item{{path: "input", raw: msg, kind: itemMessage, role: llm.RoleUser, parts: []llm.Part{{Kind: llm.PartText, Text: s}}}}
		return nil
	case jsonx.Array:
		n := jsonx.Count(v)
		if n > r.lim.MaxMessages {
			return fail(bad("input", "array_above_max_length", "Invalid 'input': too many items: "+strconv.Itoa(n)+" (this gateway's limit is "+strconv.Itoa(r.lim.MaxMessages)+")."))
		}
		r.Items = make([]json.RawMessage, 0, n)
		r.own = make([]item, 0, n)
		return jsonx.Elements(v, func(i int, el []byte) error {
			it, err := d.item(at("input", i), el)
			if err != nil {
				return err
			}
			if it.ref != "" && ItemResponse(it.ref) != "" {
				r.refs = append(r.refs, len(r.own))
			}
			r.Items = append(r.Items, json.RawMessage(el))
			r.own = append(r.own, it)
			return nil
		})
	}
	return invalidType("input", "a string or an array of input items", v)
}

// finish checks what spans fields: tool_choice against tools, parallel_tool_calls.
func (d *decoder) finish() *llm.Error {
	req := d.r.LLM
	if c := d.choice; c != nil {
		if c.function != "" && !hasTool(req.Tools, c.function) {
			return bad("tool_choice", "invalid_value", "Tool choice 'function' not found in 'tools' parameter: no function tool named '"+c.function+"'.")
		}
		if c.mode == llm.ToolChoiceRequired && len(req.Tools) == 0 && len(d.r.LLM.Responses.Only) == 0 {
			return bad("tool_choice", "invalid_value", "Invalid value for 'tool_choice': 'required' needs tools.")
		}
		if c.mode != "" {
			req.ToolChoice = &llm.ToolChoice{Mode: c.mode, Name: c.function}
		}
	}
	if d.parallel != nil && !*d.parallel {
		if req.ToolChoice == nil {
			req.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceAuto}
		}
		req.ToolChoice.DisableParallel = true
	}
	return nil
}

func hasTool(tools []llm.Tool, name string) bool {
	for i := range tools {
		if tools[i].Name == name {
			return true
		}
	}
	return false
}
