package keystore_test

import (
	"testing"

	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/internal/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) keystore.Store { return keystore.NewMemory() }, storetest.Options{})
}
