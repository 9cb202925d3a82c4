// Validates the events of fngate's stream golden files (core/responses/testdata/stream) with
// the Open Responses suite's own schemas: every event, and the response of each terminal
// event. The suite's tests stream only text; the goldens have reasoning, refusals, function
// calls and an incomplete answer too. Run by TestOpenResponses (suite_test.go) from the
// suite's copy's bin/, so the imports below resolve; prints one JSON line per refusal.
import { readFileSync } from "node:fs";
import { getTerminalResponse, parseStreamingEventData } from "../src/lib/sse-parser";
import { responseResourceSchema } from "../src/generated/kubb/zod/responseResourceSchema";

// issuesOf is what a refusal says, as "path: message" lines. A refusal of the union of all
// events lists every member's issues; only those of the member of the event's own type
// matter.
type Issue = { code: string; path: (string | number)[]; message: string; unionErrors?: { issues: Issue[] }[] };
function issuesOf(issues: Issue[]): string[] {
  if (issues.length === 1 && issues[0].code === "invalid_union" && issues[0].path.length === 0) {
    const own = issues[0].unionErrors?.find(
      (u) => !u.issues.some((i) => i.path[0] === "type" && i.code === "invalid_enum_value"),
    );
    if (own) return issuesOf(own.issues);
  }
  return issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
}

let events = 0;
for (const file of process.argv.slice(2)) {
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.startsWith("data: ")) continue;
    const data = JSON.parse(line.slice("data: ".length));
    events++;
    const parsed = parseStreamingEventData(data);
    if (!parsed.validationResult.success) {
      console.log(JSON.stringify({ file, event: parsed.event, issues: issuesOf(parsed.validationResult.error.issues as Issue[]) }));
    }
    const response = getTerminalResponse(data);
    if (response) {
      const result = responseResourceSchema.safeParse(response);
      if (!result.success) {
        console.log(JSON.stringify({ file, event: parsed.event + " response", issues: issuesOf(result.error.issues as Issue[]) }));
      }
    }
  }
}
console.log(JSON.stringify({ events }));
