package firestorestore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/firestorestore"
	"github.com/fngate/fngate/core/keystore/internal/storetest"
	"github.com/fngate/fngate/internal/emulator"
)

// TestStoreAgainstEmulator runs the key store contract on the gcloud Firestore emulator, one
// collection per subtest.
func TestStoreAgainstEmulator(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client, err := firestore.NewClient(ctx, "fngate-test")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var n atomic.Int64
	run := time.Now().UnixNano()
	storetest.Run(t, func(t *testing.T) keystore.Store {
		return firestorestore.New(client, fmt.Sprintf("keys%d_%d", run, n.Add(1)), firestorestore.Options{Timeout: 30 * time.Second})
	}, storetest.Options{})
}
