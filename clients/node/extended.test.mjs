// The SDKs mainstream apps use, against the gateway the Go test serves (sdk_test.go), under
// both request profiles and on each backend. Under the extended profile every client must
// work end to end; under strict each either works or gets a 400 that names the field it
// refused. Run by `go test ./clients/` with FNGATE_* set; not meant to run alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";
import { createOpenAI } from "@ai-sdk/openai";
import { generateObject, generateText, tool as aiTool, stepCountIs } from "ai";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent, tool as lcTool } from "langchain";
import { OpenAI as LlamaOpenAI } from "@llamaindex/openai";

globalThis.AI_SDK_LOG_WARNINGS = false; // generateObject is deprecated in AI SDK 7 and says so on every call

const base = process.env.FNGATE_BASE_URL; // .../v1
const keys = { strict: process.env.FNGATE_STRICT_KEY, extended: process.env.FNGATE_EXTENDED_KEY };
const backends = JSON.parse(process.env.FNGATE_BACKENDS); // [{name, chat, tools}]

const Trip = z.object({ city: z.string(), days: z.number().int(), tags: z.array(z.string()) });
const weatherArgs = z.object({ city: z.string() });
const weather = async ({ city }) => `sunny in ${city}`;

// refusal returns the param a 400 named, digging through each SDK's error shape, or fails.
function refusal(err) {
  const seen = new Set();
  for (let e = err; e && !seen.has(e); e = e.cause ?? e.lastError ?? e.errors?.[0]) {
    seen.add(e);
    const status = e.status ?? e.statusCode ?? e.response?.status;
    let param = e.param ?? e.error?.param ?? e.error?.error?.param;
    if (!param && typeof e.responseBody === "string") {
      try { param = JSON.parse(e.responseBody).error?.param; } catch {}
    }
    if (status === 400 && param) return param;
  }
  assert.fail(`not a 400 naming a field: ${err?.stack ?? err}`);
}

// attempt runs fn under profile and says how it went: extended must succeed (check judges the result); strict may
// succeed too (check judges it) or must be a 400 naming one of the fields the client sends.
async function attempt(profile, fields, fn, check) {
  let result;
  try {
    result = await fn();
  } catch (err) {
    if (profile === "extended") throw err;
    const param = refusal(err);
    assert.ok(fields.some((f) => param === f || param.startsWith(f)), `strict refused ${param}, not one of ${fields}`);
    return "refused " + param;
  }
  await check(result);
  return "ok";
}

for (const b of backends) {
  for (const profile of ["strict", "extended"]) {
    const key = keys[profile];
    const oa = new OpenAI({ baseURL: base, apiKey: key, maxRetries: 0 });
    const name = `${b.name} ${profile}`;

    test(`${name}: openai-node chat.completions.parse with zod`, async (t) => {
      t.diagnostic(await attempt(profile, ["response_format"], () => oa.chat.completions.parse({
        model: b.chat, max_completion_tokens: 200,
        messages: [{ role: "user", content: "Plan a trip to Paris" }],
        response_format: zodResponseFormat(Trip, "trip"),
      }), (r) => {
        const m = r.choices[0].message;
        assert.equal(r.choices[0].finish_reason, "stop");
        assert.equal(m.tool_calls?.length ?? 0, 0);
        Trip.parse(m.parsed);
      }));
    });

    test(`${name}: openai-node runTools`, async (t) => {
      t.diagnostic(await attempt(profile, [], async () => {
        const runner = oa.chat.completions.runTools({
          model: b.tools, max_completion_tokens: 200,
          messages: [{ role: "user", content: "Weather in Paris?" }],
          tools: [{ type: "function", function: { name: "weather", description: "Weather now", function: weather, parse: JSON.parse,
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }],
        });
        return { text: await runner.finalContent(), calls: runner.messages.filter((m) => m.role === "tool").length };
      }, (r) => {
        assert.ok(r.calls >= 1, "no tool ran");
        assert.match(r.text, /sunny/);
      }));
    });

    // The Vercel AI SDK's chat model (Chat Completions; the default openai(model) speaks the
    // Responses API, which this door is not). Its output knob is maxOutputTokens, sent as
    // max_tokens.
    const vercel = createOpenAI({ baseURL: base, apiKey: key }).chat;

    test(`${name}: Vercel AI SDK generateObject`, async (t) => {
      t.diagnostic(await attempt(profile, ["response_format", "max_tokens"], () => generateObject({
        model: vercel(b.chat), schema: Trip, prompt: "Plan a trip to Paris", maxRetries: 0, maxOutputTokens: 200,
      }), (r) => Trip.parse(r.object)));
    });

    test(`${name}: Vercel AI SDK tools with stepCountIs`, async (t) => {
      t.diagnostic(await attempt(profile, ["max_tokens"], () => generateText({
        model: vercel(b.tools), prompt: "Weather in Paris?", maxRetries: 0, maxOutputTokens: 200,
        tools: { weather: aiTool({ description: "Weather now", inputSchema: weatherArgs, execute: weather }) },
        stopWhen: stepCountIs(3),
      }), (r) => {
        assert.ok(r.steps.length >= 2, `${r.steps.length} steps`);
        assert.match(r.text, /sunny/);
      }));
    });

    const langchain = () => new ChatOpenAI({ model: b.tools, apiKey: key, configuration: { baseURL: base }, maxRetries: 0, maxTokens: 200 });

    test(`${name}: LangChain createAgent with a tool over two turns`, async (t) => {
      const weatherTool = lcTool(weather, { name: "weather", description: "Weather now", schema: weatherArgs });
      t.diagnostic(await attempt(profile, ["max_tokens", "messages["], async () => {
        const agent = createAgent({ model: langchain(), tools: [weatherTool] });
        const first = await agent.invoke({ messages: [{ role: "user", content: "Weather in Paris?" }] });
        const second = await agent.invoke({ messages: [...first.messages, { role: "user", content: "And in Rome?" }] });
        return { first, second };
      }, ({ first, second }) => {
        for (const turn of [first, second]) {
          assert.ok(turn.messages.some((m) => m.getType?.() === "tool"), "no tool ran");
          assert.match(String(turn.messages.at(-1).content), /sunny/);
        }
      }));
    });

    test(`${name}: LangChain withStructuredOutput`, async (t) => {
      const llm = new ChatOpenAI({ model: b.chat, apiKey: key, configuration: { baseURL: base }, maxRetries: 0, maxTokens: 200 });
      t.diagnostic(await attempt(profile, ["response_format", "max_tokens", "parallel_tool_calls"], () => llm.withStructuredOutput(Trip, { name: "trip" }).invoke("Plan a trip to Paris"),
        (r) => Trip.parse(r)));
    });

    test(`${name}: LlamaIndex.TS default OpenAI LLM`, async (t) => {
      const llm = new LlamaOpenAI({ model: b.chat, apiKey: key, baseURL: base, maxRetries: 0, maxTokens: 200 });
      t.diagnostic(await attempt(profile, ["top_p", "max_tokens"], () => llm.chat({ messages: [{ role: "user", content: "Hello there" }] }),
        (r) => assert.ok(String(r.message.content).length > 0)));
    });

    test(`${name}: models.retrieve`, async () => {
      const m = await oa.models.retrieve(b.chat);
      assert.equal(m.id, b.chat);
    });
  }
}
