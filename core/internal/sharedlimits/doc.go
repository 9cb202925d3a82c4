// Package sharedlimits holds only tests: several gateway instances, each with its own clock,
// sharing one counter store (memory, file, DynamoDB on moto_server, Firestore on its
// emulator), as a function's instances share DynamoDB or Firestore. It shows what no store's
// own conformance suite can: a key's limits holding across instances hammered at once,
// windows rolling over, clocks that disagree, and a budget crossed by a stream on one
// instance refusing the next request on another. The cross-process version, real local
// server processes, is in functions/local.
package sharedlimits
