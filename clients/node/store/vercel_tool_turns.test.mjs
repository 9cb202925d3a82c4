// The Vercel AI SDK's default provider (createOpenAI({baseURL})(model): the Responses API)
// over two turns with a tool, against a gateway with a response store (vercel_store_test.go
// serves it): turn 1 the model says a sentence and calls the tool, turn 2 sends the tool's
// result with the earlier answer as the SDK sends it when it has not asked for store: false,
// an item_reference to the message the gateway made, which the gateway resolves from its
// store. On each backend FNGATE_STORE_BACKENDS lists (an Anthropic route, a Bedrock route),
// with generateText and streamText. The SDK's own requests are recorded through its fetch
// option, so the test sees the item_reference it sent.
// Run by `go test ./clients/ -run TestVercelToolTurnsWithAStore`; not meant to run alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText, tool, stepCountIs } from "ai";

const base = process.env.FNGATE_BASE_URL; // .../v1
const key = process.env.FNGATE_KEY;
const backends = JSON.parse(process.env.FNGATE_STORE_BACKENDS); // [{name, generate, stream, said}]

// recording is a provider whose requests' bodies are kept, in order.
function recording() {
  const bodies = [];
  const fetchAndKeep = async (url, init) => {
    if (init?.body) bodies.push(JSON.parse(init.body));
    return fetch(url, init);
  };
  return { openai: createOpenAI({ baseURL: base, apiKey: key, fetch: fetchAndKeep }), bodies };
}

const weather = (calls) => tool({
  description: "Weather now", inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => { calls.push(city); return `sunny in ${city}`; },
});

// checkTurns: turn 1 called the tool once after its sentence; turn 2 sent an item_reference
// to that sentence's message, the call and its output, and got the answer after the tool.
function checkTurns(b, steps, text, calls, bodies) {
  assert.equal(steps.length, 2, `${steps.length} steps`);
  assert.equal(steps[0].finishReason, "tool-calls");
  assert.equal(steps[0].text, b.said, "turn 1's sentence");
  assert.deepEqual(calls, ["Paris"], "the tool ran once");
  assert.match(text, /^(The tool returned: )?sunny in Paris/);
  assert.equal(bodies.length, 2, `${bodies.length} requests`);
  const second = bodies[1];
  assert.notEqual(second.store, false, "the SDK asked for no store: false");
  const refs = second.input.filter((it) => it.type === "item_reference");
  assert.equal(refs.length, 1, `item_references in turn 2: ${JSON.stringify(second.input)}`);
  assert.match(refs[0].id, /^msg_/);
  assert.ok(second.input.some((it) => it.type === "function_call_output"), "turn 2 carries the tool's output");
}

for (const b of backends) {
  test(`${b.name}: two turns with a tool over generateText, the second by item_reference`, async () => {
    const { openai, bodies } = recording();
    const calls = [];
    const r = await generateText({
      model: openai(b.generate), prompt: "Weather in Paris?", maxRetries: 0, maxOutputTokens: 200,
      tools: { weather: weather(calls) }, stopWhen: stepCountIs(3),
    });
    checkTurns(b, r.steps, r.text, calls, bodies);
    assert.equal(r.finishReason, "stop");
    assert.match(r.providerMetadata?.openai?.responseId ?? "", /^resp_/);
  });

  test(`${b.name}: two turns with a tool over streamText, the second by item_reference`, async () => {
    const { openai, bodies } = recording();
    const calls = [];
    let failure;
    const s = streamText({
      model: openai(b.stream), prompt: "Weather in Paris?", maxRetries: 0, maxOutputTokens: 200,
      tools: { weather: weather(calls) }, stopWhen: stepCountIs(3), onError: ({ error }) => { failure = error; },
    });
    let text = "";
    for await (const d of s.textStream) text += d;
    if (failure) throw failure;
    const steps = await s.steps;
    checkTurns(b, steps, steps[1].text, calls, bodies);
    assert.equal(await s.finishReason, "stop");
    assert.equal(text, steps[0].text + steps[1].text);
  });
}
