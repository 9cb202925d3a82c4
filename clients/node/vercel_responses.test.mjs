// The Vercel AI SDK's default OpenAI provider, createOpenAI({baseURL, apiKey})(model), which
// speaks the Responses API (POST /v1/responses), against the gateway the Go test serves
// (sdk_test.go): generateText, streamText and a tool round trip over stopWhen, on each backend
// (the mock; the openai kind by native pass-through; Anthropic translated) under both request
// profiles, and generateObject (text.format) and a second turn. The SDK sends nothing outside
// the strict profile, so both must work end to end.
// Run by `go test ./clients/` with FNGATE_* set; not meant to run alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { createOpenAI } from "@ai-sdk/openai";
import { generateObject, generateText, streamText, tool, stepCountIs } from "ai";

globalThis.AI_SDK_LOG_WARNINGS = false; // generateObject is deprecated in AI SDK 7 and says so on every call

const base = process.env.FNGATE_BASE_URL; // .../v1
const keys = { strict: process.env.FNGATE_STRICT_KEY, extended: process.env.FNGATE_EXTENDED_KEY };
const backends = JSON.parse(process.env.FNGATE_BACKENDS); // [{name, chat, tools, said, usage, native}]

// A system text too, so the mock's word counts of input and output differ.
const system = "Answer briefly.";
const prompt = "Hello there gateway";
const words = (s) => s.split(/\s+/).filter(Boolean).length;

// checkUsage: the SDK's usage is the backend's as the gateway reported it (input, output,
// their total), and nothing made up: no reasoning or cache counts the backend did not report.
function checkUsage(b, usage, text) {
  const want = b.usage ?? { input: words(system) + words(prompt), output: words(text) };
  assert.equal(usage.inputTokens, want.input, "input tokens");
  assert.equal(usage.outputTokens, want.output, "output tokens");
  assert.equal(usage.totalTokens, want.input + want.output, "total tokens");
  assert.ok(!usage.outputTokenDetails?.reasoningTokens, `reasoning tokens ${usage.outputTokenDetails?.reasoningTokens}`);
}

for (const b of backends) {
  for (const profile of ["strict", "extended"]) {
    // The default provider: openai(model) is openai.responses(model).
    const openai = createOpenAI({ baseURL: base, apiKey: keys[profile] });
    const name = `${b.name} ${profile}`;
    const wantText = b.said + prompt;

    test(`${name}: generateText over /v1/responses`, async () => {
      const r = await generateText({ model: openai(b.chat), system, prompt, maxRetries: 0, maxOutputTokens: 200 });
      assert.equal(r.text, wantText);
      assert.equal(r.finishReason, "stop");
      assert.match(r.providerMetadata?.openai?.responseId ?? "", /^resp_/);
      assert.equal(r.response.modelId, b.chat);
      checkUsage(b, r.usage, r.text);
    });

    test(`${name}: streamText over /v1/responses`, async () => {
      let failure;
      const s = streamText({ model: openai(b.chat), system, prompt, maxRetries: 0, maxOutputTokens: 200, onError: ({ error }) => { failure = error; } });
      const deltas = [];
      for await (const d of s.textStream) deltas.push(d);
      if (failure) throw failure;
      assert.ok(deltas.length >= 1, "no text delta");
      assert.equal(deltas.join(""), wantText);
      assert.equal(await s.text, wantText);
      assert.equal(await s.finishReason, "stop");
      checkUsage(b, await s.usage, wantText);
    });

    test(`${name}: a tool round trip over /v1/responses`, async () => {
      const calls = [];
      const r = await generateText({
        model: openai(b.tools), prompt: "Weather in Paris?", maxRetries: 0, maxOutputTokens: 200,
        tools: {
          weather: tool({
            description: "Weather now", inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => { calls.push(city); return `sunny in ${city}`; },
          }),
        },
        stopWhen: stepCountIs(3),
      });
      assert.equal(r.steps.length, 2, `${r.steps.length} steps`);
      assert.equal(r.steps[0].finishReason, "tool-calls");
      assert.equal(calls.length, 1, "the tool ran once");
      const [call] = r.steps[0].toolCalls;
      assert.equal(call.toolName, "weather");
      assert.ok(call.toolCallId, "the call has an id");
      assert.match(r.text, /^The tool returned: sunny in /);
      assert.equal(r.finishReason, "stop");
      for (const step of r.steps) {
        assert.ok(step.usage.inputTokens > 0 && step.usage.outputTokens > 0, `step usage ${JSON.stringify(step.usage)}`);
      }
      assert.equal(r.totalUsage.outputTokens, r.steps[0].usage.outputTokens + r.steps[1].usage.outputTokens);
    });

    test(`${name}: generateObject over /v1/responses (text.format)`, async () => {
      const Trip = z.object({ city: z.string(), days: z.number().int(), tags: z.array(z.string()) });
      const r = await generateObject({ model: openai(b.chat), schema: Trip, prompt: "Plan a trip to Paris", maxRetries: 0, maxOutputTokens: 200 });
      Trip.parse(r.object);
      assert.equal(r.finishReason, "stop");
    });

    // A second turn sends the first answer back. The SDK sends no store (OpenAI's default
    // keeps responses), so it refers to the earlier answer by item_reference, which the
    // gateway resolves only from a response store, and this gateway has none (with one it
    // does: store/vercel_tool_turns.test.mjs); with store: false it sends the answer itself,
    // which every route takes.
    const secondTurn = async (providerOptions) => {
      const first = await generateText({ model: openai(b.chat), prompt, maxRetries: 0, providerOptions });
      const messages = [{ role: "user", content: prompt }, ...first.response.messages, { role: "user", content: "And again" }];
      return generateText({ model: openai(b.chat), messages, maxRetries: 0, providerOptions });
    };

    test(`${name}: a second turn with store: false`, async () => {
      const r = await secondTurn({ openai: { store: false } });
      assert.equal(r.text, b.said + "And again");
    });

    test(`${name}: a second turn with the SDK's default store, on a gateway without a response store`, { skip: b.native && "the openai kind passes item_reference on to OpenAI" }, async () => {
      await assert.rejects(secondTurn(undefined), (err) => {
        assert.equal(err.statusCode, 400);
        const e = JSON.parse(err.responseBody).error;
        assert.equal(e.param, "input[1]");
        assert.match(e.message, /item_reference/);
        assert.match(e.message, /stores no responses/);
        return true;
      });
    });
  }
}
