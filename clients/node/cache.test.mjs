// The response cache as the official SDKs see it, against the gateways the Go test serves
// (sdk_test.go), on each backend's cached models (cache: {ttl: 1h}), with a text answer and
// with a tool call: openai-node chat.completions.create, whole and streamed (with
// include_usage and without); openai-node responses.create, whole and streamed, with store: false and
// store: true, the latter both on the gateway without a response store (where the answer
// says store: false) and on the one with a store (FNGATE_STORE_URL); @anthropic-ai/sdk
// messages.create, and messages.stream with its finalMessage().
// Each case asks one request, with a prompt of its own, twice: the first answer must say
// x-fngate-cache: miss and the second hit (read from the SDK's raw response), and what the
// SDK parsed of the hit (the object; for a stream every event it yielded, and the Anthropic
// helper's finalMessage()) must deep-equal what it parsed of the miss once the ids and
// creation times a hit makes anew are taken out, and nothing else (fresh, below). Usage must
// be there on the miss (where the client asked for it), so the comparison shows it on the
// hit too. The hit's own id must differ from the miss's; on the gateway with a response
// store responses.retrieve must read back both as they were answered, and a turn with
// previous_response_id must go on from the hit. Between the two, the Go
// side's flush endpoint (FNGATE_CACHE_FLUSH_URL) returns once the miss is in the cache: the
// gateway writes it off the request path, after the client has its answer.
// Run by `go test ./clients/` with FNGATE_* set; not meant to run alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const url = process.env.FNGATE_URL; // the gateway without a response store
const storeURL = process.env.FNGATE_STORE_URL; // the same config with a memory response store
const key = process.env.FNGATE_STRICT_KEY;
const flushURL = process.env.FNGATE_CACHE_FLUSH_URL;
const backends = JSON.parse(process.env.FNGATE_BACKENDS); // [{name, cached, cachedTools, ...}]

const openai = new OpenAI({ baseURL: url + "/v1", apiKey: key, maxRetries: 0 });
const openaiStored = new OpenAI({ baseURL: storeURL + "/v1", apiKey: key, maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: url, apiKey: key, authToken: null, maxRetries: 0 });

// Each case's prompt is its own, so no case meets another's entry (nor, by the run's mark,
// one a run before it left in a gateway that is still up).
const run = Date.now().toString(36);
let cases = 0;
const unique = () => `Cache case ${++cases} of run ${run}: the weather in Paris`;

