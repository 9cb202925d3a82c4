package replay

// call is a tool call the client should assemble: the provider's id ("" when the gateway
// has to make one up: the provider gave none, or one already used in the answer), the name,
// and the arguments (compared as JSON).
type call struct{ id, name, args string }

// row is what the client gets from one recording. Texts are checked whole against what the
// recording says (recorded_test.go); text here is how it starts, so a row shows what the
// recording is about and a reader that found nothing cannot pass.
type row struct {
	id     string
	text   string
	calls  []call
	finish string
	usage  string // the usage object the client gets, as JSON; "" when none is reported
	// A failure before any output: the client's status and code, the class the attempt is
	// logged with (self-repair acts on it) and whether the next route is tried.
	status   int
	code     string
	class    string
	failover bool
	// A failure after output: the code of the error event that ends the stream.
	broken string
}

func rowsByID() map[string]*row {
	m := make(map[string]*row, len(rows))
	for i := range rows {
		m[rows[i].id] = &rows[i]
	}
	return m
}

// rows: one per recording in ../shared/captures, by provider and name. Usage follows each
// wire's documented arithmetic: Anthropic's and Bedrock's prompt is input + cache reads +
// cache writes, Gemini's completion is candidates + thoughts; a total the provider left out
// is the sum of the two counts it did report.
var rows = []row{
	// Later fragments repeat "id": "" and type: one call, with the first fragment's id.
	{id: "alibaba.tool-call-stream", calls: []call{{"call_eee11723464a4b9eb8cee71d", "weather", `{"location": "San Francisco"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":295,"completion_tokens":22,"total_tokens":317,"prompt_tokens_details":{"cached_tokens":0}}`},

	{id: "anthropic.cache-read-stream", text: "OK", finish: "length", usage: `{"prompt_tokens":18642,"completion_tokens":1,"total_tokens":18643,"prompt_tokens_details":{"cached_tokens":18639}}`},
	{id: "anthropic.cache-read-write", text: "Python is a beginner-friendly, versatile", finish: "stop", usage: `{"prompt_tokens":1532,"completion_tokens":33,"total_tokens":1565,"prompt_tokens_details":{"cached_tokens":1111}}`},
	{id: "anthropic.cache-write-stream", text: "OK", finish: "length", usage: `{"prompt_tokens":18642,"completion_tokens":1,"total_tokens":18643,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.crew-cache-read-tool-use", calls: []call{{"toolu_01CX1yZuJ5MQaJbXNSrnCiqf", "get_weather", `{"location": "Tokyo"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":1881,"completion_tokens":33,"total_tokens":1914,"prompt_tokens_details":{"cached_tokens":1857}}`},
	{id: "anthropic.high-max-tokens-sse", text: "2", finish: "stop", usage: `{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.invalid-request-400", status: 400, code: "upstream_bad_request", class: "bad_request"},
	// A tool_use block that streams no input: its arguments are {}.
	{id: "anthropic.llm-fixed-version-tool-sse", calls: []call{{"toolu_01UmKD1vMphVCN9vw8PEMk1q", "fixed_version", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":563,"completion_tokens":37,"total_tokens":600,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.llm-opus46-adaptive-thinking-sse", text: "\n\n1. **Captain Scoop**\n2. **Gullet**", finish: "stop", usage: `{"prompt_tokens":34,"completion_tokens":44,"total_tokens":78,"prompt_tokens_details":{"cached_tokens":0}}`},
	// stop_reason refusal and no content block at all.
	{id: "anthropic.llm-refusal-no-content-sse", finish: "content_filter", usage: `{"prompt_tokens":97,"completion_tokens":0,"total_tokens":97,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.llm-schema-sse", text: "{\"name\": \"Biscuit\", \"age\": 4, \"bio\": \"Bi", finish: "stop", usage: `{"prompt_tokens":230,"completion_tokens":94,"total_tokens":324,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.llm-sonnet46-effort-sse", text: "**Pete** and **Scoop**", finish: "stop", usage: `{"prompt_tokens":17,"completion_tokens":12,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.llm-stop-sequence-sse", text: "\ndef pelican():\n    return \"A large wate", finish: "stop", usage: `{"prompt_tokens":16,"completion_tokens":28,"total_tokens":44,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.llm-thinking-after-tool-sse", text: "The version is **0.32a0**.\n\nHere's a jok", finish: "stop", usage: `{"prompt_tokens":707,"completion_tokens":89,"total_tokens":796,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.llm-thinking-sse", text: "1. **Pouch** - references their iconic b", finish: "stop", usage: `{"prompt_tokens":46,"completion_tokens":133,"total_tokens":179,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.llm-thinking-then-tool-sse", calls: []call{{"toolu_01825dXWLSoJwCst1qTsiWdb", "fixed_version", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":598,"completion_tokens":92,"total_tokens":690,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.llm-tool-call-sse", calls: []call{{"toolu_01CzN6riCPqw4pVSuTd9Dwn7", "pelican_name_generator", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":543,"completion_tokens":40,"total_tokens":583,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.llm-tools-after-sse", text: "Here are two great names for your pet pe", finish: "stop", usage: `{"prompt_tokens":678,"completion_tokens":82,"total_tokens":760,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.llm-tools-first-sse", calls: []call{{"toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator", `{}`}, {"toolu_01N8a4jWyf116qKTMqKKmjyt", "pelican_name_generator", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":542,"completion_tokens":62,"total_tokens":604,"prompt_tokens_details":{"cached_tokens":0}}`},
	// message_delta repeats input_tokens with another value (61, not 43): the later count wins.
	{id: "anthropic.message-delta-input-tokens-stream", text: "pong", finish: "stop", usage: `{"prompt_tokens":61,"completion_tokens":2,"total_tokens":63}`},
	// Spliced: the text, then an overloaded_error event; the stream ends with the error, no [DONE].
	{id: "anthropic.overloaded-midstream-stream", text: "Hello! I'm doing well, thank you for ask", broken: "upstream_overloaded"},
	{id: "anthropic.quoted-tool-input-stream", calls: []call{{"toolu_01Cr31vcGoeeRgi3Eo5Ds8qN", "website_update", `{"website_path": "/home/user/pace-landing", "tasks": [{"description": "Today you post every run to Strava, but Strava does not answer the question: \"What should I do next after this run?\". It is a great log, but it is not adaptive.", "type": "feature", "passes": false}]}`}}, finish: "tool_calls", usage: `{"prompt_tokens":912,"completion_tokens":118,"total_tokens":1030,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.redacted-thinking-sse", text: "I notice that you've sent what appears t", finish: "stop", usage: `{"prompt_tokens":92,"completion_tokens":189,"total_tokens":281,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.text-and-tool-use", text: "I apologize, but I don't have access to ", calls: []call{{"toolu_018cqAFwLtULyoaiLSS2bgko", "lookup_refund_policy", `{"order_id": "order-123"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":858,"completion_tokens":103,"total_tokens":961,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.text-stream", text: "Hello! I'm doing well, thank you for ask", finish: "stop", usage: `{"prompt_tokens":12,"completion_tokens":30,"total_tokens":42,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.text", text: "Hello! I'm doing well, thanks for asking", finish: "stop", usage: `{"prompt_tokens":12,"completion_tokens":29,"total_tokens":41,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.thinking-sse", text: "Here are the basic steps for safely cros", finish: "stop", usage: `{"prompt_tokens":43,"completion_tokens":282,"total_tokens":325,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.thinking-stream", text: "925 ÷ 5 = 185", finish: "stop", usage: `{"prompt_tokens":69,"completion_tokens":53,"total_tokens":122,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.three-tool-calls-stream", calls: []call{{"toolu_01LtEf4h1QW7KCKLsYMuhTNB", "searchDocs", `{"query": "alpha"}`}, {"toolu_016tfZE7otAFSBjhc67wu189", "searchDocs", `{"query": "beta"}`}, {"toolu_01XkU35z8BVWqqc9tijDuLrA", "searchDocs", `{"query": "gamma"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":798,"completion_tokens":110,"total_tokens":908,"prompt_tokens_details":{"cached_tokens":0}}`},
	// The call is content block 1, after a text block: it is still call 0.
	{id: "anthropic.tool-no-args-stream", text: "I'll update the issue list for you.", calls: []call{{"toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":565,"completion_tokens":48,"total_tokens":613,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "anthropic.tool-use", calls: []call{{"toolu_01QQd3Sjue14gb3ghacSd33V", "load_capability", `{"id": "refunds"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":657,"completion_tokens":55,"total_tokens":712,"prompt_tokens_details":{"cached_tokens":0}}`},

	// A first chunk with no choices (prompt_filter_results).
	{id: "azure.model-router-stream", text: "Capital of Denmark.", finish: "stop", usage: `{"prompt_tokens":15,"completion_tokens":78,"total_tokens":93,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":64}}`},

	{id: "bedrock.after-tool-stream", text: "The current temperature in Paris, the ca", finish: "stop", usage: `{"prompt_tokens":577,"completion_tokens":18,"total_tokens":595}`},
	{id: "bedrock.converse-cache-read-nova", text: "5", finish: "stop", usage: `{"prompt_tokens":1517,"completion_tokens":5,"total_tokens":1522,"prompt_tokens_details":{"cached_tokens":1504}}`},
	{id: "bedrock.converse-cache-read", text: "21", finish: "stop", usage: `{"prompt_tokens":1324,"completion_tokens":5,"total_tokens":1329,"prompt_tokens_details":{"cached_tokens":1322}}`},
	{id: "bedrock.converse-cache-write", text: "21", finish: "stop", usage: `{"prompt_tokens":1324,"completion_tokens":5,"total_tokens":1329,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "bedrock.converse-guardrail-trace", text: "The capital of France is Paris. Paris is", finish: "stop", usage: `{"prompt_tokens":13,"completion_tokens":69,"total_tokens":82}`},
	{id: "bedrock.converse-max-tokens", text: "The capital of France is", finish: "length", usage: `{"prompt_tokens":13,"completion_tokens":5,"total_tokens":18}`},
	{id: "bedrock.converse-text", text: "Hello! How can I assist you today? Wheth", finish: "stop", usage: `{"prompt_tokens":7,"completion_tokens":30,"total_tokens":37}`},
	// A reasoningContent block before the call; the id is not of the tooluse_ form.
	{id: "bedrock.converse-tool-use", calls: []call{{"functions.get_temperature:0", "get_temperature", `{"city": "London"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":92,"completion_tokens":75,"total_tokens":167}`},
	{id: "bedrock.crew-converse-after-parallel-tools", text: "The three parallel searches were execute", finish: "stop", usage: `{"prompt_tokens":1197,"completion_tokens":173,"total_tokens":1370,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "bedrock.crew-converse-emoji-text", text: "Hello! 👋 How are you doing? Is there som", finish: "stop", usage: `{"prompt_tokens":9,"completion_tokens":24,"total_tokens":33,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "bedrock.crew-converse-max-tokens", text: "# The Last Ember of Varathorn", finish: "length", usage: `{"prompt_tokens":16,"completion_tokens":10,"total_tokens":26,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "bedrock.crew-converse-structured-output-tool", calls: []call{{"tooluse_5OzuYfgauW1f24uhsvXWDo", "structured_output", "{\"operation\": \"add_numbers\", \"result\": 42, \"explanation\": \"The result of **15 + 27 = 42**! 🧮\\n\\nUsing the `add_numbers` tool, I computed the sum of 15 and 27, and the result is **42**.\"}"}}, finish: "tool_calls", usage: `{"prompt_tokens":1150,"completion_tokens":116,"total_tokens":1266,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "bedrock.crew-converse-text-and-tool", text: "I'll calculate 15 + 27 right away using ", calls: []call{{"tooluse_CVmuFOrTItCY07vxuA84mU", "add_numbers", `{"a": 15, "b": 27}`}}, finish: "tool_calls", usage: `{"prompt_tokens":645,"completion_tokens":92,"total_tokens":737,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "bedrock.crew-converse-three-parallel-tools", text: "I'll execute all 3 parallel searches sim", calls: []call{{"tooluse_kooGjILXmVRg8edl3YuEf4", "parallel_local_search_one", `{"query": "latest OpenAI model release notes"}`}, {"tooluse_qa71o2cLA65qg5TyweI63c", "parallel_local_search_two", `{"query": "latest Anthropic model release notes"}`}, {"tooluse_gPf5hAC0sogbIJEjDBTIvO", "parallel_local_search_three", `{"query": "latest Gemini model release notes"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":914,"completion_tokens":169,"total_tokens":1083,"prompt_tokens_details":{"cached_tokens":0}}`},
	{id: "bedrock.empty-text-delta-stream", text: "Hello! How can I help you today?", finish: "stop", usage: `{"prompt_tokens":70,"completion_tokens":43,"total_tokens":113}`},
	{id: "bedrock.max-tokens-chunks", text: "Hello! How can I assist you today? If", finish: "length", usage: `{"prompt_tokens":2,"completion_tokens":10,"total_tokens":12}`},
	{id: "bedrock.nova-text-stream", text: "The capital of France is Paris. Paris is", finish: "stop", usage: `{"prompt_tokens":13,"completion_tokens":82,"total_tokens":95}`},
	{id: "bedrock.reasoning-chunks", text: "There are **3** r's in \"strawberry\":\n\n1.", finish: "stop", usage: `{"prompt_tokens":51,"completion_tokens":94,"total_tokens":145}`},
	{id: "bedrock.reasoning-stream", text: "Hello! It's nice to meet you. How can I ", finish: "stop", usage: `{"prompt_tokens":36,"completion_tokens":73,"total_tokens":109}`},
	{id: "bedrock.redacted-reasoning-stream", text: "I notice you've sent what appears to be ", finish: "stop", usage: `{"prompt_tokens":92,"completion_tokens":253,"total_tokens":345}`},
	// Nova's <thinking> arrives as plain text; the call is content block 1.
	{id: "bedrock.tool-use-stream", text: "<thinking> To find the temperature of th", calls: []call{{"tooluse_lAG_zP8QRHmSYOwZzzaCqA", "get_temperature", `{"city":"Paris"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":471,"completion_tokens":91,"total_tokens":562}`},
	// 400 ValidationException "The provided model identifier is invalid.": the route's model does
	// not exist, so not_found (failover, and self-repair disables the route), not the client's 400.
	{id: "bedrock.unknown-model-400", status: 502, code: "upstream_model_not_found", class: "not_found", failover: true},

	// Its only call has index 1 (the Anthropic content block index): openai-go would assemble
	// two calls, the first empty. The client gets one call, at index 0.
	{id: "claude-proxy.tool-index-1-stream", text: "Reading it.", calls: []call{{"toolu_sanitized", "read_file", `{"path": "a.txt"}`}}, finish: "tool_calls"},

	// reasoning_content deltas are not returned.
	{id: "deepseek.reasoning-stream", text: "The word \"strawberry\" contains three \"r\"", finish: "stop", usage: `{"prompt_tokens":18,"completion_tokens":219,"total_tokens":237,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":205}}`},
	{id: "deepseek.tool-call-stream", calls: []call{{"call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", `{"location": "San Francisco"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":339,"completion_tokens":83,"total_tokens":422,"prompt_tokens_details":{"cached_tokens":320},"completion_tokens_details":{"reasoning_tokens":39}}`},
	{id: "deepseek.tool-call", calls: []call{{"call_00_9V0vrf86Pc9aelHCJMZqnJBo", "weather", `{"location": "San Francisco"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":339,"completion_tokens":92,"total_tokens":431,"prompt_tokens_details":{"cached_tokens":320},"completion_tokens_details":{"reasoning_tokens":48}}`},

	{id: "gemini-openai.after-tool", text: "The current time is Noon.", finish: "stop", usage: `{"prompt_tokens":66,"completion_tokens":6,"total_tokens":100}`},
	// "id": "": the gateway makes an id up, or the client could not send the conversation back.
	// total_tokens counts the thoughts, as reported.
	{id: "gemini-openai.tool-call-without-id", calls: []call{{"", "get_current_time", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":35,"completion_tokens":12,"total_tokens":109}`},

	{id: "gemini.empty-text-thought-signature-stream", text: "4", finish: "stop", usage: `{"prompt_tokens":15,"completion_tokens":53,"total_tokens":68,"completion_tokens_details":{"reasoning_tokens":52}}`},
	{id: "gemini.flash-stream-sse", text: "The capital of France is Paris.\n", finish: "stop", usage: `{"prompt_tokens":13,"completion_tokens":8,"total_tokens":21}`},
	{id: "gemini.llm-after-tool-stream", text: "How about Charles and Sammy?", finish: "stop", usage: `{"prompt_tokens":137,"completion_tokens":6,"total_tokens":143}`},
	{id: "gemini.llm-call-empty-args-stream", calls: []call{{"", "pelican_name_generator", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":105,"completion_tokens":13,"total_tokens":118}`},
	{id: "gemini.llm-g3-thought-signature-call-stream", calls: []call{{"", "multiply", `{"y": 3, "x": 5}`}}, finish: "tool_calls", usage: `{"prompt_tokens":60,"completion_tokens":48,"total_tokens":108,"completion_tokens_details":{"reasoning_tokens":32}}`},
	{id: "gemini.llm-json-schema-stream", text: "{\"dogs\":[{\"name\":\"Shadow\",\"age\":4,\"bio\":", finish: "stop", usage: `{"prompt_tokens":6,"completion_tokens":635,"total_tokens":641,"completion_tokens_details":{"reasoning_tokens":570}}`},
	// The Developer API's functionCall carries an id, which Vertex AI's v1 proto has no field for.
	{id: "gemini.llm-nested-args-call-stream", calls: []call{{"", "add_person", `{"age": 30, "name": "Alice", "address": {"street": "123 Main St", "city": "San Francisco", "zipcode": "94102"}}`}}, finish: "tool_calls", usage: `{"prompt_tokens":201,"completion_tokens":234,"total_tokens":435,"completion_tokens_details":{"reasoning_tokens":183}}`},
	{id: "gemini.llm-text-stream", text: "Hello! How can I help you today?", finish: "stop", usage: `{"prompt_tokens":2,"completion_tokens":188,"total_tokens":190,"completion_tokens_details":{"reasoning_tokens":179}}`},
	{id: "gemini.llm-thought-then-call-stream", calls: []call{{"", "pelican_name_generator", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":32,"completion_tokens":54,"total_tokens":86,"completion_tokens_details":{"reasoning_tokens":42}}`},
	{id: "gemini.llm-thoughts-text-stream", text: "Scoop", finish: "stop", usage: `{"prompt_tokens":11,"completion_tokens":293,"total_tokens":304,"completion_tokens_details":{"reasoning_tokens":291}}`},
	{id: "gemini.max-tokens-thinking-empty", finish: "length", usage: `{"prompt_tokens":15,"completion_tokens":2,"total_tokens":17,"completion_tokens_details":{"reasoning_tokens":2}}`},
	{id: "gemini.max-tokens", text: "The capital of France is", finish: "length", usage: `{"prompt_tokens":15,"completion_tokens":5,"total_tokens":20}`},
	// A prompt blocked before any candidate (Model Armor), with a usage of no counts.
	{id: "gemini.model-armor-prompt-blocked", finish: "content_filter"},
	{id: "gemini.prompt-blocked-stream", finish: "content_filter", usage: `{"prompt_tokens":9,"completion_tokens":0,"total_tokens":9}`},
	{id: "gemini.reasoning-stream", text: "There are **3** \"r\"s in strawberry.\n\nHer", finish: "stop", usage: `{"prompt_tokens":9,"completion_tokens":285,"total_tokens":294,"completion_tokens_details":{"reasoning_tokens":256}}`},
	{id: "gemini.safety-no-content", finish: "content_filter", usage: `{"prompt_tokens":14,"completion_tokens":0,"total_tokens":14}`},
	{id: "gemini.text-stream", text: "There are **3** \"r\"s in strawberry.\n\nst*", finish: "stop", usage: `{"prompt_tokens":9,"completion_tokens":208,"total_tokens":217,"completion_tokens_details":{"reasoning_tokens":185}}`},
	{id: "gemini.text", text: "There are **3** r's in strawberry.\n\nHere", finish: "stop", usage: `{"prompt_tokens":9,"completion_tokens":272,"total_tokens":281,"completion_tokens_details":{"reasoning_tokens":244}}`},
	{id: "gemini.thinking-sse", text: "This is a great question! Safely crossin", finish: "stop", usage: `{"prompt_tokens":34,"completion_tokens":1256,"total_tokens":1290,"completion_tokens_details":{"reasoning_tokens":787}}`},
	{id: "gemini.thought-signature-tool-sse", calls: []call{{"", "get_country", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":29,"completion_tokens":212,"total_tokens":241,"completion_tokens_details":{"reasoning_tokens":202}}`},
	{id: "gemini.tool-call-gemini3-stream", calls: []call{{"", "weather", `{"location": "San Francisco"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":29,"completion_tokens":819,"total_tokens":848,"completion_tokens_details":{"reasoning_tokens":804}}`},
	{id: "gemini.tool-call-stream", calls: []call{{"", "weather", `{"location": "San Francisco"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":29,"completion_tokens":60,"total_tokens":89,"completion_tokens_details":{"reasoning_tokens":45}}`},
	{id: "gemini.tool-call", calls: []call{{"", "weather", `{"location": "San Francisco"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":29,"completion_tokens":908,"total_tokens":937,"completion_tokens_details":{"reasoning_tokens":893}}`},
	{id: "gemini.usage-mid-stream-sse", text: "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n1", finish: "stop", usage: `{"prompt_tokens":18,"completion_tokens":115,"total_tokens":133,"completion_tokens_details":{"reasoning_tokens":35}}`},

	{id: "groq.tool-call-after-retry-sse", calls: []call{{"fc_bfb39741-3748-4def-9886-a93fc9c64a90", "get_something_by_name", `{"name":"example"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":304,"completion_tokens":49,"total_tokens":353,"completion_tokens_details":{"reasoning_tokens":23}}`},
	{id: "groq.tool-call-stream", calls: []call{{"tk85n1k4m", "weather", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":210,"completion_tokens":15,"total_tokens":225}`},
	// Reasoning only (nothing for the client), then an error event: a failure before output.
	{id: "groq.tool-use-failed-midstream", status: 502, code: "upstream_stream_broken", class: "stream_broken", failover: true},

	{id: "mistral.text", text: "**Holiday Name: \"World Kindness Day of S", finish: "stop", usage: `{"prompt_tokens":13,"completion_tokens":434,"total_tokens":447}`},
	// The call has no index; usage rides on the chunk with the finish reason.
	{id: "mistral.tool-call-stream", calls: []call{{"gSIMJiOkT", "weather", `{"location": "San Francisco"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":124,"completion_tokens":22,"total_tokens":146}`},

	{id: "ollama.cloud-prompted-output", text: "{\"name\":\"Loki\",\"animal\":\"cat\",\"age\":3}", finish: "stop", usage: `{"prompt_tokens":172,"completion_tokens":88,"total_tokens":260}`},
	{id: "ollama.cloud-reasoning-answer", text: "Paris.", finish: "stop", usage: `{"prompt_tokens":134,"completion_tokens":122,"total_tokens":256}`},
	{id: "ollama.cloud-tool-call", calls: []call{{"call_o2vnpxrw", "final_result", `{"city":"Paris","country":"France"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":206,"completion_tokens":194,"total_tokens":400}`},
	{id: "ollama.qwen-text-stream", text: "My name is Neo Vim.", finish: "stop"},
	// Each call whole in one chunk, at index 0 then 1; no usage.
	{id: "ollama.qwen-two-tool-calls-stream", calls: []call{{"call_809l7n8f", "run_command", `{"command":"ls -la"}`}, {"call_oqp1e2a1", "run_command", `{"command":"ls -la","cwd":"/path/to/directory"}`}}, finish: "tool_calls"},

	{id: "openai.after-tool-stream", text: "The capital of the UK is London.", finish: "stop", usage: `{"prompt_tokens":78,"completion_tokens":9,"total_tokens":87,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	{id: "openai.chat-bad-request", status: 400, code: "upstream_bad_request", class: "bad_request"},
	{id: "openai.chat-detailed-usage", finish: "length", usage: `{"prompt_tokens":12,"completion_tokens":100,"total_tokens":112,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":100}}`},
	{id: "openai.chat-parallel-tools", calls: []call{{"call_Xc4Aiih37EUJvqjoZlu4Vdoi", "get_current_weather", `{"location":"San Francisco, CA"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":162,"completion_tokens":219,"total_tokens":381,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":192}}`},
	{id: "openai.chat-streaming-detailed-usage", finish: "length", usage: `{"prompt_tokens":12,"completion_tokens":100,"total_tokens":112,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":100}}`},
	{id: "openai.chat-streaming", text: "Hi there! How can I help today? I can an", finish: "stop"},
	{id: "openai.chat-tools", calls: []call{{"call_8fxy20OEu9ulvvaa5b5CzVA4", "get_current_weather", `{"location":"Boston, MA","unit":"fahrenheit"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":162,"completion_tokens":287,"total_tokens":449,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":256}}`},
	{id: "openai.chat-unknown-model", status: 502, code: "upstream_model_not_found", class: "not_found", failover: true},
	{id: "openai.llm-after-tool-stream", text: "The result of \\( 1231 \\times 2331 \\) is ", finish: "stop", usage: `{"prompt_tokens":87,"completion_tokens":26,"total_tokens":113,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	{id: "openai.llm-final-json", text: "YES", finish: "stop", usage: `{"prompt_tokens":146,"completion_tokens":3,"total_tokens":149,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	{id: "openai.llm-tool-call-json", calls: []call{{"call_TTY8UFNo7rNCaOBUNtlRSvMG", "lookup_population", `{"country":"Crumpet"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":92,"completion_tokens":17,"total_tokens":109,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	{id: "openai.llm-tool-call-stream", calls: []call{{"call_1EYWDzueHEp8OsB8jJSEp7WB", "multiply", `{"a":1231,"b":2331}`}}, finish: "tool_calls", usage: `{"prompt_tokens":54,"completion_tokens":20,"total_tokens":74,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	{id: "openai.openai-text-stream", text: "**Holiday Name:** Harmony Day\n\n**Date:**", finish: "stop", usage: `{"prompt_tokens":16,"completion_tokens":300,"total_tokens":316,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	{id: "openai.openai-text", text: "**Holiday Name:** Galaxy Day  \n\n**Date:*", finish: "stop", usage: `{"prompt_tokens":16,"completion_tokens":363,"total_tokens":379,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	{id: "openai.tool-call-stream", calls: []call{{"call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", `{"country":"UK"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":53,"completion_tokens":15,"total_tokens":68,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},

	{id: "openrouter.llm-kimi-after-tool-stream", text: "The current version of *llm* is **0.fixe", finish: "stop", usage: `{"prompt_tokens":107,"completion_tokens":15,"total_tokens":122,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	{id: "openrouter.llm-kimi-fireworks-after-tool-stream", text: "The installed version of LLM on this sys", finish: "stop", usage: `{"prompt_tokens":105,"completion_tokens":16,"total_tokens":121,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	// id, type and function.name repeated in every fragment: openai-go would build the name
	// llm_versionllm_version. The stream ends at [DONE] without a finish_reason.
	{id: "openrouter.llm-kimi-novita-repeated-id-stream", calls: []call{{"0", "llm_version", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":57,"completion_tokens":17,"total_tokens":74,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	// The id is "llm_version:0", not of the call_ form.
	{id: "openrouter.llm-kimi-novita-split-args-stream", calls: []call{{"llm_version:0", "llm_version", `{}`}}, finish: "tool_calls", usage: `{"prompt_tokens":56,"completion_tokens":12,"total_tokens":68,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	// The error's code is the number 429.
	{id: "openrouter.rate-limited-429", status: 429, code: "rate_limit_exceeded", class: "rate_limited", failover: true},
	// finish_reason length, then an in-band error (code 400 "Token limit reached") before [DONE].
	{id: "openrouter.stream-error", finish: "length", broken: "upstream_stream_broken"},
	// ": OPENROUTER PROCESSING" comments, and encrypted reasoning_details beside the text.
	{id: "openrouter.stream-with-reasoning", text: "I’m ChatGPT, a large-language-model assi", finish: "stop", usage: `{"prompt_tokens":9,"completion_tokens":104,"total_tokens":113,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
	{id: "openrouter.streaming-reasoning", text: "2 + 2 = 4", finish: "stop", usage: `{"prompt_tokens":43,"completion_tokens":36,"total_tokens":79,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":13}}`},
	{id: "openrouter.tool-calling", calls: []call{{"3sniiMddS", "divide", `{"numerator": 123, "denominator": 456, "on_inf": "infinity"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":134,"completion_tokens":43,"total_tokens":177}`},
	{id: "openrouter.usage", text: "Brief summary\n- Venus is the second plan", finish: "stop", usage: `{"prompt_tokens":17,"completion_tokens":1515,"total_tokens":1532,"completion_tokens_details":{"reasoning_tokens":704}}`},

	// The first fragment has the name and no arguments.
	{id: "vllm.qwen-tool-call-stream", calls: []call{{"chatcmpl-tool-ca99dda515524c6abe47d1ea22813507", "run_command", `{"command": "ls"}`}}, finish: "tool_calls"},

	// total_tokens counts the reasoning, which completion_tokens leaves out: as reported.
	{id: "xai.tool-call-stream", calls: []call{{"call_55117580", "weather", `{"location":"San Francisco"}`}}, finish: "tool_calls", usage: `{"prompt_tokens":291,"completion_tokens":26,"total_tokens":513,"prompt_tokens_details":{"cached_tokens":290},"completion_tokens_details":{"reasoning_tokens":196}}`},
}
