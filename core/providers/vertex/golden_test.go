package vertex

import (
	"strconv"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// protoJSON renders a message in the REST API's JSON spelling (camelCase), stably: protojson
// varies its spacing on purpose, which the indentation in golden.CheckIndented removes.
func protoJSON(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// counter mints predictable tool call ids for golden files.
func counter() func() string {
	n := 0
	return func() string {
		n++
		return "call_" + strconv.Itoa(n)
	}
}
