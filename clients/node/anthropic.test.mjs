// The official Anthropic SDK for TypeScript (@anthropic-ai/sdk) against the Messages door of
// the gateway the Go test serves (sdk_test.go), on each backend (the mock; the openai kind
// translated; Anthropic near pass-through), with the gateway key as x-api-key (apiKey) and as
// Authorization: Bearer (authToken): messages.create, messages.stream (its events, the counts
// its message_start carries and its final message), messages.countTokens, models.list, and
// typed errors in Anthropic's shape.
// The request profile does not apply to this door (it is the Anthropic wire as it is), so
// the strict key serves. Run by `go test ./clients/` with FNGATE_* set; not meant to run alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";

const url = process.env.FNGATE_URL; // the SDK appends /v1 itself
const key = process.env.FNGATE_STRICT_KEY;
const backends = JSON.parse(process.env.FNGATE_BACKENDS); // [{name, chat, tools, said, usage, count}]

const system = "Answer briefly.";
const prompt = "Hello there gateway";
const words = (s) => s.split(/\s+/).filter(Boolean).length;
const params = (model) => ({ model, max_tokens: 200, system, messages: [{ role: "user", content: prompt }] });

const auths = [
  { name: "x-api-key", opts: { apiKey: key, authToken: null } },
  { name: "bearer", opts: { apiKey: null, authToken: key } },
];

// checkMessage: the answer is the backend's text under the gateway's model name, with the
// backend's usage as reported.
function checkMessage(b, m) {
  assert.equal(m.type, "message");
  assert.equal(m.role, "assistant");
  assert.equal(m.model, b.chat);
  assert.match(m.id, /^msg_/);
  assert.deepEqual(m.content.map((c) => c.type), ["text"]);
  assert.equal(m.content[0].text, b.said + prompt);
  assert.equal(m.stop_reason, "end_turn");
  const want = b.usage ?? { input: words(system) + words(prompt), output: words(prompt) };
  assert.equal(m.usage.input_tokens, want.input, "input tokens");
  assert.equal(m.usage.output_tokens, want.output, "output tokens");
}

for (const auth of auths) {
  const client = new Anthropic({ baseURL: url, maxRetries: 0, ...auth.opts });

  for (const b of backends) {
    const name = `${b.name} ${auth.name}`;

    test(`${name}: messages.create`, async () => {
      const { data, response } = await client.messages.create(params(b.chat)).withResponse();
      checkMessage(b, data);
      assert.ok(response.headers.get("request-id"), "no request-id header");
    });

    test(`${name}: messages.stream`, async () => {
      const stream = client.messages.stream(params(b.chat));
      const types = [];
      let text = "";
      let start;
      stream.on("text", (delta) => { text += delta; });
      // The helper's snapshot is message_start's message, which message_delta updates in
      // place: copy its usage as it arrives.
      stream.on("streamEvent", (ev) => { if (ev.type === "message_start") start = structuredClone(ev.message.usage); });
      for await (const ev of stream) types.push(ev.type);
      const final = await stream.finalMessage();
      checkMessage(b, final);
      assert.equal(text, b.said + prompt);
      // message_start has integer counts on every route: the backend's where it reports the
      // prompt at the start (Anthropic; the mock, with its first word), else the same
      // estimate count_tokens answers, which message_delta's exact counts then replace in
      // the final message (checkMessage: the backend's usage, which differs from it).
      assert.ok(Number.isInteger(start?.input_tokens) && Number.isInteger(start?.output_tokens), `message_start usage ${JSON.stringify(start)}`);
      if (b.count === "estimate") {
        const { model, system: sys, messages } = params(b.chat);
        const counted = await client.messages.countTokens({ model, system: sys, messages });
        assert.equal(start.input_tokens, counted.input_tokens, "message_start's input_tokens is not count_tokens' estimate");
        assert.notEqual(start.input_tokens, final.usage.input_tokens, "the backend's count equals the estimate: the test cannot tell them apart");
      } else {
        assert.equal(start.input_tokens, final.usage.input_tokens, "message_start's input_tokens is not the backend's");
      }
      // The Messages stream in order: message_start, then each content block opened, its
      // deltas and closed, then message_delta and message_stop; pings may come between.
      const seen = types.filter((t) => t !== "ping");
      assert.equal(seen[0], "message_start");
      assert.equal(seen[1], "content_block_start");
      assert.ok(seen.filter((t) => t === "content_block_delta").length >= 1, `no delta in ${seen}`);
      assert.deepEqual(seen.slice(-3), ["content_block_stop", "message_delta", "message_stop"]);
      assert.deepEqual([...new Set(seen)], ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    });

    test(`${name}: messages.countTokens`, async () => {
      const { model, system: sys, messages } = params(b.chat);
      const { data, response } = await client.messages.countTokens({ model, system: sys, messages }).withResponse();
      assert.ok(Number.isInteger(data.input_tokens) && data.input_tokens > 0, `input_tokens ${data.input_tokens}`);
      // Exact where the backend counts (the mock counts words), else the gateway's estimate,
      // and the header says which.
      assert.equal(response.headers.get("x-fngate-token-count"), b.count);
      if (!b.usage) assert.equal(data.input_tokens, words(system) + words(prompt));
    });
  }

  test(`${auth.name}: models.list in Anthropic's shape`, async () => {
    const ids = [];
    for await (const m of client.models.list()) {
      assert.equal(m.type, "model");
      assert.ok(m.display_name, `${m.id} has no display_name`);
      assert.ok(!Number.isNaN(Date.parse(m.created_at)), `${m.id} created_at ${m.created_at}`);
      ids.push(m.id);
    }
    for (const b of backends) assert.ok(ids.includes(b.chat), `${b.chat} not in ${ids}`);
    const page = await client.models.list({ limit: 1 });
    assert.equal(page.data.length, 1);
    assert.equal(page.has_more, true);
    assert.equal(page.first_id, page.data[0].id);
  });

  // Typed errors: the SDK picks its error class by status, and reads Anthropic's body
  // {"type":"error","error":{"type","message"}} and the request-id header.
  const errors = [
    { name: "an unknown model", cls: Anthropic.NotFoundError, status: 404, type: "not_found_error",
      call: (c) => c.messages.create(params("no-such-model")) },
    { name: "a wrong key", cls: Anthropic.AuthenticationError, status: 401, type: "authentication_error",
      call: () => new Anthropic({ baseURL: url, maxRetries: 0, apiKey: "sk-gw-wrong-0123456789", authToken: null }).messages.create(params(backends[0].chat)) },
    { name: "a missing max_tokens", cls: Anthropic.BadRequestError, status: 400, type: "invalid_request_error",
      call: (c) => c.messages.create({ model: backends[0].chat, messages: [{ role: "user", content: prompt }] }) },
    { name: "an unknown model counted", cls: Anthropic.NotFoundError, status: 404, type: "not_found_error",
      call: (c) => c.messages.countTokens({ model: "no-such-model", messages: [{ role: "user", content: prompt }] }) },
  ];
  for (const e of errors) {
    test(`${auth.name}: ${e.name} raises ${e.cls.name}`, async () => {
      await assert.rejects(e.call(client), (err) => {
        assert.ok(err instanceof e.cls, `${err?.constructor?.name}: ${err?.message}`);
        assert.equal(err.status, e.status);
        assert.equal(err.error?.type, "error");
        assert.equal(err.error?.error?.type, e.type);
        assert.ok(err.error?.error?.message, "no message");
        assert.equal(err.type, e.type);
        assert.ok(err.requestID, "no request-id");
        return true;
      });
    });
  }
}
