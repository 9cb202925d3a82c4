// Package replay holds only tests: it replays real provider traffic, recorded by other
// projects from the live APIs, through the real gateway and provider packages, and checks
// what the official openai-go client gets against what each recording says.
//
// The recordings live outside the repository, in ../shared/captures beside the module root
// (see its README.md): they are other projects' data, kept for testing only, so a clone
// without them skips these tests. Every recording there needs a row in rows_test.go, and
// every row a recording, so none is silently left out.
//
//	captures_test.go   finding and loading the recordings and their sidecars
//	upstream_test.go   one fake upstream per wire, serving a recording as the provider would
//	recorded_test.go   what a recording says (its text), read independently of the gateway
//	replay_test.go     the replay through the gateway, and the checks
//	rows_test.go       the expected result of each recording
package replay
