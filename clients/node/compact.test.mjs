// The openai package's client.responses.compact (POST /v1/responses/compact) against the
// gateway the Go test serves (sdk_test.go), on each backend: the mock and Anthropic, where the
// gateway compacts and seals the summary into the compaction item, and the openai kind, whose
// own compaction passes through. The compacted output then goes back into
// client.responses.create, and the route answers from the summary it was given: the echoing
// backends repeat it, so a word said only in the compacted-away turns shows in their answer.
// Run by `go test ./clients/` with FNGATE_* set; not meant to run alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";

const base = process.env.FNGATE_BASE_URL; // .../v1
const key = process.env.FNGATE_STRICT_KEY;
const backends = JSON.parse(process.env.FNGATE_BACKENDS); // [{name, chat, tools, said, usage, native}]

const gatewaySealed = "fngate:v1:compaction:";

// PAPAYA is said only in the tool result and the assistant's answer, which compaction leaves
// out of the output: it reaches a later turn only through the summary.
const conversation = [
  { role: "user", content: "Remember my code word." },
  { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{\"what\":\"code word\"}" },
  { type: "function_call_output", call_id: "call_1", output: "the code word is PAPAYA" },
  { role: "assistant", content: "Noted: your code word is PAPAYA." },
  { role: "user", content: "Thanks." },
];

for (const b of backends) {
  const client = new OpenAI({ baseURL: base, apiKey: key, maxRetries: 0 });

  test(`${b.name}: responses.compact, then responses.create with its output`, async () => {
    const c = await client.responses.compact({ model: b.chat, input: conversation, instructions: "Be terse." });
    assert.equal(c.object, "response.compaction");
    assert.match(c.id, /^resp_/);
    const users = c.output.filter((i) => i.type === "message" && i.role === "user");
    assert.deepEqual(users.map((i) => i.content[0].text), ["Remember my code word.", "Thanks."]);
    const last = c.output.at(-1);
    assert.equal(last.type, "compaction");
    assert.equal(c.output.filter((i) => i.type === "compaction").length, 1);
    assert.ok(Number.isInteger(c.usage.input_tokens) && Number.isInteger(c.usage.output_tokens), JSON.stringify(c.usage));
    if (b.native) {
      assert.ok(!last.encrypted_content.startsWith(gatewaySealed), "OpenAI's own item passes through");
    } else {
      assert.ok(last.encrypted_content.startsWith(gatewaySealed), last.encrypted_content);
      assert.ok(!last.encrypted_content.includes("PAPAYA"), "the summary is sealed");
    }

    const r = await client.responses.create({ model: b.chat, input: c.output, store: false, max_output_tokens: 2000 });
    assert.equal(r.status, "completed");
    if (!b.native) {
      // The echoing backends answer with the last user message: the opened summary.
      assert.match(r.output_text, /Summary of the earlier conversation/);
      assert.match(r.output_text, /PAPAYA/);
    }
  });

  if (!b.native) {
    test(`${b.name}: an altered compaction item is a 400 naming it`, async () => {
      const c = await client.responses.compact({ model: b.chat, input: conversation });
      const item = c.output.at(-1);
      const s = item.encrypted_content;
      const i = s.length - 8;
      const altered = { ...item, encrypted_content: s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1) };
      await assert.rejects(
        client.responses.create({ model: b.chat, input: [...c.output.slice(0, -1), altered], store: false }),
        (e) => {
          assert.ok(e instanceof OpenAI.BadRequestError, String(e));
          assert.equal(e.param, `input[${c.output.length - 1}].encrypted_content`);
          assert.equal(e.code, "invalid_encrypted_content");
          return true;
        },
      );
    });
  }
}