const weather = {
  name: "weather", description: "Weather now",
  schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const chatTools = [{ type: "function", function: { name: weather.name, description: weather.description, parameters: weather.schema } }];
const responsesTools = [{ type: "function", name: weather.name, description: weather.description, parameters: weather.schema }];
const messagesTools = [{ name: weather.name, description: weather.description, input_schema: weather.schema }];

async function flush() {
  const r = await fetch(flushURL, { method: "POST" });
  assert.equal(r.status, 204, `flush: ${r.status} ${await r.text()}`);
}

// twice calls ask twice, the miss's cache write done in between; ask returns the SDK's
// parsed result and its raw Response.
async function twice(ask) {
  const miss = await ask();
  assert.equal(miss.response.headers.get("x-fngate-cache"), "miss", "the first answer's x-fngate-cache");
  await flush();
  const hit = await ask();
  assert.equal(hit.response.headers.get("x-fngate-cache"), "hit", "the second answer's x-fngate-cache");
  return { miss: miss.result, hit: hit.result };
}

// events drains an SDK stream, copying each event: the Anthropic helper's message_start
// message is its snapshot, which later events update in place.
async function events(stream) {
  const out = [];
  for await (const ev of stream) out.push(structuredClone(ev));
  return out;
}

// fresh: what a hit makes anew, by wire; everything else must be the miss's.
const fresh = {
  // A completion, and each chunk of a stream: its id and created.
  chat: ({ id, created, ...rest }) => {
    assert.match(id, /^chatcmpl-/);
    assert.ok(Number.isInteger(created), `created ${created}`);
    return rest;
  },
  // A response object: its id, created_at and completed_at, and the id of each output item.
  // (Where the openai kind passes the Responses API through, the items' ids and the times
  // are the upstream's, which a hit repeats as they were: only the response id is new.)
  response: ({ id, created_at, completed_at, ...rest }) => {
    assert.match(id, /^resp_/);
    assert.ok(Number.isInteger(created_at), `created_at ${created_at}`);
    return { ...rest, output: rest.output.map(({ id, ...item }) => item) };
  },
  // A Responses event: the response object it carries (as above), the id of the item it
  // carries, and its item_id.
  responseEvent: ({ item_id, ...ev }) => {
    if (ev.response) ev.response = fresh.response(ev.response);
    if (ev.item) {
      const { id, ...item } = ev.item;
      ev.item = item;
    }
    return ev;
  },
  // A message: its id; in a stream, message_start's message's id.
  message: ({ id, ...rest }) => {
    assert.match(id, /^msg_/);
    return rest;
  },
  messageEvent: (ev) => (ev.type === "message_start" ? { ...ev, message: fresh.message(ev.message) } : ev),
};

// sameAnswer: the hit is the miss but for fresh, and is a response of its own.
function sameAnswer(miss, hit, strip, id = (r) => r.id) {
  assert.notEqual(id(hit), id(miss), "the hit has the miss's id");
  assert.deepEqual(strip(hit), strip(miss), "the hit differs from the miss beyond its ids and times");
}

const each = (f) => (list) => list.map(f);

// outputText is a response object's text, as the SDK's output_text (which only the objects
// create and retrieve return carry) joins it.
const outputText = (r) => r.output.flatMap((i) => (i.type === "message" ? i.content : [])).filter((c) => c.type === "output_text").map((c) => c.text).join("");

for (const b of backends) {
  for (const tools of [false, true]) {
    const what = tools ? "a tool call" : "a text answer";
    const model = tools ? b.cachedTools : b.cached;

    // checkChat: the miss is the backend's answer; checkUsage: with usage.
    const checkChat = (m) => {
      if (tools) assert.equal(m.tool_calls?.[0]?.function?.name, weather.name, JSON.stringify(m));
      else assert.match(m.content, /Cache case \d+/);
    };
    const checkUsage = (usage) => assert.ok(usage?.prompt_tokens > 0 && usage?.completion_tokens > 0, `usage ${JSON.stringify(usage)}`);

    test(`${b.name}: openai-node chat.completions.create, ${what}`, async () => {
      const params = { model, max_completion_tokens: 200, messages: [{ role: "user", content: unique() }], ...(tools && { tools: chatTools }) };
      const { miss, hit } = await twice(async () => {
        const { data, response } = await openai.chat.completions.create(params).withResponse();
        return { result: data, response };
      });
      checkChat(miss.choices[0].message);
      checkUsage(miss.usage);
      sameAnswer(miss, hit, fresh.chat);
    });

    // Without include_usage a stream has no usage chunk, the hit's neither.
    for (const includeUsage of [true, false]) {
      test(`${b.name}: openai-node chat.completions.create streamed, include_usage: ${includeUsage}, ${what}`, async () => {
        const params = {
          model, max_completion_tokens: 200, messages: [{ role: "user", content: unique() }], ...(tools && { tools: chatTools }),
          stream: true, ...(includeUsage && { stream_options: { include_usage: true } }),
        };
        const { miss, hit } = await twice(async () => {
          const { data, response } = await openai.chat.completions.create(params).withResponse();
          return { result: await events(data), response };
        });
        const deltas = miss.flatMap((c) => c.choices.map((ch) => ch.delta));
        const message = { content: deltas.map((d) => d.content ?? "").join(""), tool_calls: deltas.flatMap((d) => d.tool_calls ?? []) };
        checkChat(message);
        if (includeUsage) checkUsage(miss.at(-1).usage);
        else assert.ok(miss.every((c) => !c.usage), "a usage chunk the client did not ask for");
        sameAnswer(miss, hit, each(fresh.chat), (chunks) => chunks[0].id);
      });
    }

    // On the gateway without a response store store: true is answered store: false, on the
    // one with a store the answer is kept: the hit as a response of its own, which
    // responses.retrieve reads back as it was answered.
    const responsesCases = [
      { on: "no response store", client: openai, store: false, says: false },
      { on: "no response store", client: openai, store: true, says: false },
      { on: "a response store", client: openaiStored, store: true, says: true },
    ];
    for (const c of responsesCases) {
      // checkResponse: the miss is the backend's answer, with usage, stored as c says.
      const checkResponse = (r) => {
        assert.equal(r.status, "completed");
        assert.equal(r.store, c.says, "store");
        if (tools) assert.equal(r.output.find((i) => i.type === "function_call")?.name, weather.name, JSON.stringify(r.output));
        else assert.match(outputText(r), /Cache case \d+/);
        assert.ok(r.usage?.input_tokens > 0 && r.usage?.output_tokens > 0, `usage ${JSON.stringify(r.usage)}`);
      };
      // kept: a stored response reads back as it was answered, the hit as the miss (but for
      // output_text, which the SDK adds to what create and retrieve return, and not to a
      // stream's events).
      const kept = async (miss, hit) => {
        if (!c.says) return;
        const answered = ({ output_text, ...r }) => r;
        for (const r of [miss, hit]) assert.deepEqual(answered(await c.client.responses.retrieve(r.id)), answered(r), `retrieve ${r.id}`);
        if (tools) return;
        // And a conversation goes on from the hit as from any stored response.
        const { data, response } = await c.client.responses.create({ model, store: true, previous_response_id: hit.id, input: "And again" }).withResponse();
        assert.equal(response.headers.get("x-fngate-cache"), "bypass");
        assert.equal(data.previous_response_id, hit.id);
        assert.match(outputText(data), /And again/);
      };
      const name = `store: ${c.store} on a gateway with ${c.on}`;

      test(`${b.name}: openai-node responses.create, ${name}, ${what}`, async () => {
        const params = { model, max_output_tokens: 200, store: c.store, input: unique(), ...(tools && { tools: responsesTools }) };
        const { miss, hit } = await twice(async () => {
          const { data, response } = await c.client.responses.create(params).withResponse();
          return { result: data, response };
        });
        checkResponse(miss);
        sameAnswer(miss, hit, fresh.response);
        await kept(miss, hit);
      });

      test(`${b.name}: openai-node responses.create streamed, ${name}, ${what}`, async () => {
        const params = { model, max_output_tokens: 200, store: c.store, input: unique(), ...(tools && { tools: responsesTools }), stream: true };
        const { miss, hit } = await twice(async () => {
          const { data, response } = await c.client.responses.create(params).withResponse();
          return { result: await events(data), response };
        });
        const completed = (evs) => {
          assert.equal(evs.at(-1).type, "response.completed", `the stream ended with ${evs.at(-1).type}`);
          return evs.at(-1).response;
        };
        checkResponse(completed(miss));
        sameAnswer(miss, hit, each(fresh.responseEvent), (evs) => completed(evs).id);
        await kept(completed(miss), completed(hit));
      });
    }

    // checkMessage: the miss is the backend's answer, with usage.
    const checkMessage = (m) => {
      if (tools) assert.equal(m.content.find((c) => c.type === "tool_use")?.name, weather.name, JSON.stringify(m.content));
      else assert.match(m.content[0].text, /Cache case \d+/);
      assert.equal(m.stop_reason, tools ? "tool_use" : "end_turn");
      assert.ok(m.usage?.input_tokens > 0 && m.usage?.output_tokens > 0, `usage ${JSON.stringify(m.usage)}`);
    };
    const messagesParams = () => ({ model, max_tokens: 200, messages: [{ role: "user", content: unique() }], ...(tools && { tools: messagesTools }) });

    test(`${b.name}: @anthropic-ai/sdk messages.create, ${what}`, async () => {
      const params = messagesParams();
      const { miss, hit } = await twice(async () => {
        const { data, response } = await anthropic.messages.create(params).withResponse();
        return { result: data, response };
      });
      checkMessage(miss);
      sameAnswer(miss, hit, fresh.message);
    });

    test(`${b.name}: @anthropic-ai/sdk messages.stream and finalMessage(), ${what}`, async () => {
      const params = messagesParams();
      const { miss, hit } = await twice(async () => {
        const stream = anthropic.messages.stream(params);
        const { response } = await stream.withResponse();
        return { result: { events: await events(stream), final: await stream.finalMessage() }, response };
      });
      checkMessage(miss.final);
      sameAnswer(miss.final, hit.final, fresh.message);
      sameAnswer(miss.events, hit.events, each(fresh.messageEvent), (evs) => evs[0].message.id);
    });
  }
}
