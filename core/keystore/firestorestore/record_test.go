package firestorestore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/firestorestore"
	"github.com/fngate/fngate/internal/emulator"
)

// TestRecordJoinsTheAuditLog: an entry recorded alone (a route change) pages with the key
// changes' entries, newest first, and by its target.
func TestRecordJoinsTheAuditLog(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
	ctx := context.Background()
	client, err := firestore.NewClient(ctx, "fngate-test")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s := firestorestore.New(client, fmt.Sprintf("record%d", time.Now().UnixNano()), firestorestore.Options{Timeout: 30 * time.Second})
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	k := &keystore.Key{Created: t0, Updated: t0}
	k.ID, k.Name = keystore.NewID(), "svc"
	_, k.Hash = keystore.NewSecret()
	if err := s.Create(ctx, k, &keystore.Entry{ID: keystore.NewEntryID(), Time: t0, Action: "key.create", Target: k.ID, After: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	route := &keystore.Entry{ID: keystore.NewEntryID(), Time: t0.Add(time.Second), Actor: "key:ops", Role: "admin", Action: "route.cool",
		Target: "bedrock-us/us.anthropic.claude-sonnet-4-5-v1:0", Before: []byte(`{"status":"active"}`), After: []byte(`{"status":"cooled"}`), Request: "r1"}
	if err := s.Record(ctx, route); err != nil {
		t.Fatal(err)
	}
	all, err := s.Audit(ctx, keystore.AuditQuery{})
	if err != nil || len(all.Entries) != 2 || all.Entries[0].ID != route.ID || all.Entries[1].Action != "key.create" {
		t.Fatalf("audit %+v, %v", all, err)
	}
	if got := all.Entries[0]; got.Target != route.Target || string(got.After) != `{"status":"cooled"}` || got.Request != "r1" {
		t.Fatalf("entry %+v", got)
	}
	one, err := s.Audit(ctx, keystore.AuditQuery{Target: route.Target})
	if err != nil || len(one.Entries) != 1 || one.Entries[0].ID != route.ID {
		t.Fatalf("by target %+v, %v", one, err)
	}
	if err := s.Record(ctx, route); err == nil {
		t.Fatal("the same entry was recorded twice")
	}
}
