// Package firestoredoc holds what fngate's Firestore stores (stored responses, stored keys,
// the response cache, MCP sessions) share about documents: Firestore's size limits, a
// document's size as Firestore counts it against them, and the start-up log line's name for a
// collection.
package firestoredoc

import (
	"fmt"
	"strings"

	"cloud.google.com/go/firestore"
)

// Firestore's limits.
const (
	// MaxBytes is the largest document.
	MaxBytes = 1 << 20
	// MaxFieldBytes is the largest value of one field (1 MiB - 89 bytes).
	MaxFieldBytes = 1<<20 - 89
)

// Sizes of field values, as Size takes them.
const (
	TimestampBytes = 8
	IntegerBytes   = 8
	BoolBytes      = 1
)

// StringBytes is the size of a string field's value: its bytes plus one.
func StringBytes(s string) int { return len(s) + 1 }

// Size counts a document of a top-level collection as Firestore does: its name (each path
// segment's bytes plus one, plus 16), each field's name (bytes plus one) and value (fields
// maps a name to its value's size: StringBytes, a byte string's length, TimestampBytes,
// IntegerBytes, BoolBytes), and 32.
func Size(collection, id string, fields map[string]int) int {
	n := len(collection) + 1 + len(id) + 1 + 16 + 32
	for name, value := range fields {
		n += len(name) + 1 + value
	}
	return n
}

// Where names a collection and its database, for a start-up log line.
func Where(col *firestore.CollectionRef) string {
	// A collection's path is projects/{project}/databases/{database}/documents/{collection}.
	database := "?"
	if parts := strings.Split(col.Path, "/"); len(parts) > 3 {
		database = parts[3]
	}
	return fmt.Sprintf("collection %s of database %s", col.ID, database)
}
