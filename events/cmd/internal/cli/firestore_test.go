package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/internal/emulator"
)

// firestoreMode is direct mode on the Firestore emulator, as on Cloud Functions: the keys
// and the audit log in the key store's collections, the usage history beside the counters,
// the route state in collections of its own; a prefix of their own for each subtest. The
// emulator's first transactions take longer than the stores' default 2 s.
func firestoreMode(t *testing.T) mode {
	n := time.Now().UnixNano()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "fngate.yaml")
	stores := fmt.Sprintf("key_store: {store: firestore, project: fngate-test, collection: keys_%d, timeout: 10s}\ncounters: {store: firestore, project: fngate-test, prefix: c%d_, timeout: 10s}\n", n, n)
	if err := os.WriteFile(cfgPath, []byte(configYAML(stores)), 0o600); err != nil {
		t.Fatal(err)
	}
	// The history is written through the store the command opens, from the same config.
	cfg, err := loadConfig(context.Background(), cfgPath, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	store, closeStore, err := openCounters(context.Background(), cfg.Counters)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeStore)
	history, ok := store.(counters.History)
	if !ok {
		t.Fatal("the Firestore counters store keeps no history")
	}
	return mode{name: "firestore", actor: "cli:tester",
		env: map[string]string{"FNGATE_CONFIG": cfgPath, "FNGATE_ROUTE_STORE": "firestore:fngate-test", "ROUTE_STATE_PREFIX": fmt.Sprintf("r%d_", n)},
		addUsage: func(t *testing.T, key string, at time.Time, model string, u counters.Usage) {
			if err := history.AddUsage(context.Background(), key, at, model, u); err != nil {
				t.Fatal(err)
			}
		}}
}

// Direct mode on Firestore: the same commands as over HTTP, on files and on DynamoDB.
func TestDirectOnFirestore(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
	warmUp(t)
	for name, test := range map[string]func(*testing.T, mode){"usage": usageSteps, "routes": routeSteps, "keys": keySteps} {
		t.Run(name, func(t *testing.T) { test(t, firestoreMode(t)) })
	}
}

// warmUp runs a transaction and a query on the emulator with a generous deadline: its first
// ones take seconds, longer than the admin API gives a store call, whichever subtest is first.
func warmUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := firestore.NewClient(ctx, "fngate-test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	doc := c.Collection("warmup").Doc(fmt.Sprint(time.Now().UnixNano()))
	if err := c.RunTransaction(ctx, func(_ context.Context, tx *firestore.Transaction) error {
		return tx.Create(doc, map[string]any{"t": 1})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Collection("warmup").Where("t", "==", 1).Limit(1).Documents(ctx).GetAll(); err != nil {
		t.Fatal(err)
	}
}
