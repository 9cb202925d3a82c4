// Package openresponses runs the Open Responses compliance suite against the local server
// (functions/local, the real binary) on loopback, in `go test ./clients/openresponses/`: on
// the mock and on an Anthropic route (the Anthropic fake answering like a model), so the
// Responses door is checked on more than one backend's translation; and the door's stream
// golden files, whose reasoning, refusal and function-call events the suite's own tests
// never ask for, against the suite's schemas. docs/open-responses.md
// says what the suite checks and which of its tests are outside the contract.
//
// The suite is not in this repository: a copy lives beside it, in
// ../shared/conformance/openresponses (the test skips, saying so, where it is absent). It is
// TypeScript run by Bun, against zod 3 (clients/ pins zod 4 for the SDKs), so it has its own
// package.json and package-lock.json here, installed with `npm ci --ignore-scripts` into the
// user's cache directory (${XDG_CACHE_HOME:-~/.cache}/fngate/openresponses/<hash of the two
// files and the platform>), reused while they do not change. Bun's binary comes from its
// platform package (@oven/bun-linux-x64 and so on), which npm installs as an optional
// dependency of `bun`, so no install script has to run. As for the agent clients
// (clients/internal/agents), an unreachable npm registry skips the test; with the registry
// reachable a failed install fails it, and FNGATE_REQUIRE_CLIENTS=1 makes a missing npm a
// failure too.
//
// It lives under clients/, beside the other npm-driven tests, and shares their skip rules.
//
//	suite_test.go    TestOpenResponses: the gateway, the suite runs, one subtest per suite test
//	install_test.go  the npm install into the cache, Bun's binary, the suite's copy
//	goldens.ts       core/responses' stream golden files checked with the suite's schemas
//	package.json, package-lock.json  Bun and zod 3, pinned
package openresponses
