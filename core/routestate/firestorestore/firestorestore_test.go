package firestorestore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/routestate/firestorestore"
	"github.com/fngate/fngate/core/routestate/internal/storetest"
	"github.com/fngate/fngate/internal/emulator"
)

// TestStoreAgainstEmulator runs the Store contract on the gcloud Firestore emulator, one
// collection prefix per subtest.
func TestStoreAgainstEmulator(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := firestore.NewClient(ctx, "fngate-test")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var n atomic.Int64
	run := time.Now().UnixNano()
	storetest.Run(t, func(t *testing.T) routestate.Store {
		return firestorestore.New(client, fmt.Sprintf("t%d_%d_", run, n.Add(1)))
	})
}
